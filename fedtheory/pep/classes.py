r"""Function classes of the clients' local objectives :math:`f_i`.

Each class is a frozen record that declares one PEPit function with its interpolation
conditions (Taylor, Hendrickx & Glineur 2017, Theorem 4 for :math:`\mathcal F_{\mu,L}`;
Bousselmi, Hendrickx & Glineur 2023 for quadratics; Taylor et al. 2017 Theorem 3.10-type
conditions for :math:`L`-smooth non-convex functions, as PEPit's ``SmoothFunction``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fedtheory.params import check_real
from fedtheory.pep._pepit import functions


@dataclass(frozen=True)
class SmoothStronglyConvex:
    r""":math:`L`-smooth, :math:`\mu`-strongly convex functions :math:`\mathcal F_{\mu,L}`
    (:math:`0\le\mu<L`; :math:`\mu=0` is the smooth convex class)."""

    mu: float
    L: float
    name = "smooth strongly convex"
    convex = True
    replayable = True

    def __post_init__(self) -> None:
        owner = type(self).__name__
        L = check_real(self.L, "L", owner, low=0.0, low_open=True)
        check_real(self.mu, "mu", owner, low=0.0, high=L, high_open=True)

    def declare(self, pep):
        """A new PEPit function of this class in ``pep``."""
        return pep.declare_function(functions().SmoothStronglyConvexFunction, mu=self.mu, L=self.L)

    def __str__(self) -> str:
        return f"{self.name} (mu={self.mu:g}, L={self.L:g})"


def SmoothConvex(L: float) -> SmoothStronglyConvex:
    r""":math:`L`-smooth convex functions :math:`\mathcal F_{0,L}`."""
    return SmoothStronglyConvex(0.0, L)


@dataclass(frozen=True)
class Quadratic:
    r"""Quadratics :math:`f(x)=f^*+\tfrac12(x-c)^\top A(x-c)` with
    :math:`\mu I\preceq A\preceq LI` (:math:`0<\mu\le L`: the replay builds a
    :class:`~fedtheory.problems.QuadraticProblem`, which needs :math:`A\succ0`)."""

    mu: float
    L: float
    name = "quadratic"
    convex = True
    replayable = True

    def __post_init__(self) -> None:
        owner = type(self).__name__
        L = check_real(self.L, "L", owner, low=0.0, low_open=True)
        check_real(self.mu, "mu", owner, low=0.0, high=L, low_open=True)

    def declare(self, pep):
        return pep.declare_function(
            functions().SmoothStronglyConvexQuadraticFunction, mu=self.mu, L=self.L
        )

    def __str__(self) -> str:
        return f"{self.name} (mu={self.mu:g}, L={self.L:g})"


@dataclass(frozen=True)
class SmoothNonconvex:
    r""":math:`L`-smooth (possibly non-convex) functions; only gradient-norm criteria and a
    function-value initial condition make sense, and no replay is offered."""

    L: float
    name = "smooth non-convex"
    convex = False
    replayable = False

    def __post_init__(self) -> None:
        check_real(self.L, "L", type(self).__name__, low=0.0, low_open=True)

    def declare(self, pep):
        return pep.declare_function(functions().SmoothFunction, L=self.L)

    def __str__(self) -> str:
        return f"{self.name} (L={self.L:g})"


FunctionClass = SmoothStronglyConvex | Quadratic | SmoothNonconvex
"""Any of the client function classes."""
