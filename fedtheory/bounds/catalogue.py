"""The catalogue of every theorem fedtheory encodes, keyed ``"<paper>.<statement>"``."""

from __future__ import annotations

from fedtheory.bounds.base import Theorem

CATALOGUE: dict[str, Theorem] = {}


def register(theorem: Theorem) -> Theorem:
    """Add ``theorem`` to the catalogue (keys are unique)."""
    if theorem.key in CATALOGUE:
        raise KeyError(f"theorem {theorem.key!r} is registered twice")
    CATALOGUE[theorem.key] = theorem
    return theorem
