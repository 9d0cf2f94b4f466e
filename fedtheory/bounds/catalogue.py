"""The catalogue of every theorem fedtheory encodes, keyed ``"<paper>.<statement>"``.

A key is also the theorem's attribute path under ``fedtheory.bounds``:
``CATALOGUE["fedau.theorem3.per_round"] is fedtheory.bounds.fedau.theorem3.per_round``
(``_expose`` adds the intermediate namespaces).
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

from fedtheory.bounds.base import Theorem
from fedtheory.constraints import Instance, declare
from fedtheory.errors import ParameterError

CATALOGUE: dict[str, Theorem] = {}


@declare(theorem=Instance(Theorem))
def register(theorem: Theorem) -> Theorem:
    """Add ``theorem`` to the catalogue (keys are unique)."""
    if theorem.key in CATALOGUE:
        raise ParameterError(
            "The 'theorem' parameter of register must have a key not yet in the catalogue. "
            f"Got {theorem.key!r} instead."
        )
    CATALOGUE[theorem.key] = theorem
    return theorem


class _Statements(SimpleNamespace):
    """A group of catalogue statements reached by attribute (``fedau.theorem3.order``)."""

    def __repr__(self) -> str:
        return f"Statements({', '.join(vars(self))})"


def _expose(module: ModuleType, paper: str) -> None:
    """Make every catalogue key ``"<paper>.a.b"`` reachable as ``module.a.b``, creating a
    :class:`_Statements` namespace for each intermediate name not yet defined; a name already
    bound to something else is an error (a key and an attribute path that disagree)."""
    for key, theorem in CATALOGUE.items():
        head, *path = key.split(".")
        if head != paper:
            continue
        owner = module
        for name in path[:-1]:
            if not hasattr(owner, name):
                setattr(owner, name, _Statements())
            owner = getattr(owner, name)
        if getattr(owner, path[-1], theorem) is not theorem:
            raise ParameterError(
                f"The catalogue key {key!r} must be the attribute path of its theorem. "
                f"Got another object at that path instead."
            )
        setattr(owner, path[-1], theorem)
