"""A verdict row: the outcome, the measured value next to its bound, and how a report
prints their ratio."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from enum import Enum

from fedtheory.constraints import (
    Instance,
    Interval,
    Label,
    Option,
    Real,
    SequenceOf,
    Text,
    Texts,
    declare,
)

LOOSE_RATIO = 1e-2
"""A *holds* row whose ratio measured/bound is below this is *loose*: it could not detect
an error of a constant factor in the bound."""


class Verdict(str, Enum):
    """The outcome of one row: its value is the text a summary counts under.

    Statements (theorems, lemmas, identities): ``HOLDS``, ``VIOLATED``, ``INCONCLUSIVE``
    (the evidence decides neither way), ``OUTSIDE`` (the instance is outside the
    hypotheses). A paper's empirical finding (an ordering in a table, never ``VIOLATED``;
    :data:`FINDING_VERDICTS`, decided by :func:`fedtheory.verdict.compare_finding`):

    * ``REPRODUCED`` -- on the set-up the row is judged against (the paper's or its
      authors' code's), across every unforced choice;
    * ``STAND_IN`` -- reproduced, but on a stand-in (an open material set-up difference:
      data, model...);
    * ``REVERSED`` -- the opposite ordering, significant, larger than the detectable
      difference, on the set-up and across every unforced choice;
    * ``CONTRADICTED`` -- the opposite ordering is significant, but not every condition of
      ``REVERSED`` is met (a stand-in, too few draws, smaller than detectable);
    * ``UNDERPOWERED`` -- neither ordering is significant at this size;
    * ``DEPENDS`` -- the outcome changes with an unforced choice of the set-up.

    The text a report prints with its reasons (the stand-in's aspects, the draws that agree,
    the choices it depends on) is :attr:`Comparison.verdict_text`."""

    HOLDS = "holds"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"
    OUTSIDE = "outside assumptions"
    REPRODUCED = "reproduced"
    STAND_IN = "reproduced on a stand-in"
    REVERSED = "reversed"
    CONTRADICTED = "contradicted at this scale"
    UNDERPOWERED = "underpowered"
    DEPENDS = "depends on an unforced choice"


FINDING_VERDICTS = (
    Verdict.REPRODUCED,
    Verdict.STAND_IN,
    Verdict.REVERSED,
    Verdict.CONTRADICTED,
    Verdict.UNDERPOWERED,
    Verdict.DEPENDS,
)
"""The outcomes of a paper's empirical finding, in the order a summary counts them."""


MEASURED = Real(nan=True, infinite=True)
"""A measured value or its bound as a row holds it: a real number, where NaN (a measurement
that failed or diverged) is *violated* by the rule and ``inf`` is a vacuous bound."""
RELATIONS = ("<=", "==", "<", ">", ">=", "!=")
"""A row's relation: an upper bound, an exact statement, an empirical ordering either way;
an erratum's comparison may also read ``>=`` or ``!=`` (``validation/errata``)."""


SOURCES = ("paper", "comparison", "fedtheory")
"""Who states a row: a paper; an ordering of algorithms that no paper states; fedtheory
itself (a consistency check of its own computations, e.g. its simulator against its PEP,
whose *violated* is a defect of fedtheory, not of a paper)."""


@declare(measured=MEASURED, bound=MEASURED, floor=Real(0.0))
def format_ratio(measured: float, bound: float, floor: float = 0.0) -> str:
    """measured/bound for a report: ``"exact"`` (both 0), ``"bound is 0"``, ``"1 within
    rounding"`` where they differ by at most ``floor`` (the computation's accuracy: digits
    below it are not the result's), a ratio within 1e-3 of 1 with its excess
    (``"1 + 2.1e-09"``, never a bare ``"1"`` that hides it), else three significant digits
    (``"nan"`` where either is NaN)."""
    if bound == 0:
        return "exact" if measured == 0 else "bound is 0"
    r = measured / bound
    if r != 1 and abs(measured - bound) <= floor:
        return "1 within rounding"
    if r != 1 and abs(r - 1) < 1e-3:
        return f"1 {'+' if r > 1 else '-'} {abs(measured - bound) / abs(bound):.2g}"
    return f"{r:.3g}"


@declare(
    claim=Label(),
    reference=Label(),
    relation=Option(*RELATIONS),
    measured=MEASURED,
    bound=MEASURED,
    verdict=Instance(Verdict),
    detail=Label(),
    interval=Interval(none=True),
    setup_differs=Texts(),
    source=Option(*SOURCES),
    erratum=Label(),
    label=Label(),
    outcomes=SequenceOf(SequenceOf(Label())),
)
@dataclass(frozen=True)
class Comparison:
    """One row of the verdict table (``measured`` and ``bound`` may be NaN or infinite:
    the verdict says what that means, :data:`MEASURED`)."""

    claim: str
    reference: str
    relation: str  # "<=" (upper bound), "==" (exact statement), "<" (empirical ordering): RELATIONS
    measured: float
    bound: float
    verdict: Verdict
    detail: str = ""
    interval: tuple[float, float] | None = None  # confidence interval of a random measured
    setup_differs: tuple[str, ...] = ()  # a finding's open material set-up differences
    source: str = "paper"  # "paper": a paper states it; "comparison": an ordering of
    # algorithms that no paper states; "fedtheory": a consistency check of fedtheory
    # (both counted apart from the papers' statements, SOURCES)
    erratum: str = ""  # key of the catalogued erratum this row is the evidence of
    label: str = ""  # a finding's outcome with its reasons (fedtheory.verdict.finding_label)
    outcomes: tuple[tuple[str, ...], ...] = ()  # a finding's outcome per value of its
    # unforced choices: (choice, value, outcome, difference [interval]), VARIANT_HEADER

    @property
    def verdict_text(self) -> str:
        """The verdict as printed: a finding's :attr:`label` (*reproduced on a stand-in:
        data, model*, *underpowered: direction agrees in 5 of 6 draws...*), an erratum's
        evidence, else the verdict's value."""
        if self.label:
            return self.label
        if self.erratum and self.verdict is Verdict.VIOLATED:
            return f"violated (evidence of erratum {self.erratum})"
        if self.defect:
            return "defect of fedtheory"
        return self.verdict.value

    @property
    def defect(self) -> bool:
        """A consistency check of fedtheory against itself that fails: a defect of
        fedtheory, not a paper's statement violated (a CI gate fails on it too)."""
        return self.source == "fedtheory" and self.verdict is Verdict.VIOLATED

    @property
    def outcome_label(self) -> str:
        """The one label of this row's outcome, as ``verdicts.csv``, ``fedtheory
        validate``'s progress line and the report print it: :attr:`verdict_text`, and
        *(loose)* after a loose *holds* (:attr:`loose`)."""
        return self.verdict_text + (" (loose)" if self.loose else "")

    @property
    def unexplained_violation(self) -> bool:
        """*violated* and not the evidence of a catalogued erratum (what a CI gate fails on)."""
        return self.verdict is Verdict.VIOLATED and not self.erratum

    @property
    def ratio(self) -> float:
        """measured / bound (tightness of an upper bound; 1 for an exact match; NaN where
        the bound is 0, shown as :attr:`ratio_text`)."""
        return float(self.measured / self.bound) if self.bound != 0 else float("nan")

    @property
    def ratio_text(self) -> str:
        """The ratio as the report prints it (:func:`format_ratio`)."""
        return format_ratio(self.measured, self.bound)

    @property
    def loose(self) -> bool:
        """A *holds* row of an upper bound or ordering whose ratio (positive bound) is
        below :data:`LOOSE_RATIO`: it could not detect a constant-factor error."""
        return (
            self.verdict in (Verdict.HOLDS, Verdict.REPRODUCED)
            and self.relation in ("<=", "<")
            and self.bound > 0
            and 0 <= self.ratio < LOOSE_RATIO
        )

    def as_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["outcome_label"] = self.outcome_label
        d["ratio"] = self.ratio
        d["interval"] = None if self.interval is None else list(self.interval)
        d["setup_differs"] = "; ".join(self.setup_differs)
        d["verdict_text"] = self.verdict_text
        d["outcomes"] = [list(o) for o in self.outcomes]
        d["source"] = self.source
        return d


@declare(row=Instance(Comparison))
def algorithm_comparison(row: Comparison) -> Comparison:
    """``row`` marked as a comparison between algorithms that no paper states: the report
    counts it apart from the papers' statements."""
    return replace(row, source="comparison")


@declare(row=Instance(Comparison))
def consistency_check(row: Comparison) -> Comparison:
    """``row`` marked as a check of fedtheory against itself (its simulator against its
    PEP, a replay against the value it replays): *violated* there reads *defect of
    fedtheory*, counted apart from the papers' statements."""
    return replace(row, source="fedtheory")


@declare(erratum=Text(), row=Instance(Comparison))
def evidence_of(erratum: str, row: Comparison) -> Comparison:
    """``row`` labelled as the evidence of the catalogued erratum ``erratum`` (its key in
    ``validation/ERRATA.md``): a *violated* verdict there is the erratum, shown as such, and
    ``fedtheory validate --fail-on-violated`` does not fail on it (``--strict`` does)."""
    return replace(row, erratum=erratum)
