r"""The interface every federated problem offers to the simulator and the bounds.

A problem has ``N`` clients with local objectives :math:`F_k` on :math:`\mathbb R^d`,
target weights :math:`\alpha` (the objective :math:`F=\sum_k\alpha_kF_k`), and can
evaluate gradients for an arbitrary batch of (point, client) pairs, so that the simulator
only computes what participating clients need.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import torch


@runtime_checkable
class FederatedProblem(Protocol):
    num_clients: int
    dim: int
    alpha: np.ndarray  # [N] target weights on the simplex

    def grad(
        self, w: torch.Tensor, clients: torch.Tensor, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Stochastic gradients ``[M, d]`` of clients ``clients [M]`` at points ``w [M, d]``."""
        ...

    def client_losses(self, w: np.ndarray) -> np.ndarray:
        """Exact local objectives: ``w [..., d]`` -> ``[..., N]``."""
        ...

    def loss(self, w: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Weighted objective :math:`\\sum_k p_kF_k(w)` (default ``p = alpha``): ``[...]``."""
        ...

    def optimum(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """Minimiser and minimum value of :math:`\\sum_k p_kF_k`."""
        ...
