"""A paper's empirical finding judged over independent data draws: reproduced (on the set-up
or a stand-in), underpowered, contradicted at this scale, reversed, depends on an unforced
choice (never violated); identical runs reported once."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fedtheory.errors import ParameterError
from fedtheory.verdict import (
    FINDING_VERDICTS,
    MIN_DATA_SEEDS,
    FindingSpec,
    Variant,
    Verdict,
    compare_finding,
    compare_findings,
    distinct_runs,
    draws_to_decide,
    finding_difference,
    finding_label,
    holm_levels,
)
from tests.conftest import assert_tight


def _draws(seed: int, draws: int = 6, runs: int = 4):
    """X and Y ``[draws, runs]`` with a shared per-draw effect (what a data draw does to both)
    and run-seed noise; X - Y centred to mean 0 over the draws."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(0.0, 3.0, size=(draws, 1))
    x = shared + rng.normal(size=(draws, runs))
    y = shared + rng.normal(size=(draws, runs))
    d = x.mean(1) - y.mean(1)
    return x - d.mean(), y


def test_three_outcomes_decided_by_the_interval_over_data_draws():
    x0, y = _draws(1)
    diff = finding_difference(x0, y)
    half = diff.high - diff.difference  # t_{0.975, S-1} * se, the same for every shift
    assert 0 < half < diff.detectable and diff.per_draw.shape == (6,)
    cases = {
        -2 * half: Verdict.REPRODUCED,
        0.0: Verdict.UNDERPOWERED,
        0.5 * (half + diff.detectable): Verdict.CONTRADICTED,  # significant, too small
        diff.detectable + 0.1 * half: Verdict.REVERSED,
    }
    for shift, verdict in cases.items():
        row = compare_finding("c", "r", x0 + shift, y)
        assert row.verdict is verdict, (shift, row)
        assert row.relation == "<" and "6 data draws x 4 vs 4 run seeds" in row.detail
        mirrored = compare_finding("c", "r", -(x0 + shift), -y, relation=">")
        assert mirrored.verdict is verdict, (shift, mirrored)
    assert (
        "opposite ordering is significant but not larger"
        in compare_finding("c", "r", x0 + 0.5 * (half + diff.detectable), y).detail
    )


def test_a_shared_data_effect_cancels_and_the_draws_set_the_interval():
    """Metamorphic: adding the same per-draw offset to X and Y changes nothing; the interval
    is the Student-t interval of the per-draw differences."""
    x, y = _draws(2)
    offset = np.random.default_rng(0).normal(0, 50, size=(6, 1))
    a, b = finding_difference(x, y), finding_difference(x + offset, y + offset)
    assert np.allclose(a.per_draw, b.per_draw) and np.isclose(a.low, b.low)
    d = x.mean(1) - y.mean(1)
    ci = stats.t.interval(0.95, d.size - 1, loc=d.mean(), scale=stats.sem(d))
    assert np.allclose((a.low, a.high), ci)


def test_one_data_draw_too_few_to_reverse():
    """A huge reversed gap on fewer than MIN_DATA_SEEDS draws is only *contradicted*."""
    x, y = _draws(3, draws=MIN_DATA_SEEDS - 1)
    row = compare_finding("c", "r", x + 100.0, y)
    assert row.verdict is Verdict.CONTRADICTED and "fewer than" in row.detail
    assert row.verdict_text == "contradicted at this scale"
    assert compare_finding("c", "r", x - 100.0, y).verdict is Verdict.REPRODUCED


@pytest.mark.slow
def test_detectable_difference_is_detected_with_the_stated_power():
    """Per-draw differences with unit spread: a true difference equal to the detectable
    difference at the true spread is significant in about 80% of simulated studies."""
    rng = np.random.default_rng(4)
    draws, sims = 8, 2000
    unit = np.array([1.0, -1.0] * (draws // 2)) * np.sqrt((draws - 1) / draws)
    delta = finding_difference(unit[:, None], np.zeros((draws, 1))).detectable
    d = rng.normal(delta, 1.0, size=(sims, draws, 1))
    rejected = sum(finding_difference(d[i], np.zeros((draws, 1))).low > 0 for i in range(sims))
    assert stats.binomtest(rejected, sims, 0.8).pvalue > 1e-3, rejected / sims


def test_identical_runs_are_reported_once():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    merged = distinct_runs({"A": a, "B": b, "A'": a.copy(), "C": b + 1})
    assert list(merged) == ["A = A'", "B", "C"]
    np.testing.assert_array_equal(merged["A = A'"], a)  # the checked float64 copy


@pytest.mark.parametrize(
    ("samples", "baseline", "kw", "match"),
    [
        ([[1.0, 2.0]], [[3.0, 4.0]], {}, "'samples'"),
        (np.ones((3, 2)), np.ones((4, 2)), {}, "'samples'"),
        (np.ones((3, 2)), np.ones((3, 2)), {"relation": "<="}, "'relation'"),
        (np.ones((3, 2)), np.ones((3, 2)), {"confidence": 1.0}, "'confidence'"),
        (np.ones((3, 2)), np.ones((3, 2)), {"power": 0.0}, "'power'"),
        (np.full((3, 2), np.nan), np.ones((3, 2)), {}, "finite"),
    ],
)
def test_bad_input_names_the_parameter(samples, baseline, kw, match):
    with pytest.raises(ParameterError, match=match):
        compare_finding("c", "r", samples, baseline, **kw)


def test_findings_page_examples_run():
    """Every Python example of docs/findings.md runs (the page shows commands and numbers
    printed by the code)."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "findings.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(page), "exec"), {})


def test_a_planted_material_difference_keeps_a_reversed_ordering_from_reversing():
    x0, y = _draws(1)
    diff = finding_difference(x0, y)
    x = x0 + 3 * diff.detectable  # clearly the opposite ordering
    assert compare_finding("X < Y", "ref", x, y).verdict is Verdict.REVERSED
    row = compare_finding("X < Y", "ref", x, y, differs=("optimiser: momentum not modelled",))
    assert row.verdict is Verdict.CONTRADICTED
    assert row.verdict_text == "contradicted at this scale (set-up differs: optimiser)"
    assert row.setup_differs == ("optimiser: momentum not modelled",)
    assert "the set-up differs materially" in row.detail
    assert row.as_dict()["setup_differs"] == "optimiser: momentum not modelled"
    assert row.as_dict()["verdict_text"] == row.verdict_text
    # a reproduced ordering on a stand-in says so, naming the stand-in's aspects
    differs = ("data: a Gaussian stand-in", "model: an MLP")
    good = compare_finding("X < Y", "ref", x0 - 3 * diff.detectable, y, differs=differs)
    assert good.verdict is Verdict.STAND_IN
    assert good.verdict_text == "reproduced on a stand-in: data, model"
    faithful = compare_finding("X < Y", "ref", x0 - 3 * diff.detectable, y, against="code")
    assert faithful.verdict is Verdict.REPRODUCED
    assert faithful.verdict_text == "reproduced on the authors' code's set-up"


def test_holm_judges_each_row_at_its_rank_level():
    """Rows significant at 5% alone but not after Holm's correction are not reproduced; the
    corrected interval is wider and its detectable difference larger."""
    x0, y = _draws(1)
    diff = finding_difference(x0, y)
    half = diff.high - diff.difference
    strong = x0 - 6 * diff.detectable  # reproduced at any level used here
    borderline = x0 - 1.3 * half  # its 95% interval excludes 0, narrowly
    alone = compare_finding("X < Y", "ref", borderline, y)
    assert alone.verdict is Verdict.REPRODUCED
    specs = [FindingSpec(f"row {k}", "ref", s, y) for k, s in
             enumerate((strong, borderline, x0, x0 + 0.1))]  # fmt: skip
    rows = compare_findings(specs)
    assert rows[0].verdict is Verdict.REPRODUCED
    assert rows[1].verdict is Verdict.UNDERPOWERED  # p < 0.05 but above 0.05 / 3
    assert "Holm over 4 rows" in rows[1].detail
    levels = holm_levels(specs)  # the level that judged each row, for a figure
    assert levels[0] == pytest.approx(1 - 0.05 / 4) and levels[1] == pytest.approx(1 - 0.05 / 3)
    p = stats.ttest_1samp(finding_difference(borderline, y).per_draw, 0.0).pvalue
    assert 0.05 / 3 < p < 0.05
    wide = finding_difference(borderline, y, confidence=1 - 0.05 / 3)
    assert wide.detectable > finding_difference(borderline, y).detectable
    assert f"{wide.detectable:.4g}" in rows[1].detail
    levels = 1.0 - holm_levels(specs)  # what a figure draws: the level each row was judged at
    for row, level in zip(rows, levels, strict=True):
        assert f"level {level:.3g}," in row.detail
    assert_tight(np.sort(levels), 0.05 / np.array([4.0, 3.0, 2.0, 1.0]), rtol=1e-12)


def test_holm_step_down_stops_at_the_first_row_that_fails():
    """Two identical rows with 0.025 < p < 0.05: the first (level 0.025) fails, so the second
    is not significant either, although its own level 0.05 would pass it."""
    x0, y = _draws(2)
    diff = finding_difference(x0, y)
    x = x0 - 1.1 * (diff.high - diff.difference)
    p = stats.ttest_1samp(finding_difference(x, y).per_draw, 0.0).pvalue
    assert 0.025 < p < 0.05
    assert compare_finding("X < Y", "ref", x, y).verdict is Verdict.REPRODUCED
    rows = compare_findings([FindingSpec("a", "ref", x, y), FindingSpec("b", "ref", x, y)])
    assert [r.verdict for r in rows] == [Verdict.UNDERPOWERED] * 2
    agree = int((finding_difference(x, y).per_draw < 0).sum())
    assert rows[1].verdict_text.startswith(f"underpowered: direction agrees in {agree} of 6 ")
    assert "an earlier rank was not significant" in rows[1].detail
    with pytest.raises(ParameterError, match="'specs' parameter of compare_findings"):
        compare_findings([])
    with pytest.raises(ParameterError, match="'differs' parameter of compare_finding"):
        compare_finding("X < Y", "ref", x0, y, differs="data")


def test_a_planted_unforced_choice_that_flips_the_ordering_depends_on_it():
    """X < Y clearly at the default initialisation; a planted unforced choice ("init")
    whose other value flips the ordering makes the row *depends on init*, with the outcome
    at each value; a choice that changes nothing ("clip") is not named."""
    x0, y = _draws(1)
    gap = 3 * finding_difference(x0, y).detectable
    variants = (
        Variant("init", "torch default", x0 + gap, y),  # the planted flip
        Variant("clip", "none", x0 - 1.1 * gap, y),
        Variant("clip", "2.0", x0 - 0.9 * gap, y),
    )
    row = compare_finding("X < Y", "ref", x0 - gap, y, variants=variants, default="as run")
    assert row.verdict is Verdict.DEPENDS and row.verdict_text == "depends on init"
    by_value = {(c, v): text for c, v, text, _ in row.outcomes}
    assert by_value[("init", "as run")] == "reproduced on the paper's set-up"
    assert by_value[("init", "torch default")] == "reversed on the paper's set-up"
    assert by_value[("clip", "none")] == by_value[("clip", "2.0")] == by_value[("init", "as run")]
    assert "by unforced choice: init = as run: reproduced" in row.detail
    # without the flip, the row holds across the choices and is reproduced
    steady = compare_finding("X < Y", "ref", x0 - gap, y, variants=variants[1:])
    assert steady.verdict is Verdict.REPRODUCED and len(steady.outcomes) == 3
    # a value run on a stand-in leaves it reproduced, on a stand-in (the weaker label)
    stand_in = Variant("clients", "30", x0 - gap, y, differs=("clients: 30, not 10",))
    weaker = compare_finding("X < Y", "ref", x0 - gap, y, variants=(stand_in,))
    assert weaker.verdict is Verdict.STAND_IN
    assert weaker.verdict_text == "reproduced on a stand-in: clients"
    # the table must vary every unforced choice its set-up declares
    spec = FindingSpec("X < Y", "ref", x0 - gap, y, variants=variants)
    assert compare_findings([spec], unforced=("init", "clip"))[0].verdict is Verdict.DEPENDS
    with pytest.raises(ParameterError, match="without \\['step sizes'\\]"):
        compare_findings([spec], unforced=("init", "step sizes"))


def test_a_planted_underpowered_true_ordering_is_underpowered_not_set_up_differs():
    """A true ordering X < Y by 0.3 with per-draw noise of spread 1 on 6 draws: the
    interval holds 0, every draw but one agrees in direction; with a stand-in's open
    difference the row is still *underpowered* (named as such, the stand-in after it), and
    the number of draws the label names does decide it (detectable difference <= 0.3)."""
    per_draw = -0.3 + np.array([0.9, -1.2, 0.1, -0.5, -0.4, 0.6])  # [6], one draw > 0
    x, y = per_draw[:, None], np.zeros((6, 1))
    row = compare_finding("X < Y", "ref", x, y, differs=("data: a stand-in",))
    assert row.verdict is Verdict.UNDERPOWERED
    diff = finding_difference(x, y)
    assert diff.low < 0 < diff.high and diff.detectable > 0.3
    needed = draws_to_decide(diff)
    assert row.verdict_text == (
        f"underpowered: direction agrees in 4 of 6 draws; difference {diff.difference:+.3g}, "
        f"detectable {diff.detectable:.3g}; about {needed} draws would decide it; on a "
        "stand-in: data"
    )
    assert "set-up differs" not in row.verdict_text
    # at that many draws with the same spread, the detectable difference is within |d|
    spread = per_draw.std(ddof=1)

    def detectable(n):  # draws alternating around the mean with the measured spread
        unit = np.array([1.0, -1.0] * (n // 2)) * spread * np.sqrt((n - 1) / n)
        return finding_difference(unit[:, None], np.zeros((n, 1))).detectable

    even = needed + needed % 2  # the alternating draws need an even count
    assert detectable(even) <= abs(diff.difference) < detectable(even - 2 * (even > 6))
    assert draws_to_decide(finding_difference(np.zeros((6, 1)) + [[1], [-1]] * 3, y)) is None
    # identical draws on both sides: no spread and no difference, no number of draws decides
    same = np.zeros((4, 2))
    assert draws_to_decide(finding_difference(same, same)) is None
    assert compare_finding("X < Y", "ref", same, same).verdict is Verdict.UNDERPOWERED


def test_every_finding_outcome_has_one_text():
    """One function words every outcome; a statement's verdict is refused by name."""
    texts = {v: finding_label(v, differs=("data: x",), depends=("init",)) for v in
             FINDING_VERDICTS}  # fmt: skip
    assert len(set(texts.values())) == len(FINDING_VERDICTS)
    assert all(t.startswith(v.value.split(" an ")[0]) for v, t in texts.items()), texts
    with pytest.raises(ParameterError, match="'verdict' parameter of finding_label"):
        finding_label(Verdict.HOLDS)


def test_a_set_up_says_what_fixes_each_choice():
    """An aspect is fixed by the paper, by the code (with its file and line) or unforced
    (with at least two values); the unforced ones are the choices every row must vary."""
    from fedtheory.validation.machinery.setups import SETUP_HEADER, Aspect, SetUp

    init = Aspect("initialisation", "silent", "torch default", "w0 = 0", False, "varied",
                  fixed_by="unforced", values=("w0 = 0", "torch default"))  # fmt: skip
    seed = Aspect("seed", "three runs", "42", "42", False, "same", fixed_by="code",
                  cite="utils/args.py:120")  # fmt: skip
    setup = SetUp("T", "code", (init, seed), commit="arodio/CA-Fed@abc")
    assert setup.unforced() == ("initialisation",)
    rows = setup.table_rows()
    assert len(rows[0]) == len(SETUP_HEADER)
    assert rows[0][1] == "unforced: varied over w0 = 0, torch default"
    assert rows[1][1] == "code (utils/args.py:120)" and "arodio/CA-Fed@abc" in setup.title()
    with pytest.raises(ParameterError, match="'cite' parameter of Aspect"):
        Aspect("seed", "p", "c", "o", False, "r", fixed_by="code")
    with pytest.raises(ParameterError, match="'values' parameter of Aspect"):
        Aspect("init", "p", "c", "o", False, "r", fixed_by="unforced", values=("zero",))
    with pytest.raises(ParameterError, match="'fixed_by' parameter of Aspect"):
        Aspect("init", "p", "c", "o", False, "r", fixed_by="memory")


def test_a_reversed_row_needs_the_authors_code_to_agree_where_it_was_run():
    """The referee is the authors' code's interval of the same difference X - Y: a reversal
    stands only where that interval lies on the same side of 0."""
    x0, y = _draws(1)
    x = x0 + 3 * finding_difference(x0, y).detectable  # clearly the opposite ordering
    agrees = compare_finding("X < Y", "ref", x, y, against="code", referee=(0.3, 1.58))
    assert agrees.verdict is Verdict.REVERSED
    assert agrees.verdict_text == (
        "reversed on the authors' code's set-up (the authors' code agrees: [+0.3, +1.58])"
    )
    undecided = compare_finding("X < Y", "ref", x, y, against="code", referee=(-0.61, 0.41))
    assert undecided.verdict is Verdict.CONTRADICTED
    assert undecided.verdict_text == (
        "contradicted at this scale (the authors' code does not confirm it: [-0.61, +0.41])"
    )
    assert "the authors' code, run on the same seeds, does not confirm it" in undecided.detail
    # on the finding's side the referee changes nothing
    good = compare_finding("X < Y", "ref", x0 - 3 * (x - x0), y, referee=(-0.61, 0.41))
    assert good.verdict is Verdict.REPRODUCED
