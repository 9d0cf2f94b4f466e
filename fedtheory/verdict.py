r"""Verdicts: a measured quantity next to what a theorem says, and what the evidence shows.

Statements (theorems, lemmas, identities) get one of four outcomes, by one rule everywhere
(the validations, :func:`fedtheory.validation.theorem_check`,
:func:`fedtheory.testing.check_theorem`, the :mod:`fedtheory.testing` assertions and the
tightness search):

* ``holds`` -- deterministic upper bound: ``measured <= bound + floor`` (the floor is
  rounding, :func:`rounding_floor`); upper bound on a random quantity: the *upper*
  confidence limit of its mean is at most the bound; exact statement on a random quantity:
  the confidence interval lies inside the stated equivalence margin around the prediction
  (two one-sided tests);
* ``violated`` -- deterministic: the comparison fails beyond the floor; random: the *lower*
  confidence limit is above the bound, or the interval excludes the prediction;
* ``inconclusive`` -- random quantities only: neither; the row says how many replicates
  would decide it at the measured spread (:func:`replicates_needed`);
* ``outside assumptions`` -- the instance does not satisfy the theorem's hypotheses; the
  comparison is still reported, but it neither confirms nor refutes the statement.

The intervals fit the data (:func:`mean_intervals`): an exact binomial interval for 0/1
outcomes, Student-t otherwise, a bootstrap on request (heavy tails), all intersected with
the quantity's support when one is given; over the points of a row they are
Bonferroni-corrected, so the row's confidence is family-wise.

A paper's empirical finding (an ordering of methods in a table, say) gets outcomes of its
own, never *violated* (:func:`compare_finding`): judged over independent data draws, each
with its own run seeds, it is *reproduced*, *reversed* (the opposite ordering significant
across the draws and larger than the smallest difference the comparison detects) or *not
reproduced at this scale*. The row gives the numbers; it is not evidence against a
statement of the paper.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from enum import Enum

import numpy as np
from scipy import stats

from fedtheory.errors import ParameterError
from fedtheory.params import check_choice, check_int, check_real, check_seed

BOUND_RTOL = 1e-9
"""Relative slack for ``measured <= bound`` (floating-point rounding only)."""

ROUNDING_ULPS = 64.0
"""Machine epsilons per unit of scale in :func:`rounding_floor`."""

LOOSE_RATIO = 1e-2
"""A *holds* row whose ratio measured/bound is below this is *loose*: it could not detect
an error of a constant factor in the bound."""

INTERVAL_KINDS = ("auto", "t", "binomial", "bootstrap")
"""Confidence intervals of a mean (:func:`mean_intervals`)."""

BOOTSTRAP_RESAMPLES = 999
"""Resamples of the bootstrap interval."""

AUTO_START = 64
"""First batch of :func:`replicate_until_decided` (then doubling up to the cap)."""


def rounding_floor(*magnitudes, ulps: float = ROUNDING_ULPS) -> float:
    r"""The rounding floor of a deterministic comparison: ``ulps`` machine epsilons times
    the largest magnitude that enters the computation,
    :math:`\text{floor}=u\,\varepsilon\,\max_j |m_j|`.

    Pass the magnitudes in the units of the compared quantity (for a squared distance
    :math:`\|x_T-x^*\|^2`: :math:`\|x_0\|^2`, :math:`\|x^*\|^2`, the bound's terms...).
    ``measured <= bound + floor`` then separates rounding from a real excess: a bound of
    exactly 0 met by 7.7e-34 holds within rounding when the floor is larger.
    Arrays are accepted; NaN and infinite magnitudes are ignored."""
    owner = "rounding_floor"
    ulps = check_real(ulps, "ulps", owner, low=0.0)
    scale = 0.0
    for m in magnitudes:
        a = np.abs(np.asarray(m, dtype=float))
        a = a[np.isfinite(a)]
        if a.size:
            scale = max(scale, float(a.max()))
    return ulps * float(np.finfo(float).eps) * scale


@dataclass(frozen=True)
class Measured:
    r"""A deterministic measured value and the largest magnitude in the computation that
    produced it, in the value's units (for :math:`\|x_T-x^*\|^2`: the largest of
    :math:`\|x_0\|^2`, :math:`\|x^*\|^2`, the iterates' squared norms), so that a check
    can add its rounding floor :func:`rounding_floor` ``(scale)``. A measurement returns
    it instead of a bare number where the value can be rounding away from 0.

    Examples
    --------
    >>> rounding_floor(Measured(7.7e-34, 1.0).scale) > 7.7e-34
    True
    """

    value: float | np.ndarray
    scale: float


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


# --- intervals ----------------------------------------------------------------------------
def mean_confidence_interval(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of ``samples [n]`` (n >= 2)."""
    x = np.asarray(samples, dtype=float).ravel()
    confidence = check_real(
        confidence,
        "confidence",
        "mean_confidence_interval",
        low=0.0,
        high=1.0,
        low_open=True,
        high_open=True,
    )
    m = float(x.mean())
    if x.size < 2:
        return m, m, m
    half = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


@dataclass(frozen=True)
class MeanIntervals:
    """Two-sided confidence intervals of a mean at every point of a grid."""

    kind: str  # "t", "binomial" or "bootstrap" ("auto" resolved)
    replicates: int
    level: float  # confidence of each interval
    mean: np.ndarray  # [P]
    low: np.ndarray  # [P]
    high: np.ndarray  # [P]
    support: tuple[float, float] | None = None

    @property
    def name(self) -> str:
        """How the row names the interval, e.g. ``"exact binomial"``."""
        name = {"t": "Student-t", "binomial": "exact binomial", "bootstrap": "BCa bootstrap"}
        text = name[self.kind]
        if self.support is not None and self.kind != "binomial":
            text += f" within the support [{self.support[0]:g}, {self.support[1]:g}]"
        return text


def _as_points(samples, owner: str) -> np.ndarray:
    """``samples [n, ...]`` as a float array ``[n, P]``."""
    x = np.asarray(samples, dtype=float)
    if x.ndim == 0 or x.shape[0] < 1:
        raise ParameterError(
            f"The 'samples' parameter of {owner} must be an array [n, ...] of replicates. "
            f"Got shape {x.shape} instead."
        )
    return x.reshape(x.shape[0], -1) if x.ndim > 1 else x[:, None]


def mean_intervals(
    samples,
    confidence: float = 0.95,
    *,
    kind: str = "auto",
    support: tuple[float, float] | None = None,
    seed: int = 0,
) -> MeanIntervals:
    r"""Confidence interval of :math:`E[X]` at every point from ``samples [n, ...]``
    (``n`` i.i.d. replicates at every point ``[...]``), each at level ``confidence``.

    ``kind``:

    * ``"binomial"`` -- 0/1 outcomes: the exact (Clopper-Pearson) interval
      :math:`[B_{a/2}(k, n-k+1),\ B_{1-a/2}(k+1, n-k)]` of :math:`k` successes in
      :math:`n` (beta quantiles; the interval of ``scipy.stats.binomtest(k, n)
      .proportion_ci(confidence, method="exact")``), inside :math:`[0, 1]`;
    * ``"t"`` -- Student-t, :math:`\bar X\pm t_{1-a/2,n-1}\,s/\sqrt n`;
    * ``"bootstrap"`` -- BCa bootstrap (``scipy.stats.bootstrap``,
      :data:`BOOTSTRAP_RESAMPLES` resamples, generator seeded by ``seed``), for heavy
      tails;
    * ``"auto"`` -- ``"binomial"`` when every value is 0 or 1, else ``"t"``.

    ``support=(a, b)``: the quantity lies in :math:`[a, b]` (every sample is checked; an
    end may be infinite, e.g. ``(0, inf)`` for a squared error); the interval is
    intersected with it (the mean lies in the support, so the coverage is
    unchanged) and never leaves it. ``n = 1`` gives the point interval at the value.
    """
    owner = "mean_intervals"
    confidence = check_real(
        confidence, "confidence", owner, low=0.0, high=1.0, low_open=True, high_open=True
    )
    kind = check_choice(kind, INTERVAL_KINDS, "kind", owner)
    seed = check_seed(seed, owner)
    x = _as_points(samples, owner)  # [n, P]
    n = x.shape[0]
    if support is not None:
        try:
            a, b = (float(v) for v in support)
        except (TypeError, ValueError):
            raise ParameterError(
                f"The 'support' parameter of {owner} must be a pair (a, b) of reals (either "
                f"may be infinite). Got {support!r} instead."
            ) from None
        if not a <= b or np.any((x < a) | (x > b)):
            raise ParameterError(
                f"The 'support' parameter of {owner} must be an interval [a, b] holding every "
                f"sample. Got {support!r} (samples in [{np.nanmin(x):g}, {np.nanmax(x):g}]) "
                "instead."
            )
        support = (a, b)
    binary = bool(np.all((x == 0) | (x == 1)))
    if kind == "auto":
        kind = "binomial" if binary else "t"
    if kind == "binomial" and not binary:
        raise ParameterError(
            f"The 'kind' parameter of {owner} must not be 'binomial' for samples that are "
            f"not all 0 or 1. Got {kind!r} instead."
        )
    mean = x.mean(axis=0)
    alpha = 1.0 - confidence
    if n < 2:
        low, high = mean.copy(), mean.copy()
    elif kind == "binomial":
        k = x.sum(axis=0)
        with np.errstate(invalid="ignore"):
            low = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
            high = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    elif kind == "t":
        half = stats.t.ppf(1 - alpha / 2, n - 1) * x.std(axis=0, ddof=1) / np.sqrt(n)
        low, high = mean - half, mean + half
    else:
        low, high = _bootstrap(x, confidence, seed)
    if support is not None:
        low, high = np.clip(low, *support), np.clip(high, *support)
    return MeanIntervals(kind, n, confidence, mean, low, high, support)


def _bootstrap(x: np.ndarray, confidence: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """BCa intervals of the mean of every column of ``x [n, P]``; a constant column gets
    the point interval (BCa is undefined there)."""
    low, high = x.mean(axis=0), x.mean(axis=0)
    spread = np.ptp(x, axis=0) > 0
    if spread.any():
        res = stats.bootstrap(
            (x[:, spread],),
            np.mean,
            axis=0,
            vectorized=True,
            method="BCa",
            confidence_level=confidence,
            n_resamples=BOOTSTRAP_RESAMPLES,
            batch=max(1, 2**22 // x.size),
            rng=np.random.default_rng(seed),
        )
        low[spread], high[spread] = res.confidence_interval
    return low, high


# --- decisions ------------------------------------------------------------------------------
def upper_bound_outcome(low, high, bound, *, floor: float = 0.0) -> Verdict:
    r"""The verdict of ``X <= bound`` from an interval ``[low, high]`` of ``X`` (a
    confidence interval of a mean, or ``low == high`` = a deterministic value):
    *holds* when ``high <= bound + slack``, *violated* when ``low > bound + slack``,
    else *inconclusive*; the slack is ``floor`` (rounding, :func:`rounding_floor`) plus
    :data:`BOUND_RTOL` ``|bound|``.

    Examples
    --------
    >>> upper_bound_outcome(0.039, 0.051, 0.05).value
    'inconclusive'
    """
    owner = "upper_bound_outcome"
    low, high, bound = (check_real(v, n, owner) for v, n in ((low, "low"), (high, "high"),
                                                             (bound, "bound")))  # fmt: skip
    floor = check_real(floor, "floor", owner, low=0.0)
    code = int(_upper_codes(np.array(low), np.array(high), np.array(bound), floor))
    return _CODES[code]


_CODES = (Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.VIOLATED)


def _slack(bound: np.ndarray, floor) -> np.ndarray:
    return np.asarray(floor, dtype=float) + BOUND_RTOL * np.abs(bound)


def _upper_codes(low, high, bound, floor) -> np.ndarray:
    """0 holds, 1 inconclusive, 2 violated, at every point."""
    edge = bound + _slack(bound, floor)
    return np.where(high <= edge, 0, np.where(low > edge, 2, 1))


def equivalence_outcome(low, high, predicted, margin) -> Verdict:
    r"""The verdict of the exact statement ``E[X] == predicted`` from a confidence interval
    ``[low, high]`` of :math:`E[X]` and an equivalence margin :math:`M \ge 0` (two one-sided
    tests): *holds* when ``[low, high]`` lies inside ``[predicted - M, predicted + M]``,
    *violated* when it excludes ``predicted``, else *inconclusive*. With a two-sided
    interval at level :math:`1-a`, each one-sided test is at level :math:`a/2`.

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
    excludes = (high < predicted) | (low > predicted)
    return np.where(excludes, 2, np.where(inside, 0, 1))


def replicates_needed(replicates: int, mean, low, high, target) -> int | None:
    r"""Replicates at which the interval, shrinking as :math:`1/\sqrt n` at the measured
    spread, no longer contains ``target``: the side of ``[low, high]`` facing ``target``,
    of length :math:`h`, must become shorter than the distance
    :math:`d=|\text{mean}-\text{target}|`, so :math:`n=\lceil n_0 (h/d)^2\rceil`. ``None``
    when the mean equals the target (no number of replicates decides it at this mean).

    Examples
    --------
    >>> replicates_needed(2000, 0.045, 0.039, 0.051, 0.05)  # upper limit must drop below 0.05
    2880
    """
    owner = "replicates_needed"
    n0 = check_int(replicates, "replicates", owner, low=1)
    mean, low, high, target = (
        check_real(v, k, owner)
        for v, k in ((mean, "mean"), (low, "low"), (high, "high"), (target, "target"))
    )
    d = abs(mean - target)
    if d == 0:
        return None
    h = high - mean if target > mean else mean - low
    return max(n0, math.ceil(n0 * (h / d) ** 2))


def _needed_text(n: int | None, have: int) -> str:
    if n is None:
        return "the mean equals the bound: no number of replicates decides it at this mean"
    return f"about {n} replicates would decide it at the measured spread (have {have})"


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


def _rounding_note(measured: np.ndarray, bound: np.ndarray, slack: np.ndarray, ok) -> str:
    """ "holds within rounding: excess ... <= floor ..." where a point passes on the floor."""
    excess = measured - bound
    used = ok & (excess > 0)
    if not used.any():
        return ""
    j = np.unravel_index(int(np.argmax(np.where(used, excess, -np.inf))), excess.shape)
    where = f" at {int(used.sum())} point(s)" if used.size > 1 else ""
    return (
        f"; holds within rounding{where}: excess {float(excess[j]):.2g} <= floor "
        f"{float(slack[j]):.2g}"
    )


def compare_upper_bound(
    claim: str,
    reference: str,
    measured,
    bound,
    *,
    assumptions_hold: bool = True,
    floor=0.0,
) -> Comparison:
    """Deterministic ``measured <= bound + floor`` checked at every point of broadcastable
    arrays (``floor``: rounding, from the magnitudes of the computation,
    :func:`rounding_floor`; :data:`BOUND_RTOL` ``|bound|`` is added). The row reports the
    worst point (largest ratio measured/bound, a failing point first) and says when the
    verdict rests on the floor."""
    m, b, fl = np.broadcast_arrays(*(np.asarray(v, float) for v in (measured, bound, floor)))
    if np.any(fl < 0) or np.any(np.isnan(fl)):
        raise ParameterError(
            f"The 'floor' parameter of compare_upper_bound must be >= 0. Got {floor!r} instead."
        )
    slack = _slack(b, fl)
    ok_at = m <= b + slack
    ok = bool(np.all(ok_at))
    ratio = _ratios(m, b)
    score = ratio if ok else np.where(ok_at, -np.inf, np.nan_to_num(ratio, nan=np.inf))
    i = np.unravel_index(int(np.nanargmax(score)), m.shape)
    verdict = Verdict.HOLDS if ok else Verdict.VIOLATED
    detail = (
        f"checked at {m.size} point(s); worst ratio {format_ratio(m[i], b[i])}"
        + _rounding_note(m, b, slack, ok_at)
        + _outside_note(verdict, assumptions_hold)
    )
    return Comparison(
        claim, reference, "<=", float(m[i]), float(b[i]), _final(verdict, assumptions_hold), detail
    )


def _pointwise_level(confidence: float, points: int) -> float:
    """Per-point confidence so that all ``points`` intervals hold together with probability
    at least ``confidence`` (Bonferroni)."""
    return 1.0 - (1.0 - confidence) / points


def _random_row(
    ci: MeanIntervals,
    i: int,
    confidence: float,
    claim: str,
    reference: str,
    relation: str,
    target: np.ndarray,
    verdict: Verdict,
    judged: str,
    assumptions_hold: bool,
) -> Comparison:
    """The row for point ``i``; ``judged`` ends its detail (how the interval decides)."""
    size = ci.mean.size
    where = "" if size == 1 else f" at point {i} of {size} (Bonferroni: {ci.level:.4g} each)"
    low, high = float(ci.low[i]), float(ci.high[i])
    detail = (
        f"mean over {ci.replicates} replicates{where}, family-wise {100 * confidence:.3g}% "
        f"{ci.name} CI [{low:.4g}, {high:.4g}]{judged}"
    ) + _outside_note(verdict, assumptions_hold)
    return Comparison(
        claim,
        reference,
        relation,
        float(ci.mean[i]),
        float(target[i]),
        _final(verdict, assumptions_hold),
        detail,
        (low, high),
    )


def _intervals(samples, target, confidence, kind, support, seed, owner):
    confidence = check_real(
        confidence, "confidence", owner, low=0.0, high=1.0, low_open=True, high_open=True
    )
    x = _as_points(samples, owner)  # [n, P]
    t = np.broadcast_to(np.asarray(target, dtype=float).ravel(), x.shape[1:])  # [P]
    level = _pointwise_level(confidence, x.shape[1])
    ci = mean_intervals(x, level, kind=kind, support=support, seed=seed)
    return confidence, np.array(t), ci


def compare_mean_upper_bound(
    claim: str,
    reference: str,
    samples,
    bound,
    *,
    assumptions_hold: bool = True,
    confidence: float = 0.95,
    floor=0.0,
    interval: str = "auto",
    support: tuple[float, float] | None = None,
    seed: int = 0,
) -> Comparison:
    """``E[X] <= bound`` from i.i.d. replicates: *holds* when the upper confidence limit is
    at most the bound, *violated* when the lower limit is above it, else *inconclusive*
    (with the replicates that would decide it at the measured spread); ``floor`` as in
    :func:`compare_upper_bound`.

    ``samples [n, ...]`` holds ``n`` replicates of the quantity at every point ``[...]``
    and ``bound`` broadcasts against ``[...]``; the statement is checked at every point
    with Bonferroni-corrected intervals (:func:`mean_intervals` of kind ``interval``, in
    ``support``), so that ``confidence`` is family-wise: the row is *violated* when some
    point is, *holds* when every point does. It reports the deciding point (a violated
    one, else an undecided one, else the largest upper limit / bound)."""
    owner = "compare_mean_upper_bound"
    confidence, b, ci = _intervals(samples, bound, confidence, interval, support, seed, owner)
    fl = np.broadcast_to(np.asarray(floor, dtype=float).ravel(), b.shape)
    if np.any(fl < 0) or np.any(np.isnan(fl)):
        raise ParameterError(
            f"The 'floor' parameter of {owner} must be >= 0. Got {floor!r} instead."
        )
    codes = _upper_codes(ci.low, ci.high, b, fl)
    slack = _slack(b, fl)
    worst = int(codes.max())
    if worst == 2:
        i = int(np.argmax(np.where(codes == 2, ci.low - b - slack, -np.inf)))
    elif worst == 1:
        i = int(np.argmax(np.where(codes == 1, ci.high - b - slack, -np.inf)))
    else:
        i = int(np.nanargmax(_ratios(ci.high, b)))
    verdict = _CODES[worst]
    if verdict is Verdict.HOLDS:
        judged = "; holds: upper limit <= bound" + _rounding_note(ci.high, b, slack, codes == 0)
    elif verdict is Verdict.VIOLATED:
        judged = "; violated: lower limit > bound"
    else:
        need = replicates_needed(ci.replicates, ci.mean[i], ci.low[i], ci.high[i], b[i] + slack[i])
        judged = (
            f"; inconclusive: the interval contains the bound; {_needed_text(need, ci.replicates)}"
        )
    return _random_row(
        ci, i, confidence, claim, reference, "<=", b, verdict, judged, assumptions_hold
    )


def compare_mean_equal(
    claim: str,
    reference: str,
    samples,
    predicted,
    *,
    margin=None,
    assumptions_hold: bool = True,
    confidence: float = 0.95,
    interval: str = "auto",
    support: tuple[float, float] | None = None,
    seed: int = 0,
) -> Comparison:
    r"""``E[X] == predicted`` from i.i.d. replicates ``samples [n, ...]`` by two one-sided
    tests (:func:`equivalence_outcome`): *holds* when the interval lies inside
    ``predicted ± margin`` at every point, *violated* when it excludes the prediction at
    some point, else *inconclusive*. ``margin`` (broadcast against the points, ``>= 0``) is
    the stated equivalence margin, printed in the row; without one (``None``) the statement
    cannot hold: a row whose interval contains the prediction is *inconclusive*.
    Intervals as in :func:`compare_mean_upper_bound` (Bonferroni over the points)."""
    owner = "compare_mean_equal"
    confidence, p, ci = _intervals(samples, predicted, confidence, interval, support, seed, owner)
    if margin is None:
        mg = np.full(p.shape, -np.inf)
    else:
        mg = np.array(np.broadcast_to(np.asarray(margin, dtype=float).ravel(), p.shape))
        if np.any(~(mg >= 0)):
            raise ParameterError(
                f"The 'margin' parameter of {owner} must be >= 0 (or None). Got {margin!r} instead."
            )
    codes = _equivalence_codes(
        ci.low, ci.high, p, np.maximum(mg, 0.0) if margin is not None else mg
    )
    worst = int(codes.max())
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        score = np.abs(ci.mean - p) / np.maximum(ci.high - ci.low, np.finfo(float).tiny)
    i = int(np.argmax(np.where(codes == worst, np.nan_to_num(score, nan=np.inf), -np.inf)))
    verdict = _CODES[worst]
    stated = "no margin stated" if margin is None else f"margin ±{float(mg[i]):.3g}"
    if verdict is Verdict.HOLDS:
        judged = f"; holds: inside the prediction ± margin ({stated})"
    elif verdict is Verdict.VIOLATED:
        judged = f"; violated: the interval excludes the prediction ({stated})"
    else:
        args = (ci.replicates, ci.mean[i], ci.low[i], ci.high[i])
        decide = [replicates_needed(*args, p[i])]
        if margin is not None and abs(ci.mean[i] - p[i]) < mg[i]:
            decide.append(
                max(replicates_needed(*args, p[i] - mg[i]), replicates_needed(*args, p[i] + mg[i]))
            )
        need = min((n for n in decide if n is not None), default=None)
        judged = (
            f"; inconclusive: contains the prediction but not inside ± margin ({stated}); "
            + _needed_text(need, ci.replicates)
        )
    return _random_row(
        ci, i, confidence, claim, reference, "==", p, verdict, judged, assumptions_hold
    )


def compare_equal(
    claim: str,
    reference: str,
    measured,
    predicted,
    *,
    rtol: float,
    atol: float = 0.0,
    assumptions_hold: bool = True,
) -> Comparison:
    """Exact statement ``measured == predicted`` up to ``atol + rtol*|predicted|``,
    checked at every point; the row reports the point of largest deviation."""
    m, p = np.broadcast_arrays(np.asarray(measured, float), np.asarray(predicted, float))
    dev = np.abs(m - p)
    ok = bool(np.all(dev <= atol + rtol * np.abs(p)))
    i = np.unravel_index(np.argmax(dev), dev.shape)
    verdict = Verdict.HOLDS if ok else Verdict.VIOLATED
    detail = (
        f"checked at {m.size} point(s); largest |measured - predicted| = "
        f"{float(dev[i]):.3g} (tolerance {atol:g} + {rtol:g}*|predicted|)"
    ) + _outside_note(verdict, assumptions_hold)
    return Comparison(
        claim, reference, "==", float(m[i]), float(p[i]), _final(verdict, assumptions_hold), detail
    )


def adaptive_looks(
    cap: int, *, start: int = AUTO_START, confidence: float = 0.95
) -> tuple[list[int], float]:
    """The planned looks of adaptive replication, ``[start, 2 start, 4 start, ..., cap]``
    replicates, and the confidence of each look, ``1 - (1 - confidence)/L`` for ``L``
    looks (Bonferroni: family-wise ``confidence`` over the looks).

    Examples
    --------
    >>> adaptive_looks(1000)
    ([64, 128, 256, 512, 1000], 0.99)
    """
    owner = "adaptive_looks"
    cap = check_int(cap, "cap", owner, low=2)
    start = check_int(start, "start", owner, low=2, high=cap)
    confidence = check_real(
        confidence, "confidence", owner, low=0.0, high=1.0, low_open=True, high_open=True
    )
    sizes = [start]
    while sizes[-1] < cap:
        sizes.append(min(2 * sizes[-1], cap))
    return sizes, 1.0 - (1.0 - confidence) / len(sizes)


def replicate_until_decided(
    draw: Callable[[int, int], np.ndarray],
    judge: Callable[[np.ndarray, float], Comparison],
    *,
    cap: int,
    start: int = AUTO_START,
    confidence: float = 0.95,
) -> tuple[Comparison, np.ndarray]:
    r"""Adaptive replication: add replicates until the verdict is decided or ``cap`` is
    reached.

    The looks are at ``start, 2 start, 4 start, ...`` replicates, the last at ``cap``;
    ``draw(batch, size)`` returns the ``size`` new replicates ``[size, ...]`` of look
    ``batch`` (their seed a pure function of the caller's seed and ``batch``, so the result
    is deterministic) and ``judge(samples, level)`` the row from all replicates so far at
    confidence ``level``. Every look is at ``1 - (1 - confidence)/L`` for the ``L`` planned
    looks (Bonferroni), so the family-wise confidence over the looks is ``confidence``.
    Returns the row (its detail says how many replicates and looks) and the replicates.
    """
    sizes, level = adaptive_looks(cap, start=start, confidence=confidence)
    parts: list[np.ndarray] = []
    for k, total in enumerate(sizes):
        parts.append(np.asarray(draw(k, total - sum(len(p) for p in parts)), dtype=float))
        samples = np.concatenate(parts, axis=0)
        row = judge(samples, level)
        if row.verdict is not Verdict.INCONCLUSIVE:
            break
    note = (
        f"; adaptive replication: {len(samples)} replicates after {k + 1} of {len(sizes)} "
        f"planned looks (cap {cap}; each look at confidence {level:.4g})"
    )
    return replace(row, detail=row.detail + note), samples


DETECTION_POWER = 0.8
"""Power at which :func:`detectable_difference` states the smallest detectable difference."""


@dataclass(frozen=True)
class MeanDifference:
    r"""Welch's comparison of two means from independent replicates (``X`` and ``Y``).

    ``difference`` :math:`\bar X-\bar Y`; ``low``, ``high`` its two-sided confidence
    limits (Student-t with Welch-Satterthwaite degrees of freedom ``df``); ``se`` its
    standard error :math:`\sqrt{s_X^2/n_X+s_Y^2/n_Y}`; ``detectable`` the smallest true
    difference the two-sided test at this confidence detects with probability ``power``,
    :math:`(t_{1-a/2,\nu}+t_{\text{power},\nu})\,\mathrm{se}` (:math:`a=1-` confidence).
    """

    difference: float
    low: float
    high: float
    se: float
    df: float
    detectable: float
    n_x: int
    n_y: int
    confidence: float
    power: float


def mean_difference(
    samples, baseline, *, confidence: float = 0.95, power: float = DETECTION_POWER
) -> MeanDifference:
    r"""Welch's confidence interval of :math:`E[X]-E[Y]` from ``samples [n_X]`` and
    ``baseline [n_Y]`` (independent replicates, each at least 2), and the smallest difference
    detectable with probability ``power`` at this spread (a normal-approximation power
    calculation with Student-t quantiles; see :class:`MeanDifference`)."""
    owner = "mean_difference"
    confidence = check_real(
        confidence, "confidence", owner, low=0.0, high=1.0, low_open=True, high_open=True
    )
    power = check_real(power, "power", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    x = np.asarray(samples, dtype=float).ravel()
    y = np.asarray(baseline, dtype=float).ravel()
    if x.size < 2 or y.size < 2:
        raise ParameterError(
            f"The 'samples' parameter of {owner} must hold at least 2 replicates (and so must "
            f"'baseline'). Got {x.size} and {y.size} instead."
        )
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = float(np.sqrt(vx + vy))
    if se > 0:
        df = float((vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1)))
    else:
        df = float(x.size + y.size - 2)
    d = float(x.mean() - y.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2, df)) * se
    detectable = float(stats.t.ppf(0.5 + confidence / 2, df) + stats.t.ppf(power, df)) * se
    return MeanDifference(
        d, d - half, d + half, se, df, detectable, x.size, y.size, confidence, power
    )


MIN_DATA_SEEDS = 5
"""Independent data draws a finding needs before :func:`compare_finding` may call it
*reversed* (fewer draws can still reproduce it, or leave it not reproduced)."""


@dataclass(frozen=True)
class FindingDifference:
    r"""A finding's difference :math:`\bar X-\bar Y` judged across independent data draws.

    ``per_draw [S]`` the per-draw differences :math:`d_s=\bar X_s-\bar Y_s` (each a mean over
    that draw's run seeds); ``difference`` their mean :math:`\bar d`; ``low``, ``high`` its
    two-sided Student-t confidence limits with :math:`S-1` degrees of freedom; ``se``
    :math:`s_d/\sqrt S`; ``detectable`` the smallest true difference the two-sided test at
    this confidence detects with probability ``power``,
    :math:`(t_{1-a/2,S-1}+t_{\text{power},S-1})\,\mathrm{se}`."""

    per_draw: np.ndarray  # [S]
    difference: float
    low: float
    high: float
    se: float
    detectable: float
    replicates: tuple[int, int]  # run seeds per draw of X and of Y
    confidence: float
    power: float


def finding_difference(
    samples, baseline, *, confidence: float = 0.95, power: float = DETECTION_POWER
) -> FindingDifference:
    r"""The difference of means of ``samples [S, R_X]`` and ``baseline [S, R_Y]`` (``S``
    independent data draws, each with its own run seeds) with its interval **over the data
    draws**: the per-draw differences :math:`d_s` carry both the run-seed noise and the
    draw-to-draw variation, so the interval covers what another draw would give
    (:class:`FindingDifference`)."""
    owner = "finding_difference"
    confidence = check_real(
        confidence, "confidence", owner, low=0.0, high=1.0, low_open=True, high_open=True
    )
    power = check_real(power, "power", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    x, y = np.asarray(samples, dtype=float), np.asarray(baseline, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    y = y[:, None] if y.ndim == 1 else y
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] < 2:
        raise ParameterError(
            f"The 'samples' parameter of {owner} must be [S, R] with S >= 2 data draws, like "
            f"'baseline'. Got shapes {x.shape} and {y.shape} instead."
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ParameterError(
            f"The 'samples' parameter of {owner} must be finite, like 'baseline'. Got "
            f"{int(np.sum(~np.isfinite(x)) + np.sum(~np.isfinite(y)))} non-finite value(s) "
            "instead."
        )
    d = x.mean(axis=1) - y.mean(axis=1)  # [S]
    s = d.size
    se = float(d.std(ddof=1) / np.sqrt(s))
    t_conf = float(stats.t.ppf(0.5 + confidence / 2, s - 1))
    detectable = (t_conf + float(stats.t.ppf(power, s - 1))) * se
    m = float(d.mean())
    return FindingDifference(
        d, m, m - t_conf * se, m + t_conf * se, se, detectable,
        (x.shape[1], y.shape[1]), confidence, power,
    )  # fmt: skip


def distinct_runs(runs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``runs`` with identical arrays reported once: names of equal runs are joined with
    " = " (first occurrence's position), so one run is never counted as two rows."""
    groups: list[tuple[list[str], np.ndarray]] = []
    for name, values in runs.items():
        twin = next((g for g in groups if np.array_equal(g[1], values)), None)
        if twin is None:
            groups.append(([name], values))
        else:
            twin[0].append(name)
    return {" = ".join(names): values for names, values in groups}


def compare_finding(
    claim: str,
    reference: str,
    samples,
    baseline,
    *,
    relation: str = "<",
    confidence: float = 0.95,
    power: float = DETECTION_POWER,
) -> Comparison:
    r"""A paper's empirical finding :math:`E[X]<E[Y]` (``relation="<"``) or
    :math:`E[X]>E[Y]` (``">"``), e.g. an ordering of methods in a table, from
    ``samples [S, R_X]`` and ``baseline [S, R_Y]``: ``S`` independent data draws (data set,
    population...), each run with its own run seeds. The interval over the draws of the
    per-draw difference decides (:func:`finding_difference`):

    * *reproduced* -- the interval lies on the finding's side of 0;
    * *reversed* -- it lies on the opposite side, the measured difference exceeds the
      smallest difference detected with probability ``power``, and there are at least
      :data:`MIN_DATA_SEEDS` draws;
    * *not reproduced* -- otherwise; the detail gives the numbers.

    Never *violated*: a table's ordering on other instances is evidence about whether the
    finding generalises, not a statement to refute. The row reports the mean of ``X`` (its
    interval over the draws) against the mean of ``Y``."""
    if relation not in ("<", ">"):
        raise ParameterError(
            f"The 'relation' parameter of compare_finding must be '<' or '>'. Got {relation!r} "
            "instead."
        )
    diff = finding_difference(samples, baseline, confidence=confidence, power=power)
    sign = 1.0 if relation == "<" else -1.0  # the finding says sign * (X - Y) < 0
    low, high = sorted((sign * diff.low, sign * diff.high))
    draws = diff.per_draw.size
    if high < 0:
        verdict = Verdict.REPRODUCED
    elif low > 0 and sign * diff.difference > diff.detectable and draws >= MIN_DATA_SEEDS:
        verdict = Verdict.REVERSED
    else:
        verdict = Verdict.NOT_REPRODUCED
    x = np.asarray(samples, dtype=float)
    per_draw_x = x.mean(axis=1) if x.ndim == 2 else x
    mean, x_low, x_high = mean_confidence_interval(per_draw_x, confidence)
    detail = (
        f"{draws} data draws x {diff.replicates[0]} vs {diff.replicates[1]} run seeds; "
        f"difference of means {diff.difference:.4g}, {diff.confidence:.0%} CI over the draws "
        f"[{diff.low:.4g}, {diff.high:.4g}] (Student-t, {draws - 1} df); per draw "
        + ", ".join(f"{v:+.3g}" for v in diff.per_draw)
        + f"; smallest difference detected with {diff.power:.0%} power at this spread: "
        f"{diff.detectable:.4g}"
    )
    if low > 0 and verdict is Verdict.NOT_REPRODUCED:
        why = (
            "not larger than the detectable difference"
            if draws >= MIN_DATA_SEEDS
            else f"fewer than {MIN_DATA_SEEDS} data draws"
        )
        detail += f"; the opposite ordering is significant but {why}"
    baseline_mean = float(np.asarray(baseline, dtype=float).mean())
    return Comparison(
        claim, reference, relation, mean, baseline_mean, verdict, detail, (x_low, x_high)
    )
