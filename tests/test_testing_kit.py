"""The property-testing kit ``fedtheory.testing``: values inside every catalogue theorem's
hypotheses, the assertions' messages, ``check_theorem`` on a true and a false statement, and
the instance strategies. A paper's statements are imported inside the tests (and helpers)
that use them, so that the file runs in a copy without that paper."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import find, given, settings
from hypothesis import strategies as st

from fedtheory.bounds import CATALOGUE, Condition, Theorem
from fedtheory.errors import ParameterError
from fedtheory.testing import (
    assert_equal,
    assert_near_zero,
    assert_upper_bound,
    check_theorem,
    strategies,
    theorem_values,
)
from fedtheory.verdict import Measured, rounding_floor


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_theorem_values_lie_inside_every_catalogue_theorems_hypotheses(key):
    theorem = CATALOGUE[key]

    @settings(max_examples=20)
    @given(theorem_values(theorem))
    def inside(values):
        assert set(values) == set(theorem.parameters)
        theorem.evaluate(**values)  # strict: raises HypothesisViolation / ParameterError
        for p, v in values.items():
            assert isinstance(v, int) == theorem.notation[p].integer

    inside()


def test_theorem_values_reach_the_boundary_of_an_inequality():
    """Bounds are often tight where a hypothesis is: gamma = 1/(4L) is drawn exactly."""
    from fedtheory.bounds import fedlaavg

    found = find(
        theorem_values(fedlaavg.round_bound),
        lambda v: v["gamma"] == 1.0 / (4.0 * v["L"]),
        settings=settings(max_examples=500, database=None),
    )
    fedlaavg.round_bound.evaluate(**found)


def test_theorem_values_use_the_assumptions_of_a_users_own_symbols():
    x = sp.Symbol("x", positive=True)
    y = sp.Symbol("y", nonpositive=True)
    n = sp.Symbol("n", positive=True, integer=True)
    thm = Theorem(
        "user.t",
        title="user statement",
        reference="none",
        kind="upper bound",
        terms={"a": x * n - y},
        conditions=[Condition("x <= n", x, "<=", n)],
    )

    @given(theorem_values(thm, ranges={"n": (1, 5)}))
    def inside(values):
        assert values["x"] > 0 and values["y"] <= 0 and 1 <= values["n"] <= 5
        assert values["x"] <= values["n"]

    inside()


def test_theorem_values_respect_ranges_and_fixed_values():
    from fedtheory.bounds import cafed

    @given(theorem_values(cafed.theorem1, ranges={"kappa": (2.0, 3.0)}, fixed={"Gamma": 0.5}))
    def inside(values):
        assert 2.0 <= values["kappa"] <= 3.0 and values["Gamma"] == 0.5

    inside()


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"ranges": {"kappa": (-1.0, 2.0)}}, "ranges[kappa]"),
        ({"ranges": {"nope": (0.0, 1.0)}}, "ranges/fixed"),
        ({"fixed": {"kappa": 0.5}}, "fixed"),  # breaks kappa >= 1
        ({"fixed": {"kappa": -1.0}}, "kappa"),  # outside the domain
    ],
)
def test_theorem_values_refuse_ranges_and_fixed_values_outside(kwargs, name):
    from fedtheory.bounds import cafed

    with pytest.raises(ParameterError, match=re.escape(f"'{name}' parameter of")):
        theorem_values(cafed.theorem1, **kwargs)


def test_assertions_pass_within_their_named_tolerances():
    assert_upper_bound([1.0, 2.0], [1.0, 2.0 * (1 + 1e-12)])
    assert_equal(np.array([0.1 + 0.2, 0.0]), np.array([0.3, 1e-13]))
    assert_near_zero([1e-13, -1e-13])


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda: assert_upper_bound([1.0, 2.2, 0.5], 2.0),
            ["upper bound violated at 1 of 3", "measured 2.2", "bound 2", "ratio 1.1"],
        ),
        (
            lambda: assert_equal(1.0, 1.5, rtol=0.1),
            ["equality fails", "expected 1.5", "ratio 0.666667", "TIGHT_RTOL = 0.1 (custom)"],
        ),
        (lambda: assert_near_zero([0.0, 1e-6]), ["not near zero at 1 of 2", "ZERO_ATOL"]),
    ],
)
def test_assertions_print_measured_bound_and_ratio_on_failure(call, words):
    with pytest.raises(AssertionError) as err:
        call()
    for word in words:
        assert word in str(err.value)


def _weight_error(p, K_cut, t):
    """Exact E[(p w_t - 1)^2] of FedAU's Algorithm 2 (independent of the bound)."""
    from fedtheory.bounds import fedau

    return fedau.weight_error_exact(p, K_cut, t + 1)[t]


def test_check_theorem_holds_on_a_true_statement():
    from fedtheory.bounds import fedau

    result = check_theorem(
        fedau.theorem3_per_round,
        _weight_error,
        ranges={"t": (1, 40), "K_cut": (1, 20)},
        settings=settings(max_examples=30),
    )
    assert result.examples >= 30 and 0.0 < result.worst_ratio <= 1.0


def test_check_theorem_reports_a_false_statement_with_its_values():
    """The same statement with its bound divided by 10 is false; the check says where."""
    from fedtheory.bounds import fedau

    third = Theorem(
        "user.fedau.theorem3_over_10",
        title="FedAU Theorem 3 / 10",
        reference="deliberately false",
        kind="upper bound",
        terms={k: e / 10 for k, e in fedau.theorem3_per_round.terms.items()},
    )
    with pytest.raises(AssertionError, match=r"FedAU Theorem 3 / 10 at \{.*ratio"):
        check_theorem(third, _weight_error, ranges={"t": (1, 40), "K_cut": (1, 20)})


def test_check_theorem_refuses_an_order_statement_and_a_non_callable():
    from fedtheory.bounds import fedau

    with pytest.raises(ParameterError, match="'theorem' parameter of check_theorem"):
        check_theorem(fedau.theorem3_order, lambda **v: 0.0)
    with pytest.raises(ParameterError, match="'measure' parameter of check_theorem"):
        check_theorem(fedau.theorem3_per_round, 3.0)


@given(strategies.quadratic_problems(kappa=(5.0, 6.0)))
def test_quadratic_problems_have_kappa_in_the_range(problem):
    assert 5.0 - 1e-9 <= problem.kappa <= 6.0 + 1e-9


@settings(max_examples=10)
@given(st.one_of(strategies.least_squares_problems(), strategies.logistic_problems()))
def test_data_problems_have_exact_positive_constants(problem):
    assert 0.0 < problem.mu <= problem.L
    w, _ = problem.optimum()
    assert_near_zero(np.linalg.norm(problem.full_grad(w)), atol=1e-8)


@given(strategies.simplex(5, near_degenerate=True))
def test_near_degenerate_simplex_weights_are_positive_and_sum_to_one(w):
    assert np.all(w > 0)
    assert_equal(w.sum(), 1.0)


def test_near_degenerate_simplex_reaches_tiny_weights():
    w = find(strategies.simplex(4, near_degenerate=True), lambda w: w.min() < 1e-8)
    assert w.min() > 0


@given(strategies.cyclic_patterns(), strategies.block_patterns(max_clients=4))
def test_cyclic_and_block_patterns_are_valid_processes(cyclic, blocks):
    assert np.all((cyclic.marginals > 0) & (cyclic.marginals < 1))
    mask = blocks.sample(2 * (blocks.t1 + blocks.t2)).numpy()[0]  # [T, N]
    assert mask.any(axis=0).all() and (mask.sum(axis=1) > 0).all()


@given(strategies.participation_probabilities(4, low=0.1, high=0.5))
def test_participation_probabilities_lie_in_their_range(p):
    assert 1 <= p.size <= 4 and np.all((p >= 0.1) & (p <= 0.5))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: strategies.simplex(0), "n"),
        (lambda: strategies.quadratic_problems(kappa=(0.5, 2.0)), "kappa"),  # entries >= 1
        (lambda: strategies.quadratic_problems(kappa=(3.0, 2.0)), "kappa"),  # low > high
        (lambda: strategies.participation_probabilities(low=0.5, high=0.2), "high"),
        (lambda: strategies.quadratic_problems(kappa=3.0), "kappa"),
        (lambda: strategies.quota_schedules(k=5, K=4), "k"),
        (lambda: strategies.weight_instances(bias="kl"), "bias"),
    ],
)
def test_strategies_check_their_arguments(call, name):
    with pytest.raises(ParameterError, match=re.escape(f"'{name}' parameter of")):
        call()


@st.composite
def _cafed_instances(draw):
    """A quadratic problem (kappa = 1), effective weights p and the point w = 2 w_B^* - w^*
    (where CA-Fed Theorem 1 is nearly tight)."""
    problem = draw(strategies.quadratic_problems(max_clients=3, max_dim=2, kappa=(1.0, 1.0)))
    p = draw(strategies.simplex(problem.num_clients))
    w = 2 * problem.optimum(p)[0] - problem.optimum()[0]
    return {"problem": problem, "w": w, "p": p}


def _cafed_error(problem, w, p):
    return problem.loss(w) - problem.optimum()[1]


def _cafed_constants(problem, w, p):
    from fedtheory.bounds import cafed

    return cafed.decomposition_constants(problem, w, p).as_kwargs()


def test_check_theorem_with_constants_derived_from_each_instance():
    """CA-Fed Theorem 1 holds with its constants computed from drawn problems; the same
    statement halved is refuted, and the message names the derived constants."""
    from fedtheory.bounds import cafed

    result = check_theorem(
        cafed.theorem1,
        _cafed_error,
        instances=_cafed_instances(),
        constants=_cafed_constants,
        settings=settings(max_examples=30),
    )
    assert result.examples >= 30 and 0.0 < result.worst_ratio <= 1.0
    halved = Theorem(
        "user.cafed.theorem1_half",
        title="CA-Fed Theorem 1 / 2",
        reference="deliberately false",
        kind="upper bound",
        terms={k: e / 2 for k, e in cafed.theorem1.terms.items()},
    )
    message = r"CA-Fed Theorem 1 / 2 at .*QuadraticProblem\(A=.*, c=.*\(constants kappa="
    with pytest.raises(AssertionError, match=message):
        check_theorem(halved, _cafed_error, instances=_cafed_instances(),
                      constants=_cafed_constants)  # fmt: skip
    with pytest.raises(ParameterError, match="'constants' parameter of check_theorem"):
        check_theorem(cafed.theorem1, _cafed_error, constants=_cafed_constants)
    with pytest.raises(ParameterError, match="'ranges' parameter of check_theorem"):
        check_theorem(cafed.theorem1, _cafed_error, instances=_cafed_instances(),
                      constants=_cafed_constants, ranges={"kappa": (1, 2)})  # fmt: skip


# --- rounding floors: a true bound that can be 0 --------------------------------------------
_h = sp.Symbol("h", positive=True)  # eta * mu
_T = sp.Symbol("T", positive=True, integer=True)
_D0 = sp.Symbol("D0", nonnegative=True)  # ||x_0 - x*||^2
_B = np.array([1.0, -2.0, 0.7])  # f(x) = mu/2 ||x||^2 - b.x: x* = b/mu != 0


def _gd_theorem(rate, key):
    return Theorem(
        key,
        title=f"GD on a mu-strongly convex quadratic, rate {rate}",
        reference="textbook: ||x_T - x*||^2 <= (1 - eta mu)^{2T} ||x_0 - x*||^2, eta mu <= 1",
        kind="upper bound",
        terms={"contraction": rate**_T * _D0},
        conditions=[Condition("eta mu <= 1", _h, "<=", 1)],
    )


def _gd_distance(h, T, D0, mu=0.3):
    """||x_T - x*||^2 of gradient descent (gradient mu x - b, step eta = h/mu) on
    f(x) = mu/2 ||x||^2 - b.x, from x_0 = x* + sqrt(D0) u; the magnitude of the
    computation is the largest ||x_t||^2 (x* among them)."""
    eta, x_star = h / mu, _B / mu
    x = x_star + np.sqrt(D0) * np.array([0.6, 0.0, 0.8])
    scale = float(x_star @ x_star)
    for _ in range(T):
        x = x - eta * (mu * x - _B)
        scale = max(scale, float(x @ x))
    return Measured(float((x - x_star) @ (x - x_star)), scale)


TRUE_GD = _gd_theorem((1 - _h) ** 2, "user.gd")
FALSE_GD = _gd_theorem((1 - 2 * _h) ** 2, "user.gd_false")


@pytest.mark.parametrize(
    "fixed", [{"D0": 0.0}, {"h": 1.0}, {}], ids=["x0=x*", "eta_mu=1", "inside"]
)
def test_check_theorem_accepts_a_zero_bound_met_within_rounding(fixed):
    # rounding: x_0 = x* and eta mu = 1 do not stay on / land on x* exactly
    assert _gd_distance(0.7, 5, 0.0).value > 0 and _gd_distance(1.0, 5, 2.0).value > 0
    result = check_theorem(TRUE_GD, _gd_distance, fixed=fixed, ranges={"T": (1, 60)})
    # the bound is attained (ratio 1 up to rounding), never a ratio made of rounding (the
    # 7.7e-34 over a bound of 1e-80 that reads 1e46)
    assert result.examples > 0 and result.worst_ratio < 1.01

    def bare(**values):  # the same measurement as a plain float: its floor comes from the
        return _gd_distance(**values).value  # parameters and the bound's terms

    assert check_theorem(TRUE_GD, bare, fixed=fixed, ranges={"T": (1, 60)}).examples > 0


def test_check_theorem_finds_the_rate_one_minus_two_eta_mu_false():
    with pytest.raises(AssertionError, match="upper bound violated"):
        check_theorem(FALSE_GD, _gd_distance, ranges={"T": (1, 60)})


def test_upper_bound_assertion_takes_the_rounding_floor_as_atol():
    floor = rounding_floor(_gd_distance(1.0, 5, 2.0).scale)
    assert_upper_bound(_gd_distance(1.0, 5, 2.0).value, 0.0, atol=floor)
    with pytest.raises(AssertionError, match="rounding floor up to"):
        assert_upper_bound(2 * floor, 0.0, atol=floor)


@pytest.mark.parametrize(
    "fixed", [{"D0": 0.0}, {"h": 1.0}, {}], ids=["x0=x*", "eta_mu=1", "inside"]
)
def test_tightness_search_finds_no_counterexample_to_the_true_gd_rate(fixed):
    # the same rounding that check_theorem accepts within its floor is no counterexample to
    # the search either (it maximises measured / (bound + floor))
    from fedtheory.tightness import search, theorem_family

    family = theorem_family(TRUE_GD, _gd_distance, fixed=fixed, ranges={"T": (1, 60)})
    result = search(family, budget=60, seed=0)
    assert result.counterexample is None and result.ratio <= 1.0 + 1e-9


def test_tightness_search_finds_the_rate_one_minus_two_eta_mu_false():
    from fedtheory.tightness import search, theorem_family

    family = theorem_family(FALSE_GD, _gd_distance, ranges={"T": (1, 60)})
    result = search(family, budget=60, seed=0)
    assert result.counterexample is not None and result.ratio > 1.0
