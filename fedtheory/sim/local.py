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

from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import Array, Indices, Instance, Real, Tensor, declare
from fedtheory.problems.base import FederatedProblem

__all__ = ["local_sgd", "project_ball"]  # sgd_updates, ball_projection: the rounds' kernels


@declare(
    "steps",
    "lr",
    "prox",
    "generator",
    problem=Instance(FederatedProblem),
    w=Tensor(dtype="floating", shape=(None, "problem.dim"), min_size=0),
    clients=Indices("problem.num_clients", shape=("w[0]",), min_size=0),
    finite_result=True,
)
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
    """Updates ``Delta [M, d]`` of clients ``clients [M]`` starting from ``w [M, d]``
    (finite on the CPU; an update that overflows is refused, naming the largest input).

    Problems with a fused kernel (``problem.fused``) run all steps of all pairs in it when
    the tensors are on the CPU (same law, other random numbers); otherwise step by step."""
    check_seconds(seconds(rounds=steps, cells=steps * w.numel()), "local_sgd",
                  what=f"{steps} steps of {w.shape[0]} pairs in dimension {w.shape[1]}",
                  fixes="fewer steps or pairs")  # fmt: skip
    return sgd_updates(problem, w, clients, steps=steps, lr=lr, prox=prox, generator=generator)


def sgd_updates(
    problem: FederatedProblem,
    w: torch.Tensor,
    clients: torch.Tensor,
    *,
    steps: int,
    lr: float | tuple[float, ...],
    prox: float,
    generator: torch.Generator | None,
    fused: bool = True,
) -> torch.Tensor:
    r""":func:`local_sgd` for the simulator's rounds, whose arguments the algorithm built
    (``lr``: one rate, or one per step, :math:`\eta_j` of step :math:`j`):
    nothing is checked (no host sync), and a diverging run's inf or NaN is returned for the
    simulator's finiteness check after the round to report (DivergenceError naming it).
    ``fused=False`` never takes the fused CPU kernel: the steps are batched torch
    operations that read nothing back from the device (a static round)."""
    rates = lr if isinstance(lr, tuple) else (lr,) * steps
    if len(set(rates)) == 1:  # one rate for the round (the fused kernel takes one)
        lr = rates[0]
    if (
        fused
        and not isinstance(lr, tuple)
        and getattr(problem, "fused", False)
        and (w.device == torch.device("cpu"))
    ):
        return problem.local_sgd(w, clients, steps=steps, lr=lr, prox=prox, generator=generator)
    y = w.clone()
    for rate in rates:
        g = problem.grad(y, clients, generator)
        if prox:
            g = g + prox * (y - w)
        y = y - rate * g
    return y - w


@declare(
    w=Tensor(dtype="floating", shape=(..., None)),
    radius=Real(0.0, low_open=True),
    center=Array(shape=("w[-1]",), none=True),
)
def project_ball(
    w: torch.Tensor, radius: float, center: torch.Tensor | None = None
) -> torch.Tensor:
    r"""Euclidean projection of ``w [..., d]`` onto :math:`\{x:\|x-c\|\le r\}` (CA-Fed (3)).

    :math:`\mathrm{Proj}(w)=c+(w-c)\min(1,r/\|w-c\|)`; points inside are returned unchanged."""
    return ball_projection(w, radius, None if center is None else torch.from_numpy(center))


def ball_projection(
    w: torch.Tensor, radius: float, center: torch.Tensor | None = None
) -> torch.Tensor:
    """:func:`project_ball` for the simulator's rounds (arguments built by the algorithm:
    nothing checked, no host sync)."""
    if center is None:
        c = torch.zeros(w.shape[-1], dtype=w.dtype, device=w.device)
    else:
        c = center.to(device=w.device, dtype=w.dtype)
    diff = w - c
    norm = diff.norm(dim=-1, keepdim=True)
    scale = torch.where(norm > radius, radius / norm.clamp_min(torch.finfo(w.dtype).tiny), 1.0)
    return c + diff * scale
