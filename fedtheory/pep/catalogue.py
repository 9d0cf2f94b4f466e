r"""Catalogue statements compared with their exact worst cases, from the papers' records.

Each registered paper's PEP modules list their :class:`~fedtheory.pep.registry.Statement`\ s
(:mod:`fedtheory.pep.registry`); the ``pep-exact`` validation runs them and the tightness
table asks :func:`exact_worst_case_for` for the exact worst case at a family's worst
instance (a deterministic method under a fixed pattern, where a statement's module knows
the family).
"""

from __future__ import annotations

from fedtheory.constraints import MappingOf, Text, declare
from fedtheory.pep import registry

RESOLUTION = 1e3
""":func:`exact_worst_case_for` returns a value only when it is at least this many times the
largest error of its certificate (smaller values are below the solver's resolution)."""


@declare(family_key=Text(), instance=MappingOf())
def exact_worst_case_for(family_key: str, instance: dict) -> float | None:
    """Exact worst case (PEP value) for the tightness family ``family_key`` at the
    constants ``instance`` of its worst instance (the tightness table's JSON), or None where
    no registered statement knows the family (a stochastic or Markov-availability
    statement) or where the value is below :data:`RESOLUTION` times its certificate's error.
    A solver failure raises RuntimeError with its status (never a number)."""
    found = exact_worst_case_certified(family_key, instance)
    return None if found is None else found[0]


@declare(family_key=Text(), instance=MappingOf())
def exact_worst_case_certified(family_key: str, instance: dict) -> tuple[float, float] | None:
    """:func:`exact_worst_case_for` with the tolerance of its certificate: ``(value,
    tolerance)`` (:attr:`fedtheory.pep.certificate.Certificate.tolerance`), or None."""
    for statement in registry.statements().values():
        result = None if statement.exact is None else statement.exact(family_key, instance)
        if result is None:
            continue
        if not result.ok:
            raise RuntimeError(f"exact worst case of {family_key}: {result}")
        if result.value < RESOLUTION * result.certificate.error:
            return None
        return result.value, result.certificate.tolerance
    return None
