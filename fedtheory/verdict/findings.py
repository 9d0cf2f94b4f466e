r"""A paper's empirical finding (an ordering of methods in a table): judged over independent
data draws, *reproduced*, *reversed* or *not reproduced at this scale*, never *violated*."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from fedtheory.constraints import (
    Array,
    Instance,
    Label,
    MappingOf,
    Option,
    Real,
    SequenceOf,
    Size,
    Texts,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.verdict.intervals import LEVEL, POWER, SAMPLES, mean_confidence_interval
from fedtheory.verdict.rows import Comparison, Verdict

DETECTION_POWER = 0.8
"""Power at which :func:`detectable_difference` states the smallest detectable difference."""


@declare(
    difference=Real(),
    low=Real(),
    high=Real(),
    se=Real(0.0),
    df=Real(0.0, low_open=True),
    detectable=Real(0.0),
    n_x=Size(2),
    n_y=Size(2),
    confidence=LEVEL,
    power=POWER,
)
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


@declare(
    samples=SAMPLES,
    baseline=SAMPLES,
    confidence=LEVEL,
    power=POWER,
)
def mean_difference(
    samples, baseline, *, confidence: float = 0.95, power: float = DETECTION_POWER
) -> MeanDifference:
    r"""Welch's confidence interval of :math:`E[X]-E[Y]` from ``samples [n_X]`` and
    ``baseline [n_Y]`` (independent replicates, each at least 2), and the smallest difference
    detectable with probability ``power`` at this spread (a normal-approximation power
    calculation with Student-t quantiles; see :class:`MeanDifference`)."""
    owner = "mean_difference"
    x, y = samples.ravel(), baseline.ravel()
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


@declare(
    per_draw=Array(ndim=1, min_size=2),
    difference=Real(),
    low=Real(),
    high=Real(),
    se=Real(0.0),
    detectable=Real(0.0),
    replicates=SequenceOf(Size(), min_size=2),
    confidence=LEVEL,
    power=POWER,
)
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


@declare(
    samples=SAMPLES,
    baseline=SAMPLES,
    confidence=LEVEL,
    power=POWER,
)
def finding_difference(
    samples, baseline, *, confidence: float = 0.95, power: float = DETECTION_POWER
) -> FindingDifference:
    r"""The difference of means of ``samples [S, R_X]`` and ``baseline [S, R_Y]`` (``S``
    independent data draws, each with its own run seeds) with its interval **over the data
    draws**: the per-draw differences :math:`d_s` carry both the run-seed noise and the
    draw-to-draw variation, so the interval covers what another draw would give
    (:class:`FindingDifference`)."""
    owner, x, y = "finding_difference", samples, baseline
    x = x[:, None] if x.ndim == 1 else x
    y = y[:, None] if y.ndim == 1 else y
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] < 2:
        raise ParameterError(
            f"The 'samples' parameter of {owner} must be [S, R] with S >= 2 data draws, like "
            f"'baseline'. Got shapes {x.shape} and {y.shape} instead."
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


@declare(runs=MappingOf(Array(finite=False, min_size=0), "arrays (a run's values; NaN allowed)"))
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


FINDING = {
    "claim": Label(),
    "reference": Label(),
    "samples": SAMPLES,
    "baseline": SAMPLES,
    "relation": Option("<", ">"),
    "differs": Texts(),
}
"""A finding's row: its claim and reference, ``samples [S, R_X]`` against ``baseline
[S, R_Y]``, the ordering stated and the open set-up differences (:func:`compare_finding`,
:class:`FindingSpec`)."""


@declare(confidence=LEVEL, power=POWER, **FINDING)
def compare_finding(
    claim: str,
    reference: str,
    samples,
    baseline,
    *,
    relation: str = "<",
    confidence: float = 0.95,
    power: float = DETECTION_POWER,
    differs: tuple[str, ...] = (),
) -> Comparison:
    r"""A paper's empirical finding :math:`E[X]<E[Y]` (``relation="<"``) or
    :math:`E[X]>E[Y]` (``">"``), e.g. an ordering of methods in a table, from
    ``samples [S, R_X]`` and ``baseline [S, R_Y]``: ``S`` independent data draws (data set,
    population...), each run with its own run seeds. The interval over the draws of the
    per-draw difference decides (:func:`finding_difference`):

    * *reproduced* -- the interval lies on the finding's side of 0;
    * *reversed* -- it lies on the opposite side, the measured difference exceeds the
      smallest difference detected with probability ``power``, there are at least
      :data:`MIN_DATA_SEEDS` draws, and no material set-up difference is open (``differs``,
      ``"aspect: reason"`` strings: where the run differs materially from the set-up the
      paper or its authors' code ran);
    * *not reproduced* -- otherwise, shown as *not reproduced (set-up differs: ...)* when
      ``differs`` is not empty; the detail gives the numbers.

    Never *violated*: a table's ordering on other instances is evidence about whether the
    finding generalises, not a statement to refute. The row reports the mean of ``X`` (its
    interval over the draws) against the mean of ``Y``."""
    diff = finding_difference(samples, baseline, confidence=confidence, power=power)
    sign = 1.0 if relation == "<" else -1.0  # the finding says sign * (X - Y) < 0
    low, high = sorted((sign * diff.low, sign * diff.high))
    draws = diff.per_draw.size
    reversed_here = low > 0 and sign * diff.difference > diff.detectable
    if high < 0:
        verdict = Verdict.REPRODUCED
    elif reversed_here and draws >= MIN_DATA_SEEDS and not differs:
        verdict = Verdict.REVERSED
    else:
        verdict = Verdict.NOT_REPRODUCED
    x = np.asarray(samples, dtype=float)
    per_draw_x = x.mean(axis=1) if x.ndim == 2 else x
    mean, x_low, x_high = mean_confidence_interval(per_draw_x, confidence)
    detail = (
        f"{draws} data draws x {diff.replicates[0]} vs {diff.replicates[1]} run seeds; "
        f"difference of means {diff.difference:.4g}, {100 * diff.confidence:.3g}% CI over the "
        f"draws "
        f"[{diff.low:.4g}, {diff.high:.4g}] (Student-t, {draws - 1} df); per draw "
        + ", ".join(f"{v:+.3g}" for v in diff.per_draw)
        + f"; smallest difference detected with {diff.power:.0%} power at this spread: "
        f"{diff.detectable:.4g}"
    )
    if low > 0 and verdict is Verdict.NOT_REPRODUCED:
        if draws < MIN_DATA_SEEDS:
            why = f"fewer than {MIN_DATA_SEEDS} data draws"
        elif not reversed_here:
            why = "not larger than the detectable difference"
        else:
            why = "the set-up differs materially from the paper's"
        detail += f"; the opposite ordering is significant but {why}"
    if differs:
        detail += "; open set-up differences: " + "; ".join(differs)
    baseline_mean = float(np.asarray(baseline, dtype=float).mean())
    return Comparison(
        claim, reference, relation, mean, baseline_mean, verdict, detail, (x_low, x_high),
        differs,
    )  # fmt: skip


@declare(**FINDING)
@dataclass(frozen=True)
class FindingSpec:
    """One row of a table of findings for :func:`compare_findings` (the arguments of
    :func:`compare_finding`)."""

    claim: str
    reference: str
    samples: object  # [S, R_X]
    baseline: object  # [S, R_Y]
    relation: str = "<"
    differs: tuple[str, ...] = ()


@declare(specs=SequenceOf(Instance(FindingSpec), min_size=1), confidence=LEVEL, power=POWER)
def compare_findings(
    specs, *, confidence: float = 0.95, power: float = DETECTION_POWER
) -> list[Comparison]:
    r"""The rows of one table of findings, with Holm's correction over the table.

    Each row's two-sided p-value :math:`p_i` (Student-t test of the per-draw differences,
    :math:`S-1` df) is ranked; the row of rank :math:`j=0,1,\dots` (smallest p first) is
    judged by :func:`compare_finding` at confidence :math:`1-a/(m-j)` with :math:`a=1-`
    ``confidence`` and :math:`m` rows -- its interval and its detectable difference are the
    corrected ones -- and is significant only if every row ranked before it is (Holm's
    step-down). The family-wise error of calling any row *reproduced* or *reversed* wrongly
    is at most :math:`a`. The detail names the corrected level."""
    m = len(specs)
    p = np.array([_p_value(s.samples, s.baseline) for s in specs])
    levels = holm_levels(specs, confidence=confidence)
    rows: list[Comparison | None] = [None] * m
    stepping = True  # Holm: stop rejecting at the first rank that fails
    for j, i in enumerate(np.argsort(p, kind="stable")):
        level = levels[i]
        stepping = stepping and p[i] <= level
        s = specs[i]
        row = compare_finding(s.claim, s.reference, s.samples, s.baseline, relation=s.relation,
                              confidence=1.0 - level, power=power, differs=s.differs)  # fmt: skip
        note = f"; Holm over {m} rows: rank {j + 1}, level {level:.3g}, p = {p[i]:.3g}"
        if not stepping and row.verdict is not Verdict.NOT_REPRODUCED:
            note += " (an earlier rank was not significant: not reproduced)"
            row = replace(row, verdict=Verdict.NOT_REPRODUCED)
        rows[i] = replace(row, detail=row.detail + note)
    return rows


@declare(specs=SequenceOf(Instance(FindingSpec), min_size=1), confidence=LEVEL)
def holm_levels(specs, *, confidence: float = 0.95) -> np.ndarray:
    r"""Each row's Holm level ``[m]``: :math:`a/(m-j)` for the row of rank :math:`j` (smallest
    p-value first, :math:`a=1-` ``confidence``), the level :func:`compare_findings` judges it
    at (its interval is at confidence one minus it)."""
    p = np.array([_p_value(s.samples, s.baseline) for s in specs])
    levels = np.empty(len(specs))
    levels[np.argsort(p, kind="stable")] = (1.0 - confidence) / (len(specs) - np.arange(len(specs)))
    return levels


def _p_value(samples, baseline) -> float:
    """Two-sided p-value of the per-draw differences' mean being 0 (1 when they are all
    equal)."""
    d = finding_difference(samples, baseline).per_draw
    if np.all(d == d[0]):
        return 0.0 if d[0] != 0 else 1.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)
