r"""How narrow a region of violation the default ``check_theorem`` finds, measured.

A false bound :math:`m(x,y)\le b(x,y)=1+x+y` on :math:`(x,y)\in(0,1]^2`, broken only near
one interior point :math:`c`, with :math:`d` the distance to :math:`c`:

* **a cone** -- :math:`m/b=(1+w)/(1+d)`: violated only in the disc :math:`d<w`, the ratio
  rising towards it everywhere (a bound tight at one point and wrong near it);
* **a needle** -- :math:`m/b=1.01` in the disc :math:`d<r`, :math:`0.9` elsewhere: nothing
  outside the disc points to it.

Each is searched as ``check_theorem`` searches after its examples (the tightness search
over the theorem's parameters, 400 evaluations, :func:`fedtheory.tightness.search`) at
several seeds; the script prints how many seeds refute it. ``check_theorem``'s examples
(hypothesis draws) add their own chance of landing in the region on top. Run it with
``python examples/narrow_region.py``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.bounds import Theorem
from fedtheory.tightness import search, theorem_family

x, y = sp.symbols("x y", positive=True)
NARROW = Theorem(
    "user.narrow", title="broken near one point", reference="false on purpose",
    kind="upper bound", terms={"b": 1 + x + y},
)  # fmt: skip
CENTRE = (0.6180339887, 0.2718281828)  # an interior point no box end or grid reaches
UNIT = {"x": (1e-9, 1.0), "y": (1e-9, 1.0)}


def cone(width: float):
    """measured / bound = (1 + width) / (1 + d): violated only in the disc d < width."""

    def measure(*, x, y):
        return (1 + x + y) * (1 + width) / (1 + np.hypot(x - CENTRE[0], y - CENTRE[1]))

    return measure


def needle(radius: float):
    """measured / bound = 1.01 in the disc d < radius, 0.9 elsewhere."""

    def measure(*, x, y):
        inside = np.hypot(x - CENTRE[0], y - CENTRE[1]) < radius
        return (1 + x + y) * (1.01 if inside else 0.9)

    return measure


def refuted(measure, seeds) -> int:
    """How many of the seeds' searches (400 evaluations) refute the bound."""
    family = theorem_family(NARROW, measure, ranges=UNIT)
    return sum(search(family, budget=400, seed=s).counterexample is not None for s in seeds)


def main() -> None:
    for width in (1e-2, 1e-5, 1e-8):
        share = np.pi * width**2
        print(f"cone, disc radius {width:g} ({share:.1g} of the box): refuted at "
              f"{refuted(cone(width), range(5))} of 5 seeds")  # fmt: skip
    for radius in (0.1, 0.05, 0.03):
        share = np.pi * radius**2
        print(f"needle, disc radius {radius:g} ({share:.1g} of the box): refuted at "
              f"{refuted(needle(radius), range(10))} of 10 seeds")  # fmt: skip


if __name__ == "__main__":
    main()
