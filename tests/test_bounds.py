"""Theorem objects: closed forms vs direct iteration, bounds on random instances,
totals equal to the declared combination, sympy against hand transcriptions. A paper's
statements are imported inside its tests, so that the file runs in a copy without it."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, target
from hypothesis import strategies as st

from fedtheory.bounds import CATALOGUE
from fedtheory.bounds.divergences import chi_square, total_variation
from fedtheory.bounds.symbols import NOTATION, symbol
from fedtheory.errors import HypothesisViolation
from fedtheory.testing import theorem_values
from fedtheory.testing.strategies import quadratic_problems, simplex
from tests.conftest import assert_near_zero, assert_tight, assert_upper_bound


def _iterate_example1(e1, e2, gamma, t1, t2, periods):
    """Plain FedAvg on Example 1: x <- x - gamma * 2 (x - e_i)."""
    x, ends, afters, cycle = 5.0, [], [], []
    for _ in range(periods):
        cycle = []
        for t in range(t1 + t2):
            cycle.append(x)
            e = e1 if t < t1 else e2
            x = x - gamma * 2 * (x - e)
            if t == t1 - 1:
                afters.append(x)
        ends.append(x)
    return ends[-1], afters[-1], float(np.mean(cycle))


@pytest.mark.parametrize("gamma", [0.1, 0.01, 0.6])
@pytest.mark.parametrize("t1, t2", [(1, 1), (5, 5), (9, 1), (50, 10)])
def test_example1_closed_forms_equal_direct_iteration(gamma, t1, t2):
    from fedtheory.bounds import fedlaavg

    periods = int(np.ceil(40 / (-np.log(abs(1 - 2 * gamma)) * (t1 + t2)))) + 2
    end, after, avg = _iterate_example1(-1.0, 2.0, gamma, t1, t2, periods)
    kw = {"e1": -1.0, "e2": 2.0, "gamma": gamma, "t1": t1, "t2": t2}
    assert_tight(end, fedlaavg.end_of_period.evaluate(**kw).total, rtol=1e-9)
    assert_tight(after, fedlaavg.after_block1.evaluate(**kw).total, rtol=1e-9)
    assert_tight(avg, fedlaavg.time_average.evaluate(**kw).total, rtol=1e-9)


def test_example1_small_step_limit_and_equal_blocks_symbolically():
    from fedtheory.bounds import fedlaavg

    g, tau = symbol("gamma"), symbol("tau")
    for t1, t2 in [(3, 1), (9, 1), (2, 5)]:
        xb = fedlaavg.X_B.subs({symbol("t1"): t1, symbol("t2"): t2})
        lim = sp.limit(xb, g, 0, "+")
        want = fedlaavg.small_step_limit.expression.subs({symbol("t1"): t1, symbol("t2"): t2})
        assert sp.simplify(lim - want) == 0
    equal = {symbol("t1"): tau, symbol("t2"): tau}
    diff = (fedlaavg.X_A - fedlaavg.X_B).subs(equal).subs(tau, 4)
    amp = fedlaavg.equal_block_amplitude.expression.subs(tau, 4)
    for val in (0.05, 0.3):
        assert (
            abs(
                float(sp.Abs(diff).subs({g: val, symbol("e1"): 0, symbol("e2"): 3}))
                - float(amp.subs({g: val, symbol("e1"): 0, symbol("e2"): 3}))
            )
            < 1e-12
        )


@given(quadratic_problems(), simplex(5), st.integers(0, 2**31 - 1))
def test_cafed_theorems_1_and_3_hold_on_random_quadratics(problem, raw, seed):
    from fedtheory.bounds import cafed

    n = problem.num_clients
    p = raw[:n] / raw[:n].sum()
    w = np.random.default_rng(seed).normal(scale=3.0, size=(8, problem.dim))
    dec = cafed.decomposition(problem, w, p)
    target(float(np.max(dec.measured / dec.theorem1.total)), label="thm1 ratio")
    target(float(np.max(dec.measured / dec.theorem3.total)), label="thm3 ratio")
    assert_upper_bound(dec.measured, dec.theorem1.total)
    assert_upper_bound(dec.measured, dec.theorem3.total)


def test_cafed_limit_cases_identical_clients_and_p_equal_alpha():
    from fedtheory.bounds import cafed
    from fedtheory.problems import QuadraticProblem

    same = QuadraticProblem(np.tile(np.diag([1.0, 3.0]), (4, 1, 1)), np.ones((4, 2)))
    dec = cafed.decomposition(same, np.zeros((1, 2)), [0.7, 0.1, 0.1, 0.1])
    assert_near_zero(dec.theorem1.terms["bias"])  # identical clients: Gamma = 0
    prob = QuadraticProblem.random(4, 2, seed=1)
    dec = cafed.decomposition(prob, np.zeros((1, 2)), prob.alpha)
    assert_near_zero(dec.theorem1.terms["bias"])  # p = alpha: chi2 = 0
    assert_near_zero(dec.theorem3.terms["bias"])


@given(st.data())
def test_cafed_numeric_equals_hand_transcription(data):
    # the values are drawn inside, so that the file runs in a copy without CA-Fed
    from fedtheory.bounds import cafed

    v1 = data.draw(theorem_values(cafed.theorem1, ranges={"kappa": (1.0, 50.0)}))
    v3 = data.draw(theorem_values(cafed.theorem3, ranges={"kappa": (1.0, 50.0)}))
    kappa, gap, chi2, gam = v1["kappa"], v1["gap_B"], v1["chi2"], v1["Gamma"]
    t1 = cafed.theorem1.evaluate(**v1)
    assert_tight(t1.total, 2 * kappa**2 * gap + 2 * kappa**4 * chi2 * gam)
    kappa, gap, dtv, gam = v3["kappa"], v3["gap_B"], v3["d_tv"], v3["Gamma_prime"]
    t3 = cafed.theorem3.evaluate(**v3)
    assert_tight(t3.total, 2 * kappa**2 * gap + 8 * kappa**4 * dtv**2 * gam)


@given(simplex(6), simplex(6))
def test_tv_squared_at_most_quarter_chi_square(a, p):
    assert_upper_bound(total_variation(a, p) ** 2, chi_square(a, p) / 4)


def _values_in_domain(thm, rng):
    """Random values inside every parameter's declared domain (hypotheses may fail)."""
    values = {}
    for p in thm.parameters:
        n = NOTATION[p]
        if n.integer:
            values[p] = int(rng.integers(2, 6))
        elif n.high is not None:
            values[p] = float(rng.uniform(0.1, 0.9) * n.high)
        else:
            values[p] = float(rng.uniform(0.1, 2.0)) + (1.0 if p == "kappa" else 0.0)
    return values


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_theorem_total_is_sum_of_terms_and_renders(key):
    thm = CATALOGUE[key]
    values = _values_in_domain(thm, np.random.default_rng(0))
    res = thm.evaluate(strict=False, **values)
    # independent of the lambdified path: sympy's own exact evaluation of each term and of the
    # declared combination (the sum of the terms, Theorem.expression)
    at = {NOTATION[p].symbol: sp.Rational(v) for p, v in values.items()}  # exact inputs
    for name, term in thm.terms.items():
        assert_tight(res.terms[name], float(sp.N(term.subs(at), 30)))
    assert_tight(res.total, float(sp.N(thm.expression.subs(at), 30)))
    assert thm.reference and thm.kind and "$" in thm._repr_latex_()
    assert thm.title in repr(res)
    # the notebook display: the whole statement, the formula and every hypothesis
    shown = thm._repr_markdown_()
    assert thm.title in shown and thm.statement in shown and thm.latex() in shown
    assert all(f"(`{c.text}`)" in shown for c in thm.conditions)
    assert shown.count("\n- $") == len(thm.conditions)


def test_evaluation_broadcasts_over_grids():
    from fedtheory.bounds import fedlaavg

    grid = np.linspace(0.01, 0.4, 7)[:, None]
    res = fedlaavg.end_of_period.evaluate(e1=0.0, e2=1.0, gamma=grid, t1=np.array([1, 3, 9]), t2=1)
    assert res.total.shape == (7, 3)
    assert torch.is_tensor(torch.as_tensor(res.total))


def _violating_values(thm, draws: int = 400):
    """First random values in the declared domains (scaled widely) at which a hypothesis of
    ``thm`` fails, or None."""
    gen = np.random.default_rng(1)
    for _ in range(draws):
        values = _values_in_domain(thm, gen)
        scale = 10.0 ** gen.uniform(-3, 3)
        for p, n in NOTATION.items():
            if p in values and n.integer:  # down to the domain's lowest integer
                values[p] = int(gen.integers(int(n.low), int(n.low) + 6))
            elif p in values and n.high is None:
                values[p] *= scale if gen.random() < 0.5 else 1.0
        if not thm.evaluate(strict=False, **values).valid:
            return values
    return None


@pytest.mark.parametrize("key", sorted(k for k, t in CATALOGUE.items() if t.conditions))
def test_every_hypothesis_can_fail_and_then_raises_naming_the_theorem(key):
    thm = CATALOGUE[key]
    values = _violating_values(thm)
    assert values is not None, f"no draw violates a hypothesis of {key}"
    with pytest.raises(HypothesisViolation, match=re.escape(thm.title)):
        thm.evaluate(**values)


def test_every_catalogue_key_is_the_attribute_path_of_its_theorem():
    import functools

    import fedtheory.bounds as bounds

    for key, theorem in CATALOGUE.items():
        assert functools.reduce(getattr, key.split("."), bounds) is theorem, key


@pytest.mark.paper("fedau")
def test_a_result_over_arrays_prints_its_numbers_elementwise_on_one_line():
    thm = CATALOGUE["fedau.theorem3.per_round"]
    p = np.array([0.5, 0.25])
    res = thm.evaluate(K_cut=50, p=p, t=10)
    text = repr(res)
    assert "\n" not in text and "array(" not in text
    total = ", ".join(f"{v:.6g}" for v in np.asarray(res.total))
    assert f"total=[{total}]" in text
    long = repr(thm.evaluate(K_cut=50, p=np.linspace(0.1, 0.9, 20), t=10))
    assert "..." in long and "(shape (20,))" in long and "\n" not in long
