r"""The ball :math:`W` of CA-Fed's projected aggregation (3) and the constants of CA-Fed
Lemma 1 on it: :math:`\|\nabla F_k(w)\|\le D`, :math:`\mathbb E\|\nabla F_k(w,\xi)\|^2\le
G^2` and :math:`|F_k(w)-F_k(w_B^*)|\le H` for all :math:`w\in W`.

For quadratic losses these suprema are maxima of quadratic functions over a ball: the
trust-region problem, which has no duality gap even for an indefinite quadratic (so the
maximum of a convex function, attained on the boundary, is computed exactly).
:func:`max_quadratic_on_ball` returns the dual value
:math:`\min_{\lambda>\max(\lambda_{\max}(Q),0)}\tfrac12\tilde g^\top(\lambda I-Q)^{-1}\tilde g+
\tfrac12\lambda r^2+f(c)`, which is an upper bound for *every* feasible :math:`\lambda`
(weak duality: certified) and equals the maximum at the minimising :math:`\lambda`
(strong duality: tight, to rounding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.constraints import (
    Array,
    Instance,
    Probabilities,
    Real,
    Size,
    Text,
    declare,
    refuse_non_finite,
)
from fedtheory.errors import ParameterError

__all__ = [
    "Ball",
    "LemmaOneConstants",
    "QuadraticForms",
    "max_quadratic_on_ball",
    "quadratic_lemma_one",
    "QuadraticConstantsMixin",
]

_BISECTION_STEPS = 200


@declare(center=Array(ndim=1), radius=Real(0.0))
@dataclass(frozen=True, eq=False)
class Ball:
    r"""Closed ball :math:`W=\{w:\|w-c\|\le r\}` (``center`` ``[d]``, ``radius`` :math:`r`).

    Examples
    --------
    >>> Ball([0.0, 0.0], 2.0).project(np.array([3.0, 4.0]))
    array([1.2, 1.6])
    """

    center: np.ndarray
    radius: float

    @property
    def dim(self) -> int:
        return int(self.center.shape[0])

    @declare(w=Array(shape=(..., "self.dim")))
    def contains(self, w) -> np.ndarray:
        """``w [..., d]`` -> bool ``[...]``."""
        with np.errstate(over="ignore"):  # a point at distance inf is outside
            return np.linalg.norm(w - self.center, axis=-1) <= self.radius

    @declare(w=Array(shape=(..., "self.dim")))
    def project(self, w) -> np.ndarray:
        r""":math:`\mathrm{Proj}_W(w)` for ``w [..., d]`` (CA-Fed (3))."""
        with np.errstate(over="ignore", invalid="ignore"):  # reported below, naming w
            diff = w - self.center
            norm = np.linalg.norm(diff, axis=-1, keepdims=True)
            scale = np.minimum(1.0, self.radius / np.maximum(norm, np.finfo(float).tiny))
            out = self.center + diff * scale
        refuse_non_finite(out, "Ball.project", {"w": w})
        return out

    @declare(point=Array(shape=("self.dim",)))
    def farthest_distance(self, point) -> float:
        r""":math:`\max_{w\in W}\|w-x\|=\|c-x\|+r`."""
        with np.errstate(over="ignore"):  # reported below, naming point
            out = float(np.linalg.norm(point - self.center) + self.radius)
        refuse_non_finite(out, "Ball.farthest_distance", {"point": point})
        return out

    @declare(dim=Size(), owner=Text())
    def check_dim(self, dim: int, owner: str) -> None:
        if self.dim != dim:
            raise ParameterError(
                f"The 'ball' parameter of {owner} must have dimension {dim}. "
                f"Got {self.dim} instead."
            )


@declare(
    Q=Array(shape=(None, None, None)),
    b=Array(shape=("Q[0]", "Q[1]")),
    a=Array(shape=("Q[0]",)),
)
@dataclass(frozen=True)
class QuadraticForms:
    r"""Per-client quadratics :math:`q_k(w)=\tfrac12w^\top Q_kw+b_k^\top w+a_k`:
    ``Q [N, d, d]`` symmetric, ``b [N, d]``, ``a [N]``."""

    Q: np.ndarray
    b: np.ndarray
    a: np.ndarray

    def __call__(self, w) -> np.ndarray:
        """``w [..., d]`` -> ``[..., N]``."""
        w = np.asarray(w, dtype=np.float64)[..., None, :]
        return (
            0.5 * np.einsum("...ni,nij,...nj->...n", w, self.Q, w)
            + np.sum(self.b * w, axis=-1)
            + self.a
        )

    def __add__(self, other: QuadraticForms) -> QuadraticForms:
        return QuadraticForms(self.Q + other.Q, self.b + other.b, self.a + other.a)

    @declare(factor=Array(shape=("self.Q[0]",)))
    def scaled(self, factor) -> QuadraticForms:
        """Multiply client ``k``'s form by ``factor[k]`` (``factor [N]``)."""
        f = factor
        with np.errstate(over="ignore", invalid="ignore"):  # reported below, naming factor
            parts = (self.Q * f[:, None, None], self.b * f[:, None], self.a * f)
        refuse_non_finite(parts, "QuadraticForms.scaled", {"factor": f})
        return QuadraticForms(*parts)

    @declare(ball=Instance(Ball))
    def max_on(self, ball: Ball) -> np.ndarray:
        r""":math:`\max_{w\in W}q_k(w)` ``[N]`` (exact, certified from above)."""
        forms = zip(self.Q, self.b, self.a, strict=True)
        return np.array([max_quadratic_on_ball(Q, b, a, ball) for Q, b, a in forms])

    @declare(ball=Instance(Ball))
    def min_on(self, ball: Ball) -> np.ndarray:
        r""":math:`\min_{w\in W}q_k(w)` ``[N]`` (exact, certified from below)."""
        return -QuadraticForms(-self.Q, -self.b, -self.a).max_on(ball)


@declare(
    ball=Instance(Ball),
    Q=Array(shape=("ball.dim", "ball.dim")),
    b=Array(shape=("ball.dim",)),
    a=Real(),
)
def max_quadratic_on_ball(Q, b, a: float, ball: Ball) -> float:
    r""":math:`\max_{\|w-c\|\le r}\tfrac12w^\top Qw+b^\top w+a` for any symmetric ``Q [d, d]``.

    Returns the trust-region dual value (module docstring): an upper bound for any
    multiplier, equal to the maximum at the optimal one (found by bisection on the secular
    equation :math:`\sum_i\tilde g_i^2/(\lambda-e_i)^2=r^2`). Tight (exact) statement.

    Examples
    --------
    >>> float(max_quadratic_on_ball(np.eye(2), np.zeros(2), 0.0, Ball([1.0, 0.0], 1.0)))
    2.0
    """
    with np.errstate(over="ignore", invalid="ignore"):  # reported below
        out = _max_on_ball(Q, b, a, ball)
    refuse_non_finite(out, "max_quadratic_on_ball", {"Q": Q, "b": b, "a": a})
    return out


def _max_on_ball(Q: np.ndarray, b: np.ndarray, a: float, ball: Ball) -> float:
    """:func:`max_quadratic_on_ball` on checked inputs."""
    c, r = ball.center, ball.radius
    g = Q @ c + b  # gradient at the centre
    f_c = 0.5 * c @ Q @ c + b @ c + a
    if r == 0.0:
        return float(f_c)
    e, V = np.linalg.eigh(0.5 * (Q + Q.T))
    gt2 = (V.T @ g) ** 2
    lam0 = max(float(e[-1]), 0.0)
    keep = gt2 > 0

    def secular(lam: float) -> float:
        return float(np.sum(gt2[keep] / (lam - e[keep]) ** 2)) - r * r

    def dual(lam: float) -> float:
        return float(0.5 * np.sum(gt2[keep] / (lam - e[keep])) + 0.5 * lam * r * r + f_c)

    # hi - lam0 >= ||g||/r makes the secular function <= 0; hi > lam0 strictly (also when
    # ||g||/r is below the spacing of floats at lam0) keeps the dual finite
    lo = lam0
    hi = max(lam0 + np.sqrt(gt2.sum()) / r * (1 + 1e-12), np.nextafter(lam0, np.inf))
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if secular(mid) > 0:
            lo = mid
        else:
            hi = mid
    return dual(hi)  # hi > lam0: a valid (weak-duality) upper bound, tight at the root


@dataclass(frozen=True)
class LemmaOneConstants:
    r"""CA-Fed Lemma 1 constants on a ball :math:`W`, per client (``[N]``) and overall.

    ``exact`` says whether ``D_k, G_k, H_k`` are the suprema themselves (quadratics, least
    squares) or certified upper bounds (logistic regression).
    """

    D_k: np.ndarray  # [N] sup_W ||grad F_k||
    G_k: np.ndarray  # [N] sup_W (E ||grad F_k(w, xi)||^2)^(1/2)
    H_k: np.ndarray  # [N] sup_W |F_k(w) - F_k(w_B^*)|
    exact: bool

    @property
    def D(self) -> float:
        return float(self.D_k.max())

    @property
    def G(self) -> float:
        return float(self.G_k.max())

    @property
    def H(self) -> float:
        return float(self.H_k.max())


@declare(
    loss=Instance(QuadraticForms),
    grad_sq=Instance(QuadraticForms),
    noise=Instance(QuadraticForms),
    ball=Instance(Ball),
    w_ref=Array(shape=("ball.dim",)),
)
def quadratic_lemma_one(
    loss: QuadraticForms,
    grad_sq: QuadraticForms,
    noise: QuadraticForms,
    ball: Ball,
    w_ref: np.ndarray,
) -> LemmaOneConstants:
    r"""Exact Lemma 1 constants when :math:`F_k` (``loss``), :math:`\|\nabla F_k\|^2`
    (``grad_sq``) and :math:`\sigma_k^2(w)` (``noise``) are quadratics; ``w_ref`` is
    :math:`w_B^*`."""
    owner = "quadratic_lemma_one"
    for name, forms in (("loss", loss), ("grad_sq", grad_sq), ("noise", noise)):
        if forms.b.shape != (loss.a.shape[0], ball.dim):
            raise ParameterError(
                f"The '{name}' parameter of {owner} must hold {loss.a.shape[0]} forms on "
                f"R^{ball.dim} (b of shape ({loss.a.shape[0]}, {ball.dim})). Got b of shape "
                f"{forms.b.shape} instead."
            )
    D = np.sqrt(np.maximum(grad_sq.max_on(ball), 0.0))
    G = np.sqrt(np.maximum((grad_sq + noise).max_on(ball), 0.0))
    with np.errstate(over="ignore", invalid="ignore"):  # reported below, naming w_ref
        f_ref = loss(w_ref)
        H = np.maximum(loss.max_on(ball) - f_ref, f_ref - loss.min_on(ball))
    refuse_non_finite(H, owner, {"w_ref": w_ref})
    return LemmaOneConstants(D, G, H, exact=True)


class QuadraticConstantsMixin:
    r"""Exact ball constants for problems whose :math:`F_k`, :math:`\|\nabla F_k\|^2` and
    :math:`\sigma_k^2` are quadratics (they provide ``loss_forms``, ``grad_norm_forms``,
    ``noise_forms``, ``optimum`` and ``dim``)."""

    @declare(ball=Instance(Ball))
    def max_noise_variance(self, ball: Ball) -> np.ndarray:
        r""":math:`\max_{w\in W}\sigma_k^2(w)` ``[N]`` (exact)."""
        ball.check_dim(self.dim, type(self).__name__)
        return self.noise_forms().max_on(ball)

    @declare(ball=Instance(Ball), weights=Probabilities(size="self.num_clients", none=True))
    def lemma1_constants(self, ball: Ball, weights=None) -> LemmaOneConstants:
        r"""Exact CA-Fed Lemma 1 constants :math:`D,G,H` on ``ball`` (tight), with :math:`H`
        relative to :math:`w_B^*`, the optimum for ``weights`` (default ``alpha``)."""
        ball.check_dim(self.dim, type(self).__name__)
        w_ref, _ = self.optimum(weights)
        return quadratic_lemma_one(
            self.loss_forms(), self.grad_norm_forms(), self.noise_forms(), ball, w_ref
        )
