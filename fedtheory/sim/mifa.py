r"""MIFA (Gu et al. 2021), as the FedAU and MimiC papers run it (MimiC Sec. 7; the FedAU authors'
code, ``main.py``).

The server stores the latest update :math:`u_k` of every client (0 before its first
participation) and applies the average over **all** clients:

.. math:: u_k\leftarrow\Delta_t^k\ (k\in A_t),\qquad
          w_{t+1}=w_t+\eta_s\frac1N\sum_{k=1}^Nu_k .
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import Text, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _capture as capture
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.memory import UpdateTable, _refresh_pairs, empty_table
from fedtheory.sim.reference import local_step, reference_loop, server_step


class MIFAState(NamedTuple):
    w: torch.Tensor  # [R, d]
    table: UpdateTable  # latest updates [R, N, d] and their mean [R, d]
    participants: torch.Tensor | None = None  # [R, N] bool


@declare(**LOCAL_TRAINING, name=Text())
@dataclass(frozen=True)
class MIFA(LocalTraining):
    """MIFA: average of every client's latest update (stale for absent clients)."""

    name: str = "mifa"

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> MIFAState:
        return MIFAState(w0, empty_table(w0.shape[0], problem.num_clients, w0.shape[1], w0.device))

    @declare(**round_arguments(MIFAState))
    def step(
        self,
        problem: FederatedProblem,
        state: MIFAState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> MIFAState:
        """One round: refresh the participants' rows, apply the mean of the table."""
        mask = self.participants(mask, t)
        pairs, delta = self.local_updates(problem, state.w, mask, t, generator)
        table, _ = _refresh_pairs(state.table, pairs, delta)
        return MIFAState(self.server_update(state.w, table.mean, t), table, mask)


# --- the plain loop (one replicate, one client at a time) --------------------
capture.replayed(MIFA)  # its round reads t only through constant step sizes


@reference_loop(MIFA)
def _reference(problem, alg: MIFA, mask, w, gen):
    """MIFA as written: one replicate, one client at a time (:mod:`~fedtheory.sim.reference`)."""
    latest = np.zeros((mask.shape[1], w.size))
    out = [w]
    for t, m in enumerate(mask):
        for k in np.flatnonzero(m):
            latest[k] = local_step(problem, alg, w, k, t, gen(t))
        w = server_step(alg, w, latest.mean(axis=0), t)
        out.append(w)
    return out
