r"""Verdicts: a measured quantity next to what a theorem says, and whether it holds.

* ``holds`` -- measured respects the statement (for random quantities: the upper
  confidence limit of the mean is below the bound);
* ``violated`` -- it does not, on the instance reported;
* ``outside assumptions`` -- the instance does not satisfy the theorem's hypotheses; the
  comparison is still reported, but it neither confirms nor refutes the statement.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum

import numpy as np
from scipy import stats

from fedtheory.params import check_real

BOUND_RTOL = 1e-9
"""Relative slack for ``measured <= bound`` (floating-point rounding only)."""


class Verdict(str, Enum):
    HOLDS = "holds"
    VIOLATED = "violated"
    OUTSIDE = "outside assumptions"


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


def compare_upper_bound(
    claim: str, reference: str, measured, bound, *, assumptions_hold: bool = True
) -> Comparison:
    """Deterministic ``measured <= bound`` checked at every point of two broadcastable
    arrays; the row reports the point of largest ratio measured/bound."""
    m, b = np.broadcast_arrays(np.asarray(measured, float), np.asarray(bound, float))
    ok = bool(np.all(m <= b + BOUND_RTOL * np.abs(b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b != 0, m / b, np.where(m > 0, np.inf, 0.0))
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
    x = np.asarray(samples, dtype=float)
    x = x.reshape(x.shape[0], -1) if x.ndim > 1 else x[:, None]  # [n, P]
    b = np.broadcast_to(np.asarray(bound, dtype=float).ravel(), x.shape[1:])  # [P]
    level = _pointwise_level(confidence, x.shape[1])
    ci = np.array([mean_confidence_interval(x[:, j], level) for j in range(x.shape[1])])
    mean, low, high = ci.T  # [P] each
    ok = bool(np.all(high <= b + BOUND_RTOL * np.abs(b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(b != 0, high / b, np.where(high > 0, np.inf, 0.0))
    i = int(np.nanargmax(ratio))
    where = "" if b.size == 1 else f" at point {i} of {b.size} (Bonferroni: {level:.4g} each)"
    detail = (
        f"mean over {x.shape[0]} replicates{where}, family-wise {confidence:.0%} CI "
        f"[{low[i]:.4g}, {high[i]:.4g}]; judged on the upper limit"
    ) + _outside_note(ok, assumptions_hold)
    return Comparison(
        claim,
        reference,
        "<=",
        float(mean[i]),
        float(b[i]),
        _verdict(ok, assumptions_hold),
        detail,
        (float(low[i]), float(high[i])),
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
    reports the point where |mean - predicted| / (half-width of the interval) is largest."""
    x = np.asarray(samples, dtype=float)
    x = x.reshape(x.shape[0], -1) if x.ndim > 1 else x[:, None]  # [n, P]
    p = np.broadcast_to(np.asarray(predicted, dtype=float).ravel(), x.shape[1:])  # [P]
    level = _pointwise_level(confidence, x.shape[1])
    ci = np.array([mean_confidence_interval(x[:, j], level) for j in range(x.shape[1])])
    mean, low, high = ci.T  # [P] each
    ok = bool(np.all((low <= p) & (p <= high)))
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.abs(mean - p) / np.maximum(high - mean, np.finfo(float).tiny)
    i = int(np.nanargmax(score))
    where = "" if p.size == 1 else f" at point {i} of {p.size} (Bonferroni: {level:.4g} each)"
    detail = (
        f"mean over {x.shape[0]} replicates{where}, family-wise {confidence:.0%} CI "
        f"[{low[i]:.4g}, {high[i]:.4g}] must contain the prediction"
    ) + _outside_note(ok, assumptions_hold)
    return Comparison(
        claim,
        reference,
        "==",
        float(mean[i]),
        float(p[i]),
        _verdict(ok, assumptions_hold),
        detail,
        (float(low[i]), float(high[i])),
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
