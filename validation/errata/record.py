r"""The record of an erratum check, the classes of ``validation/ERRATA.md`` and the one
constructor every check returns through.

An :class:`Erratum` holds a statement of a paper, where the paper states it, the instance,
the hypotheses the instance satisfies -- computed, what fedtheory computes, the verdict,
the class, what a reader should do, and the two numbers its finding compares. The verdict
is about the **finding** (the suspected error): "confirmed" means the instance exhibits
it, "refuted" that the paper's statement survives the check, "inconclusive" that the
instance cannot decide (e.g. the statement is not in the available text). The class
(:data:`CLASSES`) says what kind of error it is; a *caveat confirmed* is an exception the
paper states itself and is not counted as an erratum (:attr:`Erratum.is_erratum`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from fedtheory.constraints import (
    Array,
    Bool,
    Constraint,
    Exemplified,
    Instance,
    MappingOf,
    Option,
    Real,
    Text,
    declare,
)

VERDICTS = ("confirmed", "refuted", "inconclusive")
NOTE_CLASS = "note, not an erratum of the paper"
"""The class of fedtheory's own notes, listed apart from the errata."""
CLASS_MEANINGS = {
    "statement false": "a counterexample inside all of the statement's hypotheses",
    "proof does not establish the statement": "a step of the proof fails on an instance "
    "inside the hypotheses (or needs a hypothesis the statement omits); the statement itself "
    "may still hold",
    "constant or typo": "a printed constant, sign or symbol differs from what the derivation "
    "gives; the argument goes through once it is corrected",
    "definition imprecise": "a definition admits a reading under which the statement fails; "
    "under the reading the proof uses, it holds",
    "hypotheses inconsistent between statements": "two statements that the proof connects "
    "state incompatible hypotheses (a theorem allows what the lemma it uses excludes); no "
    "instance shows either statement false",
    "authors' code deviates from the paper": "the public code does something else than the text",
    "not shown": "the check does not meet the statement's hypotheses, so it neither confirms "
    "nor refutes it",
    "not checkable from the available text": "the statement, or the formula the finding is "
    "about, is not in the text available to us (lost in conversion, an appendix or code not "
    "included); the check shows what follows under a stated reading",
    "caveat confirmed": "the paper states the exception itself; fedtheory confirms it (not "
    "an erratum, listed apart)",
    NOTE_CLASS: "fedtheory's own note on a statement (how its conclusion is rescued, what a "
    "cited work claims, a formula lost in the available text): not an error of the paper, "
    "listed apart",
}
"""One-line definition of every class of ``validation/ERRATA.md``."""
CLASSES = tuple(CLASS_MEANINGS)
"""The taxonomy of ``validation/ERRATA.md`` (definitions in :data:`CLASS_MEANINGS`)."""
CAVEATS = ("caveat confirmed", NOTE_CLASS)
"""Classes that are not errata, listed apart from the count: the papers' own caveats and
fedtheory's notes."""
RELATIONS = (">", ">=", "<=", "==", "!=")
"""Relations a finding compares its two numbers with (:attr:`Erratum.compare`)."""


class _Comparison(Constraint):
    """A finding's comparison ``(measured, relation, bound)``: two names of the record's
    ``values`` and a relation of :data:`RELATIONS`; returned as a tuple."""

    def __init__(self):
        self.none = False

    def describe(self, args):
        names = sorted(args.get("values") or {})
        return f"a tuple (name, relation, name) with names in {names} and relation in {RELATIONS}"

    def convert(self, value, args):
        if not isinstance(value, tuple | list) or len(value) != 3:
            return None
        measured, relation, bound = value
        names = args.get("values") or {}
        ok = relation in RELATIONS and all(
            isinstance(n, str) and n in names for n in (measured, bound)
        )
        return (measured, relation, bound) if ok else None

    def hostile(self):
        return [*super().hostile(), ("string", "a > b"), ("unknown relation", ("a", "<>", "a")),
                ("unknown name", ("no_such_value", ">", "no_such_value"))]  # fmt: skip

    def example(self, args):
        first, *rest = args.get("values") or {"value": 0.0}
        return (first, ">=", rest[0] if rest else first)


_VALUES = Exemplified(
    MappingOf(Real(), plural="numbers"), lambda args: {"measured": 1.0, "bound": 0.0}
)
_RECORD = dict(
    key=Text(), statement=Text(), finding=Text(), instance=Text(), computed=Text(),
    values=_VALUES, kind=Option(*CLASSES), advice=Text(), compare=_Comparison(), source=Text(),
    hypotheses=MappingOf(Bool(), plural="bools"),
)  # fmt: skip
"""The fields of an :class:`Erratum` but its verdict (which :func:`erratum` computes)."""


@declare(verdict=Option(*VERDICTS), **_RECORD)
@dataclass(frozen=True)
class Erratum:
    """Outcome of one erratum check."""

    key: str
    statement: str  # what the paper says (with its words)
    finding: str  # the suspected error being checked
    instance: str
    computed: str  # what fedtheory computes, in words and numbers
    verdict: str  # one of VERDICTS
    values: Mapping[str, float]
    _: KW_ONLY
    kind: str  # one of CLASSES
    advice: str  # what a reader of the paper should do
    # the finding as "values[measured] relation values[bound]" (the numbers the report shows)
    compare: tuple[str, str, str]
    source: str  # where the paper states it: section, equation, or "slides only"
    # every hypothesis the entry says the instance satisfies -> whether it does (computed)
    hypotheses: Mapping[str, bool] = field(default_factory=dict)

    @property
    def measured(self) -> float:
        """The recomputed quantity the finding is about."""
        return float(self.values[self.compare[0]])

    @property
    def bound(self) -> float:
        """What the finding compares it with (the paper's value, or the other side)."""
        return float(self.values[self.compare[2]])

    @property
    def is_erratum(self) -> bool:
        """False for a caveat the paper states itself (:data:`CAVEATS`)."""
        return self.kind not in CAVEATS

    @property
    def hypotheses_hold(self) -> bool:
        """Whether the instance satisfies every hypothesis the entry names."""
        return all(self.hypotheses.values())


@declare(shown=Bool(none=True), **_RECORD)
def erratum(
    key: str,
    statement: str,
    finding: str,
    instance: str,
    computed: str,
    shown: bool | None,
    values: Mapping[str, float],
    *,
    kind: str,
    advice: str,
    compare: tuple[str, str, str],
    source: str,
    hypotheses: Mapping[str, bool],
) -> Erratum:
    """The :class:`Erratum` of a check whose instance shows the finding (``shown``) or not:
    *confirmed* when it does and every hypothesis the entry names holds, *refuted*
    otherwise, *inconclusive* when ``shown`` is ``None`` (the text needed is not
    available)."""
    if shown is None:
        verdict = "inconclusive"
    else:
        verdict = "confirmed" if shown and all(hypotheses.values()) else "refuted"
    return Erratum(key, statement, finding, instance, computed, verdict, values, kind=kind,
                   advice=advice, compare=compare, source=source,
                   hypotheses=hypotheses)  # fmt: skip


@declare(x=Array())
def on_simplex(x) -> bool:
    """Whether ``x`` is a probability vector (non-negative, summing to 1 up to 1e-12)."""
    return bool(np.all((x >= 0) & (x <= 1)) and abs(x.sum() - 1) <= 1e-12)


@declare(h=MappingOf(Bool(), plural="bools"))
def hypotheses_text(h: Mapping[str, bool]) -> str:
    """``name: yes; other: NO`` for the hypotheses an entry names."""
    return "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in h.items())


def _example() -> Erratum:
    """A valid record (the generated tests' example of an :class:`Erratum` argument)."""
    return Erratum("example", "statement", "finding", "instance", "computed", "refuted",
                   {"measured": 0.0, "bound": 1.0}, kind=CLASSES[0], advice="advice",
                   compare=("measured", ">", "bound"), source="source")  # fmt: skip


@declare(e=Exemplified(Instance(Erratum), lambda args: _example()))
def format_erratum(e: Erratum) -> str:
    """Plain-text block for one erratum."""
    measured, relation, bound = e.compare
    return (
        f"[{e.verdict.upper()}] {e.key} ({e.kind})\n  statement: {e.statement}\n"
        f"  source:    {e.source}\n"
        f"  finding:   {e.finding}\n  instance:  {e.instance}\n"
        f"  hypotheses (computed): {hypotheses_text(e.hypotheses)}\n  computed:  {e.computed}\n"
        f"  compared:  {measured} = {e.measured:.6g} {relation} {bound} = {e.bound:.6g}\n"
        f"  reader:    {e.advice}\n"
    )
