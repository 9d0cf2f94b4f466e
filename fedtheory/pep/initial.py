r"""Initial conditions: :math:`\|x_0-x^*\|^2\le D^2` or :math:`F(x_0)-F(x^*)\le\Delta`."""

from __future__ import annotations

from dataclasses import dataclass

from fedtheory.params import check_choice, check_real

KINDS = ("distance", "gap")


@dataclass(frozen=True)
class Initial:
    r"""``kind="distance"``: :math:`\|x_0-x^*\|^2\le` ``value``; ``kind="gap"``:
    :math:`F(x_0)-F^*\le` ``value``. For non-convex classes :math:`F^*` is not a PEP
    variable: the condition is imposed as :math:`F(x_0)-F(y)\le` ``value`` at :math:`x^*` (a
    stationary point) and at every server model :math:`y` (implied by it, as in PEPit's
    non-convex gradient-descent example), and the result is marked ``relaxed``."""

    value: float = 1.0
    kind: str = "distance"

    def __post_init__(self) -> None:
        check_real(self.value, "value", "Initial", low=0.0, low_open=True)
        check_choice(self.kind, KINDS, "kind", "Initial")

    def constraint(self, x0, xs, F):
        if self.kind == "distance":
            return (x0 - xs) ** 2 <= self.value
        return F(x0) - F(xs) <= self.value

    def __str__(self) -> str:
        lhs = "||x0 - x*||^2" if self.kind == "distance" else "F(x0) - F*"
        return f"{lhs} <= {self.value:g}"
