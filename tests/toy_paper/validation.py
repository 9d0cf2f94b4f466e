"""The toy statement's validation (the validation layer)."""

from __future__ import annotations

from fedtheory.validation.custom import theorem_check
from fedtheory.validation.machinery.registry import register as register_check
from tests.toy_paper.algorithm import squared_norm
from tests.toy_paper.statements import contraction

register_check(
    theorem_check(
        contraction,
        squared_norm,
        name="toy-contraction",
        instances=[{"L": 1.0, "eta": 0.5, "T": 3, "toy_gap0": 1.0}],
        title="Toy Lemma (toy paper)",
    )
)
