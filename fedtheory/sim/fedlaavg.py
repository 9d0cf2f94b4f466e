r"""FedLaAvg (Yan et al. 2020, Algorithms 1-2).

Round :math:`t`: among the available clients :math:`\mathcal C^t`, select the :math:`K` that
have been absent longest (smallest last participation round :math:`T_i`, ties broken by
client index as the code's stable sort does; all of them if fewer than :math:`K` are
available). Each selected client computes its update :math:`u_i` (:math:`C` local steps;
one gradient step for Algorithm 1) and the server keeps the latest update of every client:

.. math:: u_i\leftarrow\Delta_t^i,\ T_i\leftarrow t\ (i\in\mathcal B^t),\qquad
          w_{t+1}=w_t+\eta_s\frac1N\sum_{i=1}^Nu_i\quad\text{(eq. (3)-(4))}.

⚠ Appendix Alg. 3 line 13 omits the :math:`1/N`; it is a typo (erratum ``fedlaavg.alg3.line13``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import Integer, Mask, Size, Tensor, Text, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.memory import UpdateTable, _refresh_pairs, empty_table
from fedtheory.sim.reference import local_step, reference_loop, server_step


@declare(
    mask=Mask(tensor=True, shape=(None, None)),
    last=Tensor(dtype="int64", shape=("mask[0]", "mask[1]"), low=-1.0),
    k=Size(),
)
def absent_longest(mask: torch.Tensor, last: torch.Tensor, k: int) -> torch.Tensor:
    """Select, per replicate, the ``k`` available clients with the smallest ``last``.

    ``mask [R, N]`` bool, ``last [R, N]`` int64 (last participation round, -1 = never)
    -> ``[R, N]`` bool with ``min(k, #available)`` entries per row."""
    n = mask.shape[-1]
    key = last * n + torch.arange(n, device=last.device)  # unique: ties broken by client index
    key = torch.where(mask, key, torch.iinfo(torch.int64).max)
    chosen = key.topk(min(k, n), dim=-1, largest=False)
    picked = torch.zeros_like(mask).scatter_(-1, chosen.indices, True)
    return picked & mask


class FedLaAvgState(NamedTuple):
    w: torch.Tensor  # [R, d]
    table: UpdateTable  # latest updates [R, N, d] and their mean [R, d]
    last: torch.Tensor  # [R, N] int64, T_i (-1 before the first participation)
    participants: torch.Tensor | None = None  # [R, N] bool, the selected B^t


@declare(**LOCAL_TRAINING, clients_per_round=Integer(1), name=Text())
@dataclass(frozen=True)
class FedLaAvg(LocalTraining):
    r"""FedLaAvg with ``clients_per_round`` = :math:`K` (:math:`\beta=K/N`)."""

    clients_per_round: int = 1
    name: str = "fedlaavg"

    def __post_init__(self) -> None:
        super().__post_init__()

    def _most_workers(self, replicates: int) -> int:
        """At most :math:`K` clients per replicate work (a static round's capacity)."""
        return replicates * self.clients_per_round

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> FedLaAvgState:
        r, n = w0.shape[0], problem.num_clients
        last = torch.full((r, n), -1, dtype=torch.int64, device=w0.device)
        return FedLaAvgState(w0, empty_table(r, n, w0.shape[1], w0.device), last)

    @declare(**round_arguments(FedLaAvgState))
    def step(
        self,
        problem: FederatedProblem,
        state: FedLaAvgState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> FedLaAvgState:
        """One round: select absent-longest, refresh their updates, apply the mean."""
        chosen = absent_longest(self.participants(mask, t), state.last, self.clients_per_round)
        pairs, delta = self.local_updates(problem, state.w, chosen, t, generator)
        table, _ = _refresh_pairs(state.table, pairs, delta)
        last = torch.where(chosen, t, state.last)
        return FedLaAvgState(self.server_update(state.w, table.mean, t), table, last, chosen)


# --- the plain loop (one replicate, one client at a time) --------------------
@reference_loop(FedLaAvg)
def _reference(problem, alg: FedLaAvg, mask, w, gen):
    """FedLaAvg as written: one replicate, one client at a time (the plain loop)."""
    latest = np.zeros((mask.shape[1], w.size))
    last = np.full(mask.shape[1], -1)
    out = [w]
    for t, m in enumerate(mask):
        available = sorted(np.flatnonzero(m), key=lambda i: last[i])  # stable sort
        for k in available[: alg.clients_per_round]:
            latest[k] = local_step(problem, alg, w, k, t, gen(t))
            last[k] = t
        w = server_step(alg, w, latest.mean(axis=0), t)
        out.append(w)
    return out


EXPORTS = ("FedLaAvg", "FedLaAvgState", "absent_longest")
"""Re-exported by :mod:`fedtheory.sim` (the paper's record, :mod:`fedtheory.papers`)."""
