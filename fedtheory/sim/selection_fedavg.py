r"""FedAvg with server-side client selection and volatile clients (E3CS Algorithm 1, (5)).

Round :math:`t`: the selector picks :math:`A_t` (:math:`|A_t|=k`); the availability mask of
the round is the success indicator :math:`x_{i,t}` (client :math:`i` would return its model);
the clients with :math:`i\in A_t` and :math:`x_{i,t}=1` run local SGD from :math:`\Theta_t`,
and the server aggregates (Algorithm 1 line 9)

.. math:: \Theta_{t+1}=\sum_{i\in A_t,\,x_{i,t}=1}\omega_i\Theta_{i,t}
          +\sum_{i\notin A_t\text{ or }x_{i,t}=0}\omega_i\Theta_t
          =\Theta_t+\sum_{i\in A_t,\,x_{i,t}=1}\omega_i\,(\Theta_{i,t}-\Theta_t),

with data weights :math:`\sum_i\omega_i=1`: failed or unselected clients contribute the
current model. This is :class:`~fedtheory.sim.fedavg.FedAvg` with fixed weights
:math:`\omega` applied to the mask "selected and successful".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from fedtheory import rng
from fedtheory.params import check_int, check_real, check_seed, check_simplex
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.aggregation import FixedWeights
from fedtheory.sim.fedavg import FedAvg, FedAvgState
from fedtheory.sim.selection_policies import Selector

__all__ = ["SelectedFedAvg", "SelectedFedAvgState"]


class SelectedFedAvgState(NamedTuple):
    w: torch.Tensor  # [R, d] server model Theta_t
    selector: NamedTuple  # the selector's state (E3CS: log-weights [R, K])
    selections: torch.Tensor  # [R, K] int64, times selected so far
    successes: torch.Tensor  # [R, K] int64, times selected and successful (CEP per client)


@dataclass(frozen=True)
class SelectedFedAvg:
    r"""E3CS-style training (Algorithm 1): select with ``selector``, aggregate by line 9.

    Parameters
    ----------
    selector : Selector
        :class:`~fedtheory.sim.selection_policies.E3CS`, ``FedCS``, ``RandomSelection`` or
        ``PowD`` (which is given the exact client losses of the current model).
    omega : array [K], optional
        Data weights :math:`\omega` (default: the problem's target weights :math:`\alpha`).
    local_steps, lr, server_lr : int, float, float
        Local SGD (:math:`E`, :math:`\eta`) and the server step (1 is Algorithm 1).
    seed : int
        Selection randomness of round ``t`` is ``rng.torch_generator(seed, t, SELECTION)``,
        independent of the gradient noise.
    """

    selector: Selector
    omega: np.ndarray | None = None
    local_steps: int = 1
    lr: float = 0.1
    server_lr: float = 1.0
    seed: int = 0
    name: str = field(default="")

    def __post_init__(self) -> None:
        owner = "SelectedFedAvg"
        check_int(self.local_steps, "local_steps", owner, low=1)
        check_real(self.lr, "lr", owner, low=0.0, low_open=True)
        check_real(self.server_lr, "server_lr", owner, low=0.0, low_open=True)
        check_seed(self.seed, owner)
        if self.omega is not None:
            object.__setattr__(self, "omega", check_simplex(self.omega, "omega", owner))
        if not self.name:
            object.__setattr__(self, "name", self.selector.name)

    def _fedavg(self, problem: FederatedProblem) -> FedAvg:
        omega = problem.alpha if self.omega is None else self.omega
        return FedAvg(
            FixedWeights(omega, name="omega"),
            local_steps=self.local_steps,
            lr=self.lr,
            server_lr=self.server_lr,
            name=self.name,
        )

    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> SelectedFedAvgState:
        reps, num_clients = w0.shape[0], problem.num_clients
        zeros = torch.zeros(reps, num_clients, dtype=torch.int64)
        return SelectedFedAvgState(w0, self.selector.init(reps, num_clients), zeros, zeros)

    def step(
        self,
        problem: FederatedProblem,
        state: SelectedFedAvgState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> SelectedFedAvgState:
        """Round ``t``: ``state.w [R, d]``, success mask ``mask [R, K]`` -> next state.

        Only selected and successful (replicate, client) pairs do local work."""
        losses = None
        if self.selector.needs_losses:
            losses = torch.from_numpy(problem.client_losses(state.w.numpy()))  # [R, K]
        gen = rng.torch_generator(self.seed, t, rng.SELECTION)
        choice = self.selector.select(state.selector, t, gen, losses=losses)
        returned = choice.selected & mask  # [R, K]
        w = self._fedavg(problem).step(problem, FedAvgState(state.w), returned, t, generator).w
        return SelectedFedAvgState(
            w,
            self.selector.update(state.selector, t, choice, mask),
            state.selections + choice.selected,
            state.successes + returned,
        )

    def __repr__(self) -> str:
        return (
            f"SelectedFedAvg({self.selector!r}, local_steps={self.local_steps}, lr={self.lr}, "
            f"server_lr={self.server_lr}, seed={self.seed})"
        )
