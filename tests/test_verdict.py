"""The verdict rule: three outcomes, intervals that fit the data, rounding floors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fedtheory.errors import ParameterError
from fedtheory.verdict import (
    LOOSE_RATIO,
    Comparison,
    Verdict,
    compare_mean_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
    equivalence_outcome,
    format_ratio,
    mean_intervals,
    replicate_until_decided,
    replicates_needed,
    rounding_floor,
    upper_bound_outcome,
)

H, I, V = Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.VIOLATED


@pytest.mark.parametrize(
    ("low", "high", "bound", "verdict"),
    [(0.0, 1.0, 1.0, H), (0.5, 1.5, 1.0, I), (1.0, 1.5, 1.0, I), (1.01, 1.5, 1.0, V)],
)
def test_upper_bound_outcome_is_decided_by_the_limit_facing_the_bound(low, high, bound, verdict):
    assert upper_bound_outcome(low, high, bound) is verdict


def test_upper_bound_outcome_accepts_rounding_up_to_the_floor_only():
    assert upper_bound_outcome(7.7e-34, 7.7e-34, 0.0) is V
    assert upper_bound_outcome(7.7e-34, 7.7e-34, 0.0, floor=2.2e-29) is H
    assert upper_bound_outcome(3e-29, 3e-29, 0.0, floor=2.2e-29) is V


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [
        (0.99, 1.01, H),
        (0.9, 1.01, I),
        (1.06, 1.2, V),
        (0.8, 0.94, V),
        (1.01, 1.2, I),
        (0.8, 0.99, I),
        (1.01, 1.04, H),
    ],  # fmt: skip
)
def test_equivalence_outcome_is_two_one_sided_tests(low, high, verdict):
    """The printed margin is the rule: violated only outside predicted +- margin, holds
    inside it (an interval excluding the prediction but inside the band holds)."""
    assert equivalence_outcome(low, high, 1.0, 0.05) is verdict


def test_mean_upper_bound_has_three_outcomes_and_says_what_would_decide_it():
    x = np.random.default_rng(0).normal(1.0, 0.5, size=50)
    assert compare_mean_upper_bound("c", "r", x, 2.0).verdict is H
    assert compare_mean_upper_bound("c", "r", x, 0.5).verdict is V
    row = compare_mean_upper_bound("c", "r", x, 1.1)
    low, high = row.interval
    assert row.verdict is I and low < 1.1 < high
    need = replicates_needed(50, row.measured, low, high, 1.1)
    assert need > 50 and f"about {need} replicates would decide it" in row.detail
    # at the replicates it names, a sample with the same mean and spread decides it
    y = np.random.default_rng(1).normal(0.0, 1.0, size=need)
    y = (y - y.mean()) / y.std(ddof=1) * x.std(ddof=1) + x.mean()
    assert compare_mean_upper_bound("c", "r", y, 1.1).verdict is H


def test_mean_equal_has_three_outcomes_with_the_margin_in_the_row():
    x = np.random.default_rng(2).normal(1.0, 0.1, size=400)
    held = compare_mean_equal("c", "r", x, 1.0, margin=0.05)
    assert held.verdict is H and "margin ±0.05" in held.detail
    assert compare_mean_equal("c", "r", x, 1.1, margin=0.05).verdict is V
    undecided = compare_mean_equal("c", "r", x, 1.0, margin=0.005)
    assert undecided.verdict is I and "replicates would decide it" in undecided.detail


def test_replicates_needed_scales_the_facing_side_as_one_over_root_n():
    assert replicates_needed(100, 0.0, -1.0, 1.0, 2.0) == 100  # already decided
    assert replicates_needed(100, 0.0, -1.0, 1.0, 0.5) == 400
    assert replicates_needed(100, 0.0, -3.0, 1.0, -1.5) == 400  # the lower side faces it
    assert replicates_needed(100, 0.0, -1.0, 1.0, 0.0) is None


def test_binomial_interval_is_scipys_exact_interval_and_stays_in_zero_one():
    rng = np.random.default_rng(3)
    x = (rng.random((40, 5)) < [0.0, 0.02, 0.5, 0.98, 1.0]).astype(float)  # [n, P]
    ci = mean_intervals(x, 0.9)
    assert ci.kind == "binomial" and np.all(ci.low >= 0) and np.all(ci.high <= 1)
    for j in range(5):
        k = int(x[:, j].sum())
        want = stats.binomtest(k, 40).proportion_ci(0.9, method="exact")
        np.testing.assert_allclose([ci.low[j], ci.high[j]], [want.low, want.high], rtol=1e-9)


def test_bounded_intervals_never_leave_the_support():
    x = np.random.default_rng(4).beta(0.2, 5.0, size=(10, 200))  # mass near 0
    free = mean_intervals(x, kind="t")
    inside = mean_intervals(x, kind="t", support=(0.0, 1.0))
    assert np.any(free.low < 0) and np.all(inside.low >= 0) and np.all(inside.high <= 1)
    assert "support [0, 1]" in inside.name
    half_line = mean_intervals(x, kind="t", support=(0.0, np.inf))
    assert np.all(half_line.low >= 0) and np.array_equal(half_line.high, free.high)
    with pytest.raises(ParameterError, match="support"):
        mean_intervals(x, support=(0.0, 0.01))


@pytest.mark.parametrize(
    ("kind", "law", "mean", "n", "support"),
    [
        ("t", lambda g, s: g.normal(1.0, 2.0, s), 1.0, 30, None),
        ("binomial", lambda g, s: (g.random(s) < 0.3).astype(float), 0.3, 200, None),
        ("binomial", lambda g, s: (g.random(s) < 0.05).astype(float), 0.05, 400, None),
        ("t", lambda g, s: g.beta(2.0, 5.0, s), 2 / 7, 30, (0.0, 1.0)),
        ("bootstrap", lambda g, s: g.lognormal(0.0, 0.5, s), np.exp(0.125), 200, None),
    ],
    ids=["t-normal", "binomial-0.3", "binomial-0.05", "bounded-beta", "bootstrap-lognormal"],
)
def test_coverage_of_every_interval_kind_is_nominal_within_two_percent(kind, law, mean, n, support):
    """2,000 independent data sets of a known law, one interval each (vectorised)."""
    x = law(np.random.default_rng(5), (n, 2000))  # [n, repetitions]
    ci = mean_intervals(x, 0.95, kind=kind, support=support)
    coverage = np.mean((ci.low <= mean) & (mean <= ci.high))
    assert abs(coverage - 0.95) <= 0.02, coverage


def test_deterministic_bound_reports_a_verdict_resting_on_the_floor():
    floor = rounding_floor(1.0, 3.0)
    row = compare_upper_bound("c", "r", [0.0, 7.7e-34], [1.0, 0.0], floor=floor)
    assert row.verdict is H and row.bound == 0.0
    assert f"holds within rounding at 1 point(s): excess 7.7e-34 <= floor {floor:.2g}" in row.detail
    single = compare_upper_bound("c", "r", 7.7e-34, 0.0, floor=floor)
    assert f"holds within rounding: excess 7.7e-34 <= floor {floor:.2g}" in single.detail
    assert compare_upper_bound("c", "r", [0.0, 7.7e-34], [1.0, 0.0]).verdict is V
    assert compare_upper_bound("c", "r", 1e-10, 0.0, floor=floor).verdict is V


@pytest.mark.parametrize(
    ("measured", "bound", "text"),
    [(0.0, 0.0, "exact"), (1e-30, 0.0, "bound is 0"), (1.0000000021, 1.0, "1 + 2.1e-09"),
     (0.9999, 1.0, "1 - 0.0001"), (1.0, 1.0, "1"), (2.8e-6, 1.0, "2.8e-06")],
)  # fmt: skip
def test_ratio_text_never_nan_and_shows_the_excess_near_one(measured, bound, text):
    assert format_ratio(measured, bound) == text


def test_a_ratio_within_the_accuracy_of_one_prints_no_digits_below_it():
    # 1 + 1.2e-15 and 1 + 1e-15 are one result at a floor of 2e-15 (e.g. another BLAS kernel)
    assert format_ratio(1 + 1.2e-15, 1.0, 2e-15) == "1 within rounding"
    assert format_ratio(1 - 1e-15, 1.0, 2e-15) == "1 within rounding"
    assert format_ratio(1 + 2**-48, 1.0, 2e-15) == "1 + 3.6e-15"
    assert format_ratio(1.0, 1.0, 2e-15) == "1"


def test_loose_marks_holds_rows_below_one_percent_only():
    def row(measured, verdict=H, relation="<="):
        return Comparison("c", "r", relation, measured, 1.0, verdict)

    assert row(LOOSE_RATIO / 2).loose and not row(LOOSE_RATIO).loose
    assert not row(1e-4, V).loose and not row(1e-4, relation="==").loose


def _draws(p, seed):
    def draw(batch, size):
        return (np.random.default_rng([seed, batch]).random(size) < p).astype(float)

    return draw


def _judge(bound):
    def judge(samples, level):
        return compare_mean_upper_bound("c", "r", samples, bound, confidence=level)

    return judge


def test_adaptive_replication_stops_when_decided_and_is_deterministic():
    row, samples = replicate_until_decided(_draws(0.04, 7), _judge(0.05), cap=2**15)
    assert row.verdict is H and 64 < samples.size < 2**15 and "adaptive replication" in row.detail
    again, _ = replicate_until_decided(_draws(0.04, 7), _judge(0.05), cap=2**15)
    assert again == row
    capped, samples = replicate_until_decided(_draws(0.05, 7), _judge(0.05), cap=1000)
    assert capped.verdict is I and samples.size == 1000 and "5 of 5 planned looks" in capped.detail
