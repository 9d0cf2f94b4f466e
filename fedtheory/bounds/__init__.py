"""Theorems of the five papers: one module per paper, all registered in ``CATALOGUE``."""

from fedtheory.bounds import cafed, divergences, e3cs, fedau, fedlaavg, mimic
from fedtheory.bounds.base import BoundResult, Condition, Theorem
from fedtheory.bounds.catalogue import CATALOGUE

__all__ = [
    "CATALOGUE",
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
