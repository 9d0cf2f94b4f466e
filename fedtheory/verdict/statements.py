r"""Rows for statements (theorems, lemmas, identities): a deterministic or random measured
quantity against an upper bound or an exact prediction, checked at every point."""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Array, Bool, Integer, Label, Option, Real, Support, declare
from fedtheory.errors import ParameterError
from fedtheory.verdict.intervals import (
    INTERVAL_KINDS,
    LEVEL,
    SAMPLES,
    MeanIntervals,
    _as_points,
    _pointwise_level,
    mean_intervals,
    replicates_needed,
)
from fedtheory.verdict.outcomes import (
    _CODES,
    _equivalence_codes,
    _final,
    _outside_note,
    _ratios,
    _slack,
    _upper_codes,
    near,
    within_bound,
)
from fedtheory.verdict.rounding import BOUND_RTOL
from fedtheory.verdict.rows import Comparison, Verdict, format_ratio


def _needed_text(n: int | None, have: int) -> str:
    if n is None:
        return "the mean equals the bound: no number of replicates decides it at this mean"
    return f"about {n} replicates would decide it at the measured spread (have {have})"


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


@declare(
    claim=Label(),
    reference=Label(),
    measured=Array(finite=False),
    bound=Array(finite=False, broadcast="measured"),
    assumptions_hold=Bool(),
    floor=Array(low=0.0, broadcast="measured"),
    rtol=Real(0.0),
)
def compare_upper_bound(
    claim: str,
    reference: str,
    measured,
    bound,
    *,
    assumptions_hold: bool = True,
    floor=0.0,
    rtol: float = BOUND_RTOL,
) -> Comparison:
    """Deterministic ``measured <= bound + floor`` checked at every point of broadcastable
    arrays (``floor``: rounding, from the magnitudes of the computation,
    :func:`rounding_floor`; ``rtol`` ``|bound|`` is added, :data:`BOUND_RTOL` by default).
    The row reports the worst point (largest ratio measured/bound, a failing point first)
    and says when the verdict rests on the floor."""
    m, b, fl = np.broadcast_arrays(measured, bound, floor)
    slack = _slack(b, fl, rtol)
    ok_at = within_bound(m, b, floor=fl, rtol=rtol)
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
        f"mean over {ci.replicates} replicates{where}, family-wise {_percent(confidence)}% "
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


def _percent(confidence: float) -> str:
    """``confidence`` in percent to 3 digits, more where that would read 100 (99.99%)."""
    text = f"{100 * confidence:.3g}"
    return text if text != "100" else f"{100 * confidence:.6g}"


def _per_point(values: np.ndarray, samples: np.ndarray, name: str, owner: str) -> np.ndarray:
    """``values`` at every point ``[P]`` of ``samples [n, ...]`` (one value, or an array
    broadcasting against the points ``samples.shape[1:]``)."""
    try:
        points = values if values.size == 1 else np.broadcast_to(values, samples.shape[1:])
    except ValueError:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must broadcast against the points of "
            f"'samples' {samples.shape[1:]}. Got shape {values.shape} instead."
        ) from None
    return np.array(np.broadcast_to(points.ravel(), (int(np.prod(samples.shape[1:])),)))


def _intervals(samples, target, name, confidence, kind, support, seed, owner):
    x = _as_points(samples, owner)  # [n, P]
    t = _per_point(target, samples, name, owner)  # [P]
    level = _pointwise_level(confidence, x.shape[1])
    ci = mean_intervals(x, level, kind=kind, support=support, seed=seed)
    return t, ci


RANDOM = {
    "claim": Label(),
    "reference": Label(),
    "samples": SAMPLES,
    "assumptions_hold": Bool(),
    "confidence": LEVEL,
    "interval": Option(*INTERVAL_KINDS),
    "support": Support(none=True),
    "seed": Integer(0),
}
"""The parameters every random row shares (:func:`compare_mean_upper_bound`,
:func:`compare_mean_equal`)."""


@declare(bound=Array(), floor=Array(low=0.0), **RANDOM)
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
    b, ci = _intervals(samples, bound, "bound", confidence, interval, support, seed, owner)
    fl = _per_point(floor, samples, "floor", owner)
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


@declare(predicted=Array(), margin=Array(low=0.0, none=True), **RANDOM)
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
    ``predicted ± margin`` at every point, *violated* when it lies outside
    ``predicted ± margin`` at some point (the printed margin is the rule), else
    *inconclusive*. ``margin`` (broadcast against the points, ``>= 0``) is
    the stated equivalence margin, printed in the row; without one (``None``) the statement
    cannot hold: a row whose interval contains the prediction is *inconclusive*.
    Intervals as in :func:`compare_mean_upper_bound` (Bonferroni over the points)."""
    owner = "compare_mean_equal"
    p, ci = _intervals(samples, predicted, "predicted", confidence, interval, support, seed, owner)
    mg = (
        np.full(p.shape, -np.inf)
        if margin is None
        else _per_point(margin, samples, "margin", owner)
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
        judged = f"; violated: the interval lies outside the prediction ± margin ({stated})"
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


@declare(
    claim=Label(),
    reference=Label(),
    measured=Array(finite=False),
    predicted=Array(finite=False, broadcast="measured"),
    rtol=Real(0.0),
    atol=Real(0.0),
    assumptions_hold=Bool(),
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
    ok = bool(np.all(near(m, p, rtol=rtol, atol=atol)))
    i = np.unravel_index(np.argmax(dev), dev.shape)
    verdict = Verdict.HOLDS if ok else Verdict.VIOLATED
    detail = (
        f"checked at {m.size} point(s); largest |measured - predicted| = "
        f"{float(dev[i]):.3g} (tolerance {atol:g} + {rtol:g}*|predicted|)"
    ) + _outside_note(verdict, assumptions_hold)
    return Comparison(
        claim, reference, "==", float(m[i]), float(p[i]), _final(verdict, assumptions_hold), detail
    )
