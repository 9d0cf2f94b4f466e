r"""The papers fedtheory checks, each registered once: one :class:`Paper` record per paper.

A record names the paper's own modules, layer by layer, and each layer imports the modules of
its own layer when it loads (:func:`on_register`):

* ``statements`` (``fedtheory.bounds``): ``Theorem``\ s passed to
  ``bounds.catalogue.register``, the paper's symbols through ``bounds.symbols.add_notation``,
  its ``NOT_CHECKABLE``; the statements are reached at ``fedtheory.bounds.<key>``;
* ``availability`` and ``algorithms``: the names in each module's ``EXPORTS`` join
  ``fedtheory.availability`` / ``fedtheory.sim``; a process module's ``EXAMPLES`` (instances)
  join the availability tests; an algorithm's plain loop and the configurations the
  agreement tests run are registered with ``sim.reference.reference_loop(cls, examples=)``;
* ``tightness``: each module's ``FAMILIES`` join ``fedtheory.tightness.FAMILIES``
  (``fedtheory tightness KEY``, the report's tightness table);
* ``pep``: ``METHODS``, ``CRITERIA`` and ``STATEMENTS`` of the PEP layer
  (:mod:`fedtheory.pep.registry`: ``fedtheory pep``, the tightness table's exact column and
  the ``pep-exact`` validation);
* ``validations``: modules that register ``Check``\ s, in the report's order
  (``fedtheory validate --check NAME``); ``fedtheory list --validations --paper KEY`` lists
  those of the paper that registered them;
* ``errata`` (``fedtheory.validation.errata``): each module's ``ERRATA`` (the checks, in the
  order of ``validation/ERRATA.md``) join ``errata.ERRATA`` and the ``errata`` validation,
  the names in its ``EXPORTS`` join ``fedtheory.validation.errata``, its ``SIZES`` give the
  arguments the validation passes at each size and its ``SECOND`` a second, independent
  instance of each check (``errata.SECOND``, run by the errata tests).

The API reference has one generated page per paper (:meth:`Paper.api_page`) and the theorem
pages are generated from the catalogue, so no list elsewhere names a paper. The package's own
records are the modules of this package (:func:`discover`, on import); from outside, a paper
is one call::

    from fedtheory.papers import Paper, register
    register(Paper("mine", "My paper (venue, year)", statements=("my_paper.statements",),
                   validations=("my_paper.validation",)))

The record holds module names only, so this package imports nothing above the shared layer,
and a paper registered after a layer was imported still reaches it.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from importlib import import_module
from typing import NamedTuple

from fedtheory.constraints import Function, Instance, Option, Text, declare
from fedtheory.errors import ParameterError

PARTS = (
    "statements",
    "availability",
    "algorithms",
    "tightness",
    "pep",
    "validations",
    "errata",
)
"""The parts of a paper, from the lowest layer to the highest (the order of its API page)."""


class Paper(NamedTuple):
    """A paper: its catalogue key prefix, its title and the dotted names of its modules.

    ``key`` is the prefix of its catalogue keys (``"fedawe"`` for ``"fedawe.lemma2"``) and the
    attribute its statements are reached by (``fedtheory.bounds.fedawe.lemma2``); ``title``
    names the paper and where it was published; each of :data:`PARTS` is a tuple of module
    names (a module may serve several parts). :func:`register` checks the record.

    Examples
    --------
    >>> PAPERS["fedawe"].algorithms
    ('fedtheory.sim.fedawe',)
    """

    key: str
    title: str
    statements: tuple[str, ...] = ()
    availability: tuple[str, ...] = ()
    algorithms: tuple[str, ...] = ()
    tightness: tuple[str, ...] = ()
    pep: tuple[str, ...] = ()
    validations: tuple[str, ...] = ()
    errata: tuple[str, ...] = ()

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


@declare(paper=Instance(Paper), part=Option(*PARTS), namespace=Instance(dict))
def export(paper: Paper, part: str, namespace: dict) -> None:
    """Bind in ``namespace`` (a package's ``globals()``) the names each module of ``paper``'s
    ``part`` lists in its ``EXPORTS``, and add them to its ``__all__``: how
    ``fedtheory.sim`` and ``fedtheory.availability`` re-export a paper's algorithms and
    processes."""
    listed = namespace.setdefault("__all__", [])
    for module in map(import_module, getattr(paper, part)):
        for name in getattr(module, "EXPORTS", ()):
            namespace[name] = getattr(module, name)
            listed.extend([name] if name not in listed else [])


@declare(module=Text())
def paper_of(module: str) -> Paper | None:
    """The registered paper one of whose parts is the module named ``module``."""
    return next((p for p in discover().values() if module in p.modules), None)


__all__ = [
    "PAPERS",
    "PARTS",
    "Paper",
    "discover",
    "export",
    "modules",
    "on_register",
    "paper_of",
    "register",
]

discover()  # the package's own records, so that PAPERS is complete on import
