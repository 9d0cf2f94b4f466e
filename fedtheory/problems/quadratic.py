r"""Federated quadratic problem with exact constants.

Client :math:`k` has :math:`F_k(w)=\tfrac12(w-c_k)^\top A_k(w-c_k)` with :math:`A_k`
symmetric positive definite, so :math:`w_k^*=c_k`, :math:`F_k^*=0`, and for weights
:math:`p` on the simplex

.. math:: w_p^* = \Big(\sum_k p_kA_k\Big)^{-1}\sum_k p_kA_kc_k .

Constants (CA-Fed Assumptions 3-4 and Section III): :math:`L=\max_k\lambda_{\max}(A_k)`,
:math:`\mu=\min_k\lambda_{\min}(A_k)`, :math:`\kappa=L/\mu`,
:math:`\Gamma=\max_k\{F_k(w^*)-F_k^*\}` (at the target optimum) and
:math:`\Gamma'=\max_k\{F_k(w_B^*)-F_k^*\}` (at the optimum of the biased objective).
Stochastic gradients add isotropic Gaussian noise of per-coordinate standard deviation
``noise_std``, so :math:`\sigma_k^2=d\cdot\text{noise}\_\text{std}^2`. CA-Fed Lemma 1's
:math:`D,G,H` on a ball are exact trust-region maxima (:mod:`fedtheory.problems.ball`).
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.budget import check_bytes, check_seconds, seconds
from fedtheory.constraints import (
    Array,
    Instance,
    Integer,
    Option,
    Probabilities,
    Real,
    Size,
    declare,
)
from fedtheory.device import PerDevice
from fedtheory.errors import ParameterError
from fedtheory.problems.ball import QuadraticConstantsMixin, QuadraticForms
from fedtheory.problems.base import GAMMA_KINDS, GRAD, POINTS, WEIGHTS

__all__ = ["QuadraticProblem"]

_OWNER = "QuadraticProblem"


class QuadraticProblem(QuadraticConstantsMixin):
    r"""Clients :math:`F_k(w)=\tfrac12(w-c_k)^\top A_k(w-c_k)`.

    Parameters
    ----------
    A : array [N, d, d]
        Symmetric positive-definite curvature matrices.
    c : array [N, d]
        Client minimisers :math:`w_k^*`.
    alpha : array [N], optional
        Target weights :math:`\alpha` (default uniform).
    noise_std : float
        Standard deviation of the additive Gaussian gradient noise per coordinate.

    Examples
    --------
    >>> prob = QuadraticProblem.example1(e1=0.0, e2=1.0)
    >>> prob.optimum()[0]
    array([0.5])
    """

    @declare(
        A=Array(ndim=3),
        c=Array(shape=("A[0]", "A[1]")),
        alpha=Probabilities(size="A[0]", none=True),
        noise_std=Real(0.0),
    )
    def __init__(self, A, c, *, alpha=None, noise_std: float = 0.0) -> None:
        n, d = A.shape[0], A.shape[1]
        if A.shape[2] != d:
            raise ParameterError(
                f"The 'A' parameter of {_OWNER} must be an array of shape (N, d, d) with N, "
                f"d >= 1. Got shape {A.shape} instead."
            )
        if not np.allclose(A, np.swapaxes(A, 1, 2), rtol=0, atol=1e-12 * max(1, np.abs(A).max())):
            raise ParameterError(
                f"The 'A' parameter of {_OWNER} must hold symmetric matrices. Got an "
                "asymmetric matrix instead."
            )
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow: refused below
            eig = np.linalg.eigvalsh(A)  # [N, d] ascending
        if not np.isfinite(eig).all():
            raise ParameterError(
                f"The 'A' parameter of {_OWNER} must have finite eigenvalues (they overflow). "
                f"Got entries of magnitude up to {np.abs(A).max():g} instead."
            )
        if np.any(eig[:, 0] <= 0):
            raise ParameterError(
                f"The 'A' parameter of {_OWNER} must hold positive-definite matrices "
                f"(eigenvalues in (0, inf)). Got smallest eigenvalue {eig[:, 0].min():g} instead."
            )
        self.A = A
        self.c = c
        self.alpha = np.full(n, 1.0 / n) if alpha is None else alpha
        self.noise_std = noise_std
        self.num_clients, self.dim = n, d
        self.L = float(eig[:, -1].max())
        self.mu = float(eig[:, 0].min())
        self._tables = PerDevice((torch.from_numpy(A), torch.from_numpy(self.c)))

    # -- builders ---------------------------------------------------------------------
    @classmethod
    @declare(e1=Real(), e2=Real())
    def example1(cls, e1: float, e2: float) -> QuadraticProblem:
        r"""FedLaAvg Example 1: :math:`f_i(x)=(x-e_i)^2`, i.e. :math:`A_i=2`, :math:`c_i=e_i`."""
        return cls(np.full((2, 1, 1), 2.0), np.array([[e1], [e2]]))

    @classmethod
    @declare(
        num_clients=Size(),
        dim=Size(),
        mu=Real(0.0, low_open=True),
        spread=Real(0.0),
        seed=Integer(0),
        max_seconds=Real(0.0, low_open=True, none=True),
    )
    def random(
        cls,
        num_clients: int,
        dim: int,
        *,
        mu: float = 1.0,
        L: float = 10.0,
        spread: float = 1.0,
        noise_std: float = 0.0,
        alpha=None,
        seed: int = 0,
        max_seconds: float | None = None,
    ) -> QuadraticProblem:
        """Random instance: eigenvalues uniform in ``[mu, L]`` (extremes attained), random
        rotations, minimisers ``c_k ~ N(0, spread^2 I)``. Refused before any draw when its
        estimated time is above ``max_seconds`` (default ``FEDTHEORY_MAX_SECONDS``, else 10
        minutes; :mod:`fedtheory.budget`)."""
        owner, n, d = "QuadraticProblem.random", num_clients, dim
        check_bytes(8 * n * d * (3 * d + 2), owner, what=f"{n} matrices [{d}, {d}] and rotations",
                    fixes="fewer clients or dimensions")  # fmt: skip
        check_seconds(seconds(matrices=3 * n, flops=20 * n * d**3), owner,
                      what=f"{n} factorisations of [{d}, {d}] matrices",
                      fixes="fewer clients or dimensions", max_seconds=max_seconds)  # fmt: skip
        L = Real(low=mu).check(L, "L", owner, {})  # a range relative to mu
        if n * d == 1 and L != mu:  # one eigenvalue cannot attain both extremes
            raise ParameterError(
                f"The 'L' parameter of {owner} must equal mu = {mu:g} for one client in one "
                f"dimension (a single eigenvalue). Got {L:g} instead."
            )
        rng = np.random.default_rng(seed)
        eig = rng.uniform(mu, L, size=(n, d))
        eig.flat[0], eig.flat[-1] = mu, L
        q, _ = np.linalg.qr(rng.standard_normal((n, d, d)))
        A = np.einsum("nij,nj,nkj->nik", q, eig, q)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
        with np.errstate(over="ignore"):  # reported below, naming spread
            c = spread * rng.standard_normal((n, d))
        if not np.isfinite(c).all():
            raise ParameterError(
                f"The 'spread' parameter of {owner} must be small enough for the minimisers "
                f"c_k ~ N(0, spread^2 I) to be finite (they overflow). Got {spread:g} instead."
            )
        return cls(A, c, alpha=alpha, noise_std=noise_std)

    # -- exact quantities ---------------------------------------------------------------
    @property
    def kappa(self) -> float:
        r"""Condition number :math:`\kappa=L/\mu`."""
        return self.L / self.mu

    @declare(w=POINTS, finite_result=True)  # inside simulate (trusted): a diverged run's inf
    def client_losses(self, w) -> np.ndarray:
        r""":math:`F_k(w)` for ``w [..., d]`` -> ``[..., N]``."""
        diff = w[..., None, :] - self.c  # [..., N, d]
        return 0.5 * np.einsum("...ni,nij,...nj->...n", diff, self.A, diff)

    @declare(w=POINTS, weights=WEIGHTS)
    def loss(self, w, weights=None) -> np.ndarray:
        r""":math:`\sum_kp_kF_k(w)` for ``w [..., d]`` -> ``[...]`` (default ``p = alpha``)."""
        return self.client_losses(w) @ (self.alpha if weights is None else weights)

    @declare(weights=WEIGHTS)
    def optimum(self, weights=None) -> tuple[np.ndarray, float]:
        r"""Minimiser :math:`w_p^*` ``[d]`` and minimum of :math:`\sum_kp_kF_k`."""
        p = self.alpha if weights is None else weights
        H = np.einsum("n,nij->ij", p, self.A)
        b = np.einsum("n,nij,nj->i", p, self.A, self.c)
        w = np.linalg.solve(H, b)
        return w, float(self.loss(w, p))

    def client_optima(self) -> tuple[np.ndarray, np.ndarray]:
        r"""Local minimisers :math:`w_k^*=c_k` ``[N, d]`` and minima :math:`F_k^*=0` ``[N]``."""
        return self.c.copy(), np.zeros(self.num_clients)

    @declare(weights=WEIGHTS, kind=Option(*GAMMA_KINDS))
    def gamma(self, weights=None, kind: str = "cafed") -> float:
        r""":math:`\max_k\{F_k(w_p^*)-F_k^*\}`: :math:`\Gamma` for ``p = alpha`` (CA-Fed
        Thm 1), :math:`\Gamma'` for ``p`` the biased weights (CA-Fed Thm 3).

        ``kind`` says which heterogeneity: ``"cafed"`` (default) the maximum above;
        ``"li"`` Li et al. 2020's :math:`\Gamma=F^*-\sum_kp_kF_k^*` (Section 3, "Quantifying
        the degree of non-iid"), with :math:`F^*` the minimum of :math:`\sum_kp_kF_k`."""
        w, optimum = self.optimum(weights)
        if kind == "li":  # F_k^* = 0: the client minima of a quadratic
            return float(optimum)
        return float(self.client_losses(w).max())

    # -- exact constants as quadratic forms ---------------------------------------------
    def loss_forms(self) -> QuadraticForms:
        r""":math:`F_k(w)=\tfrac12w^\top A_kw-(A_kc_k)^\top w+\tfrac12c_k^\top A_kc_k`."""
        Ac = np.einsum("nij,nj->ni", self.A, self.c)
        return QuadraticForms(self.A, -Ac, 0.5 * np.sum(self.c * Ac, -1))

    def grad_norm_forms(self) -> QuadraticForms:
        r""":math:`\|\nabla F_k(w)\|^2=(w-c_k)^\top A_k^2(w-c_k)`."""
        A2 = self.A @ self.A
        A2c = np.einsum("nij,nj->ni", A2, self.c)
        return QuadraticForms(2 * A2, -2 * A2c, np.sum(self.c * A2c, -1))

    def noise_forms(self) -> QuadraticForms:
        r""":math:`\sigma_k^2=d\cdot\text{noise}\_\text{std}^2` (constant)."""
        n, d = self.num_clients, self.dim
        return QuadraticForms(
            np.zeros((n, d, d)), np.zeros((n, d)), np.full(n, d * self.noise_std**2)
        )

    @declare(w=POINTS, finite_result=True)  # inside simulate (trusted): a diverged run's inf
    def client_grads(self, w) -> np.ndarray:
        r"""Exact :math:`\nabla F_k(w)=A_k(w-c_k)`: ``w [..., d]`` -> ``[..., N, d]``."""
        return np.einsum("nij,...nj->...ni", self.A, w[..., None, :] - self.c)

    @declare(w=POINTS)
    def noise_variance(self, w) -> np.ndarray:
        r""":math:`\sigma_k^2(w)=\mathbb E\|g_k(w)-\nabla F_k(w)\|^2` ``[N]`` (exact)."""
        return self.noise_forms()(w)

    # -- gradients for the simulator ----------------------------------------------------
    @declare(**GRAD)
    def grad(
        self, w: torch.Tensor, clients: torch.Tensor, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        r""":math:`A_k(w-c_k)+\xi` for ``w [M, d]``, ``clients [M]`` -> ``[M, d]`` (on
        their device; the noise is drawn from ``generator``, on that device too)."""
        A_all, c_all = self._tables.on(w.device)
        A = A_all[clients].to(w.dtype)
        g = torch.einsum("mij,mj->mi", A, w - c_all[clients].to(w.dtype))
        if self.noise_std > 0:  # never torch's global generator
            Instance(torch.Generator).check(
                generator, "generator", f"{_OWNER}.grad", {}
            )  # not None
            noise = torch.randn(g.shape, generator=generator, dtype=g.dtype, device=g.device)
            g = g + self.noise_std * noise
        return g

    def __repr__(self) -> str:
        return (
            f"QuadraticProblem(N={self.num_clients}, d={self.dim}, L={self.L:.4g}, "
            f"mu={self.mu:.4g}, noise_std={self.noise_std:g})"
        )
