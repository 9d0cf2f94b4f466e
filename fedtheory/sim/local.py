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

from fedtheory.errors import ParameterError
from fedtheory.params import check_array, check_instance, check_real, check_size
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
    owner = "local_sgd"
    check_instance(problem, FederatedProblem, "problem", owner)
    steps = check_size(steps, "steps", owner)
    lr = check_real(lr, "lr", owner, low=0.0, low_open=True)
    prox = check_real(prox, "prox", owner, low=0.0)
    if generator is not None:  # a deterministic problem ignores it, but not silently
        check_instance(generator, torch.Generator, "generator", owner)
    if getattr(problem, "fused", False) and getattr(w, "device", None) == torch.device("cpu"):
        # the kernel's caller checks w and clients as check_pairs does (once per round)
        return problem.local_sgd(w, clients, steps=steps, lr=lr, prox=prox, generator=generator)
    check_pairs(w, clients, problem.dim, problem.num_clients, owner)
    return _sgd_steps(problem, w, clients, steps=steps, lr=lr, prox=prox, generator=generator)


def _sgd_steps(
    problem: FederatedProblem,
    w: torch.Tensor,
    clients: torch.Tensor,
    *,
    steps: int,
    lr: float,
    prox: float,
    generator: torch.Generator | None,
) -> torch.Tensor:
    """The steps of :func:`local_sgd` with batched torch operations, on checked arguments
    (nothing is read back from the device: a static round calls it)."""
    y = w.clone()
    for _ in range(steps):
        g = problem.grad(y, clients, generator)
        if prox:
            g = g + prox * (y - w)
        y = y - lr * g
    return y - w


def check_pairs(w: object, clients: object, dim: int, num_clients: int, owner: str) -> None:
    """``w [M, d]`` floating-point and ``clients [M]`` integer tensors with client indices
    in ``[0, N)``."""
    if not isinstance(w, torch.Tensor) or not w.is_floating_point() or w.dim() != 2:
        raise ParameterError(
            f"The 'w' parameter of {owner} must be a floating-point torch tensor [M, {dim}]. "
            f"Got {type(w).__name__} instead."
        )
    if w.shape[1] != dim:
        raise ParameterError(
            f"The 'w' parameter of {owner} must have shape (M, {dim}). "
            f"Got shape {tuple(w.shape)} instead."
        )
    ok = isinstance(clients, torch.Tensor) and not clients.is_floating_point()
    if not ok or clients.dtype == torch.bool or tuple(clients.shape) != (w.shape[0],):
        got = f"shape {tuple(clients.shape)}" if isinstance(clients, torch.Tensor) else clients
        raise ParameterError(
            f"The 'clients' parameter of {owner} must be an integer torch tensor [M] with "
            f"M={w.shape[0]} (one client per row of w). Got {got!r} instead."
        )
    if not bool(torch.isfinite(w).all()):
        raise ParameterError(f"The 'w' parameter of {owner} must be finite. Got NaN or inf.")
    if clients.numel() and (int(clients.min()) < 0 or int(clients.max()) >= num_clients):
        raise ParameterError(
            f"The 'clients' parameter of {owner} must hold client indices in [0, "
            f"{num_clients - 1}]. Got values in [{int(clients.min())}, {int(clients.max())}] "
            "instead."
        )


def project_ball(
    w: torch.Tensor, radius: float, center: torch.Tensor | None = None
) -> torch.Tensor:
    r"""Euclidean projection of ``w [..., d]`` onto :math:`\{x:\|x-c\|\le r\}` (CA-Fed (3)).

    :math:`\mathrm{Proj}(w)=c+(w-c)\min(1,r/\|w-c\|)`; points inside are returned unchanged."""
    owner = "project_ball"
    if not isinstance(w, torch.Tensor) or not w.is_floating_point() or w.dim() < 1:
        raise ParameterError(
            f"The 'w' parameter of {owner} must be a floating-point torch tensor [..., d]. "
            f"Got {type(w).__name__} instead."
        )
    if not bool(torch.isfinite(w).all()):
        raise ParameterError(f"The 'w' parameter of {owner} must be finite. Got NaN or inf.")
    radius = check_real(radius, "radius", owner, low=0.0, low_open=True)
    if center is not None:
        given = center.detach().cpu().numpy() if isinstance(center, torch.Tensor) else center
        center = torch.from_numpy(check_array(given, "center", owner, shape=(w.shape[-1],)))
    return _ball_projection(w, radius, center)


def _ball_projection(
    w: torch.Tensor, radius: float, center: torch.Tensor | None = None
) -> torch.Tensor:
    """:func:`project_ball` on checked arguments (nothing is read back from the device)."""
    if center is None:
        c = torch.zeros(w.shape[-1], dtype=w.dtype, device=w.device)
    else:
        c = center.to(device=w.device, dtype=w.dtype)
    diff = w - c
    norm = diff.norm(dim=-1, keepdim=True)
    scale = torch.where(norm > radius, radius / norm.clamp_min(torch.finfo(w.dtype).tiny), 1.0)
    return c + diff * scale
