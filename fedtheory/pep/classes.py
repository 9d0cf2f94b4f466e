r"""Function classes of the clients' local objectives :math:`f_i`.

Each class is a frozen record that declares one PEPit function with its interpolation
conditions (Taylor, Hendrickx & Glineur 2017, Theorem 4 for :math:`\mathcal F_{\mu,L}`;
Bousselmi, Hendrickx & Glineur 2023 for quadratics; Taylor et al. 2017 Theorem 3.10-type
conditions for :math:`L`-smooth non-convex functions, as PEPit's ``SmoothFunction``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fedtheory.constraints import Real, RealUpTo, declare
from fedtheory.pep._pepit import PEP, functions

SMOOTHNESS = Real(0.0, low_open=True)
"""A smoothness constant :math:`L>0`."""


@declare(L=SMOOTHNESS, mu=RealUpTo(0.0, "L", high_open=True))
@dataclass(frozen=True)
class SmoothStronglyConvex:
    r""":math:`L`-smooth, :math:`\mu`-strongly convex functions :math:`\mathcal F_{\mu,L}`
    (:math:`0\le\mu<L`; :math:`\mu=0` is the smooth convex class).

    Examples
    --------
    >>> print(SmoothStronglyConvex(0.5, 1.0))
    smooth strongly convex (mu=0.5, L=1)
    """

    mu: float
    L: float
    name = "smooth strongly convex"
    convex = True
    replayable = True

    @declare(pep=PEP)
    def declare(self, pep):
        """A new PEPit function of this class in ``pep``."""
        return pep.declare_function(functions().SmoothStronglyConvexFunction, mu=self.mu, L=self.L)

    def __str__(self) -> str:
        return f"{self.name} (mu={self.mu:g}, L={self.L:g})"


@declare(L=SMOOTHNESS)
def SmoothConvex(L: float) -> SmoothStronglyConvex:
    r""":math:`L`-smooth convex functions :math:`\mathcal F_{0,L}`."""
    return SmoothStronglyConvex(0.0, L)


@declare(L=SMOOTHNESS, mu=RealUpTo(0.0, "L", low_open=True))
@dataclass(frozen=True)
class Quadratic:
    r"""Quadratics :math:`f(x)=f^*+\tfrac12(x-c)^\top A(x-c)` with
    :math:`\mu I\preceq A\preceq LI` (:math:`0<\mu\le L`: the replay builds a
    :class:`~fedtheory.problems.QuadraticProblem`, which needs :math:`A\succ0`).

    Examples
    --------
    >>> print(Quadratic(0.5, 1.0))
    quadratic (mu=0.5, L=1)
    """

    mu: float
    L: float
    name = "quadratic"
    convex = True
    replayable = True

    @declare(pep=PEP)
    def declare(self, pep):
        return pep.declare_function(
            functions().SmoothStronglyConvexQuadraticFunction, mu=self.mu, L=self.L
        )

    def __str__(self) -> str:
        return f"{self.name} (mu={self.mu:g}, L={self.L:g})"


@declare(L=SMOOTHNESS)
@dataclass(frozen=True)
class SmoothNonconvex:
    r""":math:`L`-smooth (possibly non-convex) functions; only gradient-norm criteria and a
    function-value initial condition make sense; replayed through the interpolant of
    :math:`h=f+\tfrac L2\|\cdot\|^2` (:mod:`fedtheory.pep.interpolation`)."""

    L: float
    name = "smooth non-convex"
    convex = False
    replayable = True

    @declare(pep=PEP)
    def declare(self, pep):
        return pep.declare_function(functions().SmoothFunction, L=self.L)

    def __str__(self) -> str:
        return f"{self.name} (L={self.L:g})"


@declare(L=SMOOTHNESS)
@dataclass(frozen=True)
class Isotropic:
    r"""Isotropic quadratics :math:`f(x)=\tfrac L2\|x-c\|^2` (:math:`\mu=L`; FedLaAvg's
    Example 1 with :math:`L=2`). The class has no interpolation conditions to impose: each
    client is its centre :math:`c_i`, a free point of the PEP, and :math:`\nabla f(x)=L(x-c)`
    (PEPit's quadratic class at :math:`\mu=L` is the same set but numerically degenerate)."""

    L: float
    name = "isotropic quadratic"
    convex = True
    replayable = True

    @property
    def mu(self) -> float:
        return self.L

    @declare(pep=PEP)
    def declare(self, pep):
        from PEPit import Point

        return _Isotropic({Point(): 1.0}, self.L)

    def __str__(self) -> str:
        return f"{self.name} (L={self.L:g})"


class _Isotropic:
    r""":math:`\sum_j w_j\tfrac L2\|x-c_j\|^2` on PEPit points (one client: one centre)."""

    def __init__(self, weights: dict, L: float) -> None:
        self.weights, self.L = weights, L

    @property
    def centre(self):
        total = sum(self.weights.values())
        pts = [w / total * c for c, w in self.weights.items()]
        out = pts[0]
        for p in pts[1:]:
            out = out + p
        return out

    def __rmul__(self, a: float) -> _Isotropic:
        return _Isotropic({c: a * w for c, w in self.weights.items()}, self.L)

    def __add__(self, other: _Isotropic) -> _Isotropic:
        merged = dict(self.weights)
        for c, w in other.weights.items():
            merged[c] = merged.get(c, 0.0) + w
        return _Isotropic(merged, self.L)

    def gradient(self, x):
        return sum(self.weights.values()) * self.L * (x - self.centre)

    def __call__(self, x):
        vals = [w * self.L / 2 * (x - c) ** 2 for c, w in self.weights.items()]
        out = vals[0]
        for v in vals[1:]:
            out = out + v
        return out

    def stationary_point(self):
        return self.centre


FunctionClass = SmoothStronglyConvex | Quadratic | Isotropic | SmoothNonconvex
"""Any of the client function classes."""
