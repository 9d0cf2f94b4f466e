r"""Client-side local solver: :math:`E` steps of (stochastic) gradient descent.

For every participating (replicate, client) pair, :math:`y_0=w_t`,
:math:`y_{j+1}=y_j-\eta\,g_k(y_j)`, and the reported update is :math:`\Delta=y_E-w_t`
(CA-Fed §3.1; FedAU Algorithm 1). All pairs of all replicates advance together as one
batch ``[M, d]``.
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
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Updates ``Delta [M, d]`` of clients ``clients [M]`` starting from ``w [M, d]``."""
    y = w.clone()
    for _ in range(steps):
        y = y - lr * problem.grad(y, clients, generator)
    return y - w
