"""The catalogue of every theorem fedtheory encodes, keyed ``"<paper>.<statement>"``."""

from __future__ import annotations

from fedtheory.bounds.base import Theorem
from fedtheory.errors import ParameterError
from fedtheory.params import check_instance

CATALOGUE: dict[str, Theorem] = {}


def register(theorem: Theorem) -> Theorem:
    """Add ``theorem`` to the catalogue (keys are unique)."""
    check_instance(theorem, Theorem, "theorem", "register")
    if theorem.key in CATALOGUE:
        raise ParameterError(
            "The 'theorem' parameter of register must have a key not yet in the catalogue. "
            f"Got {theorem.key!r} instead."
        )
    CATALOGUE[theorem.key] = theorem
    return theorem
