r"""MimiC (Sun, Mao, Zhang 2024, eq. (15)-(16) and Algorithm 1).

Every client :math:`i` has a correction :math:`c_i` (0 until it first participates). In
round :math:`t`, with participants :math:`\mathcal S_t`,

.. math:: \tilde\Delta_i^t=\Delta_i^t+c_i,\qquad
          v^t=\frac1{|\mathcal S_t|}\sum_{i\in\mathcal S_t}\tilde\Delta_i^t,\qquad
          w_{t+1}=w_t+\eta_g^tv^t,\qquad c_i\leftarrow v^t-\Delta_i^t\ (i\in\mathcal S_t),

so :math:`c_i=v^{\rm last}-\Delta_i^{\rm last}` (one :math:`d`-vector per client).
Updates here are :math:`\Delta=y_E-w` (the paper's have the opposite sign and
:math:`w_{t+1}=w_t-\eta_gv`; the rule is linear, so it is the same algorithm). :math:`v` is
the update before the server rate, as in (16); the official code has :math:`\eta_g=1`.
With ``full_first_round=True`` every client participates in round 0, where all
:math:`c_i=0`, so round 0 is a plain average (the paper's and code's initialisation).
Rounds nobody participates in leave everything unchanged. A round with a single
participant leaves its correction unchanged too (:math:`v=\Delta_i+c_i`, so
:math:`c_i\leftarrow v-\Delta_i=c_i`): without the full first round, MimiC is plain FedAvg
whenever one client is active at a time (e.g. FedLaAvg's Example 1) [derived, tested].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import Text, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _capture as capture
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import average_participating
from fedtheory.sim.algorithm import (
    INIT,
    LOCAL_TRAINING,
    LocalTraining,
    _weighted_sum,
    round_arguments,
)
from fedtheory.sim.reference import local_step, reference_loop, server_step


class MimiCState(NamedTuple):
    w: torch.Tensor  # [R, d]
    correction: torch.Tensor  # [R, N, d] c_i = v^last - Delta_i^last
    participants: torch.Tensor | None = None  # [R, N] bool


@declare(**LOCAL_TRAINING, name=Text())
@dataclass(frozen=True)
class MimiC(LocalTraining):
    """MimiC: participants' updates corrected by their drift at their last active round."""

    name: str = "mimic"

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> MimiCState:
        shape = (w0.shape[0], problem.num_clients, w0.shape[1])
        c = torch.zeros(shape, dtype=torch.float64, device=w0.device)
        return MimiCState(w0, c)

    @declare(**round_arguments(MimiCState))
    def step(
        self,
        problem: FederatedProblem,
        state: MimiCState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> MimiCState:
        """One round: modify, average, update the model, then refresh :math:`c_i`."""
        mask = self.participants(mask, t)
        pairs, delta = self.local_updates(problem, state.w, mask, t, generator)
        rep, cli = pairs.rep, pairs.cli
        stored = state.correction[rep, cli]  # [M, d]
        v = _weighted_sum(average_participating(mask), pairs, delta + stored)  # [R, d]
        refreshed = gather.where_valid(v[rep] - delta, pairs, stored)  # padding: unchanged
        correction = state.correction.index_put((rep, cli), refreshed)
        return MimiCState(self.server_update(state.w, v, t), correction, mask)


# --- the plain loop (one replicate, one client at a time) --------------------
capture.replayed(MimiC)  # its round reads t only through constant step sizes


@reference_loop(MimiC)
def _reference(problem, alg: MimiC, mask, w, gen):
    """MimiC as written: one replicate, one client at a time (:mod:`~fedtheory.sim.reference`)."""
    correction = np.zeros((mask.shape[1], w.size))
    out = [w]
    for t, m in enumerate(mask):
        active = np.flatnonzero(m)
        deltas = {k: local_step(problem, alg, w, k, t, gen(t)) for k in active}
        v = np.zeros_like(w)
        for k in active:
            v += (deltas[k] + correction[k]) / active.size
        for k in active:
            correction[k] = v - deltas[k]
        w = server_step(alg, w, v, t)
        out.append(w)
    return out


EXPORTS = ("MimiC", "MimiCState")
"""Re-exported by :mod:`fedtheory.sim` (the paper's record, :mod:`fedtheory.papers`)."""
