r"""Client-side local solver and the server's projection.

For every participating (replicate, client) pair, :math:`y_0=w_t` and, for
:math:`j=0,\dots,E-1`,

.. math:: y_{j+1}=y_j-\eta\big(g_k(y_j)+\mu_{\rm prox}(y_j-w_t)\big),

where :math:`g_k` is the problem's mini-batch gradient (the batch is drawn from the given
generator) and :math:`\mu_{\rm prox}\ge0` is FedProx's proximal coefficient (plain local SGD
for :math:`\mu_{\rm prox}=0`: CA-Fed §3.1, FedAU Algorithm 1). The reported update is
:math:`\Delta=y_E-w_t`. All pairs of all replicates advance together as one batch ``[M, d]``.

CA-Fed (3) projects the server model onto a convex compact set :math:`W`; here :math:`W` is
the ball :math:`\{w:\|w-c\|\le r\}` (:func:`project_ball`).
"""

from __future__ import annotations

import torch

from fedtheory.problems.base import FederatedProblem


def local_sgd(
    problem: FederatedProblem,
    w: torch.Tensor,
    clients: torch.Tensor,
    *,
    steps: int,
    lr: float,
    prox: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Updates ``Delta [M, d]`` of clients ``clients [M]`` starting from ``w [M, d]``.

    Problems with a fused kernel (``problem.fused``) run all steps of all pairs in it when
    the tensors are on the CPU (same law, other random numbers); otherwise step by step."""
    if getattr(problem, "fused", False) and w.device.type == "cpu":
        return problem.local_sgd(w, clients, steps=steps, lr=lr, prox=prox, generator=generator)
    y = w.clone()
    for _ in range(steps):
        g = problem.grad(y, clients, generator)
        if prox:
            g = g + prox * (y - w)
        y = y - lr * g
    return y - w


def project_ball(
    w: torch.Tensor, radius: float, center: torch.Tensor | None = None
) -> torch.Tensor:
    r"""Euclidean projection of ``w [..., d]`` onto :math:`\{x:\|x-c\|\le r\}` (CA-Fed (3)).

    :math:`\mathrm{Proj}(w)=c+(w-c)\min(1,r/\|w-c\|)`; points inside are returned unchanged."""
    c = torch.zeros(w.shape[-1], dtype=w.dtype, device=w.device) if center is None else center
    diff = w - c
    norm = diff.norm(dim=-1, keepdim=True)
    scale = torch.where(norm > radius, radius / norm.clamp_min(torch.finfo(w.dtype).tiny), 1.0)
    return c + diff * scale
