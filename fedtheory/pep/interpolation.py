r"""Clients of :math:`\mathcal F_{\mu,L}` that interpolate a PEP's data, as a problem the
simulator can run (Taylor, Hendrickx & Glineur 2017, Theorem 4 and its constructive proof).

Given data :math:`(x_k,g_k,f_k)` satisfying the :math:`\mathcal F_{\mu,L}` interpolation
conditions, :math:`h=f-\tfrac\mu2\|\cdot\|^2` has data :math:`(x_k,\ s_k=g_k-\mu x_k,\
h_k=f_k-\tfrac\mu2\|x_k\|^2)` interpolable by an :math:`L'`-smooth convex function,
:math:`L'=L-\mu`. Conjugating the :math:`1/L'`-strongly convex interpolant of the conjugate
data, :math:`\max_k\{\langle x_k,s_k\rangle-h_k+\langle x_k,y-s_k\rangle+\|y-s_k\|^2/(2L')\}`,
gives

.. math:: h(x)=\min_{\lambda\in\Delta}\ \tfrac{L'}2\Big\|x-\sum_k\lambda_kz_k\Big\|^2
          +\sum_k\lambda_ka_k,\qquad z_k=x_k-\tfrac{s_k}{L'},\ a_k=h_k-\tfrac{\|s_k\|^2}{2L'},

an :math:`L'`-smooth convex function equal to :math:`h_k` at :math:`x_k` with gradient
:math:`s_k`, and :math:`\nabla h(x)=L'(x-\sum_k\lambda^\star_kz_k)` (a small QP over the
simplex, solved with Clarabel at tight tolerances). Then :math:`f=h+\tfrac\mu2\|\cdot\|^2` is
in :math:`\mathcal F_{\mu,L}` and matches the data.

**Smooth non-convex clients** are the case :math:`\mu=-L`: :math:`f` is :math:`L`-smooth iff
:math:`h=f+\tfrac L2\|\cdot\|^2` is convex and :math:`2L`-smooth (the curvature of :math:`f`
lies in :math:`[-L,L]`), which is how the interpolation conditions of :math:`L`-smooth
functions are obtained (Taylor, Hendrickx & Glineur 2017, Theorem 3.10, used by PEPit's
``SmoothFunction``). The same construction with :math:`\mu=-L`, :math:`L'=2L` interpolates
the PEP's data by an :math:`L`-smooth function.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.constraints import (
    Array,
    Exemplified,
    Generator,
    Indices,
    Probabilities,
    Real,
    Tensor,
    declare,
)
from fedtheory.errors import ParameterError, SolverError
from fedtheory.pep._pepit import clients

SOLVER_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
"""Clarabel's tolerances for the interpolant's QPs."""


class _Conjugate:
    """One client's interpolant: :math:`f(x)` and :math:`\\nabla f(x)` by one QP over the
    simplex built once (DPP, parameter :math:`x`)."""

    def __init__(self, points, grads, values, mu: float, L: float) -> None:
        import cvxpy as cp

        self.mu, self.Lp = mu, L - mu
        s = grads - mu * points  # [P, d]
        h = values - 0.5 * mu * np.sum(points**2, -1)
        self.z = points - s / self.Lp  # [P, d]
        self.a = a = h - np.sum(s**2, -1) / (2 * self.Lp)  # [P]
        self.x = cp.Parameter(points.shape[1])
        self.lam = cp.Variable(len(points), nonneg=True)
        objective = self.Lp / 2 * cp.sum_squares(self.x - self.z.T @ self.lam) + a @ self.lam
        self.problem = cp.Problem(cp.Minimize(objective), [cp.sum(self.lam) == 1])

    def _objective(self, x: np.ndarray, lam: np.ndarray) -> float:
        return self.Lp / 2 * float(np.sum((x - self.z.T @ lam) ** 2)) + float(self.a @ lam)

    def _polish(self, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
        r"""The exact minimiser on the solver's support :math:`S` (the KKT system of
        :math:`\min_{\lambda_S}\tfrac{L'}2\|x-Z_S^\top\lambda_S\|^2+a_S^\top\lambda_S`,
        :math:`\mathbf 1^\top\lambda_S=1`, least squares where :math:`Z_S` is affinely
        dependent), kept when it is feasible and no worse. The solver's tolerance bounds the
        objective's error; the point :math:`\sum_k\lambda_kz_k`, hence the gradient, is only
        accurate to about its square root without this step."""
        support = np.flatnonzero(lam > 1e-7 * lam.max())
        while support.size:
            Z, k = self.z[support], support.size
            kkt = np.zeros((k + 1, k + 1))
            kkt[:k, :k] = self.Lp * Z @ Z.T
            kkt[:k, k] = kkt[k, :k] = 1.0
            rhs = np.concatenate([self.Lp * Z @ x - self.a[support], [1.0]])
            sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:k]
            if np.all(sol >= 0):
                polished = np.zeros_like(lam)
                polished[support] = sol
                better = self._objective(x, polished) <= self._objective(x, lam) + 1e-15
                return polished if better else lam
            support = np.delete(support, np.argmin(sol))  # the optimum lies on a face
        return lam

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        r""":math:`(f(x), \nabla f(x))`."""
        import cvxpy as cp

        with np.errstate(over="ignore"):
            if not np.isfinite(self.Lp * float(x @ x)):
                raise ParameterError(
                    "The 'w' parameter of InterpolatedProblem must keep L ||w||^2 finite (the "
                    f"interpolant's value). Got an entry of magnitude {np.abs(x).max():g} instead."
                )
        self.x.value = x
        try:
            self.problem.solve(solver="CLARABEL", **SOLVER_OPTIONS)
        except cp.error.SolverError as err:
            raise SolverError(f"interpolant at x = {x}: {err}") from None
        # "optimal_inaccurate" happens where the QP is degenerate (several lambda give the
        # same point); what the replay claims is checked on its result, the criterion's value
        if self.problem.status not in ("optimal", "optimal_inaccurate"):
            raise SolverError(f"interpolant: cvxpy status {self.problem.status!r} at x = {x}")
        lam = self._polish(x, np.clip(self.lam.value, 0.0, None))
        p = self.z.T @ lam
        value = self._objective(x, lam)
        return value + 0.5 * self.mu * float(x @ x), self.Lp * (x - p) + self.mu * x


POINTS = Array(shape=(None, "x_star[0]"))
"""One client's interpolation points or gradients ``[P_i, d]``."""
AT = Array(shape=(..., "self.dim"))
"""Points ``[..., d]`` at which the clients are evaluated."""


class InterpolatedProblem:
    r"""Federated problem whose clients interpolate the PEP's data (``points, grads,
    values``: ``N x [P_i, d]``) in :math:`\mathcal F_{\mu,L}` (``mu=-L``: :math:`L`-smooth,
    possibly non-convex), weights ``alpha [N]``,
    minimiser ``x_star [d]`` (where :math:`\sum_i\alpha_i\nabla f_i=0` by construction)."""

    @declare(
        x_star=Array(ndim=1),
        points=clients(POINTS, "clients' points [P_i, d]"),
        grads=clients(POINTS, "clients' gradients [P_i, d]"),
        values=clients(Array(ndim=1), "clients' values [P_i]"),
        L=Real(0.0, low_open=True),
        mu=Real(),
        alpha=Probabilities(),
    )
    def __init__(self, points, grads, values, *, mu: float, L: float, alpha, x_star) -> None:
        if not (L > mu >= 0 or mu == -L):
            raise ParameterError(
                f"The 'mu' parameter of InterpolatedProblem must be in [0, L={L:g}) or -L "
                f"(smooth non-convex clients). Got {mu!r} instead."
            )
        shapes = [
            (x.shape, g.shape, f.shape) for x, g, f in zip(points, grads, values, strict=False)
        ]
        if len({len(points), len(grads), len(values), len(alpha)}) > 1 or any(
            g != x or f != x[:1] for x, g, f in shapes
        ):
            raise ParameterError(
                "The 'grads' parameter of InterpolatedProblem must hold, like 'values', one "
                "entry per point of 'points' for every client (one weight of 'alpha' each). Got "
                f"{len(alpha)} weights and the shapes (points, grads, values) {shapes} instead."
            )
        self.clients = [
            _Conjugate(x, g, f, mu, L) for x, g, f in zip(points, grads, values, strict=True)
        ]
        self.num_clients, self.dim = len(self.clients), int(np.asarray(x_star).size)
        self.alpha, self.x_star = alpha, x_star
        self.L, self.mu = L, mu

    def _each(self, w: np.ndarray, index: int) -> np.ndarray:
        pts = np.asarray(w, float).reshape(-1, self.dim)
        out = [[c(x)[index] for c in self.clients] for x in pts]
        return np.asarray(out)

    @declare(w=AT, finite_result=True)
    def client_losses(self, w) -> np.ndarray:
        """The clients' values ``[..., N]`` at ``w [..., d]``."""
        return self._each(w, 0).reshape(*w.shape[:-1], self.num_clients)

    @declare(w=AT, finite_result=True)
    def client_grads(self, w) -> np.ndarray:
        """The clients' gradients ``[..., N, d]`` at ``w [..., d]``."""
        return self._each(w, 1).reshape(*w.shape[:-1], self.num_clients, self.dim)

    @declare(w=AT, weights=Probabilities(size="self.num_clients", none=True), finite_result=True)
    def loss(self, w, weights=None) -> np.ndarray:
        r""":math:`\sum_i p_if_i` ``[...]`` at ``w [..., d]`` (``p``: ``weights``, default
        :math:`\alpha`)."""
        p = self.alpha if weights is None else weights
        return self.client_losses(w) @ p

    @declare(
        weights=Exemplified(Probabilities(size="self.num_clients", none=True), lambda args: None)
    )
    def optimum(self, weights=None) -> tuple[np.ndarray, float]:
        """:math:`(x^*, F(x^*))` of the PEP's objective (``weights`` None: no other
        objective's minimiser is known)."""
        if weights is not None:
            raise ParameterError(
                "The 'weights' parameter of InterpolatedProblem.optimum must be None (only "
                "the PEP's objective has a known minimiser). Got weights instead."
            )
        return self.x_star.copy(), float(self.loss(self.x_star))

    @declare(
        w=Tensor(shape=(None, "self.dim")),
        clients=Indices("self.num_clients", shape=("w[0]",)),
        generator=Generator(none=True),
        finite_result=True,
    )
    def grad(self, w: torch.Tensor, clients: torch.Tensor, generator=None) -> torch.Tensor:
        """Exact gradients ``[M, d]`` of clients ``clients [M]`` at ``w [M, d]``."""
        rows = [
            self.clients[int(k)](x)[1]
            for x, k in zip(w.detach().cpu().numpy(), clients, strict=True)
        ]
        return torch.as_tensor(np.asarray(rows).reshape(w.shape), dtype=w.dtype, device=w.device)

    def __repr__(self) -> str:
        return (
            f"InterpolatedProblem(N={self.num_clients}, d={self.dim}, mu={self.mu:g}, L={self.L:g})"
        )
