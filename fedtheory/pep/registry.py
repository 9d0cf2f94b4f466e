r"""What the papers' PEP modules add to the PEP layer, gathered from the papers' records.

A module named in the ``pep`` part of a paper's record (:mod:`fedtheory.papers`) may list

* ``METHODS``: :class:`Method`\ s, simulator algorithms written on PEPit points (their
  rounds, what a PEP cannot express, their name and options in ``fedtheory pep``);
* ``CRITERIA``: :class:`Criterion`\ s, the left sides of the paper's statements as PEP
  criteria, with the same quantity measured on a simulator run (the replay);
* ``STATEMENTS``: :class:`Statement`\ s, catalogue statements compared with their exact
  worst case: rows of the ``pep-exact`` validation, the exact column of the tightness table
  (:func:`fedtheory.pep.catalogue.exact_worst_case_for`) and a ``fedtheory pep`` command.

The shared modules of the layer (``methods``, ``criteria``, ``replay``, ``catalogue``, the
``pep`` command and the ``pep-exact`` validation) read these tables and name no paper. The
papers' modules are imported on the first look-up, not on import: they import the shared
modules themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import NamedTuple

from fedtheory import papers


class Method(NamedTuple):
    """A simulator algorithm written on PEPit points.

    ``run(algorithm, fs, x0, mask)`` returns the server models :math:`x_0..x_T` (a list of
    PEPit points; a subclass of list may carry more, such as client models) for the clients'
    functions ``fs`` under ``mask [T, N]``; ``participants(algorithm, mask)`` the clients
    that do local work ``[T, N]`` (bool; the clients' symmetry check reads it); ``check
    (algorithm, owner)`` raises ``ParameterError`` for a configuration a PEP cannot express.
    ``command`` names it in ``fedtheory pep``, ``build(args)`` makes it from that command's
    options (``args.lr``, ``args.local_steps`` and the ``options`` it adds: ``(flags,
    argparse keyword arguments)`` pairs)."""

    algorithm: type
    run: Callable
    participants: Callable
    check: Callable | None = None
    command: str = ""
    build: Callable | None = None
    options: tuple = ()


class Criterion(NamedTuple):
    """A statement's left side as a PEP criterion: ``terms(models, F)`` the PEPit expressions
    (their minimum is the criterion) on one ``trajectory`` (the list type ``method``'s
    ``run`` returns, ``method`` a simulator class), ``measure(algorithm, problem, mask,
    x0)`` the same quantity on a simulator run (numpy), ``description`` in words."""

    name: str
    description: str
    method: type
    trajectory: type
    terms: Callable
    measure: Callable


class Statement(NamedTuple):
    """A catalogue statement compared with its exact worst case.

    For the ``pep-exact`` validation: ``settings(size)`` (``"tiny"``, ``"quick"``,
    ``"full"``), ``compute(s) -> {name: array}``, ``judge(data, s) -> [Comparison]``,
    ``notes(data, s) -> [str]``, ``bounds`` (the keys of ``data`` holding a bound or a
    worst case), and ``panels`` axes drawn by ``plot(data, s, axes, style) -> caption``
    (``style``: the report's plotting module, passed in by the validation). For the
    tightness table: ``exact(family_key, instance)`` the solved PEP (a ``PepResult``) of a
    tightness family's worst instance for a family key it knows, None for others. For
    ``fedtheory pep``: ``command`` runs ``run(args) -> (PepResult, bound, heading)`` with
    the options ``options`` adds."""

    name: str
    claim: str
    settings: Callable
    compute: Callable
    judge: Callable
    notes: Callable | None = None
    bounds: tuple[str, ...] = ()
    panels: int = 0
    plot: Callable | None = None
    exact: Callable | None = None
    command: str = ""
    run: Callable | None = None
    options: tuple = ()


METHODS: dict[type, Method] = {}
"""Every paper's method by its simulator class."""
CRITERIA: dict[str, Criterion] = {}
"""Every paper's criterion by name."""
STATEMENTS: dict[str, Statement] = {}
"""Every paper's statement compared with its exact worst case, in the records' order."""
_LOADED: list[bool] = []  # non-empty once the loader is registered


def _load(paper: papers.Paper) -> None:
    for module in map(import_module, paper.pep):
        METHODS.update({m.algorithm: m for m in getattr(module, "METHODS", ())})
        CRITERIA.update({c.name: c for c in getattr(module, "CRITERIA", ())})
        STATEMENTS.update({s.name: s for s in getattr(module, "STATEMENTS", ())})


def loaded() -> None:
    """Import every registered paper's PEP modules (once; a later paper on its registration)."""
    if not _LOADED:
        _LOADED.append(True)
        papers.on_register(_load)


def methods() -> dict[type, Method]:
    """:data:`METHODS`, the papers' modules imported."""
    loaded()
    return METHODS


def criteria() -> dict[str, Criterion]:
    """:data:`CRITERIA`, the papers' modules imported."""
    loaded()
    return CRITERIA


def statements() -> dict[str, Statement]:
    """:data:`STATEMENTS`, the papers' modules imported."""
    loaded()
    return STATEMENTS
