r"""Initial conditions: :math:`\|x_0-x^*\|^2\le D^2` or :math:`F(x_0)-F(x^*)\le\Delta`."""

from __future__ import annotations

from dataclasses import dataclass

from fedtheory.constraints import Option, Real, declare
from fedtheory.pep._pepit import FUNCTION, POINT

KINDS = ("distance", "gap")


@declare(value=Real(0.0, low_open=True), kind=Option(*KINDS))
@dataclass(frozen=True)
class Initial:
    r"""``kind="distance"``: :math:`\|x_0-x^*\|^2\le` ``value``; ``kind="gap"``:
    :math:`F(x_0)-F^*\le` ``value``. For non-convex classes :math:`F^*` is not a PEP
    variable: the condition is imposed as :math:`F(x_0)-F(y)\le` ``value`` at :math:`x^*` (a
    stationary point) and at every server model :math:`y` (implied by it, as in PEPit's
    non-convex gradient-descent example), and the result is marked ``relaxed``."""

    value: float = 1.0
    kind: str = "distance"

    @declare(x0=POINT, xs=POINT, F=FUNCTION)
    def constraint(self, x0, xs, F):
        """The PEPit constraint at the initial point ``x0`` and the minimiser ``xs`` of
        ``F``."""
        if self.kind == "distance":
            return (x0 - xs) ** 2 <= self.value
        return F(x0) - F(xs) <= self.value

    def __str__(self) -> str:
        lhs = "||x0 - x*||^2" if self.kind == "distance" else "F(x0) - F*"
        return f"{lhs} <= {self.value:g}"
