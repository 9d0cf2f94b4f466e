"""A verdict row: the outcome, the measured value next to its bound, and how a report
prints their ratio."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum

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


def format_ratio(measured: float, bound: float) -> str:
    """measured/bound for a report: ``"exact"`` (both 0), ``"bound is 0"``, a ratio within
    1e-3 of 1 with its excess (``"1 + 2.1e-09"``, never a bare ``"1"`` that hides it), else
    three significant digits."""
    measured, bound = float(measured), float(bound)
    if bound == 0:
        return "exact" if measured == 0 else "bound is 0"
    r = measured / bound
    if r != 1 and abs(r - 1) < 1e-3:
        return f"1 {'+' if r > 1 else '-'} {abs(measured - bound) / abs(bound):.2g}"
    return f"{r:.3g}"


@dataclass(frozen=True)
class Comparison:
    """One row of the verdict table."""

    claim: str
    reference: str
    relation: str  # "<=" (upper bound), "==" (exact statement), "<" (empirical ordering)
    measured: float
    bound: float
    verdict: Verdict
    detail: str = ""
    interval: tuple[float, float] | None = None  # confidence interval of a random measured

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
        return d
