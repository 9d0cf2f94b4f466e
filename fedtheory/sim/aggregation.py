r"""Aggregation weights :math:`q_k` applied by the server to participants' updates.

The server step is :math:`w_{t+1}=w_t+\eta_s\sum_{k\in A_t}q_{t,k}\Delta_t^k` (CA-Fed (3),
FedAU Algorithm 1). An aggregator maps the participation mask ``[R, N]`` of one round to
the weights ``[R, N]`` (zero for clients that do not participate). Stateless rules here;
rules with per-client state (FedAU, CA-Fed) keep it in an explicit record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedtheory.bounds.divergences import effective_weights
from fedtheory.params import check_array, check_simplex


def average_participating(mask: torch.Tensor) -> torch.Tensor:
    r""":math:`q_k=\mathbb 1_{k\in A_t}/|A_t|` (``0`` for everybody if nobody participates).

    ``mask [R, N]`` bool -> ``[R, N]`` float64."""
    m = mask.to(torch.float64)
    return m / m.sum(dim=-1, keepdim=True).clamp_min(1.0)


@dataclass(frozen=True)
class AverageParticipating:
    """Average over the clients that participate in the round (plain FedAvg)."""

    name: str = "avg-participating"

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        return average_participating(mask)


class FixedWeights:
    r"""Constant weights: :math:`q_{t,k}=q_k\mathbb 1_{k\in A_t}` (CA-Fed (3) with a fixed
    :math:`q`). FedAvg then minimises :math:`F_B` with :math:`p_k\propto\pi_kq_k` (CA-Fed (4))."""

    def __init__(self, q, *, name: str = "fixed") -> None:
        self.q = torch.from_numpy(check_array(q, "q", "FixedWeights", ndim=1, low=0.0))
        self.name = name

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        return mask.to(torch.float64) * self.q

    def effective_weights(self, pi) -> np.ndarray:
        r""":math:`p_k=\pi_kq_k/\sum_h\pi_hq_h` for availability ``pi``."""
        return effective_weights(self.q.numpy(), pi)

    def __repr__(self) -> str:
        return f"FixedWeights({self.name}, N={self.q.numel()})"


def unbiased_weights(alpha, pi) -> FixedWeights:
    r"""CA-Fed's "Unbiased" rule / FedAU's known-:math:`p` rule: :math:`q_k=\alpha_k/\pi_k`,
    so that :math:`p=\alpha`."""
    owner = "unbiased_weights"
    a = check_simplex(alpha, "alpha", owner)
    p = check_array(pi, "pi", owner, shape=a.shape, low=0.0, high=1.0, low_open=True)
    return FixedWeights(a / p, name="unbiased")
