r"""The papers fedtheory checks, each registered once: one :class:`Paper` record per paper.

A record names the paper's own modules, layer by layer: its statements (``fedtheory.bounds``
modules: ``Theorem``\ s passed to ``bounds.catalogue.register``, their ``NOT_CHECKABLE``,
their symbols through ``bounds.symbols.add_notation``), its availability processes and
algorithms (their ``__all__`` joins ``fedtheory.availability`` / ``fedtheory.sim``; plain
loops and the agreement tests' examples through ``sim.reference.reference_loop``), its
tightness families (each module's ``FAMILIES`` joins ``fedtheory.tightness.FAMILIES``), its
exact worst cases (PEP) and its validations (modules that register ``Check``\ s, in the
report's order). Every list that spans papers is generated from :data:`PAPERS`: the catalogue
and ``fedtheory list``, the exports, the families of ``fedtheory tightness``, the checks of
``fedtheory validate``, the reference-loop tests, the theorem pages and one API page per
paper. A new paper is a record module in this package (found by :func:`discover`) or, from
outside the package, one call::

    from fedtheory.papers import Paper, register
    register(Paper("toy", "A toy paper", statements=("my_paper",), validations=("my_paper",)))

The record holds module names only, so this package imports nothing above the shared layer;
each layer imports the modules of its own layer when it loads (:func:`on_register`), and a
paper registered later reaches every layer already loaded.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from importlib import import_module
from typing import NamedTuple

from fedtheory.constraints import Function, Instance, Option, Text, declare
from fedtheory.errors import ParameterError

PARTS = ("statements", "availability", "algorithms", "tightness", "pep", "validations")
"""The parts of a paper, from the lowest layer to the highest (the order of its API page)."""


class Paper(NamedTuple):
    """A paper: its catalogue key prefix, its title and the dotted names of its modules.

    ``key`` is the prefix of its catalogue keys (``"fedawe"`` for ``"fedawe.lemma2"``) and the
    attribute its statements are reached by (``fedtheory.bounds.fedawe.lemma2``); ``title``
    names the paper and where it was published; each of :data:`PARTS` is a tuple of module
    names (a module may serve several parts). :func:`register` checks the record."""

    key: str
    title: str
    statements: tuple[str, ...] = ()
    availability: tuple[str, ...] = ()
    algorithms: tuple[str, ...] = ()
    tightness: tuple[str, ...] = ()
    pep: tuple[str, ...] = ()
    validations: tuple[str, ...] = ()

    @property
    def modules(self) -> tuple[str, ...]:
        """Every module of the paper, each once, by part (:data:`PARTS`)."""
        return tuple(dict.fromkeys(m for part in PARTS for m in getattr(self, part)))

    def api_page(self) -> str:
        """The paper's page of the API reference (MyST Markdown): one ``automodule`` section
        per module, headed by the parts it serves (generated when the docs are built)."""
        lines = [
            f"# {self.title}",
            "",
            f"The modules of the paper `{self.key}`, as its record in `fedtheory.papers` names",
            "them, from its statements to its validations.",
            "",
        ]
        for name in self.modules:
            parts = ", ".join(p for p in PARTS if name in getattr(self, p))
            lines += [f"## `{name}` ({parts})", "", "```{eval-rst}", f".. automodule:: {name}"]
            lines += ["```", ""]
        return "\n".join(lines)


def _check(paper: Paper) -> None:
    """Refuse a record whose key is not an identifier, whose title is empty or whose parts
    are not tuples of dotted module names."""
    if not isinstance(paper.key, str) or not paper.key.isidentifier():
        raise ParameterError(
            f"The 'key' field of the 'paper' parameter of register must be a Python "
            f"identifier. Got {paper.key!r} instead."
        )
    if not isinstance(paper.title, str) or not paper.title:
        raise ParameterError(
            f"The 'title' field of the 'paper' parameter of register must be a non-empty "
            f"string. Got {paper.title!r} instead."
        )
    for part in PARTS:
        names = getattr(paper, part)
        if not isinstance(names, tuple) or not all(
            isinstance(n, str) and all(p.isidentifier() for p in n.split(".")) for n in names
        ):
            raise ParameterError(
                f"The '{part}' field of the 'paper' parameter of register must be a tuple of "
                f"dotted module names. Got {names!r} instead."
            )


PAPERS: dict[str, Paper] = {}
"""Every registered paper by key: the package's (:func:`discover`), then the callers'."""

_LOADERS: list[Callable[[Paper], None]] = []
_DISCOVERED: list[bool] = []  # non-empty once the package's records are registered


def discover() -> dict[str, Paper]:
    """:data:`PAPERS`, after registering (once) the ``PAPER`` record of every module of this
    package, in the order of the modules' names."""
    if not _DISCOVERED:
        _DISCOVERED.append(True)
        for info in pkgutil.iter_modules(__path__):
            register(import_module(f"{__name__}.{info.name}").PAPER)
    return PAPERS


@declare(paper=Instance(Paper))
def register(paper: Paper) -> Paper:
    """Add ``paper`` to :data:`PAPERS` (after the package's own; keys are unique) and load
    its modules into every layer already imported; returns it."""
    _check(paper)
    discover()
    if PAPERS.get(paper.key, paper) != paper:
        raise ParameterError(
            "The 'paper' parameter of register must have a key not yet registered "
            f"({sorted(PAPERS)}). Got {paper.key!r} instead."
        )
    if paper.key not in PAPERS:
        PAPERS[paper.key] = paper
        for loader in list(_LOADERS):
            loader(paper)
    return paper


@declare(loader=Function())
def on_register(loader: Callable[[Paper], None]) -> None:
    """Call ``loader(paper)`` for every paper registered so far and for every later one: how a
    layer (``bounds``, ``sim``, ``tightness``, ``validation``) loads the papers' modules of
    its own layer when it is imported."""
    papers = list(discover().values())
    _LOADERS.append(loader)
    for paper in papers:
        loader(paper)


@declare(part=Option(*PARTS))
def modules(part: str) -> list:
    """The imported modules of ``part`` (one of :data:`PARTS`) over every registered paper, in
    registration order."""
    names = dict.fromkeys(m for p in discover().values() for m in getattr(p, part))
    return [import_module(name) for name in names]


@declare(paper=Instance(Paper), part=Option(*PARTS))
def exports(paper: Paper, part: str) -> dict[str, object]:
    """The names the modules of ``paper``'s ``part`` list in their ``EXPORTS``, with their
    objects: what ``fedtheory.sim`` and ``fedtheory.availability`` re-export of a paper's
    algorithms and processes."""
    modules = [import_module(name) for name in getattr(paper, part)]
    return {n: getattr(m, n) for m in modules for n in getattr(m, "EXPORTS", ())}


@declare(module=Text())
def paper_of(module: str) -> Paper | None:
    """The registered paper one of whose parts is the module named ``module``."""
    return next((p for p in discover().values() if module in p.modules), None)


__all__ = [
    "PAPERS",
    "PARTS",
    "Paper",
    "discover",
    "exports",
    "modules",
    "on_register",
    "paper_of",
    "register",
]

discover()  # the package's own records, so that PAPERS is complete on import
