"""The tightness search: the closed forms where a bound is attained or approached, the
measured sides against independent computations, and the search itself (it breaks a bound
divided by 10 within its default budget, approaches 1 on a tight statement, reproduces,
shrinks a counterexample). A paper's families are reached in tests marked paper(name), its
modules imported inside the tests that use them, so that the file runs in a copy without it."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import sympy as sp

from fedtheory.availability import AlternatingBlocks
from fedtheory.bounds import Condition, Theorem, divergences
from fedtheory.cli import main
from fedtheory.cli import tightness as cli_tightness
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import simulate
from fedtheory.tightness import (
    DEFAULT_BUDGET,
    FAMILIES,
    Evaluation,
    Family,
    Integer,
    Measurement,
    Real,
    engine,
    register,
    reproduce,
    scaled,
    search,
    theorem_family,
)
from fedtheory.tightness.families import CATALOGUE_KEYS
from tests.conftest import assert_tight, assert_upper_bound

EXACT = [key for key, family in FAMILIES.items() if not family.monte_carlo]


# --- where a bound is attained or approached (closed forms) -----------------------------------
@pytest.mark.parametrize("delta", [0.01, 0.1, 0.3])
def test_cafed_theorem3_is_attained_exactly(delta):
    from fedtheory.tightness.cafed import theorem3_attaining_point

    ev = FAMILIES["cafed.theorem3"].measure(*theorem3_attaining_point(delta))
    assert_tight(ev.measured, 2 * delta**2)
    assert_tight(ev.ratio, 1.0)
    assert ev.constants["kappa"] == 1.0 and not ev.violated and ev.attained


@pytest.mark.parametrize("delta", [0.01, 0.1, 0.3])
def test_cafed_theorem1_approaches_one_by_its_closed_form(delta):
    from fedtheory.tightness.cafed import theorem1_near_tight_point

    ev = FAMILIES["cafed.theorem1"].measure(*theorem1_near_tight_point(delta))
    assert_tight(ev.measured, 2 * delta**2)
    assert_tight(ev.constants["chi2"], 4 * delta**2 / (1 - 4 * delta**2))
    assert_tight(ev.ratio, (1 - 4 * delta**2) / (1 - 2 * delta**2))


def test_tv_chi_square_is_attained_when_the_likelihood_ratio_is_constant():
    family = FAMILIES["divergences.tv_chi_square"]
    for alpha in ([0.6, 0.4], [0.9, 0.1]):
        ev = family.measure({"N": 2}, [*alpha, 0.5, 0.5])
        assert_tight(ev.ratio, 1.0)
    three = family.measure({"N": 3}, [0.2, 0.3, 0.5, 1.0, 1.0, 1.0])  # |a - p|/p not constant
    assert three.ratio < 1 - 1e-3


@pytest.mark.paper("fedau")
@pytest.mark.parametrize("t", [1, 7, 40])
@pytest.mark.parametrize("p", [1e-4, 0.3, 0.9])
def test_fedau_per_round_with_cutoff_one_by_its_closed_form(p, t):
    ev = FAMILIES["fedau.theorem3.per_round"].measure({"K_cut": 1, "t": t}, [p])
    assert_tight(ev.measured, (1 - p) ** 2)  # K = 1: every interval is 1, omega_t = 1
    assert_tight(ev.ratio, t * (1 - p) / (t * (1 - p) + 2))


@pytest.mark.paper("fedlaavg")
def test_fedlaavg_example1_at_one_round_is_loose_by_exactly_two():
    family = FAMILIES["fedlaavg.example1.fedlaavg_bound"]
    assert_tight(family.measure({"t1": 1, "t2": 1, "T": 1}, [0.0]).ratio, 0.5)  # x0 = e1
    ratios = [
        family.measure({"t1": 3, "t2": 1, "T": 1}, [x]).ratio for x in np.linspace(-5, 5, 101)
    ]
    assert_upper_bound(max(ratios), 0.5)


# --- measured sides against independent computations ----------------------------------------
@pytest.mark.parametrize("x0, t1, t2, T", [(5.0, 9, 1, 60), (-2.0, 2, 3, 17), (0.5, 1, 1, 1)])
def test_fedlaavg_example1_error_equals_the_simulator(x0, t1, t2, T):
    from fedtheory.sim import FedLaAvg
    from fedtheory.tightness.fedlaavg import fedlaavg_example1_error

    alg = FedLaAvg(clients_per_round=1, local_steps=1, lr=1 / (2 * np.sqrt(T)))
    run = simulate(
        QuadraticProblem.example1(0.0, 1.0), AlternatingBlocks(t1, t2), alg, rounds=T, w0=[x0]
    )
    want = np.min((run.iterates[0, :, 0] - 0.5) ** 2)
    assert_tight(fedlaavg_example1_error(x0, t1, t2, T), want)


@pytest.mark.paper("cafed")
def test_cafed_family_bounds_equal_the_formulas_by_hand():
    rng = np.random.default_rng(0)
    for key in ("theorem1", "theorem3"):
        family = FAMILIES[f"cafed.{key}"]
        ints = {"N": 3, "d": 2}
        boxes = np.array([(r.low, r.high) for r in family.reals(ints)])
        ev = family.measure(ints, rng.uniform(boxes[:, 0], boxes[:, 1]))
        c = ev.constants
        k2 = c["kappa"] ** 2
        if key == "theorem1":
            want = 2 * k2 * c["gap_B"] + 2 * k2**2 * c["chi2"] * c["Gamma"]
        else:
            want = 2 * k2 * c["gap_B"] + 8 * k2**2 * c["d_tv"] ** 2 * c["Gamma_prime"]
        assert_tight(ev.bound, want)
        assert_upper_bound(ev.measured, ev.bound)


@pytest.mark.paper("e3cs")
def test_e3cs_family_compares_the_upper_confidence_limit():
    family = FAMILIES["e3cs.regret"]
    ints = {"K": 4, "k": 2, "T": 10}
    ev = family.measure(ints, [0.5, 0.0, 0.1, 0.3, 0.6, 0.9], seed=3)
    low, high = ev.interval
    assert low <= ev.measured <= high
    assert_tight(ev.ratio, high / ev.bound)
    eta, S = 0.5, 10 * 2  # sigma = 0: sum_t (k - K sigma) = T k
    assert_tight(ev.bound, eta * S + 4 * np.log(4) / eta)
    same = family.measure(ints, [0.5, 0.0, 0.1, 0.3, 0.6, 0.9], seed=3)
    assert same == ev  # common random numbers: the objective is deterministic
    shown = family.describe(ints, [0.5, 0.5, 0.1, 0.3, 0.6, 0.9])  # the paper's symbols
    assert shown == {**ints, "sigma": 0.25, "eta": 0.5, "rho": [0.1, 0.3, 0.6, 0.9]}


def test_monte_carlo_violation_needs_the_lower_limit_above_the_bound():
    assert Evaluation(1.0, 0.9, interval=(0.8, 1.2)).ratio > 1
    assert Evaluation(1.0, 0.9, interval=(0.8, 1.2)).outcome == "inconclusive"
    assert Evaluation(1.0, 0.7, interval=(0.8, 1.2)).violated
    assert Evaluation(0.0, 0.0).ratio == 0.0 and Evaluation(1e-3, 0.0).violated


def test_a_rounding_level_excess_is_never_a_counterexample():
    tiny = Evaluation(1e-46, 1e-80, magnitude=1.0)  # both zero in exact arithmetic
    assert tiny.outcome == "holds" and not tiny.violated and not tiny.attained
    assert tiny.score < -30  # and it is no worst case either
    assert Evaluation(5e-324, 0.0).outcome == "holds"  # underflow
    assert Evaluation(1.0 + 1e-15, 1.0).outcome == "holds"
    assert Evaluation(1.0 + 1e-8, 1.0).violated
    assert not Evaluation(2.0, 1.0, valid=False).violated  # outside the hypotheses


def test_ratios_near_one_print_with_their_excess_and_the_excess_is_relative():
    assert Evaluation(1 + 2.1e-9, 1.0).ratio_text() == "1 + 2.1e-09"
    assert Evaluation(1 - 3e-12, 1.0).ratio_text() == "1 - 3e-12"
    assert Evaluation(0.80476, 1.0).ratio_text() == "0.805"
    assert Evaluation(1.031, 1.0).excess() == "measured exceeds the bound by 3.1%"
    low = Evaluation(1.5, 1.0, interval=(1.2, 1.8)).excess()
    assert low == "the lower 95% confidence limit exceeds the bound by 20%"


# --- the search --------------------------------------------------------------------------------
@pytest.mark.parametrize("key", EXACT)
def test_search_breaks_the_bound_divided_by_ten_within_the_default_budget(key):
    result = search(scaled(FAMILIES[key], 0.1), seed=0)
    cex = result.counterexample
    assert cex is not None and cex.evaluation.violated and cex.ratio > 1
    assert result.evaluations <= 2 * DEFAULT_BUDGET
    ev = FAMILIES[key].measure(cex.integers, cex.vector())  # the catalogue bound holds there
    assert_upper_bound(ev.measured, ev.bound)
    assert_tight(cex.evaluation.bound, 0.1 * ev.bound)
    if key.startswith("cafed"):  # shrunk to the fewest clients and the lowest dimension
        assert cex.integers == {"N": 2, "d": 1}


@pytest.mark.paper("e3cs")
@pytest.mark.slow
def test_search_breaks_the_e3cs_bound_divided_by_ten_with_confidence():
    result = search(scaled(FAMILIES["e3cs.regret"], 0.1), budget=30, seed=0)
    cex = result.counterexample
    assert cex is not None and cex.evaluation.interval[0] > cex.evaluation.bound
    again = scaled(FAMILIES["e3cs.regret"], 0.1).measure(
        cex.integers, cex.vector(), seed=0 + engine.CONFIRMATION_OFFSET
    )
    assert again.violated  # confirmed with independent replicates


@pytest.mark.paper("fedau")
def test_search_approaches_one_on_tight_statements():
    tv = search(FAMILIES["divergences.tv_chi_square"], seed=0)
    assert 0.99 < tv.ratio <= 1 + 1e-9 and tv.counterexample is None
    fedau = search(FAMILIES["fedau.theorem3.per_round"], seed=0)
    assert fedau.ratio > 0.95 and fedau.counterexample is None  # sup at t <= 40: >= 40/42


@pytest.mark.parametrize("key", EXACT)
def test_catalogue_bounds_hold_at_every_instance_searched(key):
    result = search(FAMILIES[key], budget=30, seed=1)
    assert result.counterexample is None and result.worst.ratio <= 1 + 1e-9


@pytest.mark.paper("cafed")
def test_same_seed_same_result_and_the_json_reproduces(tmp_path):
    family = FAMILIES["cafed.theorem3"]
    first = search(family, budget=30, seed=5)
    assert search(family, budget=30, seed=5).worst == first.worst
    path = first.save(tmp_path / "worst.json")
    saved = json.loads(path.read_text())
    assert saved["seed"] == 5 and saved["budget"] == 30 and saved["versions"]["fedtheory"]
    assert saved["code"] == engine.source_digest() and len(saved["code"]) == 64
    assert reproduce(path) == first.worst.evaluation
    assert reproduce(saved).ratio == first.ratio


def test_size_minimisation_lowers_each_size_integer_to_the_smallest_violating_value():
    """A synthetic statement 'N x <= 1' on x in [0, 1]: violated iff N x > 1, so the smallest
    violating instance has N = 2 (N = 1 never violates)."""
    theorem = divergences.tv_chi_square
    family = Family(
        theorem,
        "synthetic",
        (Integer("N", 1, 8, "copies"),),
        lambda ints: (Real("x", 0.0, 1.0),),
        lambda ints, x, seed: Measurement(ints["N"] * float(x[0]), {"chi2": 4.0}),
    )
    record = engine._Recorder(family, 0)
    start = record({"N": 8}, np.array([0.9]))
    shrunk = engine._minimise_size(family, record, start, 200, 0, 2)
    assert shrunk.integers == {"N": 2} and shrunk.evaluation.violated
    assert engine._smaller(1, 8) == [1, 2, 3, 5, 7]  # lowest values, then halving 8 - 1


def test_bad_input_raises_parameter_error():
    from fedtheory.tightness.cafed import theorem3_attaining_point

    family = FAMILIES["divergences.tv_chi_square"]
    with pytest.raises(ParameterError, match=r"'budget' parameter of search must be an integer"
                       r" in \[3, 100000\]"):  # fmt: skip
        search(family, budget=2)
    with pytest.raises(ParameterError, match="'family' parameter of search"):
        search("cafed.theorem1")
    with pytest.raises(ParameterError, match="'factor' parameter of scaled"):
        scaled(family, 0.0)
    with pytest.raises(ParameterError, match="'saved' parameter of reproduce"):
        reproduce({"key": "nope"})
    with pytest.raises(ParameterError, match="'delta' parameter of theorem3_attaining_point"):
        theorem3_attaining_point(0.5)


def test_every_family_is_an_upper_bound_of_the_catalogue():
    for key, family in FAMILIES.items():
        assert family.theorem.kind == "upper bound" and family.key == key
        assert sp.Add(*family.theorem.terms.values()) == family.theorem.expression


# --- command line ------------------------------------------------------------------------------
@pytest.mark.paper("cafed")
def test_cli_prints_the_worst_ratio_and_saves_the_json(capsys, tmp_path):
    out = tmp_path / "t1.json"
    assert main(["tightness", "cafed.theorem1", "--budget", "30", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "worst ratio (measured / bound)" in text and "no counterexample" in text
    saved = json.loads(out.read_text())
    assert saved["worst"]["ratio"] <= 1 and f"{saved['worst']['ratio']:.3g}" in text


@pytest.mark.paper("cafed")
def test_cli_reports_a_counterexample_to_a_deliberately_false_bound(capsys, tmp_path):
    out = tmp_path / "weak.json"
    args = ["tightness", "cafed.theorem1", "--scale", "0.1", "--out", str(out)]
    assert main(args) == 1
    assert "COUNTEREXAMPLE (shrunk)" in capsys.readouterr().out
    assert json.loads(out.read_text())["counterexample"]["violated"] is True


@pytest.mark.paper("cafed")
def test_cli_unknown_key_and_default_budget(capsys):
    assert main(["tightness", "fedau.theorem2"]) == 2
    assert "no tightness family" in capsys.readouterr().err
    assert cli_tightness.DEFAULT_BUDGET == DEFAULT_BUDGET
    assert main(["tightness", "cafed.theorem1", "--budget", "2"]) == 2
    assert "'budget' parameter of search must be an integer in [3, 100000]" in (
        capsys.readouterr().err
    )
    assert main(["tightness", "cafed.theorem1", "--scale", "0"]) == 2
    assert "'factor' parameter of scaled" in capsys.readouterr().err


# --- families of any theorem -------------------------------------------------------------------
def _halved(theorem, key):
    """``theorem`` with every term divided by 2: a false statement wherever the worst ratio
    of the original exceeds 1/2."""
    return Theorem(
        key,
        title=f"{theorem.title} / 2",
        reference=theorem.reference + ", halved",
        kind="upper bound",
        terms={k: e / 2 for k, e in theorem.terms.items()},
        conditions=theorem.conditions,
    )


@pytest.mark.paper("cafed")
def test_a_family_carrying_a_halved_theorem_judges_it_and_finds_its_counterexample():
    catalogue = FAMILIES["cafed.theorem1"]
    mine = replace(catalogue, theorem=_halved(catalogue.theorem, "mine.cafed_half"))
    result = search(mine, seed=0)
    cex = result.counterexample
    assert cex is not None and cex.evaluation.violated and result.key == "mine.cafed_half"
    assert_tight(cex.evaluation.bound, catalogue.measure(cex.integers, cex.vector()).bound / 2)
    assert mine.proved_supremum is None and catalogue.proved_supremum == 1.0  # proved for Thm 1
    assert scaled(catalogue, 0.5).proved_supremum == 2.0


def _weight_error(p, K_cut, t):
    from fedtheory.bounds import fedau

    return fedau.weight_error_exact(p, K_cut, t + 1)[t]


def test_theorem_family_searches_a_users_theorem_over_its_own_parameters():
    from fedtheory.bounds import fedau

    ranges = {"t": (1, 20), "K_cut": (1, 4)}
    half = theorem_family(_halved(fedau.theorem3_per_round, "mine.fedau_half"), _weight_error,
                          ranges=ranges)  # fmt: skip
    assert [i.name for i in half.integers] == ["K_cut", "t"]
    result = search(half, seed=0)
    assert result.counterexample is not None and result.counterexample.evaluation.violated
    true = search(theorem_family(fedau.theorem3_per_round, _weight_error, ranges=ranges), seed=0)
    assert true.counterexample is None and true.ratio <= 1
    seen = []  # a fixed key outside the theorem's parameters goes to the measurement only

    def labelled(p, K_cut, t, label):
        seen.append(label)
        return _weight_error(p, K_cut, t)

    fixed = theorem_family(fedau.theorem3_per_round, labelled, fixed={"K_cut": 2, "label": "x"})
    assert [i.name for i in fixed.integers] == ["t"] and "label = x" in fixed.description
    assert fixed.measure({"t": 3}, [0.5]).constants["K_cut"] == 2 and seen == ["x"]


def test_theorem_family_points_outside_the_hypotheses_are_never_counterexamples():
    x = sp.Symbol("x", positive=True)
    statement = Theorem(
        "mine.x_below_one",
        title="x <= 1 for x <= 1",
        reference="a test",
        kind="upper bound",
        terms={"one": sp.Integer(1) + 0 * x},
        conditions=[Condition("x <= 1", x, "<=", sp.Integer(1))],
    )
    family = theorem_family(statement, lambda x: x, ranges={"x": (0.5, 3.0)})
    assert not family.measure({}, [2.0]).valid and not family.measure({}, [2.0]).violated
    result = search(family, budget=40, seed=0)
    assert result.counterexample is None and result.attained and result.worst.reals["x"] == 1.0


@pytest.mark.paper("cafed")
def test_theorem_family_monte_carlo_and_bad_input():
    from fedtheory.bounds import fedau

    def noisy(p, K_cut, t, replicates, seed):
        rng = np.random.default_rng(seed)
        return _weight_error(p, K_cut, t) + 0.01 * rng.standard_normal(replicates)

    family = theorem_family(fedau.theorem3_per_round, noisy, ranges={"t": (1, 5),
                            "K_cut": (1, 2)}, replicates=50)  # fmt: skip
    ev = family.measure({"K_cut": 1, "t": 3}, [0.3], seed=1)
    assert family.monte_carlo and ev.interval[0] < ev.measured < ev.interval[1]
    with pytest.raises(ParameterError, match="'ranges' parameter of theorem_family"):
        theorem_family(fedau.theorem3_per_round, _weight_error, ranges={"nope": (1, 2)})
    with pytest.raises(ParameterError, match="'replicates' parameter of theorem_family"):
        theorem_family(fedau.theorem3_per_round, _weight_error, replicates=1)
    with pytest.raises(ParameterError, match="'family' parameter of register"):
        register(replace(FAMILIES["cafed.theorem3"], description="another"))


@pytest.mark.paper("cafed")
def test_a_counterexample_is_readable_in_the_papers_symbols_and_short_decimals():
    result = search(scaled(FAMILIES["cafed.theorem1"], 0.1), seed=0)
    instance = result.counterexample_instance
    assert {"A_k", "w_k^*", "alpha", "p", "w"} <= set(instance)  # client minimisers included
    assert all(v == round(v, 2) for v in result.counterexample.reals.values())
    assert "exceeds the bound by" in result.counterexample.evaluation.excess()


@pytest.mark.paper("fedlaavg")
def test_the_proved_supremum_and_attained_are_reported():
    tv = search(FAMILIES["divergences.tv_chi_square"], seed=0)
    assert tv.attained and tv.summary().startswith("proved supremum 1, reached 1")
    assert tv.summary().endswith("; attained") and tv.reached >= 0.99
    fedlaavg = search(FAMILIES["fedlaavg.example1.fedlaavg_bound"], budget=30, seed=0)
    assert fedlaavg.supremum is None and fedlaavg.summary().startswith("worst ratio")


def test_family_parameter_names_are_the_theorems():
    # the catalogue's families (a user's drawn family may add its own integers, e.g. a draw)
    for family in (FAMILIES[key] for key in CATALOGUE_KEYS):
        ints = {i.name: i.low for i in family.integers}
        names = {i.name for i in family.integers}
        constants = family.evaluate(ints, np.array([
            (r.low + r.high) / 2 for r in family.reals(ints)]), 0).constants  # fmt: skip
        assert names <= set(constants) and set(family.theorem.parameters) <= set(constants)


def test_importing_the_package_loads_neither_torch_nor_sympy():
    code = (
        "import sys, fedtheory.tightness as t\n"
        "assert 'torch' not in sys.modules and 'sympy' not in sys.modules\n"
        "t.FAMILIES\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- user files on the command line ------------------------------------------------------------
USER_FILE = """
from helper import weight_error  # a sibling file: the module's folder is on sys.path
from fedtheory.bounds import Theorem, fedau
from fedtheory.tightness import register, theorem_family

base = fedau.theorem3_per_round
half = Theorem("mine.fedau_half", title="FedAU Theorem 3 / 2", reference="halved",
               kind="upper bound", terms={k: e / 2 for k, e in base.terms.items()})
register(theorem_family(half, weight_error, ranges={"t": (1, 20), "K_cut": (1, 4)}))
"""


@pytest.mark.paper("fedau")
def test_cli_module_refutes_a_users_halved_theorem_and_the_json_replays(tmp_path, capsys):
    (tmp_path / "helper.py").write_text(
        "from fedtheory.bounds import fedau\n\n"
        "def weight_error(p, K_cut, t):\n"
        "    return fedau.weight_error_exact(p, K_cut, t + 1)[t]\n"
    )
    (tmp_path / "mine.py").write_text(USER_FILE)
    out = tmp_path / "half.json"
    args = ["tightness", "mine.fedau_half", "--module", str(tmp_path / "mine.py")]
    assert main([*args, "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "COUNTEREXAMPLE (shrunk)" in text and "exceeds the bound by" in text
    saved = json.loads(out.read_text())
    assert saved["module"] == str(tmp_path / "mine.py")
    del FAMILIES["mine.fedau_half"]  # a fresh session: reproduce loads the file again
    again = reproduce(out, which="counterexample")
    assert again.violated and again.measured == saved["counterexample"]["measured"]
    del FAMILIES["mine.fedau_half"]
    assert main(["tightness", "mine.nope", "--module", str(tmp_path / "mine.py")]) == 2
    assert "nor registered by" in capsys.readouterr().err
    del FAMILIES["mine.fedau_half"]


def test_format_values_gives_six_digits_to_a_scalar_array_too():
    """A measured constant held as a 0-d array is printed like a float (its last digits
    depend on the BLAS kernel)."""
    from fedtheory.tightness.engine import format_values

    shown = format_values({"gap_B": np.asarray(0.0008774947288210724), "k": 3, "v": [0.5]})
    assert shown == "gap_B=0.000877495, k=3, v=[0.5]"
