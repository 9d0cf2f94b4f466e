r"""Confidence intervals of a mean (Student-t, exact binomial, BCa bootstrap, within a
support), Bonferroni over the points of a row, and the replicates an interval needs to
decide."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from fedtheory.constraints import Array, Integer, Option, Real, Size, Support, declare
from fedtheory.errors import ParameterError

INTERVAL_KINDS = ("auto", "t", "binomial", "bootstrap")
"""Confidence intervals of a mean (:func:`mean_intervals`)."""

BOOTSTRAP_RESAMPLES = 999
"""Resamples of the bootstrap interval."""
LEVEL = Real(0.0, 1.0, low_open=True, high_open=True)
"""A confidence level or a power: a probability in (0, 1)."""
POWER = Real(0.5, 1.0, high_open=True)
"""A detection power: in [1/2, 1) (a test that detects a difference less often than not
detects nothing; below 1/2 its quantile runs to -inf)."""
SAMPLE_MAGNITUDE = 1e150
"""Replicates are at most this large in magnitude, so that their squares and their sums
(the variance of a mean) stay finite in float64."""
SAMPLES = Array(low=-SAMPLE_MAGNITUDE, high=SAMPLE_MAGNITUDE)
"""Replicates ``[n, ...]`` of a random quantity: finite, of magnitude at most
:data:`SAMPLE_MAGNITUDE`."""


@declare(samples=SAMPLES, confidence=LEVEL)
def mean_confidence_interval(samples, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of ``samples [n]`` (n >= 2)."""
    x = samples.ravel()
    m = float(x.mean())
    if x.size < 2:
        return m, m, m
    half = float(stats.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


@declare(
    kind=Option(*INTERVAL_KINDS[1:]),
    replicates=Size(),
    level=LEVEL,
    mean=Array(ndim=1),
    low=Array(shape=("mean[0]",)),
    high=Array(shape=("mean[0]",)),
    support=Support(none=True),
)
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


@declare(
    samples=SAMPLES,
    confidence=LEVEL,
    kind=Option(*INTERVAL_KINDS),
    support=Support(none=True),
    seed=Integer(0),
)
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
    x = _as_points(samples, owner)  # [n, P]
    n = x.shape[0]
    if support is not None and np.any((x < support[0]) | (x > support[1])):
        raise ParameterError(
            f"The 'support' parameter of {owner} must be an interval [a, b] holding every "
            f"sample. Got {support!r} (samples in [{x.min():g}, {x.max():g}]) instead."
        )
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


def _pointwise_level(confidence: float, points: int) -> float:
    """Per-point confidence so that all ``points`` intervals hold together with probability
    at least ``confidence`` (Bonferroni)."""
    return 1.0 - (1.0 - confidence) / points


@declare(replicates=Integer(1), mean=Real(), low=Real(), high=Real(), target=Real())
def replicates_needed(replicates: int, mean, low, high, target) -> int | None:
    r"""Replicates at which the interval, shrinking as :math:`1/\sqrt n` at the measured
    spread, no longer contains ``target``: the side of ``[low, high]`` facing ``target``,
    of length :math:`h`, must become shorter than the distance
    :math:`d=|\text{mean}-\text{target}|`, so :math:`n=\lceil n_0 (h/d)^2\rceil`. ``None``
    when the mean equals the target (no number of replicates decides it at this mean), or
    is so close to it that :math:`n` overflows (a mean of 0 against a bound of 1e-306).

    Examples
    --------
    >>> replicates_needed(2000, 0.045, 0.039, 0.051, 0.05)  # upper limit must drop below 0.05
    2880
    """
    n0 = replicates
    d = abs(mean - target)
    if d == 0:
        return None
    h = high - mean if target > mean else mean - low
    try:
        need = n0 * (h / d) ** 2
    except OverflowError:
        return None
    return max(n0, math.ceil(need)) if math.isfinite(need) else None
