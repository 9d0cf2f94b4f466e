r"""FedAWE (Xiang et al. 2024, Algorithm 1): adaptive innovation echoing and implicit gossiping.

Every client keeps its own model :math:`x_i` and the last round :math:`\tau_i` it was active
(:math:`\tau_i(0)=-1`). In round :math:`t` each active client :math:`i\in A_t` runs
:math:`s` local SGD steps from :math:`x_i^t`, :math:`G_i^t=x_i^t-x_i^{(t,s)}`, and reports
:math:`x_i^{t\dagger}=x_i^t-\eta_g(t-\tau_i(t))G_i^t` (lines 5-11). The server averages

.. math:: x^{t+1}=\frac1{|A_t|}\sum_{i\in A_t}x_i^{t\dagger}
          =\bar x_{A_t}^t+\eta_g\,v_t,\qquad
          v_t=\frac1{|A_t|}\sum_{i\in A_t}(t-\tau_i(t))\,(x_i^{(t,s)}-x_i^t),

and sends :math:`x^{t+1}` to the active clients only; they set :math:`\tau_i=t`, the others
keep :math:`x_i` and :math:`\tau_i` (lines 15-21).

**No active client.** Algorithm 1 does not say what line 15 does when :math:`A_t=\emptyset`
(the average is 0/0); the proof of Lemma 4 takes :math:`W^{(t)}=I` then. Here nothing
changes: every :math:`x_i` and :math:`\tau_i` stays, and the server model stays
:math:`x^{t+1}=x^t`.

``variant="code"`` is the authors' experiments (App. J, Table 6): the local rate is
:math:`\eta_l(t)=\eta_0/\sqrt{t/10+1}` with :math:`\eta_0` the given ``lr``, and the
aggregated update is clipped, :math:`v_t\leftarrow v_t\min(1,c/\|v_t\|)` with
:math:`c=` ``clip`` (default 0.5). The paper's words are "gradient clipping with a max norm
of 0.5 to all dataset trainings" (App. J.2), which may also mean clipping each local
stochastic gradient; fedtheory clips the aggregated update :math:`v_t` and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import Function, Option, Real, Tensor, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import _sum_per_replicate
from fedtheory.sim.algorithm import (
    INIT,
    LOCAL_TRAINING,
    LocalTraining,
    _weighted_sum,
    round_arguments,
)
from fedtheory.sim.local import ball_projection
from fedtheory.sim.reference import local_step, reference_loop
from fedtheory.sim.schedules import Schedule

VARIANTS = ("paper", "code")
CODE_CLIP = 0.5
"""Max norm of the aggregated update in the authors' experiments (App. J.2)."""


class FedAWEState(NamedTuple):
    w: torch.Tensor  # [R, d] server model x^t (the last average sent)
    x: torch.Tensor  # [R, N, d] client models x_i^t
    tau: torch.Tensor  # [R, N] int64, last active round tau_i(t) (-1 before the first)
    participants: torch.Tensor | None = None  # [R, N] bool, clients that worked last round
    echo: torch.Tensor | None = None  # [R, N] t - tau_i(t) applied last round (0 if absent)


@declare(base=Function())
@dataclass(frozen=True)
class CodeRate:
    r"""The authors' local rate :math:`\eta_0(t)/\sqrt{t/10+1}` (App. J, Table 6)."""

    base: Schedule

    def __call__(self, t: int) -> float:
        return self.base(t) / math.sqrt(t / 10 + 1)


@declare(v=Tensor(dtype="floating", shape=(..., None)), max_norm=Real(0.0, low_open=True))
def clip_norm(v: torch.Tensor, max_norm: float) -> torch.Tensor:
    r""":math:`v\min(1,c/\|v\|)` row-wise for ``v [..., d]`` (norm at most ``max_norm``)."""
    norm = v.norm(dim=-1, keepdim=True)
    return v * torch.where(norm > max_norm, max_norm / norm.clamp_min(1e-300), 1.0)


@declare(**LOCAL_TRAINING, variant=Option(*VARIANTS), clip=Real(0.0, low_open=True, none=True))
@dataclass(frozen=True)
class FedAWE(LocalTraining):
    r"""FedAWE: ``local_steps`` = :math:`s`, ``lr`` = :math:`\eta_l` (:math:`\eta_0` for
    ``variant="code"``), ``server_lr`` = :math:`\eta_g` (module docstring).

    Parameters
    ----------
    variant : {"paper", "code"}
        Algorithm 1 as published, or the authors' experiments (decaying local rate,
        clipped aggregated update).
    clip : float, optional
        Max norm of the aggregated update :math:`v_t`; default none for ``"paper"`` and
        0.5 for ``"code"``.

    Examples
    --------
    >>> FedAWE(local_steps=2, lr=0.1).name, FedAWE(variant="code").clip
    ('fedawe', 0.5)
    """

    variant: str = "paper"
    clip: float | None = None
    name: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variant == "code":
            object.__setattr__(self, "client_lr", CodeRate(self.client_lr))
            if self.clip is None:
                object.__setattr__(self, "clip", CODE_CLIP)
        if not self.name:
            name = "fedawe" if self.variant == "paper" else "fedawe[code]"
            object.__setattr__(self, "name", name)

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> FedAWEState:
        r, n = w0.shape[0], problem.num_clients
        x = w0[:, None, :].expand(r, n, -1).clone()
        tau = torch.full((r, n), -1, dtype=torch.int64, device=w0.device)
        return FedAWEState(w0, x, tau)

    @declare(**round_arguments(FedAWEState))
    def step(
        self,
        problem: FederatedProblem,
        state: FedAWEState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> FedAWEState:
        """One round of Algorithm 1 for every replicate (``mask [R, N]``)."""
        mask = self.participants(mask, t)
        shape = tuple(mask.shape)
        echo = torch.zeros(shape, dtype=state.w.dtype, device=state.w.device)
        pairs, delta = self.local_updates(problem, state.x, mask, t, generator)  # from x_i^t
        rep, cli = pairs.rep, pairs.cli
        if pairs.valid is None and rep.numel() == 0:
            return FedAWEState(state.w, state.x, state.tau, mask, echo)
        start, tau_old = state.x[rep, cli], state.tau[rep, cli]  # [M, d], [M]
        echo = echo.index_put((rep, cli), gather.where_valid((t - tau_old).to(echo.dtype), pairs))
        count = mask.sum(-1, keepdim=True).to(echo.dtype)  # [R, 1]
        has = count[:, 0] > 0
        inv = torch.where(count > 0, 1 / count.clamp_min(1), 0.0)  # [R, 1]
        mean_x = _sum_per_replicate(gather.where_valid(start, pairs), rep, cli, shape) * inv
        v = _weighted_sum(echo, pairs, delta) * inv  # [R, d]
        if self.clip is not None:
            v = clip_norm(v, self.clip)
        w_next = mean_x + self.server_rate(t) * v
        if self.radius is not None:
            w_next = ball_projection(w_next, self.radius)
        w_next = torch.where(has[:, None], w_next, state.w)
        # lines 16-21 for the active clients; a padding row writes its client's x_i, tau_i back
        x = state.x.index_put((rep, cli), gather.where_valid(w_next[rep], pairs, start))
        tau = state.tau.index_put(
            (rep, cli), gather.where_valid(torch.full_like(tau_old, t), pairs, tau_old)
        )
        return FedAWEState(w_next, x, tau, mask, echo)


# --- the plain loop (one replicate, one client at a time) --------------------
def _plain_loop(problem, alg: FedAWE, mask, w, gen):
    """FedAWE, Algorithm 1 of Xiang et al. 2024 (``alg.variant="code"``: the authors' rate
    and clipped aggregated update), line by line for one replicate: the server models
    ``[T+1]`` and the final client models ``[N, d]`` and last active rounds ``[N]``."""
    n = mask.shape[1]
    x = [w.copy() for _ in range(n)]  # line 2: x_i^0 = x^0, tau_i(0) = -1
    tau = [-1] * n
    out = [w]
    for t, m in enumerate(mask):
        active = [i for i in range(n) if m[i]]
        if not active:  # nobody reports: W = I, every model and tau_i stays
            out.append(w)
            continue
        sent, echoed = np.zeros_like(w), np.zeros_like(w)
        for i in active:  # lines 4-13
            g = -local_step(problem, alg, x[i], i, t, gen(t))  # G_i^t = x_i^t - x_i^(t,s)
            sent += x[i] / len(active)
            echoed += (t - tau[i]) * g / len(active)
        if alg.clip is not None:
            norm = np.linalg.norm(echoed)
            if norm > alg.clip:
                echoed = echoed * (alg.clip / norm)
        w = sent - alg.server_rate(t) * echoed  # line 15: mean of x_i^t - eta_g (t-tau) G
        if alg.radius is not None and np.linalg.norm(w) > alg.radius:
            w = w * (alg.radius / np.linalg.norm(w))
        for i in active:  # lines 16-21
            x[i] = w.copy()
            tau[i] = t
        out.append(w)
    return out, np.array(x), np.array(tau)


@reference_loop(
    FedAWE,
    examples={
        "fedawe": {"local_steps": 3, "lr": 0.1},
        "fedawe-code": {
            "local_steps": 3,
            "lr": 0.1,
            "variant": "code",
            "clip": 0.2,
            "server_lr": 1.5,
        },
    },
)
def _reference(problem, alg: FedAWE, mask, w, gen):
    """FedAWE's plain loop (:func:`_plain_loop`): the server models ``[T+1]``."""
    return _plain_loop(problem, alg, mask, w, gen)[0]


EXPORTS = ("FedAWE", "FedAWEState")
"""Re-exported by :mod:`fedtheory.sim` (the paper's record, :mod:`fedtheory.papers`)."""
