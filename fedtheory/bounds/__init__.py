"""Theorems of the five papers: one module per paper, all registered in ``CATALOGUE``."""

from fedtheory.bounds import cafed, divergences, e3cs, fedau, fedlaavg, mimic
from fedtheory.bounds.base import BoundResult, Condition, Theorem
from fedtheory.bounds.catalogue import CATALOGUE, _expose

for _module in (cafed, divergences, e3cs, fedau, fedlaavg, mimic):
    _expose(_module, _module.__name__.rsplit(".", 1)[-1])

NOT_CHECKABLE = mimic.NOT_CHECKABLE
"""Statements left out of ``CATALOGUE`` because their constants are not recoverable, with why."""

__all__ = [
    "CATALOGUE",
    "NOT_CHECKABLE",
    "BoundResult",
    "Condition",
    "Theorem",
    "cafed",
    "divergences",
    "e3cs",
    "fedau",
    "fedlaavg",
    "mimic",
]
