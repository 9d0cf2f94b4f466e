r"""The interface every federated problem offers to the simulator and the bounds.

A problem has ``N`` clients with local objectives :math:`F_k` on :math:`\mathbb R^d`,
target weights :math:`\alpha` (the objective :math:`F=\sum_k\alpha_kF_k`), and can
evaluate gradients for an arbitrary batch of (point, client) pairs, so that the simulator
only computes what participating clients need.

Beyond this protocol, the concrete problems offer (duck-typed, used when present):
``client_grads(w [..., d]) -> [..., N, d]`` and ``full_grad`` (exact gradients),
``accuracy(w)`` (classifiers), ``L``, ``mu``, ``kappa``, ``gamma(weights)`` (CA-Fed
:math:`\Gamma`, :math:`\Gamma'`), ``noise_variance(w) -> [N]`` (:math:`\sigma_k^2`),
``lemma1_constants(ball, weights)`` and ``max_noise_variance(ball)`` (CA-Fed Lemma 1), and for
data-backed problems ``batch_size``, ``sampling``, ``full_batch`` and
``optimality_gap_bound(weights)``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import torch

from fedtheory.constraints import (
    Array,
    Generator,
    Indices,
    Probabilities,
    Size,
    Tensor,
    Text,
    declare,
)
from fedtheory.errors import ParameterError

POINTS = Array(shape=(..., "self.dim"))
"""Points ``w [..., d]`` of a problem's methods (``self.dim``), finite."""
WEIGHTS = Probabilities(size="self.num_clients", none=True)
"""Weights ``[N]`` on the simplex, one per client (``None``: the target ``alpha``)."""
GRAD = dict(
    # finite: a user's NaN or inf point is refused (the simulator's rounds call grad
    # trusted, unchecked, and report a diverging run themselves); min_size=0: a round in
    # which no client is available has no (point, client) pair
    w=Tensor(dtype="floating", shape=(None, "self.dim"), min_size=0),
    clients=Indices("self.num_clients", shape=("w[0]",), min_size=0),
    generator=Generator(none=True),
)
"""The simulator's gradient call ``grad(w [M, d], clients [M], generator)``."""
GAMMA_KINDS = ("cafed", "li")
r"""The heterogeneity a problem's ``gamma`` returns: CA-Fed's
:math:`\max_k\{F_k(w_p^*)-F_k^*\}` (Rodio et al. 2023, Theorem 1) or Li et al. 2020's
:math:`F^*-\sum_kp_kF_k^*` (Section 3)."""


@declare(dim=Size(), owner=Text(), name=Text())
def check_points(w: object, dim: int, owner: str, name: str = "w") -> np.ndarray:
    """Points ``w [..., dim]`` as a float64 array, else ParameterError (naming ``name`` and
    ``owner``, the caller: so ``w`` is checked here, not declared)."""
    points = Array(min_size=0).check(w, name, owner, {})
    if points.ndim < 1 or points.shape[-1] != dim:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be an array of shape (..., {dim}). "
            f"Got shape {points.shape} instead."
        )
    return points


@runtime_checkable
class FederatedProblem(Protocol):
    num_clients: int
    dim: int
    alpha: np.ndarray  # [N] target weights on the simplex

    @declare(**GRAD)
    def grad(
        self, w: torch.Tensor, clients: torch.Tensor, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Stochastic gradients ``[M, d]`` of clients ``clients [M]`` at points ``w [M, d]``."""
        ...

    @declare(w=POINTS)
    def client_losses(self, w: np.ndarray) -> np.ndarray:
        """Exact local objectives: ``w [..., d]`` -> ``[..., N]``."""
        ...

    @declare(w=POINTS, weights=WEIGHTS)
    def loss(self, w: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Weighted objective :math:`\\sum_k p_kF_k(w)` (default ``p = alpha``): ``[...]``."""
        ...

    @declare(weights=WEIGHTS)
    def optimum(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, float]:
        """Minimiser and minimum value of :math:`\\sum_k p_kF_k`."""
        ...
