r"""A paper's empirical finding (an ordering of methods in a table): judged over independent
data draws, *reproduced* (on the set-up or a stand-in), *reversed*, *contradicted at this
scale*, *underpowered* or *depends on* an unforced choice, never *violated*."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from fedtheory.constraints import (
    Array,
    Instance,
    Interval,
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
from fedtheory.verdict.rows import FINDING_VERDICTS, Comparison, Verdict

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


COLUMNS = ("paper", "code")
"""The set-up a finding row is judged against: the paper's text or its authors' code."""
AGAINST = {"paper": "the paper's set-up", "code": "the authors' code's set-up"}


@declare(
    choice=Label(),
    value=Label(),
    samples=SAMPLES,
    baseline=SAMPLES,
    differs=Texts(none=True),
)
@dataclass(frozen=True)
class Variant:
    r"""One value of an *unforced* set-up choice (one that neither the paper's text nor its
    authors' code fixes: an initial estimate, a step size tuned for another model...): the
    row's ``samples [S, R_X]`` and ``baseline [S, R_Y]`` when ``choice`` takes ``value``;
    ``differs`` its open material set-up differences (``None``: the row's)."""

    choice: str
    value: str
    samples: object  # [S, R_X]
    baseline: object  # [S, R_Y]
    differs: tuple[str, ...] | None = None


FINDING = {
    "claim": Label(),
    "reference": Label(),
    "samples": SAMPLES,
    "baseline": SAMPLES,
    "relation": Option("<", ">"),
    "differs": Texts(),
    "against": Option(*COLUMNS),
    "variants": SequenceOf(Instance(Variant)),
    "default": Label(none=True),
    "referee": Interval(none=True),
}
"""A finding's row: its claim and reference, ``samples [S, R_X]`` against ``baseline
[S, R_Y]``, the ordering stated, the open set-up differences, the column it is judged
against, the values of its unforced choices, the authors' code's interval of the same
difference (:func:`compare_finding`, :class:`FindingSpec`)."""
VARIANT_HEADER = ("choice", "value", "outcome", "difference [interval]")
"""Columns of :attr:`Comparison.outcomes <fedtheory.verdict.Comparison>`: a finding's outcome
at each value of its unforced choices."""


@declare(
    verdict=Instance(Verdict),
    against=Option(*COLUMNS),
    differs=Texts(),
    agree=Size(0),
    draws=Size(0),
    difference=Real(),
    detectable=Real(0.0),
    needed=Size(none=True),
    depends=Texts(),
    referee=Interval(none=True),
)
def finding_label(
    verdict: Verdict,
    *,
    against: str = "paper",
    differs: tuple[str, ...] = (),
    agree: int = 0,
    draws: int = 0,
    difference: float = 0.0,
    detectable: float = 0.0,
    needed: int | None = None,
    depends: tuple[str, ...] = (),
    referee: tuple[float, float] | None = None,
) -> str:
    r"""The one text of a finding's outcome (:data:`~fedtheory.verdict.FINDING_VERDICTS`),
    with its reasons, as the verdict table, ``verdicts.csv`` and the summary print it:

    * *reproduced on the paper's set-up* (or *on the authors' code's set-up*);
    * *reproduced on a stand-in: data, model* (the aspects of ``differs``, ``"aspect:
      reason"``);
    * *reversed on the paper's set-up*, with ``referee`` (the authors' code's interval of the
      same difference) *(the authors' code agrees: [+0.30, +1.58])*;
    * *contradicted at this scale (set-up differs: data)*, or *(the authors' code does not
      agree: [-0.2, +0.5])* when ``referee`` is given (the one condition of *reversed* left);
    * *underpowered: direction agrees in 5 of 6 draws; difference -0.08, detectable 0.19;
      about 40 draws would decide it* (``needed``, :func:`draws_to_decide`; ``None``: no
      practical number of draws decides it);
    * *depends on clip, step sizes* (``depends``: the unforced choices whose values change
      the outcome).

    Examples
    --------
    >>> finding_label(Verdict.STAND_IN, differs=("data: a stand-in", "model: an MLP"))
    'reproduced on a stand-in: data, model'
    >>> for part in finding_label(Verdict.UNDERPOWERED, agree=5, draws=6, difference=-0.08,
    ...                           detectable=0.19, needed=40).split("; "):
    ...     print(part)
    underpowered: direction agrees in 5 of 6 draws
    difference -0.08, detectable 0.19
    about 40 draws would decide it
    """
    aspects = ", ".join(d.split(":")[0] for d in differs)
    on = f"on {AGAINST[against]}"
    code = "" if referee is None else f"[{referee[0]:+.3g}, {referee[1]:+.3g}]"
    if verdict is Verdict.REPRODUCED:
        return f"reproduced {on}"
    if verdict is Verdict.STAND_IN:
        return f"reproduced on a stand-in: {aspects}"
    if verdict is Verdict.REVERSED:
        return f"reversed {on}" + (f" (the authors' code agrees: {code})" if code else "")
    if verdict is Verdict.CONTRADICTED:
        if aspects:
            return f"{verdict.value} (set-up differs: {aspects})"
        return verdict.value + (f" (the authors' code does not confirm it: {code})" if code else "")
    if verdict is Verdict.UNDERPOWERED:
        decide = (
            f"no number of draws up to {MAX_DRAWS:.0e} decides it"
            if needed is None
            else f"about {needed} draws would decide it"
        )
        return (
            f"underpowered: direction agrees in {agree} of {draws} draws; difference "
            f"{difference:+.3g}, detectable {detectable:.3g}; {decide}"
            + (f"; on a stand-in: {aspects}" if aspects else "")
        )
    if verdict is Verdict.DEPENDS:
        return "depends on " + ", ".join(depends)
    raise ParameterError(
        f"The 'verdict' parameter of finding_label must be a finding's outcome (one of "
        f"{', '.join(v.name for v in FINDING_VERDICTS)}). Got {verdict.name} instead."
    )


MAX_DRAWS = 10**9
"""Beyond this many data draws :func:`draws_to_decide` says no practical number decides."""


@declare(diff=Instance(FindingDifference))
def draws_to_decide(diff: FindingDifference) -> int | None:
    r"""The number of data draws :math:`n\ge S` at which a true difference equal to the
    measured one is detected with the row's power at the measured spread:
    :math:`(t_{1-a/2,n-1}+t_{\text{power},n-1})\,s_d/\sqrt n\le|\bar d|`; ``None`` when
    more than :data:`MAX_DRAWS` would be needed (:math:`\bar d=0` among them)."""
    s = diff.se * np.sqrt(diff.per_draw.size)
    z = stats.norm.ppf(0.5 + diff.confidence / 2) + stats.norm.ppf(diff.power)
    if diff.difference == 0 or z * s > abs(diff.difference) * np.sqrt(MAX_DRAWS):  # t needs more
        return None
    n = max(diff.per_draw.size, int(np.ceil((z * s / abs(diff.difference)) ** 2)))
    t = stats.t.ppf
    while (t(0.5 + diff.confidence / 2, n - 1) + t(diff.power, n - 1)) * s / np.sqrt(n) > abs(
        diff.difference
    ):
        n += 1
    return n


def _judged(samples, baseline, relation, differs, confidence, power):
    """The outcome of one set of runs, its difference and its label's reasons."""
    diff = finding_difference(samples, baseline, confidence=confidence, power=power)
    sign = 1.0 if relation == "<" else -1.0  # the finding says sign * (X - Y) < 0
    low, high = sorted((sign * diff.low, sign * diff.high))
    draws = diff.per_draw.size
    reversed_here = low > 0 and sign * diff.difference > diff.detectable
    if high < 0:
        verdict = Verdict.STAND_IN if differs else Verdict.REPRODUCED
    elif low > 0:
        ok = reversed_here and draws >= MIN_DATA_SEEDS and not differs
        verdict = Verdict.REVERSED if ok else Verdict.CONTRADICTED
    else:
        verdict = Verdict.UNDERPOWERED
    reasons = {
        "differs": differs,
        "agree": int(np.sum(sign * diff.per_draw < 0)),
        "draws": draws,
        "difference": diff.difference,
        "detectable": diff.detectable,
        "needed": draws_to_decide(diff),
    }
    return verdict, diff, reasons


_SIDE = {  # outcomes that agree on the ordering's side; the weaker of two is kept
    Verdict.REPRODUCED: 0,
    Verdict.STAND_IN: 0,
    Verdict.UNDERPOWERED: 1,
    Verdict.REVERSED: 2,
    Verdict.CONTRADICTED: 2,
}
_WEAKER = (Verdict.STAND_IN, Verdict.CONTRADICTED)


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
    against: str = "paper",
    variants: tuple[Variant, ...] = (),
    default: str | None = None,
    referee: tuple[float, float] | None = None,
) -> Comparison:
    r"""A paper's empirical finding :math:`E[X]<E[Y]` (``relation="<"``) or
    :math:`E[X]>E[Y]` (``">"``), e.g. an ordering of methods in a table, from
    ``samples [S, R_X]`` and ``baseline [S, R_Y]``: ``S`` independent data draws (data set,
    population...), each run with its own run seeds. The interval over the draws of the
    per-draw difference decides (:func:`finding_difference`):

    * *reproduced* -- the interval lies on the finding's side of 0: ``REPRODUCED`` on the
      ``against`` column's set-up, ``STAND_IN`` where a material set-up difference is open
      (``differs``, ``"aspect: reason"`` strings: where the run differs materially from the
      set-up the paper or its authors' code ran);
    * *reversed* -- it lies on the opposite side, the measured difference exceeds the
      smallest difference detected with probability ``power``, there are at least
      :data:`MIN_DATA_SEEDS` draws, no material set-up difference is open, and where the
      authors' code was run on the same seeds (``referee``: its confidence interval of the
      same difference :math:`X-Y`) that interval lies on the same side of 0; the opposite
      side without all of these is *contradicted at this scale*;
    * *underpowered* -- the interval holds 0: the label gives the draws whose difference
      agrees in direction and the number of draws that would decide the measured difference
      (:func:`draws_to_decide`).

    ``variants`` (:class:`Variant`) are the values of the row's *unforced* choices, each
    judged by the same rule; the runs of ``samples``/``baseline`` are the set-up at the
    ``default`` value of each. The row is *reproduced* or *reversed* only if that outcome
    holds at every value (the weaker label kept: a stand-in, contradicted); otherwise it
    *depends on* the choices whose values change the outcome, and
    :attr:`~fedtheory.verdict.Comparison.outcomes` holds the outcome at each value
    (:data:`VARIANT_HEADER`). The text is :func:`finding_label`.

    Never *violated*: a table's ordering on other instances is evidence about whether the
    finding generalises, not a statement to refute. The row reports the mean of ``X`` (its
    interval over the draws) against the mean of ``Y``."""
    verdict, diff, reasons = _judged(samples, baseline, relation, differs, confidence, power)
    sign = 1.0 if relation == "<" else -1.0
    if referee is not None:
        reasons["referee"] = referee
        if verdict is Verdict.REVERSED and min(sign * referee[0], sign * referee[1]) <= 0:
            verdict = Verdict.CONTRADICTED
    draws = diff.per_draw.size
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
    if verdict is Verdict.CONTRADICTED:
        if draws < MIN_DATA_SEEDS:
            why = f"fewer than {MIN_DATA_SEEDS} data draws"
        elif differs:
            why = "the set-up differs materially from the one judged against"
        elif sign * diff.difference <= diff.detectable:
            why = "not larger than the detectable difference"
        else:
            why = "the authors' code, run on the same seeds, does not confirm it"
        detail += f"; the opposite ordering is significant but {why}"
    if differs:
        detail += "; open set-up differences: " + "; ".join(differs)
    label = finding_label(verdict, against=against, **reasons)
    outcomes: list[tuple[str, ...]] = []
    if variants:
        name = "default" if default is None else default
        judged = [(choice, name, verdict, diff, label) for choice in _choices(variants)]
        for v in variants:
            d = differs if v.differs is None else v.differs
            out, vd, why = _judged(v.samples, v.baseline, relation, d, confidence, power)
            if out is Verdict.REVERSED and referee is not None:  # the referee ran one value
                out, why["referee"] = Verdict.CONTRADICTED, referee
            judged.append((v.choice, v.value, out, vd, finding_label(out, against=against, **why)))
        outcomes = [
            (c, value, text, f"{d.difference:+.3g} [{d.low:+.3g}, {d.high:+.3g}]")
            for c, value, _, d, text in judged
        ]
        sides = {_SIDE[out] for *_, out, _, _ in judged}
        if len(sides) > 1:
            depends = tuple(
                c for c in _choices(variants) if len({_SIDE[j[2]] for j in judged if j[0] == c}) > 1
            )
            verdict = Verdict.DEPENDS
            label = finding_label(verdict, depends=depends)
        else:  # one side at every value: the weaker label (a stand-in, contradicted) holds
            weak = next((j for j in judged if j[2] in _WEAKER), None)
            if weak is not None and verdict not in _WEAKER:
                verdict, label = weak[2], weak[4]
        detail += "; by unforced choice: " + "; ".join(
            f"{c} = {value}: {text}, {interval}" for c, value, text, interval in outcomes
        )
    baseline_mean = float(np.asarray(baseline, dtype=float).mean())
    return Comparison(
        claim, reference, relation, mean, baseline_mean, verdict, detail, (x_low, x_high),
        differs, label=label, outcomes=tuple(outcomes),
    )  # fmt: skip


def _choices(variants) -> tuple[str, ...]:
    """The unforced choices of ``variants``, in order of first appearance."""
    return tuple(dict.fromkeys(v.choice for v in variants))


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
    against: str = "paper"
    variants: tuple[Variant, ...] = ()
    default: str | None = None
    referee: tuple[float, float] | None = None


@declare(
    specs=SequenceOf(Instance(FindingSpec), min_size=1),
    confidence=LEVEL,
    power=POWER,
    unforced=Texts(),
)
def compare_findings(
    specs, *, confidence: float = 0.95, power: float = DETECTION_POWER, unforced=()
) -> list[Comparison]:
    r"""The rows of one table of findings, with Holm's correction over the table.

    Each row's two-sided p-value :math:`p_i` (Student-t test of the per-draw differences,
    :math:`S-1` df) is ranked; the row of rank :math:`j=0,1,\dots` (smallest p first) is
    judged by :func:`compare_finding` at confidence :math:`1-a/(m-j)` with :math:`a=1-`
    ``confidence`` and :math:`m` rows -- its interval, its detectable difference and the
    outcomes at the values of its unforced choices are the corrected ones -- and is
    significant only if every row ranked before it is (Holm's step-down); a row past the
    first rank that fails is *underpowered*. The family-wise error of calling any row
    reproduced, contradicted or reversed wrongly is at most :math:`a`. The detail names the
    corrected level.

    ``unforced``: the set-up's unforced choices (:meth:`SetUp.unforced
    <fedtheory.validation.machinery.setups.SetUp>`); every row must vary each of them (a
    :class:`Variant` of that ``choice``), so no unforced choice is silently fixed."""
    for s in specs:
        if missing := [c for c in unforced if c not in _choices(s.variants)]:
            raise ParameterError(
                f"The 'specs' parameter of compare_findings must vary every unforced choice "
                f"of 'unforced' in each row. Got row {s.claim!r} without {missing} instead."
            )
    m = len(specs)
    p = np.array([_p_value(s.samples, s.baseline) for s in specs])
    levels = holm_levels(specs, confidence=confidence)
    rows: list[Comparison | None] = [None] * m
    stepping = True  # Holm: stop rejecting at the first rank that fails
    for j, i in enumerate(np.argsort(p, kind="stable")):
        level = 1.0 - levels[i]
        stepping = stepping and p[i] <= level
        s = specs[i]
        row = compare_finding(s.claim, s.reference, s.samples, s.baseline, relation=s.relation,
                              confidence=1.0 - level, power=power, differs=s.differs,
                              against=s.against, variants=s.variants,
                              default=s.default, referee=s.referee)  # fmt: skip
        note = f"; Holm over {m} rows: rank {j + 1}, level {level:.3g}, p = {p[i]:.3g}"
        if not stepping and row.verdict in _SIDE and row.verdict is not Verdict.UNDERPOWERED:
            note += " (an earlier rank was not significant: underpowered)"
            diff = finding_difference(s.samples, s.baseline, confidence=1.0 - level, power=power)
            sign = 1.0 if s.relation == "<" else -1.0
            label = finding_label(
                Verdict.UNDERPOWERED, against=s.against, differs=s.differs,
                agree=int(np.sum(sign * diff.per_draw < 0)), draws=diff.per_draw.size,
                difference=diff.difference, detectable=diff.detectable,
                needed=draws_to_decide(diff),
            )  # fmt: skip
            row = replace(row, verdict=Verdict.UNDERPOWERED, label=label)
        rows[i] = replace(row, detail=row.detail + note)
    return rows


@declare(specs=SequenceOf(Instance(FindingSpec), min_size=1), confidence=LEVEL)
def holm_levels(specs, *, confidence: float = 0.95) -> np.ndarray:
    r"""``[m]``: the confidence at which :func:`compare_findings` judges each row, Holm's
    :math:`1-a/(m-j)` for the row of rank :math:`j` by p-value (what a figure draws as the
    interval that decided the row, :func:`finding_difference` at that confidence)."""
    a, m = 1.0 - confidence, len(specs)
    p = np.array([_p_value(s.samples, s.baseline) for s in specs])
    out = np.empty(m)
    out[np.argsort(p, kind="stable")] = 1.0 - a / (m - np.arange(m))
    return out


def _p_value(samples, baseline) -> float:
    """Two-sided p-value of the per-draw differences' mean being 0 (1 when they are all
    equal)."""
    d = finding_difference(samples, baseline).per_draw
    if np.all(d == d[0]):
        return 0.0 if d[0] != 0 else 1.0
    return float(stats.ttest_1samp(d, 0.0).pvalue)
