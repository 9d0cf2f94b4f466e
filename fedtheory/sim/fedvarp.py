r"""FedVARP (Jhunjhunwala et al. 2022), as in the FedAU authors' code (``main.py``).

With :math:`\bar u^{\rm old}=\frac1N\sum_ku_k` taken before this round's refresh,

.. math:: v_t=\bar u^{\rm old}+\frac1{|A_t|}\sum_{k\in A_t}(\Delta_t^k-u_k^{\rm old}),\qquad
          u_k\leftarrow\Delta_t^k\ (k\in A_t),\qquad w_{t+1}=w_t+\eta_sv_t .

⚠ When nobody participates the FedAU code applies :math:`v_t=0`, not :math:`\bar u^{\rm old}`
(``skip_empty_rounds=True``, the default, reproduces the code; ``False`` applies the
formula, i.e. :math:`\bar u^{\rm old}`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import Bool, Text, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _capture as capture
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import _sum_per_replicate
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.memory import UpdateTable, _refresh_pairs, empty_table
from fedtheory.sim.reference import local_step, reference_loop, server_step


class FedVARPState(NamedTuple):
    w: torch.Tensor  # [R, d]
    table: UpdateTable  # latest updates [R, N, d] and their mean [R, d]
    participants: torch.Tensor | None = None  # [R, N] bool


@declare(**LOCAL_TRAINING, skip_empty_rounds=Bool(), name=Text())
@dataclass(frozen=True)
class FedVARP(LocalTraining):
    """FedVARP: SAGA-style variance reduction over clients with stored updates."""

    skip_empty_rounds: bool = True
    name: str = "fedvarp"

    def __post_init__(self) -> None:
        super().__post_init__()

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> FedVARPState:
        return FedVARPState(
            w0, empty_table(w0.shape[0], problem.num_clients, w0.shape[1], w0.device)
        )

    @declare(**round_arguments(FedVARPState))
    def step(
        self,
        problem: FederatedProblem,
        state: FedVARPState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> FedVARPState:
        """One round: ``v = mean_old + mean over participants of (Delta - u_old)``."""
        mask = self.participants(mask, t)
        pairs, delta = self.local_updates(problem, state.w, mask, t, generator)
        table, old = _refresh_pairs(state.table, pairs, delta)
        count = mask.sum(dim=-1, keepdim=True).to(torch.float64)  # [R, 1]
        change = gather.where_valid(delta - old, pairs)  # [M, d], 0 on padding rows
        correction = _sum_per_replicate(change, pairs.rep, pairs.cli, tuple(mask.shape))
        v = state.table.mean + correction / count.clamp_min(1.0)
        if self.skip_empty_rounds:
            v = torch.where(count > 0, v, 0.0)
        return FedVARPState(self.server_update(state.w, v, t), table, mask)


# --- the plain loop (one replicate, one client at a time) --------------------
capture.replayed(FedVARP)  # its round reads t only through constant step sizes


@reference_loop(FedVARP)
def _reference(problem, alg: FedVARP, mask, w, gen):
    """FedVARP as written: one replicate, one client at a time (:mod:`~fedtheory.sim.reference`)."""
    latest = np.zeros((mask.shape[1], w.size))
    out = [w]
    for t, m in enumerate(mask):
        v = latest.mean(axis=0)
        active = np.flatnonzero(m)
        if active.size == 0 and alg.skip_empty_rounds:
            v = np.zeros_like(w)
        for k in active:
            delta = local_step(problem, alg, w, k, t, gen(t))
            v = v + (delta - latest[k]) / active.size
            latest[k] = delta
        w = server_step(alg, w, v, t)
        out.append(w)
    return out
