r"""The decision rules: an interval (or a deterministic value) against an upper bound or an
exact prediction gives *holds*, *inconclusive* or *violated*; outside the hypotheses,
*outside assumptions*."""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Array, Real, declare
from fedtheory.verdict.rounding import BOUND_RTOL
from fedtheory.verdict.rows import Verdict


@declare(low=Real(), high=Real(), bound=Real(), floor=Real(0.0), rtol=Real(0.0))
def upper_bound_outcome(
    low, high, bound, *, floor: float = 0.0, rtol: float = BOUND_RTOL
) -> Verdict:
    r"""The verdict of ``X <= bound`` from an interval ``[low, high]`` of ``X`` (a
    confidence interval of a mean, or ``low == high`` = a deterministic value):
    *holds* when ``high <= bound + slack``, *violated* when ``low > bound + slack``,
    else *inconclusive*; the slack is ``floor`` (rounding, :func:`rounding_floor`) plus
    ``rtol`` ``|bound|`` (:data:`BOUND_RTOL` by default).

    Examples
    --------
    >>> upper_bound_outcome(0.039, 0.051, 0.05).value
    'inconclusive'
    """
    code = int(_upper_codes(np.array(low), np.array(high), np.array(bound), floor, rtol))
    return _CODES[code]


_CODES = (Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.VIOLATED)


def _slack(bound: np.ndarray, floor, rtol=BOUND_RTOL) -> np.ndarray:
    with np.errstate(over="ignore"):  # a bound near the largest float: inf slack, never below
        return np.asarray(floor, dtype=float) + rtol * np.abs(bound)


@declare(
    value=Array(finite=False, min_size=0),
    bound=Array(finite=False, broadcast="value", min_size=0),
    floor=Array(low=0.0, broadcast="value"),
    rtol=Real(0.0),
)
def within_bound(value, bound, *, floor=0.0, rtol: float = BOUND_RTOL) -> np.ndarray:
    r"""Where ``value <= bound + floor + rtol |bound|`` (arrays broadcast; NaN is never
    within): the one comparison behind every upper-bound outcome
    (:func:`upper_bound_outcome`, the rows of :mod:`fedtheory.verdict.statements`,
    :func:`fedtheory.testing.assert_upper_bound`).

    Examples
    --------
    >>> within_bound([0.5, 1.0 + 1e-12, 1.1], 1.0).tolist()
    [True, True, False]
    """
    with np.errstate(over="ignore"):  # bound + slack above the largest float: inf
        return value <= bound + _slack(bound, floor, rtol)


@declare(
    value=Array(finite=False, min_size=0),
    predicted=Array(finite=False, broadcast="value", min_size=0),
    rtol=Real(0.0),
    atol=Array(low=0.0, broadcast="value"),
)
def near(value, predicted, *, rtol: float, atol=0.0) -> np.ndarray:
    r"""Where ``|value - predicted| <= atol + rtol |predicted|`` (arrays broadcast; NaN is
    never near): the comparison of a deterministic exact statement.

    Examples
    --------
    >>> near([1.0, 1.1], 1.0, rtol=1e-9).tolist()
    [True, False]
    """
    return np.abs(value - predicted) <= atol + rtol * np.abs(predicted)


def _upper_codes(low, high, bound, floor, rtol=BOUND_RTOL) -> np.ndarray:
    """0 holds, 1 inconclusive, 2 violated, at every point."""
    with np.errstate(over="ignore"):  # bound + slack above the largest float: inf
        edge = bound + _slack(bound, floor, rtol)
    return np.where(high <= edge, 0, np.where(low > edge, 2, 1))


@declare(low=Real(), high=Real(), predicted=Real(), margin=Real(0.0))
def equivalence_outcome(low, high, predicted, margin) -> Verdict:
    r"""The verdict of the exact statement ``E[X] == predicted`` from a confidence interval
    ``[low, high]`` of :math:`E[X]` and an equivalence margin :math:`M \ge 0` (two one-sided
    tests): *holds* when ``[low, high]`` lies inside ``[predicted - M, predicted + M]``,
    *violated* when it lies entirely outside that band (the deviation exceeds the printed
    margin significantly; with :math:`M=0`, when it excludes ``predicted``), else
    *inconclusive*. The margin is the rule: a deviation smaller than :math:`M` is never
    *violated*, whatever the number of replicates. With a two-sided interval at level
    :math:`1-a`, each one-sided test is at level :math:`a/2`.

    Examples
    --------
    >>> equivalence_outcome(0.99, 1.01, 1.0, 0.05).value
    'holds'
    """
    return _CODES[int(_equivalence_codes(low, high, predicted, margin))]


def _equivalence_codes(low, high, predicted, margin) -> np.ndarray:
    inside = (low >= predicted - margin) & (high <= predicted + margin)
    band = np.maximum(margin, 0.0)  # no margin stated (-inf): the prediction itself
    excludes = (high < predicted - band) | (low > predicted + band)
    return np.where(excludes, 2, np.where(inside, 0, 1))


def _outside_note(verdict: Verdict, assumptions_hold: bool) -> str:
    if assumptions_hold:
        return ""
    reads = {Verdict.HOLDS: "still holds", Verdict.VIOLATED: "fails"}
    return "; outside the assumptions the inequality " + reads.get(verdict, "is undecided")


def _final(verdict: Verdict, assumptions_hold: bool) -> Verdict:
    return verdict if assumptions_hold else Verdict.OUTSIDE


def _ratios(value: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """value/bound at every point (``inf`` where the bound is 0 and the value positive, or
    where the ratio overflows)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(bound != 0, value / bound, np.where(value > 0, np.inf, 0.0))
