r"""Verdicts: a measured quantity next to what a theorem says, and whether it holds.

* ``holds`` -- measured respects the statement (for random quantities: the upper
  confidence limit of the mean is below the bound);
* ``violated`` -- it does not, on the instance reported;
* ``outside assumptions`` -- the instance does not satisfy the theorem's hypotheses; the
  comparison is still reported, but it neither confirms nor refutes the statement;
* ``not reproduced at this scale`` -- for an empirical finding of a paper (an ordering of
  methods in a table, say) compared on fewer replicates or a smaller instance than the
  paper's: the measured difference neither reproduces the finding nor contradicts it by a
  statistically significant amount larger than the smallest difference the comparison
  detects (its power, from the measured spread; :func:`compare_mean_ordering`). The row
  gives the numbers; it is not evidence against the paper.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum

import numpy as np
from scipy import stats

from fedtheory.errors import ParameterError
from fedtheory.params import check_real

BOUND_RTOL = 1e-9
"""Relative slack for ``measured <= bound`` (floating-point rounding only)."""

ROUNDING_ULPS = 64.0
"""Machine epsilons per unit of scale in :func:`rounding_floor`."""


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


@dataclass(frozen=True)
class Comparison:
    """One row of the verdict table."""

    claim: str
    reference: str
    relation: str  # "<=" (upper bound) or "==" (exact statement)
    measured: float
    bound: float
    verdict: Verdict
    detail: str = ""
    interval: tuple[float, float] | None = None  # confidence interval of a random measured

    @property
    def ratio(self) -> float:
        """measured / bound (tightness of an upper bound; 1 for an exact match)."""
        return float(self.measured / self.bound) if self.bound != 0 else float("nan")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["ratio"] = self.ratio
        d["interval"] = None if self.interval is None else list(self.interval)
        return d


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


def _verdict(ok: bool, assumptions_hold: bool) -> Verdict:
    if not assumptions_hold:
        return Verdict.OUTSIDE
    return Verdict.HOLDS if ok else Verdict.VIOLATED


def _outside_note(ok: bool, assumptions_hold: bool) -> str:
    if assumptions_hold:
        return ""
    return "; outside the assumptions the inequality " + ("still holds" if ok else "fails")


def _check_upper_bound(value: np.ndarray, bound: np.ndarray) -> tuple[bool, np.ndarray]:
    """Whether ``value <= bound`` (up to ``BOUND_RTOL``) at every point, and the ratio
    value/bound at every point (``inf`` where the bound is 0 and the value positive)."""
    ok = bool(np.all(value <= bound + BOUND_RTOL * np.abs(bound)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound != 0, value / bound, np.where(value > 0, np.inf, 0.0))
    return ok, ratio


def compare_upper_bound(
    claim: str, reference: str, measured, bound, *, assumptions_hold: bool = True
) -> Comparison:
    """Deterministic ``measured <= bound`` checked at every point of two broadcastable
    arrays; the row reports the point of largest ratio measured/bound."""
    m, b = np.broadcast_arrays(np.asarray(measured, float), np.asarray(bound, float))
    ok, ratio = _check_upper_bound(m, b)
    i = np.unravel_index(np.nanargmax(ratio), ratio.shape)
    detail = f"checked at {m.size} point(s); worst ratio {float(ratio[i]):.4g}" + _outside_note(
        ok, assumptions_hold
    )
    return Comparison(
        claim, reference, "<=", float(m[i]), float(b[i]), _verdict(ok, assumptions_hold), detail
    )


def _pointwise_level(confidence: float, points: int) -> float:
    """Per-point confidence so that all ``points`` intervals hold together with probability
    at least ``confidence`` (Bonferroni)."""
    return 1.0 - (1.0 - confidence) / points


@dataclass(frozen=True)
class _PointwiseMeans:
    """Bonferroni-corrected confidence intervals of a mean at every point of a grid."""

    replicates: int
    confidence: float  # family-wise
    level: float  # per point
    target: np.ndarray  # [P] the bound or prediction at every point
    mean: np.ndarray  # [P]
    low: np.ndarray  # [P]
    high: np.ndarray  # [P]

    def comparison(
        self,
        i: int,
        claim: str,
        reference: str,
        relation: str,
        ok: bool,
        assumptions_hold: bool,
        judged: str,
    ) -> Comparison:
        """The row for point ``i``; ``judged`` ends its detail (how the interval decides)."""
        size = self.target.size
        where = "" if size == 1 else f" at point {i} of {size} (Bonferroni: {self.level:.4g} each)"
        low, high = float(self.low[i]), float(self.high[i])
        detail = (
            f"mean over {self.replicates} replicates{where}, family-wise {self.confidence:.0%} CI "
            f"[{low:.4g}, {high:.4g}]{judged}"
        ) + _outside_note(ok, assumptions_hold)
        return Comparison(
            claim,
            reference,
            relation,
            float(self.mean[i]),
            float(self.target[i]),
            _verdict(ok, assumptions_hold),
            detail,
            (low, high),
        )


def _pointwise_means(samples, target, confidence: float) -> _PointwiseMeans:
    """Intervals from ``samples [n, ...]`` (``n`` i.i.d. replicates at every point ``[...]``)
    with ``target`` broadcast against ``[...]``."""
    x = np.asarray(samples, dtype=float)
    x = x.reshape(x.shape[0], -1) if x.ndim > 1 else x[:, None]  # [n, P]
    t = np.broadcast_to(np.asarray(target, dtype=float).ravel(), x.shape[1:])  # [P]
    level = _pointwise_level(confidence, x.shape[1])
    ci = np.array([mean_confidence_interval(x[:, j], level) for j in range(x.shape[1])])
    mean, low, high = ci.T  # [P] each
    return _PointwiseMeans(x.shape[0], confidence, level, t, mean, low, high)


def compare_mean_upper_bound(
    claim: str,
    reference: str,
    samples,
    bound,
    *,
    assumptions_hold: bool = True,
    confidence: float = 0.95,
) -> Comparison:
    """``E[X] <= bound`` from i.i.d. replicates, judged on the upper confidence limit.

    ``samples [n, ...]`` holds ``n`` replicates of the quantity at every point ``[...]``
    and ``bound`` broadcasts against ``[...]``; the statement is checked at every point, with
    Bonferroni-corrected intervals so that ``confidence`` is family-wise, and the row reports
    the point where (upper confidence limit)/bound is largest."""
    means = _pointwise_means(samples, bound, confidence)
    b, high = means.target, means.high  # [P]
    ok, ratio = _check_upper_bound(high, b)
    i = int(np.nanargmax(ratio))
    return means.comparison(
        i, claim, reference, "<=", ok, assumptions_hold, "; judged on the upper limit"
    )


def compare_mean_equal(
    claim: str,
    reference: str,
    samples,
    predicted,
    *,
    assumptions_hold: bool = True,
    confidence: float = 0.95,
) -> Comparison:
    """``E[X] == predicted`` from i.i.d. replicates ``samples [n, ...]``: holds when the
    prediction lies in the confidence interval of the mean at every point ``[...]``
    (Bonferroni-corrected, so ``confidence`` is family-wise); the row
    reports the point where ``|mean - predicted| / (half-width of the interval)`` is largest."""
    means = _pointwise_means(samples, predicted, confidence)
    p, mean, low, high = means.target, means.mean, means.low, means.high  # [P] each
    ok = bool(np.all((low <= p) & (p <= high)))
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.abs(mean - p) / np.maximum(high - mean, np.finfo(float).tiny)
    i = int(np.nanargmax(score))
    return means.comparison(
        i, claim, reference, "==", ok, assumptions_hold, " must contain the prediction"
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
    detail = (
        f"checked at {m.size} point(s); largest |measured - predicted| = "
        f"{float(dev[i]):.3g} (tolerance {atol:g} + {rtol:g}*|predicted|)"
    ) + _outside_note(ok, assumptions_hold)
    return Comparison(
        claim, reference, "==", float(m[i]), float(p[i]), _verdict(ok, assumptions_hold), detail
    )


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


def compare_mean_ordering(
    claim: str,
    reference: str,
    samples,
    baseline,
    *,
    confidence: float = 0.95,
    power: float = DETECTION_POWER,
    assumptions_hold: bool = True,
) -> Comparison:
    r"""A paper's empirical ordering :math:`E[X]<E[Y]` (e.g. "method A's error is below
    method B's" in a table) from independent replicates ``samples [n_X]`` of :math:`X` and
    ``baseline [n_Y]`` of :math:`Y` (:func:`mean_difference`):

    * *holds* -- the upper confidence limit of :math:`E[X]-E[Y]` is below 0 (the ordering
      is reproduced);
    * *violated* -- the lower limit is above 0 (the reverse ordering is significant) **and**
      the measured difference exceeds the smallest difference the comparison detects with
      probability ``power``;
    * *not reproduced at this scale* -- otherwise.

    The row reports the mean of ``X`` (with its confidence interval), against the mean of
    ``Y`` as the bound; its detail gives the difference, its interval and the detectable
    difference."""
    diff = mean_difference(samples, baseline, confidence=confidence, power=power)
    x = np.asarray(samples, dtype=float).ravel()
    mean, low, high = mean_confidence_interval(x, confidence)
    if not assumptions_hold:
        verdict = Verdict.OUTSIDE
    elif diff.high < 0:
        verdict = Verdict.HOLDS
    elif diff.low > 0 and diff.difference > diff.detectable:
        verdict = Verdict.VIOLATED
    else:
        verdict = Verdict.NOT_REPRODUCED
    detail = (
        f"{diff.n_x} vs {diff.n_y} replicates; difference of means {diff.difference:.4g}, "
        f"{diff.confidence:.0%} CI [{diff.low:.4g}, {diff.high:.4g}] (Welch, {diff.df:.1f} df); "
        f"smallest difference detected with {diff.power:.0%} power at this spread: "
        f"{diff.detectable:.4g}"
    )
    if verdict is Verdict.OUTSIDE:
        detail += _outside_note(diff.high < 0, assumptions_hold)
    return Comparison(
        claim,
        reference,
        "<",
        mean,
        float(np.asarray(baseline, dtype=float).mean()),
        verdict,
        detail,
        (low, high),
    )
