"""Entries of a shared test table that name a paper's modules, resolved lazily.

A shared table (``tests/test_public_api_contract.CONTRACT``) names a paper's callables
through :class:`Lazy` references instead of importing the paper's modules at its top: the
table is built in a copy of the repository without the paper (``scripts/test-without``),
its entries are marked with the papers they need (:func:`entry_papers`) and so deselected
there, and :func:`resolve_case` swaps the references for the real objects while those
papers are registered (every entry, in the full repository)."""

from __future__ import annotations

import importlib
from typing import Any

from fedtheory import papers

PAPER_KEYS = ("cafed", "e3cs", "fedau", "fedawe", "fedlaavg", "mimic")
"""The papers whose modules a shared table may name (their records: ``fedtheory.papers``)."""

_OWN_PACKAGES = ("bounds", "sim", "tightness", "pep")
_OTHER_MODULES = {"fedtheory.availability.nonstationary": "fedawe"}


def paper_of_module(module: str) -> str | None:
    """The paper owning ``module`` (``fedtheory.bounds.cafed`` -> ``cafed``), else None.

    Read from the module's name, so that it is known in a copy without the paper's record;
    ``test_paper_of_module_agrees_with_the_records`` checks it against the records."""
    if module in _OTHER_MODULES:
        return _OTHER_MODULES[module]
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in _OWN_PACKAGES and parts[2] in PAPER_KEYS:
        return parts[2]
    if module.startswith("fedtheory.validation.papers.") and len(parts) >= 4:
        return parts[3] if parts[3] in PAPER_KEYS else None
    return None


class Lazy:
    """A reference to ``module``, then attributes and items of it, resolved on use."""

    def __init__(self, module: str, steps: tuple = (), paper: str | None = None) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_steps", steps)
        object.__setattr__(self, "_paper", paper or paper_of_module(module))

    def __getattr__(self, name: str) -> Lazy:
        if name.startswith("__"):
            raise AttributeError(name)
        return Lazy(self._module, (*self._steps, ("attr", name)), self._paper)

    def __getitem__(self, key: str) -> Lazy:
        paper = key.split(".")[0] if key.split(".")[0] in PAPER_KEYS else self._paper
        return Lazy(self._module, (*self._steps, ("item", key)), paper)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        path = "".join(f".{s}" if kind == "attr" else f"[{s!r}]" for kind, s in self._steps)
        return f"Lazy({self._module}{path})"

    @property
    def paper(self) -> str | None:
        return self._paper

    def resolve(self) -> Any:
        obj = importlib.import_module(self._module)
        for kind, step in self._steps:
            obj = getattr(obj, step) if kind == "attr" else obj[step]
        return obj


def _lazies(value: Any) -> list[Lazy]:
    if isinstance(value, Lazy):
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _lazies(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in _lazies(v)]
    return []


def _resolved(value: Any) -> Any:
    if isinstance(value, Lazy):
        return value.resolve()
    if isinstance(value, dict):
        return {k: _resolved(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_resolved(v) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(_resolved(v) for v in value)
    return value


def entry_papers(key: str, case: Any = ()) -> frozenset[str]:
    """The papers an entry ``module:name`` needs: its module's and its references'."""
    found = {paper_of_module(key.split(":")[0])} | {lazy.paper for lazy in _lazies(case)}
    return frozenset(found - {None})


def registered(needed: frozenset[str]) -> bool:
    return needed <= set(papers.PAPERS)


def resolve_case(key: str, case: Any) -> Any:
    """``case`` with its references resolved while the papers it needs are registered, else
    as it is (its tests are deselected: they carry the papers' marks)."""
    return _resolved(case) if registered(entry_papers(key, case)) else case
