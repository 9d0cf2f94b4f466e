r"""Bounds against exact worst cases (performance estimation, :mod:`fedtheory.pep`).

For deterministic methods under a fixed participation pattern, the PEP (Drori & Teboulle
2014; Taylor, Hendrickx & Glineur 2017) gives the exact worst case over the bound's own
function class, with a checked certificate; the attaining instance is replayed in the
simulator. The statements compared are those the registered papers' PEP modules list
(:data:`fedtheory.pep.registry.STATEMENTS`, from the records' ``pep`` part, in the records'
order): each brings its settings, computation, verdict rows, notes and panels, documented
in its paper's PEP module. The settings of every statement share one dictionary (a key two
statements share is refused); ``statements`` names those the run compares.
"""

from __future__ import annotations

import numpy as np

from fedtheory import papers
from fedtheory.constraints import Array, Exemplified, MappingOf, declare
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import FIGURE, SIZE
from fedtheory.validation.machinery.registry import CHECKS, Check, Size, register

_SETTINGS = Exemplified(MappingOf(), lambda args: settings("tiny"))
"""The settings of the statements a run composes (each statement reads its own)."""
_DATA = Exemplified(
    MappingOf(Array(finite=False), plural="arrays"), lambda args: compute(settings("tiny"))
)
"""The arrays of the statements a run composes (each statement reads its own)."""


def _statements(s: dict | None = None) -> list:
    from fedtheory.pep.registry import statements

    found = statements()
    return [found[name] for name in (found if s is None else s["statements"])]


@declare(size=SIZE)
def settings(size: Size) -> dict:
    out: dict = {}
    for statement in _statements():
        own = statement.settings(size)
        shared = sorted(set(own) & set(out))
        if shared:
            raise ValueError(f"the pep-exact statement {statement.name!r} reuses settings {shared}")
        out.update(own)
    return {**out, "statements": [statement.name for statement in _statements()]}


@declare(s=_SETTINGS)
def compute(s: dict) -> dict[str, np.ndarray]:
    out: dict = {}
    for statement in _statements(s):
        out.update(statement.compute(s))
    return {k: np.asarray(v, float) for k, v in out.items()}


@declare(data=_DATA, s=_SETTINGS)
def judge(data, s):
    return [row for statement in _statements(s) for row in statement.judge(data, s)]


@declare(data=_DATA, s=_SETTINGS)
def notes(data, s) -> list[str]:
    return [
        note
        for statement in _statements(s)
        if statement.notes is not None
        for note in statement.notes(data, s)
    ]


@declare(data=_DATA, s=_SETTINGS, fig=FIGURE)
def plot(data, s, fig):
    drawn = [statement for statement in _statements(s) if statement.panels]
    if not drawn:
        return None
    axes = iter(plots.panels(fig, sum(statement.panels for statement in drawn)))
    captions = [
        statement.plot(data, s, [next(axes) for _ in range(statement.panels)], plots)
        for statement in drawn
    ]
    return " ".join(c for c in captions if c)


def _bounds() -> tuple[str, ...]:
    return tuple(key for statement in _statements() for key in statement.bounds)


def _claim() -> str:
    return (
        "; ".join(statement.claim for statement in _statements())
        + " against the exact worst case over the statement's function class (PEP, Drori & "
        "Teboulle 2014; Taylor, Hendrickx & Glineur 2017)"
    )


def _check() -> Check:
    """The check over the statements registered so far."""
    return Check(
        NAME,
        "Bounds against exact worst cases (performance estimation)",
        _claim(),
        settings,
        compute,
        judge,
        plot,
        bounds=_bounds(),
        notes=notes,
        cost=2.7,
    )


def _refresh(paper: papers.Paper) -> None:
    """A paper registered later with PEP statements: its statements join the claim and bounds."""
    if paper.pep and NAME in CHECKS:
        CHECKS[NAME] = _check()


NAME = "pep-exact"
register(_check())
papers.on_register(_refresh)
