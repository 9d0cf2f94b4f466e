"""The toy statement's tightness family (the analyses layer)."""

from __future__ import annotations

from fedtheory.tightness import theorem_family
from tests.toy_paper.algorithm import squared_norm
from tests.toy_paper.statements import contraction

FAMILIES = (
    theorem_family(
        contraction,
        squared_norm,
        ranges={"T": (1, 8), "L": (0.5, 2.0), "eta": (0.05, 0.5), "toy_gap0": (0.5, 2.0)},
        supremum=1.0,
    ),
)
