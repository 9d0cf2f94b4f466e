r"""FedAvg with pluggable aggregation weights.

Round :math:`t`: every participating client runs :math:`E` local steps from :math:`w_t` and
reports :math:`\Delta_t^k`; the server applies

.. math:: w_{t+1}=\mathrm{Proj}_W\Big(w_t+\eta_s\sum_{k\in A_t}q_{t,k}\Delta_t^k\Big)

(CA-Fed (3); FedAU Algorithm 1 with :math:`q=\omega/N`). The weights come from a stateless
rule ``mask -> q`` or from a :class:`~fedtheory.sim.aggregation.StatefulAggregator` whose
per-client state is carried in :class:`FedAvgState`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import declare
from fedtheory.device import to_device
from fedtheory.errors import ParameterError
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _capture as capture
from fedtheory.sim.aggregation import FedAU, StatefulAggregator
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.optimizer import TrainingState
from fedtheory.sim.reference import fedau_omega, local_step, reference_loop, server_step


class FedAvgState(NamedTuple):
    w: torch.Tensor  # [R, d]
    aggregator: NamedTuple | None = None  # per-client state of a stateful rule, [R, N] fields
    weights: torch.Tensor | None = None  # [R, N] q_{t,k} applied in the last round
    participants: torch.Tensor | None = None  # [R, N] bool, clients that worked last round
    optimizer: TrainingState | None = None  # momentum buffers (LocalTraining.training)


Aggregator = Callable[[torch.Tensor], torch.Tensor]
"""Maps the participation mask ``[R, N]`` to aggregation weights ``[R, N]``."""


@declare(**LOCAL_TRAINING)
@dataclass(frozen=True)
class FedAvg(LocalTraining):
    r"""FedAvg: ``aggregator`` gives :math:`q_{t,k}`; ``local_steps`` = :math:`E`, ``lr`` =
    :math:`\eta` (client), ``server_lr`` = :math:`\eta_s`, further options in
    :class:`~fedtheory.sim.algorithm.LocalTraining` (FedProx term, projection, ...).

    Examples
    --------
    >>> from fedtheory.sim.aggregation import FedAU
    >>> FedAvg(FedAU(cutoff=50), local_steps=5, lr=0.1).name
    'fedavg[fedau]'
    """

    aggregator: Aggregator | StatefulAggregator
    name: str = ""
    """Recorded and reported name; default ``fedavg[<aggregator's name>]``."""

    def __post_init__(self) -> None:
        super().__post_init__()
        agg = self.aggregator
        if not (isinstance(agg, StatefulAggregator) or callable(agg)):
            raise ParameterError(
                "The 'aggregator' parameter of FedAvg must be a callable mask -> weights "
                "(e.g. AverageParticipating()) or a StatefulAggregator (e.g. FedAU()). "
                f"Got {agg!r} instead."
            )
        if not self.name:
            rule = getattr(agg, "name", None) or getattr(agg, "__name__", type(agg).__name__)
            object.__setattr__(self, "name", f"fedavg[{rule}]")

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> FedAvgState:
        agg = self.aggregator
        stateful = isinstance(agg, StatefulAggregator)
        agg_state = agg.init(w0.shape[0], problem.num_clients) if stateful else None
        opt = self.training_init(problem, w0)
        return FedAvgState(w0, to_device(agg_state, w0.device), optimizer=opt)

    @declare(**round_arguments(FedAvgState))
    def step(
        self,
        problem: FederatedProblem,
        state: FedAvgState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> FedAvgState:
        """One round: ``state.w [R, d]``, ``mask [R, N]`` -> next state.

        Only the participating (replicate, client) pairs do local work."""
        w, agg = state.w, self.aggregator
        mask = self.participants(mask, t)
        if state.aggregator is None:
            q, agg_state = agg(mask), None
            if not isinstance(q, torch.Tensor) or q.shape != mask.shape:
                raise ParameterError(
                    f"The 'aggregator' parameter of FedAvg must map the mask {tuple(mask.shape)} "
                    f"to weights of the same shape. Got {type(q).__name__} "
                    f"{tuple(getattr(q, 'shape', ()))} instead."
                )
        else:
            q, agg_state = agg.weights(state.aggregator, mask), agg.update(state.aggregator, mask)
        w_next, opt = self.trained_round(problem, w, q, mask, t, generator, state.optimizer)
        return FedAvgState(w_next, agg_state, q, mask, opt)


# --- the plain loop (one replicate, one client at a time) --------------------
capture.replayed(FedAvg)  # its round reads t only through constant step sizes


@reference_loop(FedAvg)
def _reference(problem, alg: FedAvg, mask, w, gen):
    """FedAvg as written: one replicate, one client at a time (:mod:`~fedtheory.sim.reference`)."""
    if isinstance(alg.aggregator, FedAU):
        weights = mask * fedau_omega(mask, alg.aggregator.cutoff) / mask.shape[1]
    else:
        weights = np.stack([alg.aggregator(torch.from_numpy(m[None]))[0].numpy() for m in mask])
    out = [w]
    for t, m in enumerate(mask):
        v = np.zeros_like(w)
        for k in np.flatnonzero(m):
            v += weights[t, k] * local_step(problem, alg, w, k, t, gen(t))
        w = server_step(alg, w, v, t)
        out.append(w)
    return out
