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
    Text,
    Texts,
    declare,
)

LOOSE_RATIO = 1e-2
"""A *holds* row whose ratio measured/bound is below this is *loose*: it could not detect
an error of a constant factor in the bound."""


class Verdict(str, Enum):
    """The outcome of one row.

    Statements (theorems, lemmas, identities): ``HOLDS``, ``VIOLATED``, ``INCONCLUSIVE``
    (the evidence decides neither way), ``OUTSIDE`` (the instance is outside the
    hypotheses). A paper's empirical finding (an ordering in a table): ``REPRODUCED``,
    ``NOT_REPRODUCED``, ``REVERSED`` (never ``VIOLATED``)."""

    HOLDS = "holds"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"
    OUTSIDE = "outside assumptions"
    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced at this scale"
    REVERSED = "reversed"


MEASURED = Real(nan=True, infinite=True)
"""A measured value or its bound as a row holds it: a real number, where NaN (a measurement
that failed or diverged) is *violated* by the rule and ``inf`` is a vacuous bound."""
RELATIONS = ("<=", "==", "<", ">", ">=", "!=")
"""A row's relation: an upper bound, an exact statement, an empirical ordering either way;
an erratum's comparison may also read ``>=`` or ``!=`` (``validation/errata``)."""


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
    source=Option("paper", "comparison"),
    erratum=Label(),
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
    # algorithms that no paper states (counted apart from the papers' statements)
    erratum: str = ""  # key of the catalogued erratum this row is the evidence of

    @property
    def verdict_text(self) -> str:
        """The verdict as printed: a finding not reproduced because its set-up differs says
        *not reproduced (set-up differs: aspect; aspect)*."""
        if self.setup_differs and self.verdict is Verdict.NOT_REPRODUCED:
            names = "; ".join(d.split(":")[0] for d in self.setup_differs)
            return f"not reproduced (set-up differs: {names})"
        if self.erratum and self.verdict is Verdict.VIOLATED:
            return f"violated (evidence of erratum {self.erratum})"
        return self.verdict.value

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
        d["ratio"] = self.ratio
        d["interval"] = None if self.interval is None else list(self.interval)
        d["setup_differs"] = "; ".join(self.setup_differs)
        d["source"] = self.source
        return d


@declare(row=Instance(Comparison))
def algorithm_comparison(row: Comparison) -> Comparison:
    """``row`` marked as a comparison between algorithms that no paper states: the report
    counts it apart from the papers' statements."""
    return replace(row, source="comparison")


@declare(erratum=Text(), row=Instance(Comparison))
def evidence_of(erratum: str, row: Comparison) -> Comparison:
    """``row`` labelled as the evidence of the catalogued erratum ``erratum`` (its key in
    ``validation/ERRATA.md``): a *violated* verdict there is the erratum, shown as such, and
    ``fedtheory validate --fail-on-violated`` does not fail on it (``--strict`` does)."""
    return replace(row, erratum=erratum)
