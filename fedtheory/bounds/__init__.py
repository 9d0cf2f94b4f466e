"""Theorems of the papers: one module per paper (its ``statements`` in
:mod:`fedtheory.papers`), all registered in ``CATALOGUE``."""

from importlib import import_module

from fedtheory import papers as _papers
from fedtheory.bounds.base import BoundResult, Condition, Theorem
from fedtheory.bounds.catalogue import CATALOGUE, _expose

PAPERS: tuple = ()
"""The statements modules of every registered paper (:data:`fedtheory.papers.PAPERS`)."""

NOT_CHECKABLE: tuple = ()
"""Statements left out of ``CATALOGUE`` (no recoverable or explicit constants), with why:
every paper module's ``NOT_CHECKABLE``."""


def _load(paper: _papers.Paper) -> None:
    """Import ``paper``'s statements (which register in ``CATALOGUE``), expose each key as an
    attribute path (``fedtheory.bounds.fedawe.lemma2``) and gather ``NOT_CHECKABLE``."""
    global PAPERS, NOT_CHECKABLE
    for name in paper.statements:
        module = import_module(name)
        _expose(module, paper.key)
        globals().setdefault(paper.key, module)
        if paper.key not in __all__:
            __all__.append(paper.key)
        PAPERS += (module,)
        NOT_CHECKABLE += tuple(getattr(module, "NOT_CHECKABLE", ()))


__all__ = ["CATALOGUE", "NOT_CHECKABLE", "PAPERS", "BoundResult", "Condition", "Theorem"]
"""The base names, then each registered paper's key (its statements module)."""

_papers.on_register(_load)
