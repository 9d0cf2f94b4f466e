"""A researcher's own claims through the one judge: Monte-Carlo claims in ``check_theorem``
(never *violated* when true, *violated* when false, *inconclusive* reported), a rounding
floor for plain floats, the search after the examples (CA-Fed Theorem 1 halved refuted
under every profile), a search that survives the user's function, and the exit statuses a
CI job reads."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import Phase, settings
from hypothesis import strategies as st

from fedtheory.bounds import Condition, Theorem
from fedtheory.bounds.judgement import WITHIN_ROUNDING, MeasureError, judge
from fedtheory.cli import main
from fedtheory.errors import DivergenceError, ExitStatus, NothingMeasured
from fedtheory.io import import_file
from fedtheory.testing import check_theorem, exit_status, strategies
from fedtheory.testing.profiles import register_profiles
from fedtheory.tightness import FAMILIES, search, theorem_family
from fedtheory.tightness.drawn import DRAWS, strategy_family
from fedtheory.verdict import Verdict

q = sp.Symbol("q", positive=True)
BERNOULLI = [Condition("q <= 1", q, "<=", sp.Integer(1))]
TRUE_MEAN = Theorem(
    "user.bernoulli_mean", title="Bernoulli mean", reference="E[X] = q for X ~ B(q)",
    kind="upper bound", terms={"q": q}, conditions=BERNOULLI,
)  # fmt: skip
FALSE_MEAN = Theorem(
    "user.bernoulli_half", title="Bernoulli mean halved", reference="false on purpose",
    kind="upper bound", terms={"q": q / 2}, conditions=BERNOULLI,
)  # fmt: skip


def bernoulli(*, q, replicates, seed):
    """``replicates`` draws of a Bernoulli(q) outcome: its mean *equals* the bound q, so the
    interval straddles it at every instance."""
    return (np.random.default_rng(seed).random(replicates) < q).astype(float)


FEW = settings(max_examples=25, derandomize=True, deadline=None)


# --- 1. Monte-Carlo claims -------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("replicates", [400, "auto"])
def test_a_true_monte_carlo_claim_whose_mean_straddles_the_bound_is_never_violated(
    seed, replicates
):
    result = check_theorem(TRUE_MEAN, bernoulli, replicates=replicates, ranges={"q": (0.2, 0.8)},
                           settings=FEW, seed=seed, search_budget=60)  # fmt: skip
    assert result.examples >= 25
    assert result.outcome == "inconclusive" and result.inconclusive  # reported, not failed
    first = result.inconclusive[0]
    assert first["replicates"] >= 400 and "inconclusive" in first["detail"]
    assert "inconclusive" in repr(result) and "would decide it" in repr(result)


def test_a_false_monte_carlo_claim_is_violated_and_inconclusive_can_fail():
    with pytest.raises(AssertionError, match="Bernoulli mean halved at .*upper bound violated"):
        check_theorem(FALSE_MEAN, bernoulli, replicates="auto", ranges={"q": (0.2, 0.8)},
                      settings=FEW)  # fmt: skip
    with pytest.raises(AssertionError, match=r"inconclusive \(fail_on_inconclusive\)"):
        check_theorem(TRUE_MEAN, bernoulli, replicates=200, ranges={"q": (0.2, 0.8)},
                      settings=FEW, fail_on_inconclusive=True)  # fmt: skip


def test_a_monte_carlo_claim_on_drawn_instances_is_searched_and_confirmed_at_the_instance():
    drawn = st.fixed_dictionaries({"prob": st.floats(0.2, 0.8)})  # constants: q = prob

    def rate(prob):
        return {"q": prob}

    def fair(*, prob, replicates, seed):
        return bernoulli(q=prob, replicates=replicates, seed=seed)

    def high_end(*, prob, replicates, seed):  # mean 1.2 q > q above q = 0.75, q / 2 below
        return fair(prob=prob * 1.2 if prob > 0.75 else prob / 2, replicates=replicates,
                    seed=seed)  # fmt: skip

    few = settings(FEW, max_examples=1, database=None)  # q = 0.2 holds: the search finds it
    with pytest.raises(AssertionError, match="search after 1 examples(.|\n)*instance: prob="):
        check_theorem(TRUE_MEAN, high_end, replicates=2000, instances=drawn, constants=rate,
                      settings=few)  # fmt: skip
    held = check_theorem(TRUE_MEAN, fair, replicates=400, instances=drawn, constants=rate,
                         settings=few, search_budget=40)  # fmt: skip
    assert held.search is not None and held.search.counterexample is None


# --- 2. the rounding floor of a plain float --------------------------------------------------
h, T, D0 = sp.symbols("h T D0", positive=True)
GD = Theorem(
    "user.gd_rate", title="GD contraction", reference="||x_T - x*||^2 <= (1-h)^{2T} D0",
    kind="upper bound", terms={"contraction": (1 - h) ** (2 * T) * D0},
    conditions=[Condition("eta mu <= 1", h, "<=", sp.Integer(1))],
)  # fmt: skip


def test_a_plain_float_just_above_a_zero_bound_is_within_rounding_never_violated():
    at = {"h": 1.0, "T": 5.0, "D0": 2.0}  # the bound is exactly 0
    floor_met = judge(GD, at, 7.7e-34)  # rounding of x_T - x* at eta mu = 1
    assert floor_met.outcome is Verdict.HOLDS and "holds within rounding" in floor_met.row().detail
    unsure = judge(GD, at, 1e-12)  # above 64 eps * 5, below 1024 times that
    assert unsure.outcome is Verdict.INCONCLUSIVE and WITHIN_ROUNDING in unsure.row().detail
    assert judge(GD, at, 1e-6).outcome is Verdict.VIOLATED  # a real excess
    with pytest.raises(MeasureError, match="finite numbers. Got 1 NaN or inf"):
        judge(GD, at, float("nan"))


# --- 3. the search after the examples --------------------------------------------------------
# CA-Fed's statement is reached when a test (marked paper("cafed")) runs, so that the file
# runs in a copy without CA-Fed.
def _halved():
    """CA-Fed Theorem 1 with every term halved: a statement false on purpose."""
    from fedtheory.bounds import cafed

    return Theorem(
        "user.cafed.theorem1_half", title="CA-Fed Theorem 1 / 2", reference="false on purpose",
        kind="upper bound", terms={k: e / 2 for k, e in cafed.theorem1.terms.items()},
        conditions=list(cafed.theorem1.conditions),
    )  # fmt: skip


@st.composite
def _cafed_instances(draw):
    """Quadratic problems with kappa in [1, 50], weights p and any point w."""
    problem = draw(strategies.quadratic_problems(max_clients=3, max_dim=2, kappa=(1.0, 50.0)))
    p = draw(strategies.simplex(problem.num_clients))
    w = draw(st.lists(st.floats(-2, 2), min_size=problem.dim, max_size=problem.dim))
    return {"problem": problem, "w": w, "p": p}


def _gap(problem, w, p):
    return problem.loss(w) - problem.optimum()[1]


def _constants(problem, w, p):
    from fedtheory.bounds import cafed

    return cafed.decomposition_constants(problem, w, p).as_kwargs()


@pytest.mark.paper("cafed")
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("profile", ["ci", "dev"])
def test_cafed_theorem1_halved_is_refuted_from_the_strategy_alone_under_every_profile_and_seed(
    profile, seed
):
    register_profiles()  # no family given: the search runs over the strategy's own choices
    with pytest.raises(AssertionError, match="CA-Fed Theorem 1 / 2"):
        check_theorem(_halved(), _gap, instances=_cafed_instances(), constants=_constants,
                      settings=settings(settings.get_profile(profile), max_examples=30,
                                        database=None), seed=seed)  # fmt: skip


@pytest.mark.paper("cafed")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_over_the_strategy_refutes_the_halved_bound_that_the_examples_pass(seed):
    halved = _halved()
    family = strategy_family(halved, _gap, _cafed_instances(), _constants, seed=seed)
    assert family.integers[0].high + 1 == DRAWS  # the draws, smallest first
    result = search(family, budget=400, seed=seed)
    assert result.counterexample is not None and result.counterexample.ratio > 1
    assert "QuadraticProblem(A=" in "\n".join(result.counterexample_lines())
    # the examples alone pass where they never draw kappa = 1: the search reaches it
    with pytest.raises(AssertionError, match="at a point of the search after 3 examples"):
        check_theorem(halved, _gap, instances=_cafed_instances(), constants=_constants,
                      settings=settings(FEW, max_examples=3, phases=[Phase.generate],
                                        database=None), seed=seed)  # fmt: skip


@pytest.mark.parametrize("profile", ["ci", "dev"])
def test_the_true_cafed_theorem1_passes_the_search_over_the_strategy(profile):
    from fedtheory.bounds import cafed

    register_profiles()
    result = check_theorem(cafed.theorem1, _gap, instances=_cafed_instances(),
                           constants=_constants, seed=0,
                           settings=settings(settings.get_profile(profile), max_examples=30,
                                             database=None))  # fmt: skip
    assert result.search is not None and result.search.counterexample is None
    assert result.search.evaluations >= 400 and result.search.ratio <= 1
    halved = _halved()
    family = replace(FAMILIES["cafed.theorem1"], theorem=halved)  # a family still may be given
    with pytest.raises(AssertionError, match="CA-Fed Theorem 1 / 2"):
        check_theorem(halved, _gap, instances=_cafed_instances(), constants=_constants,
                      settings=settings(FEW, max_examples=3), search=family)  # fmt: skip


def test_the_search_runs_after_the_examples_and_is_reported():
    def distance(*, h, T, D0):
        return (1 - h) ** (2 * T) * D0 * 0.5

    result = check_theorem(GD, distance, ranges={"T": (1, 20), "D0": (0.1, 5.0)},
                           settings=FEW, search_budget=40)  # fmt: skip
    assert result.search is not None and result.search.counterexample is None
    assert "search: " in repr(result)
    skipped = check_theorem(GD, distance, ranges={"T": (1, 20)}, settings=FEW, search=False)
    assert skipped.search is None and "search=False" in repr(skipped)


# --- 3b. a bound broken only in a narrow region (examples/narrow_region.py) ------------------
NARROW_FILE = import_file(Path(__file__).resolve().parents[1] / "examples" / "narrow_region.py",
                          "test_own_claims", "narrow_region_")  # fmt: skip
NARROW, UNIT = NARROW_FILE.NARROW, NARROW_FILE.UNIT


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("width", [1e-3, 1e-6, 1e-8])
def test_a_bound_broken_only_in_a_narrow_disc_is_refuted_by_the_default_check(width, seed):
    few = settings(FEW, database=None)
    passed = check_theorem(NARROW, NARROW_FILE.cone(width), ranges=UNIT, settings=few, search=False)
    assert passed.worst_ratio < 1  # the examples alone never land in the disc
    with pytest.raises(AssertionError, match="at a point of the search after 25 examples"):
        check_theorem(NARROW, NARROW_FILE.cone(width), ranges=UNIT, settings=few, seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_violation_flat_around_it_is_found_by_sampling_when_it_is_wide_enough(seed):
    """The limit: where the ratio gives no slope towards the region, only the search's
    draws can land in it (docs/guide/your-claim.md gives the measured rates)."""
    with pytest.raises(AssertionError, match="broken near one point"):
        check_theorem(NARROW, NARROW_FILE.needle(0.1), ranges=UNIT,
                      settings=settings(FEW, database=None), seed=seed)  # fmt: skip


# --- 3c. whole-number parameters are searched as the reals are -------------------------------
_T, _c = sp.Symbol("T", positive=True, integer=True), sp.Symbol("c", positive=True)
RATE = Theorem("user.rate_t2", title="a 1/T^2 rate", reference="false on purpose",
               kind="upper bound", terms={"rate": 900 * _c / _T**2})  # fmt: skip


def _one_over_t(*, c, T, E=1):
    """c / T: the true rate, above the false 900 c / T^2 once T > 900."""
    return c / T


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_false_one_over_t_squared_rate_on_drawn_instances_is_refuted_by_check_theorem(seed):
    """T is an integer choice of the user's strategy: the search moves it (it used to hold
    it at the 8 drawn values, all below 900 at these seeds, and the claim passed)."""
    drawn = st.fixed_dictionaries(
        {"T": st.integers(1, 1000), "E": st.integers(1, 10), "c": st.floats(0.5, 2.0)}
    )
    five = settings(max_examples=5, derandomize=True, database=None)
    with pytest.raises(AssertionError, match=r"at a point of the search(.|\n)*T=(9\d\d|1000)"):
        check_theorem(RATE, _one_over_t, instances=drawn, settings=five, seed=seed,
                      constants=lambda c, T, E: {"c": c, "T": T})  # fmt: skip


def test_the_worst_point_of_a_search_over_drawn_instances_is_the_decoded_instance():
    drawn = st.fixed_dictionaries({"T": st.integers(1, 50), "E": st.integers(1, 3),
                                   "c": st.floats(0.5, 2.0)})  # fmt: skip
    family = strategy_family(RATE, _one_over_t, drawn, lambda c, T, E: {"c": c, "T": T})
    worst = search(family, budget=20, seed=0).worst
    assert set(worst.instance) == {"T", "E", "c"} and isinstance(worst.instance["T"], int)
    assert all(k.startswith("choice[") for k in worst.reals)  # what the search moved


CONE = Theorem("user.cone", title="c + T", reference="false near T = 610, c = 1.3",
               kind="upper bound", terms={"sum": _c + _T})  # fmt: skip


def _cone(*, c, T):
    """Above the bound only within about 10 of T = 610 and 0.01 of c = 1.3, rising towards it."""
    return (c + T) * (1.01 - abs(T - 610) / 1000 - abs(c - 1.3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_moves_an_integer_with_the_reals_up_a_slope_to_a_narrow_violation(seed):
    """Step 2 moves T with c (CMA-ES, T rounded): with T held at the explored values and
    moved only to its ends and neighbours, no seed of 0-4 reached the violation."""
    family = theorem_family(CONE, _cone, ranges={"T": (1, 1000), "c": (0.5, 2.0)})
    found = search(family, seed=seed).counterexample
    assert found is not None and abs(found.integers["T"] - 610) <= 10


# --- 4. a search that survives the user's function -------------------------------------------
def test_a_measure_that_raises_at_some_points_leaves_the_search_running_and_counted():
    called = []

    def fragile(*, h, T, D0):
        called.append(h)
        if h > 0.8:
            raise DivergenceError("gd", 3, 0, "the model w")
        if h < 0.05:
            return float("inf")
        return (1 - h) ** (2 * T) * D0

    family = theorem_family(GD, fragile, ranges={"h": (1e-3, 3.0), "T": (1, 10)})
    result = search(family, budget=80, seed=0)
    assert result.counterexample is None
    assert result.failures and all("fragile" in f for f in result.failures)
    assert any("DivergenceError" in f for f in result.failures)
    assert result.outside > 0 and max(called) <= 1.0  # never called outside eta mu <= 1
    lines = "\n".join(result.point_lines())
    assert "outside the hypotheses" in lines and "the measurement failed at" in lines
    with pytest.raises(MeasureError, match="must not raise. Got DivergenceError"):
        check_theorem(GD, fragile, ranges={"h": (0.85, 1.0)}, settings=FEW, search=False,
                      fail_on_error=True)  # fmt: skip
    checked = check_theorem(GD, fragile, ranges={"h": (0.01, 1.0)}, settings=FEW, seed=1,
                            search_budget=60)  # fmt: skip
    assert checked.outcome == "failed" and checked.examples > 0  # recorded, the run went on
    assert any("DivergenceError" in f for f in checked.failures)
    assert any("inf" in f for f in checked.failures) and checked.search.evaluations >= 60
    status, message = exit_status(lambda: checked)
    assert status == ExitStatus.USER_FUNCTION_FAILED and "recorded" in message


def test_a_strategy_breaking_a_declared_sign_is_recorded_as_the_users_failure_and_goes_on():
    """q is positive: the user's strategy also draws q = 0, which its constants pass on; that
    example is the user's failure (recorded, status 3), the others are judged."""
    drawn = st.fixed_dictionaries({"q": st.sampled_from([0.0, 0.25, 0.5])})
    checked = check_theorem(TRUE_MEAN, lambda q: q / 2, instances=drawn, search=False,
                            constants=lambda q: {"q": q}, settings=FEW)  # fmt: skip
    assert checked.examples > 0 and checked.outcome == "failed"
    assert any("constants" in f and "'q' parameter" in f for f in checked.failures)
    assert exit_status(lambda: checked)[0] == ExitStatus.USER_FUNCTION_FAILED


def test_check_theorem_on_a_box_outside_the_hypotheses_measures_nothing_and_never_passes():
    with pytest.raises(NothingMeasured, match="nothing measured"):
        check_theorem(GD, lambda *, h, T, D0: 0.0, ranges={"h": (2.0, 3.0)}, settings=FEW,
                      search_budget=20)  # fmt: skip
    status, _ = exit_status(partial(check_theorem, GD, lambda *, h, T, D0: 0.0,
                                    ranges={"h": (0.5, 3.0)}, settings=FEW, search_budget=20,
                                    min_measured=1.0))  # fmt: skip
    assert status == ExitStatus.NOTHING_MEASURED


def test_check_theorem_passes_fixed_keys_that_are_not_parameters_to_the_measure_only():
    seen = []

    def measure(*, h, T, D0, mu):
        seen.append(mu)
        return (1 - h) ** (2 * T) * D0

    fixed = {"T": 3, "mu": 0.25}  # T: the theorem's; mu: the measure's (as theorem_family)
    check_theorem(GD, measure, fixed=fixed, ranges={"h": (0.1, 0.9)}, settings=FEW,
                  search_budget=20)  # fmt: skip
    assert set(seen) == {0.25}
    search(theorem_family(GD, measure, fixed=fixed, ranges={"h": (0.1, 0.9)}), budget=10)


def test_evaluate_and_check_theorem_treat_keys_that_are_not_parameters_alike():
    """One rule (Theorem.evaluate, check_theorem's ``constants``): a key that is not a
    parameter is ignored; a missing parameter is refused, naming the ignored key that looks
    like it."""
    from fedtheory.errors import ParameterError

    shared = {"q": 0.25, "N": 3}  # N: another theorem's constant in a shared dict
    assert float(TRUE_MEAN.evaluate(**shared).total) == float(TRUE_MEAN.evaluate(q=0.25).total)
    drawn = st.fixed_dictionaries({"q": st.sampled_from([0.25, 0.5])})
    checked = check_theorem(TRUE_MEAN, lambda q: q / 2, instances=drawn, search=False,
                            constants=lambda q: {"q": q, "N": 3}, settings=FEW)  # fmt: skip
    assert checked.examples > 0 and checked.outcome == "holds" and not checked.failures
    hint = "'Q': did you mean 'q'?"
    with pytest.raises(ParameterError, match="missing: \\['q'\\]") as err:
        TRUE_MEAN.evaluate(Q=0.25, N=3)
    assert hint in str(err.value)
    with pytest.raises(MeasureError, match="too few were measured") as err:  # never passes
        check_theorem(TRUE_MEAN, lambda q: q / 2, instances=drawn, search=False,
                      constants=lambda q: {"Q": q, "N": 3}, settings=FEW)  # fmt: skip
    assert "missing ['q']" in str(err.value) and hint in str(err.value)


def _record_h(out: list, *, h, T, D0) -> float:
    out.append(h)
    return 0.0


def test_check_theorem_writes_no_example_database_and_its_seed_fixes_the_examples(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    drawn: dict[int, list] = {0: [], 1: []}
    for seed in (0, 1, 0):
        out: list = []
        check_theorem(GD, partial(_record_h, out), ranges={"h": (0.1, 0.9)}, seed=seed,
                      search=False)  # fmt: skip
        if drawn[seed]:
            assert out == drawn[seed]  # same seed, same examples
        drawn[seed] = out
    assert drawn[0] != drawn[1]
    assert not (tmp_path / ".hypothesis").exists()


# --- 5. exit statuses -------------------------------------------------------------------------
_FILE = """
import sympy as sp
from fedtheory.bounds import Condition, Theorem
from fedtheory.tightness import register, theorem_family

h, T, D0 = sp.symbols("h T D0", positive=True)
GD = Theorem("user.gd_file", title="GD", reference="textbook", kind="upper bound",
             terms={{"c": (1 - h) ** (2 * T) * D0}},
             conditions=[Condition("eta mu <= 1", h, "<=", sp.Integer(1))])

def measure(*, h, T, D0):
    {body}

register(theorem_family(GD, measure, ranges={{"T": (1, 10), "D0": (0.1, 4.0)}}))
"""


@pytest.mark.parametrize(
    "body, status",
    [
        ("return (1 - h) ** (2 * T) * D0", ExitStatus.HOLDS),
        ("return 2 * (1 - h) ** (2 * T) * D0 + 0.1", ExitStatus.VIOLATED),
        ("return float('nan') if h > 0.5 else (1 - h) ** (2 * T) * D0",
         ExitStatus.USER_FUNCTION_FAILED),
    ],
    ids=["true", "false", "nan"],
)  # fmt: skip
def test_tightness_exit_statuses(body, status, tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text(_FILE.format(body=body))
    out = str(tmp_path / "out.json")
    argv = ["tightness", "user.gd_file", "--module", str(path), "--budget", "40", "--out", out]
    assert main(argv) == status
    assert main(["tightness", "nope", "--module", str(path)]) == ExitStatus.BAD_INPUT
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('my bug')\n")
    assert main(["tightness", "x", "--module", str(broken)]) == ExitStatus.USER_FUNCTION_FAILED
    assert "my bug" in capsys.readouterr().err


_OUTSIDE = """
import sympy as sp
from fedtheory.bounds import Condition, Theorem
from fedtheory.tightness import register, theorem_family

h, D0 = sp.symbols("h D0", positive=True)
GD = Theorem("user.gd_outside", title="GD", reference="textbook", kind="upper bound",
             terms={"c": (1 - h) ** 2 * D0},
             conditions=[Condition("eta mu <= 1", h, "<=", sp.Integer(1))])
register(theorem_family(GD, lambda *, h, D0: (1 - h) ** 2 * D0, ranges={"h": H_BOX}))
"""


@pytest.mark.parametrize(
    "box, share, status",
    [((2.0, 3.0), None, ExitStatus.NOTHING_MEASURED),
     ((0.5, 2.0), "1", ExitStatus.NOTHING_MEASURED), ((0.5, 2.0), None, ExitStatus.HOLDS)],
    ids=["all-outside", "some-outside-all-required", "some-outside-default"],
)  # fmt: skip
def test_a_search_that_measured_too_few_points_never_passes(box, share, status, tmp_path, capsys):
    """Every point outside eta mu <= 1: the search measured nothing and exits 4, never 0 (a
    CI gate must not pass on nothing); ``--min-measured`` asks for a share of the points."""
    path = tmp_path / "outside.py"
    path.write_text(_OUTSIDE.replace("H_BOX", repr(box)))
    argv = [
        "tightness",
        "user.gd_outside",
        "--module",
        str(path),
        "--budget",
        "20",
        "--out",
        str(tmp_path / "o.json"),
        *(["--min-measured", share] if share else []),
    ]
    assert main(argv) == status
    out = capsys.readouterr().out
    assert ("NOTHING MEASURED" in out) == (status == ExitStatus.NOTHING_MEASURED)
    assert ("held at every instance measured" in out) == (status == ExitStatus.HOLDS)


def test_an_unwritable_out_exits_2_before_the_search(tmp_path, capsys, monkeypatch):
    path = tmp_path / "mine.py"
    path.write_text(_FILE.format(body="return (1 - h) ** (2 * T) * D0"))
    (tmp_path / "a_file").write_text("")

    def no_work(*args, **kwargs):  # neither the user's file nor the search may run first
        raise AssertionError("work started before the output path was checked")

    import fedtheory.tightness

    monkeypatch.setattr(fedtheory.tightness, "load_families", no_work)
    monkeypatch.setattr(fedtheory.tightness, "search", no_work)
    for out in (tmp_path / "a_file" / "x.json", tmp_path):  # under a file; a folder
        argv = ["tightness", "user.gd_file", "--module", str(path), "--out", str(out)]
        assert main(argv) == ExitStatus.BAD_INPUT
        assert "'--out' parameter of fedtheory tightness" in capsys.readouterr().err


def test_a_term_numpy_cannot_evaluate_is_bad_input_named_before_the_search(tmp_path, capsys):
    path = tmp_path / "lg.py"
    path.write_text(
        "import sympy as sp\n"
        "from fedtheory.bounds import Theorem\n"
        "from fedtheory.tightness import register, theorem_family\n"
        "a, x = sp.symbols('a x', positive=True)\n"
        "LG = Theorem('user.lg', title='lg', reference='r', kind='upper bound',\n"
        "             terms={'g': sp.lowergamma(a, x)})\n"
        "register(theorem_family(LG, lambda a, x: 0.1, ranges={'a': (1, 2), 'x': (1, 2)}))\n"
    )
    argv = ["tightness", "user.lg", "--module", str(path), "--out", str(tmp_path / "o.json")]
    assert main(argv) == ExitStatus.BAD_INPUT
    err = capsys.readouterr().err
    assert "term 'g' of 'user.lg', lowergamma(a, x)" in err and "bug in fedtheory" not in err


def test_tightness_help_lists_the_family_keys_and_the_default_out(capsys):
    with pytest.raises(SystemExit):
        main(["tightness", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default results/tightness/KEY.json in the working folder" in text
    assert "4: too few points measured" in text


@pytest.mark.parametrize(
    "key",
    [
        pytest.param(key, marks=pytest.mark.paper(key.split(".")[0]))
        for key in ("cafed.theorem1", "e3cs.regret", "fedau.theorem3.per_round")
    ],
)
def test_tightness_help_lists_each_papers_family_key(key, capsys):
    with pytest.raises(SystemExit):
        main(["tightness", "--help"])
    assert key in " ".join(capsys.readouterr().out.split())


_CHECKS = """
import sympy as sp
from fedtheory.bounds import Theorem
from fedtheory.validation import register, theorem_check

x = sp.Symbol("x", positive=True)
BOUND = Theorem("user.x_file", title="x", reference="r", kind="upper bound", terms={{"x": x}})
register(theorem_check(BOUND, lambda *, x: {value}, name="{name}", instances=[{{"x": 1.0}}]))
"""


@pytest.mark.parametrize(
    "value, status",
    [("0.5", ExitStatus.HOLDS), ("2.0", ExitStatus.VIOLATED),
     ("float('inf')", ExitStatus.USER_FUNCTION_FAILED)],
    ids=["holds", "violated", "inf"],
)  # fmt: skip
def test_validate_module_exit_statuses(value, status, tmp_path):
    path = tmp_path / f"checks_{status.value}.py"
    path.write_text(_CHECKS.format(value=value, name=f"exit-{status.value}"))
    argv = ["validate", "--module", str(path), "--size", "tiny", "--fail-on-violated",
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == status
    text = tmp_path / "bad.txt"
    text.write_text("")
    assert main(["validate", "--module", str(text)]) == ExitStatus.BAD_INPUT


_RAISES_IN_CONSTANTS = """
import sympy as sp
from fedtheory.bounds import Theorem
from fedtheory.validation import register, theorem_check

x = sp.Symbol("x", positive=True)
BOUND = Theorem("user.x_raises", title="x", reference="r", kind="upper bound", terms={"x": x})

def constants(*, x):
    return {"x": x / 0}

register(theorem_check(BOUND, lambda *, x: x, name="exit-raises", instances=[{"x": 1.0}],
                       constants=constants))
"""


def _internal_bug(*args, **kwargs):
    raise RuntimeError("a bug inside fedtheory")


def test_validate_module_status_3_only_when_the_users_code_raised(tmp_path, capsys, monkeypatch):
    path = tmp_path / "raises.py"
    path.write_text(_RAISES_IN_CONSTANTS)
    argv = ["validate", "--module", str(path), "--size", "tiny", "--out", str(tmp_path / "o")]
    assert main(argv) == ExitStatus.USER_FUNCTION_FAILED
    assert "raises.py:10 in constants: ZeroDivisionError" in capsys.readouterr().err
    healthy = tmp_path / "healthy.py"  # the same file without the user's bug
    healthy.write_text(_RAISES_IN_CONSTANTS.replace("x / 0", "x").replace("exit-raises", "ok"))
    monkeypatch.setattr("fedtheory.validation.machinery.runner.run", _internal_bug)
    argv = ["validate", "--module", str(healthy), "--size", "tiny", "--out", str(tmp_path / "p")]
    assert main(argv) == ExitStatus.INTERNAL_ERROR
    assert "internal error: RuntimeError: a bug inside fedtheory" in capsys.readouterr().err


def test_tightness_module_status_3_only_when_the_users_code_raised(tmp_path, capsys, monkeypatch):
    body = "return (1 - h) ** (2 * T) * D0"
    path = tmp_path / "reals.py"  # the user's own family, whose reals(...) raise
    path.write_text(_FILE.format(body=body).replace("register(", "FAMILY = (") + (
        "from dataclasses import replace\n"
        "def reals(ints):\n"
        "    raise ValueError('my reals')\n"
        "register(replace(FAMILY, reals=reals))\n"
    ))  # fmt: skip
    argv = ["tightness", "user.gd_file", "--module", str(path), "--budget", "20",
            "--out", str(tmp_path / "r.json")]  # fmt: skip
    assert main(argv) == ExitStatus.USER_FUNCTION_FAILED
    assert "in reals: ValueError: my reals" in capsys.readouterr().err
    typo = tmp_path / "typo.py"
    typo.write_text("def measure(:\n")
    argv[3] = str(typo)  # a file that does not compile: bad input, named, before it runs
    assert main(argv) == ExitStatus.BAD_INPUT
    assert "typo.py' (SyntaxError line 1" in capsys.readouterr().err
    good = tmp_path / "good.py"
    good.write_text(_FILE.format(body=body))
    monkeypatch.setattr("fedtheory.tightness.engine.search", _internal_bug)
    argv[3] = str(good)
    assert main(argv) == ExitStatus.INTERNAL_ERROR
    assert "internal error: RuntimeError: a bug inside fedtheory" in capsys.readouterr().err


def test_exit_status_of_the_property_check_helpers():
    def run(measure, **kw):
        return exit_status(partial(check_theorem, GD, measure, ranges={"T": (1, 10)},
                                   settings=FEW, search_budget=20, **kw))  # fmt: skip

    def true(*, h, T, D0):
        return (1 - h) ** (2 * T) * D0

    def false(*, h, T, D0):
        return 2 * (1 - h) ** (2 * T) * D0 + 0.1

    def text(*, h, T, D0):
        return "0.5"

    assert run(true)[0] == ExitStatus.HOLDS
    assert run(false)[0] == ExitStatus.VIOLATED
    assert run(text)[0] == ExitStatus.USER_FUNCTION_FAILED
    assert run(true, rtol=-1.0)[0] == ExitStatus.BAD_INPUT


# --- 6. the generic figure of a user's check -------------------------------------------------
def test_the_generic_figure_has_one_series_per_other_parameter_and_passes_the_lint(tmp_path):
    from matplotlib.figure import Figure

    from fedtheory.validation import theorem_check
    from fedtheory.validation.machinery import figure_lint, plots
    from fedtheory.validation.machinery.runner import run

    def distance(*, h, T, D0):
        return (1 - h) ** (2 * T) * D0 / (1 + h * T)

    instances = [{"T": t, "h": hv, "D0": 2.0} for hv in (0.1, 0.3) for t in (1, 4, 2, 8)]
    check = theorem_check(GD, distance, name="gd-figure", instances=instances,
                          measured="||x_T - x*||^2")  # fmt: skip
    (outcome,) = run([check], tmp_path, size="tiny", progress=lambda m: None)
    with plots.style():
        fig = Figure(figsize=(12, 5), layout="constrained")
        caption = check.plot(outcome.data, check.settings("tiny"), fig)
        assert figure_lint.lint(fig) == []
    left, right = fig.axes
    assert left.get_xlabel() == "T" and left.get_ylabel() == "||x_T - x*||^2"
    labels = left.get_legend_handles_labels()[1]
    assert labels == ["||x_T - x*||^2 (h=0.1)", "bound (h=0.1)", "||x_T - x*||^2 (h=0.3)",
                      "bound (h=0.3)"]  # fmt: skip
    xs = left.lines[0].get_xdata()
    assert list(xs) == sorted(xs)  # joined in order of T, never zig-zag
    assert "one series per h" in caption
    report = (tmp_path / "report.md").read_text()  # the user's own report: no papers' text
    assert "Statements: 8 holds" in report
    assert "Empirical findings" not in report and "errata" not in report
    assert "not reproduced at this scale" not in report


def test_series_with_the_same_bound_share_one_bound_line_named_in_legend_and_caption(tmp_path):
    from matplotlib.figure import Figure

    from fedtheory.validation import theorem_check
    from fedtheory.validation.machinery import figure_lint, plots
    from fedtheory.validation.machinery.runner import run

    def shrunk(*, h, T, D0, c):  # the bound does not depend on c: one bound curve per c
        return c * (1 - h) ** (2 * T) * D0

    instances = [{"T": t, "h": 0.1, "D0": 2.0, "c": c} for c in (0.5, 0.25) for t in (1, 2, 4)]
    check = theorem_check(GD, shrunk, name="gd-shared", instances=instances, x="T")
    (outcome,) = run([check], tmp_path, size="tiny", progress=lambda m: None)
    with plots.style():
        fig = Figure(figsize=(12, 5), layout="constrained")
        caption = check.plot(outcome.data, check.settings("tiny"), fig)
        assert figure_lint.lint(fig) == []
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["measured (c=0.5)", "bound (c=0.5 and c=0.25)", "measured (c=0.25)"]
    assert "share one bound line" in caption


_MC_FILE = """
import numpy as np
import sympy as sp
from fedtheory.bounds import Condition, Theorem
from fedtheory.tightness import register, theorem_family

q = sp.Symbol("q", positive=True)
MEAN = Theorem("user.mc_file", title="Bernoulli mean", reference="r", kind="upper bound",
               terms={"q": q}, conditions=[Condition("q <= 1", q, "<=", sp.Integer(1))])

def measure(*, q, replicates, seed):
    return (np.random.default_rng(seed).random(replicates) < q).astype(float)

register(theorem_family(MEAN, measure, replicates=2000, ranges={"q": (0.1, 0.9)},
                        supremum=1.0))
"""


def test_a_monte_carlo_family_prints_one_worst_ratio_line_and_its_proved_supremum(tmp_path, capsys):
    path = tmp_path / "mc.py"
    path.write_text(_MC_FILE)
    argv = ["tightness", "user.mc_file", "--module", str(path), "--budget", "30",
            "--out", str(tmp_path / "mc.json")]  # fmt: skip
    assert main(argv) == ExitStatus.HOLDS
    out = capsys.readouterr().out
    assert sum(line.startswith("worst ratio") for line in out.splitlines()) == 1
    assert "known: proved supremum of measured / bound: 1" in out
    assert "no closed form" not in out
