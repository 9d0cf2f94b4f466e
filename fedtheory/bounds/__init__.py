"""Theorems of the papers: one module per paper, all registered in ``CATALOGUE``."""

from fedtheory.bounds import cafed, divergences, e3cs, fedau, fedawe, fedlaavg, mimic
from fedtheory.bounds.base import BoundResult, Condition, Theorem
from fedtheory.bounds.catalogue import CATALOGUE, _expose

PAPERS = (cafed, divergences, e3cs, fedau, fedawe, fedlaavg, mimic)
"""The paper modules: a new paper is one module added here."""

for _module in PAPERS:
    _expose(_module, _module.__name__.rsplit(".", 1)[-1])

NOT_CHECKABLE = tuple(item for _module in PAPERS for item in getattr(_module, "NOT_CHECKABLE", ()))
"""Statements left out of ``CATALOGUE`` (no recoverable or explicit constants), with why:
every paper module's ``NOT_CHECKABLE``."""

__all__ = [
    "CATALOGUE",
    "NOT_CHECKABLE",
    "PAPERS",
    "BoundResult",
    "Condition",
    "Theorem",
    "cafed",
    "divergences",
    "e3cs",
    "fedau",
    "fedawe",
    "fedlaavg",
    "mimic",
]
