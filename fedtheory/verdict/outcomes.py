r"""The decision rules: an interval (or a deterministic value) against an upper bound or an
exact prediction gives *holds*, *inconclusive* or *violated*; outside the hypotheses,
*outside assumptions*."""

from __future__ import annotations

import numpy as np

from fedtheory.params import check_real
from fedtheory.verdict.rounding import BOUND_RTOL
from fedtheory.verdict.rows import Verdict


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
    owner = "upper_bound_outcome"
    low, high, bound = (check_real(v, n, owner) for v, n in ((low, "low"), (high, "high"),
                                                             (bound, "bound")))  # fmt: skip
    floor = check_real(floor, "floor", owner, low=0.0)
    rtol = check_real(rtol, "rtol", owner, low=0.0)
    code = int(_upper_codes(np.array(low), np.array(high), np.array(bound), floor, rtol))
    return _CODES[code]


_CODES = (Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.VIOLATED)


def _slack(bound: np.ndarray, floor, rtol=BOUND_RTOL) -> np.ndarray:
    return np.asarray(floor, dtype=float) + rtol * np.abs(bound)


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
    value, bound = np.asarray(value, dtype=float), np.asarray(bound, dtype=float)
    return value <= bound + _slack(bound, floor, rtol)


def near(value, predicted, *, rtol: float, atol=0.0) -> np.ndarray:
    r"""Where ``|value - predicted| <= atol + rtol |predicted|`` (arrays broadcast; NaN is
    never near): the comparison of a deterministic exact statement.

    Examples
    --------
    >>> near([1.0, 1.1], 1.0, rtol=1e-9).tolist()
    [True, False]
    """
    value, predicted = np.asarray(value, dtype=float), np.asarray(predicted, dtype=float)
    return np.abs(value - predicted) <= atol + rtol * np.abs(predicted)


def _upper_codes(low, high, bound, floor, rtol=BOUND_RTOL) -> np.ndarray:
    """0 holds, 1 inconclusive, 2 violated, at every point."""
    edge = bound + _slack(bound, floor, rtol)
    return np.where(high <= edge, 0, np.where(low > edge, 2, 1))


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
    owner = "equivalence_outcome"
    low, high, p = (check_real(v, n, owner) for v, n in ((low, "low"), (high, "high"),
                                                         (predicted, "predicted")))  # fmt: skip
    margin = check_real(margin, "margin", owner, low=0.0)
    return _CODES[int(_equivalence_codes(low, high, p, margin))]


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
