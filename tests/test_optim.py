"""CA-Fed weight programs: DPP, re-solve, cvxpy against the KKT water-filling form, Guideline
A, feasibility, the chi-square chord counterexample in q and convexity in (y, s), greedy
upper bounds, sensitivities against finite differences, bad input and infeasibility."""

from __future__ import annotations

import dataclasses
import math

import cvxpy as cp
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.bounds.divergences import chi_square, effective_weights
from fedtheory.errors import ParameterError, SolverError
from fedtheory.optim import (
    SOLVER_OPTIONS,
    WeightInstance,
    WeightProgram,
    greedy,
    greedy_exclusion,
    greedy_weights,
    polish_weights,
    waterfilling_weights,
    weight_sensitivity,
)
from fedtheory.testing.strategies import weight_instances
from tests.conftest import assert_parameter_error, assert_tight, assert_upper_bound

# The solver stops at a relative duality gap of TOL: objectives agree to a small multiple of
# it, and weights (the argmin of a smooth objective) only to about sqrt(TOL).
TOL = SOLVER_OPTIONS["tol_gap_rel"]
OBJECTIVE_RTOL = 100 * TOL
WEIGHT_ATOL = 10 * math.sqrt(TOL)
POLISHED_ATOL = 1e-9  # Newton-polished optimum against the closed form (rounding only)
FD_STEP = 1e-6
FD_ATOL = 1e-6  # central differences of exact solutions: O(h^2) + rounding / h

PROGRAMS = {bias: WeightProgram(12, bias=bias) for bias in ("none", "chi2", "tv")}


def _program(inst: WeightInstance) -> WeightProgram:
    """Programs are built once per size and bias (DPP re-solves)."""
    key = (inst.num_clients, inst.bias)
    if key not in _CACHE:
        _CACHE[key] = WeightProgram(inst.num_clients, bias=inst.bias)
    return _CACHE[key]


_CACHE: dict = {}


def _instance(n=6, seed=0, **kw) -> WeightInstance:
    rng = np.random.default_rng(seed)
    base = dict(
        a=rng.uniform(0.2, 3.0, n),
        B=1.0,
        C=0.3,
        pi=rng.uniform(0.05, 1.0, n),
        alpha=rng.dirichlet(np.ones(n)),
        Q=1.0,
    )
    base.update(kw)
    return WeightInstance(**base)


# -- DPP and re-solve --------------------------------------------------------------------
@pytest.mark.parametrize("bias", ["none", "chi2", "tv"])
def test_programs_are_dpp_and_dcp(bias):
    prog = PROGRAMS[bias]
    assert prog.is_dpp()
    assert prog.problem.is_dcp()


@pytest.mark.parametrize("bias", ["none", "chi2", "tv"])
def test_resolve_after_new_values_equals_fresh_build(bias):
    first = _instance(12, seed=1, bias=bias, bias_weight=0.5)
    second = _instance(12, seed=2, bias=bias, bias_weight=0.2)
    prog = WeightProgram(12, bias=bias)
    prog.solve(first)
    resolved = prog.solve(second)
    fresh = WeightProgram(12, bias=bias).solve(second)
    assert_tight(resolved.objective, fresh.objective, rtol=OBJECTIVE_RTOL)
    np.testing.assert_allclose(resolved.q, fresh.q, rtol=0, atol=WEIGHT_ATOL)


# -- cvxpy against the KKT water-filling (27) -----------------------------------------------
@given(weight_instances())
def test_cvxpy_equals_kkt_waterfilling(inst):
    sol = _program(inst).solve(inst)
    kkt = waterfilling_weights(inst)
    # the solver's error is relative to the variable part f - C, not to f, which the constant
    # C can bring arbitrarily close to 0
    scale = abs(kkt.objective - inst.C)
    assert abs(sol.objective - kkt.objective) <= OBJECTIVE_RTOL * scale
    # KKT is the true minimum (up to the solver's feasibility tolerance on sum q = Q)
    assert kkt.objective <= inst.objective(sol.q) + OBJECTIVE_RTOL * scale
    np.testing.assert_allclose(sol.q, kkt.q, rtol=0, atol=WEIGHT_ATOL * inst.Q)
    polished = polish_weights(inst, sol.q)
    np.testing.assert_allclose(polished.q, kkt.q, rtol=0, atol=POLISHED_ATOL * inst.Q)


@given(weight_instances())
def test_kkt_weights_are_feasible_and_follow_guideline_a(inst):
    """Guideline A holds exactly for (27) whatever A: q_k > 0 iff pi_k > tau."""
    q = waterfilling_weights(inst).q
    assert np.all(q >= 0)
    assert_tight(q.sum(), inst.Q)
    zero = q == 0
    if zero.any():
        assert inst.pi[zero].max() <= inst.pi[~zero].min()


def test_guideline_a_cvxpy_excludes_least_available_where_kkt_predicts():
    inst = WeightInstance(np.ones(5), 0.5, 0.0, [0.95, 0.9, 0.6, 0.1, 0.05], np.full(5, 0.2))
    kkt = waterfilling_weights(inst)
    sol = _program(inst).solve(inst)
    assert kkt.excluded.tolist() == [False, False, False, True, True]
    assert sol.excluded.tolist() == kkt.excluded.tolist()


def _predicted_third(x, pi):
    """If x_k = c (pi_k - tau) on three clients: tau from clients 0, 1, then x_2 / x_0."""
    tau = (x[0] * pi[1] - x[1] * pi[0]) / (x[0] - x[1])
    return (pi[2] - tau) / (pi[0] - tau)


@pytest.mark.parametrize("curvature", [[1.0, 4.0, 1.0], [2.0, 2.0, 2.0]])
def test_paper_constant_a_form_only_holds_for_equal_curvature(curvature):
    """CA-Fed App. D, derived: (27) gives q_k* A_kk = c (pi_k - tau)_+; the paper's
    q_k* = a (lambda pi_k - theta) with one constant a is right only when the A_kk are equal."""
    pi, a = np.array([0.9, 0.8, 0.7]), np.array(curvature)
    inst = WeightInstance(a, 0.2, 0.0, pi, np.full(3, 1 / 3))
    q = polish_weights(inst, _program(inst).solve(inst).q).q
    assert np.all(q > 0.05)  # everybody in the support
    exact = q * a
    assert_tight(exact[2] / exact[0], _predicted_third(exact, pi), rtol=1e-9)
    paper_error = abs(q[2] / q[0] - _predicted_third(q, pi))
    if len(set(curvature)) == 1:
        assert paper_error <= 1e-9
    else:
        assert paper_error > 0.1


@pytest.mark.parametrize("bias", ["none", "chi2", "tv"])
def test_returned_weights_are_feasible(bias):
    inst = _instance(10, seed=4, bias=bias, bias_weight=0.3, excluded=[1, 1] + [0] * 8)
    if bias == "chi2":  # chi-square is infinite if a client with alpha_k > 0 is excluded
        inst = dataclasses.replace(inst, alpha=np.r_[0.0, 0.0, np.full(8, 1 / 8)])
    sol = _program(inst).solve(inst)
    assert np.all(sol.q >= -WEIGHT_ATOL)
    assert_tight(sol.q.sum(), inst.Q, rtol=WEIGHT_ATOL)
    assert np.all(np.abs(sol.q[:2]) <= WEIGHT_ATOL)
    assert sol.excluded[:2].all() and sol.status == "optimal"


# -- bias programs --------------------------------------------------------------------------
def assert_no_worse(objective: float, reference: float, inst) -> None:
    """``objective <= reference`` up to the solver's accuracy, relative to the optimised part
    ``f - C`` (the constant ``C`` can bring ``f`` itself near 0)."""
    assert objective <= reference + OBJECTIVE_RTOL * abs(reference - inst.C), (objective, reference)


@given(weight_instances(bias="chi2"))
def test_chi2_program_beats_unbiased_and_opt_only_weights(inst):
    sol = _program(inst).solve(inst)
    unbiased = inst.Q * (inst.alpha / inst.pi) / (inst.alpha / inst.pi).sum()
    assert_no_worse(sol.objective, inst.objective(unbiased), inst)
    # Newton on the KKT system never does worse than the solver. (They agree to
    # OBJECTIVE_RTOL on moderate instances; with a tiny bias weight and a nearly excluded
    # client, Clarabel's "optimal" answer was seen 1.4e-5 above the polished optimum.)
    polished = polish_weights(inst, sol.q)
    assert_upper_bound(polished.objective, sol.objective, rtol=OBJECTIVE_RTOL)
    assert_upper_bound(polished.objective, inst.objective(unbiased))


def test_chi2_solver_agrees_with_newton_polish_on_moderate_instances():
    for seed in range(5):
        inst = WeightInstance.theorem1(
            *dataclasses.astuple(_instance(10, seed=seed))[:5], kappa=1.2, Gamma=0.1
        )
        sol = _program(inst).solve(inst)
        assert_tight(polish_weights(inst, sol.q).objective, sol.objective, rtol=OBJECTIVE_RTOL)


@given(weight_instances(bias="tv"))
def test_tv_program_beats_unbiased_and_opt_only_weights(inst):
    sol = _program(inst).solve(inst)
    opt_only = waterfilling_weights(dataclasses.replace(inst, bias="none")).q
    unbiased = inst.Q * (inst.alpha / inst.pi) / (inst.alpha / inst.pi).sum()
    for q in (opt_only, unbiased):
        assert_no_worse(sol.objective, inst.objective(q), inst)


def test_large_trade_off_gives_unbiased_weights():
    """CA-Fed §VI-A: as kappa_bar^2 -> inf the weights tend to alpha/pi (Unbiased)."""
    base = _instance(6, seed=5)
    unbiased = base.alpha / base.pi / (base.alpha / base.pi).sum()
    gaps = []
    for trade_off in (1e0, 1e2, 1e4):
        inst = WeightInstance.theorem1(
            base.a, base.B, base.C, base.pi, base.alpha, kappa=1.0, Gamma=1.0, trade_off=trade_off
        )
        gaps.append(np.abs(polish_weights(inst, _program(inst).solve(inst).q).q - unbiased).max())
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] <= 1e-2 * gaps[0]


def test_theorem_constructors_set_bias_weights():
    base = _instance(4, seed=6)
    args = (base.a, base.B, base.C, base.pi, base.alpha)
    t1 = WeightInstance.theorem1(*args, kappa=2.0, Gamma=0.5, trade_off=3.0)
    t3 = WeightInstance.theorem3(*args, kappa=2.0, Gamma_prime=0.5, trade_off=3.0)
    assert (t1.bias, t3.bias) == ("chi2", "tv")
    assert_tight([t1.bias_weight, t3.bias_weight], [2 * 16 * 0.5 * 3, 8 * 16 * 0.5 * 3])


# -- App. E: chi-square in q is not convex; in (y, s) it is ---------------------------------
SPEC_PI = np.array([0.5966, 0.0653, 0.7688, 0.0333])
SPEC_ALPHA = np.array([0.1734, 0.0904, 0.1596, 0.5766])
SPEC_QA = np.array([0.2026, 0.4239, 0.3715, 0.0021])
SPEC_QB = np.array([0.0445, 0.6127, 0.3410, 0.0018])


def _chi2_of_q(q, alpha=SPEC_ALPHA, pi=SPEC_PI):
    return chi_square(alpha / alpha.sum(), effective_weights(q / q.sum(), pi))


def test_chi2_is_not_convex_in_q_chord_counterexample():
    """CA-Fed App. E is false (derived): the midpoint lies above the chord on ||q||_1 = 1."""
    qa, qb = SPEC_QA / SPEC_QA.sum(), SPEC_QB / SPEC_QB.sum()
    mid = _chi2_of_q(0.5 * (qa + qb))
    chord = 0.5 * (_chi2_of_q(qa) + _chi2_of_q(qb))
    assert mid > chord * (1 + 1e-3)


@given(st.floats(0.02, 0.98), st.floats(0.02, 0.98), st.floats(0.05, 0.95), st.floats(0, 1))
def test_chi2_two_clients_is_convex_on_segments(pi1, pi2, a1, lam):
    """CA-Fed App. E: for N = 2 the chi-square is convex along ||q||_1 = 1 (sanity check)."""
    pi, alpha = np.array([pi1, pi2]), np.array([a1, 1 - a1])
    qa, qb = np.array([0.1, 0.9]), np.array([0.8, 0.2])
    mid = _chi2_of_q(lam * qa + (1 - lam) * qb, alpha, pi)
    chord = lam * _chi2_of_q(qa, alpha, pi) + (1 - lam) * _chi2_of_q(qb, alpha, pi)
    assert_upper_bound(mid, chord)


def test_chi2_is_convex_in_y_on_the_counterexample():
    """With y = q / pi^T q (so p = pi * y), chi2 = sum alpha^2/(pi y) - 1 is convex: the same
    two points, mapped to y, satisfy the chord inequality, and cvxpy certifies DCP."""
    alpha = SPEC_ALPHA / SPEC_ALPHA.sum()
    ya, yb = (q / (SPEC_PI @ q) for q in (SPEC_QA, SPEC_QB))

    def chi2_y(y):
        return float((alpha**2 / (SPEC_PI * y)).sum() - 1)

    assert_tight(chi2_y(ya), _chi2_of_q(SPEC_QA))
    for lam in np.linspace(0, 1, 11):
        assert_upper_bound(
            chi2_y(lam * ya + (1 - lam) * yb), lam * chi2_y(ya) + (1 - lam) * chi2_y(yb)
        )
    y = cp.Variable(4, nonneg=True)
    assert (alpha**2 / SPEC_PI) @ cp.inv_pos(y) - 1 is not None
    assert cp.Problem(
        cp.Minimize((alpha**2 / SPEC_PI) @ cp.inv_pos(y)), [SPEC_PI @ y == 1]
    ).is_dcp()


# -- greedy get on the same objective --------------------------------------------------------
@given(weight_instances(), st.booleans())
def test_greedy_is_an_upper_bound_on_the_optimum(inst, with_lambda):
    lam = np.linspace(0.9, -0.1, inst.num_clients) if with_lambda else None
    greedy = greedy_weights(inst, lam=lam)
    kkt = waterfilling_weights(inst)
    assert_upper_bound(kkt.objective, greedy.objective)
    start = inst.alpha / inst.pi
    assert_upper_bound(greedy.objective, inst.objective(inst.Q * start / start.sum()))


def test_greedy_matches_a_plain_loop():
    """Vectorised get over 3 replicates == Algorithm 1 lines 16-27 written out per replicate."""
    rng = np.random.default_rng(7)
    costs = torch.from_numpy(rng.uniform(0, 1, (3, 6)))

    def objective(q, cost=costs[:, None]):  # any function of candidates [R, K, N] -> [R, K]
        p = q / q.sum(-1, keepdim=True)
        return (cost * p).sum(-1) + 0.3 * ((p - 1 / 6) ** 2).sum(-1)

    q0 = torch.from_numpy(rng.uniform(0.1, 1, (3, 6)))
    orders = [torch.from_numpy(np.argsort(rng.uniform(size=(3, 6)), axis=1)) for _ in range(2)]
    got = greedy_exclusion(objective, q0, orders, tau=0.001)
    for r in range(3):
        q = q0[r].clone()
        for order in orders:
            eps = float(objective(q[None, None], costs[r])[0, 0])
            for k in order[r].tolist():
                trial = q.clone()
                trial[k] = 0.0
                eps_trial = float(objective(trial[None, None], costs[r])[0, 0])
                if math.isfinite(eps_trial) and eps - eps_trial >= 0.001:
                    q, eps = trial, eps_trial
        assert torch.equal(got[r], q)


@pytest.mark.parametrize("window", [1, 1 << 6, 1 << 15])
def test_greedy_windows_decide_as_one_visit_at_a_time(window, monkeypatch):
    """Windows of visits evaluated at once (every exclusion alone and accumulated) give the
    bits of the plain loop, on CA-Fed's proxy with exact ties (zero gaps: every exclusion
    keeps the proxy at 0), clients already at zero, tau = 0 and both tests of line 22."""
    from fedtheory.sim.cafed import proxy_values

    monkeypatch.setattr(greedy, "WINDOW_ELEMENTS", window)
    rng = np.random.default_rng(11)
    for case in range(60):
        n, r = int(rng.integers(1, 30)), int(rng.integers(1, 6))
        alpha = torch.from_numpy(rng.dirichlet(np.ones(n)))
        pi = torch.from_numpy(rng.uniform(0.05, 1, (r, 1, n)))
        keep = rng.uniform(size=(r, 1, n)) > (1.0 if case % 4 == 0 else rng.uniform())
        gap = torch.from_numpy(rng.exponential(0.3, (r, 1, n)) * keep)

        def objective(q, pi=pi, gap=gap, alpha=alpha):
            return proxy_values(q, pi, gap, alpha, gap.amax(-1), 1.0)

        q0 = alpha / pi[:, 0]
        q0[:, : n // 3 if case % 3 == 0 else 0] = 0.0
        orders = [torch.argsort(torch.from_numpy(rng.uniform(size=(r, n))), -1) for _ in range(2)]
        tau, strict = float(rng.choice([0.0, 1e-3])), bool(case % 2)
        rows, want = torch.arange(r), q0
        for order in orders:
            eps = objective(want[:, None])[:, 0]
            for j in range(n):
                trial = want.clone()
                trial[rows, order[:, j]] = 0.0
                eps_trial = objective(trial[:, None])[:, 0]
                drop = eps - eps_trial
                kept = torch.isfinite(eps_trial) & ((drop > tau) if strict else (drop >= tau))
                want = torch.where(kept[:, None], trial, want)
                eps = torch.where(kept, eps_trial, eps)
        got = greedy_exclusion(objective, q0, orders, tau=tau, strict=strict)
        assert torch.equal(got, want), case


def test_greedy_runs_an_objective_of_weights_r_n_once_per_candidate_deprecated():
    """An objective written for weights [R, N] -> [R] (before 0.2; here with per-replicate
    costs, which would mix the replicates of candidates [R, K, N]) still gives the same
    weights, called once per candidate, with a DeprecationWarning; other shapes are refused."""
    rng = np.random.default_rng(3)
    costs = torch.from_numpy(rng.uniform(0, 1, (3, 5)))
    q0 = torch.from_numpy(rng.uniform(0.1, 1, (3, 5)))
    orders = [torch.from_numpy(np.argsort(rng.uniform(size=(3, 5)), axis=1))]

    def weights(q, cost):
        return (cost * q / q.sum(-1, keepdim=True)).sum(-1)

    want = greedy_exclusion(lambda q: weights(q, costs[:, None]), q0, orders)
    with pytest.warns(DeprecationWarning, match=r"\[R, K, N\] to \[R, K\]"):
        got = greedy_exclusion(lambda q: weights(q, costs), q0, orders)
    assert torch.equal(got, want) and (want == 0).any()
    with pytest.raises(ParameterError, match=r"\[R, K, N\] to values \[R, K\]"):
        greedy_exclusion(lambda q: q, q0, orders)


# -- sensitivity -----------------------------------------------------------------------------
def _fd_jacobian(solve, pi):
    cols = []
    for j in range(pi.size):
        e = np.zeros(pi.size)
        e[j] = FD_STEP
        cols.append((solve(pi + e) - solve(pi - e)) / (2 * FD_STEP))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("scales", [False, True])
def test_sensitivity_matches_finite_differences_kkt(scales):
    inst = _instance(8, seed=3, C=0.0)

    def solve(pi):
        a = inst.a * pi / inst.pi if scales else inst.a
        return waterfilling_weights(dataclasses.replace(inst, pi=pi, a=a)).q

    q = waterfilling_weights(inst).q
    assert 0 < q.astype(bool).sum() < 8  # some clients excluded, some not
    J = weight_sensitivity(inst, q, curvature_scales_with_pi=scales)
    np.testing.assert_allclose(J, _fd_jacobian(solve, inst.pi), rtol=0, atol=FD_ATOL)
    assert np.all(J[q == 0] == 0)


def test_sensitivity_matches_finite_differences_chi2():
    inst = WeightInstance.theorem1(
        *dataclasses.astuple(_instance(8, seed=3))[:5], kappa=1.5, Gamma=0.05
    )
    prog = _program(inst)

    def solve(pi):
        moved = dataclasses.replace(inst, pi=pi)
        return polish_weights(moved, prog.solve(moved).q).q

    J = weight_sensitivity(inst, solve(inst.pi))
    np.testing.assert_allclose(J, _fd_jacobian(solve, inst.pi), rtol=0, atol=FD_ATOL)
    # weights sum to Q whatever pi: columns of J sum to zero
    np.testing.assert_allclose(J.sum(axis=0), 0.0, atol=1e-12)


def test_permuting_clients_permutes_weights():
    inst = _instance(7, seed=8, bias="chi2", bias_weight=0.4)
    perm = np.random.default_rng(0).permutation(7)
    moved = WeightInstance(
        inst.a[perm], inst.B, inst.C, inst.pi[perm], inst.alpha[perm], bias="chi2", bias_weight=0.4
    )
    np.testing.assert_allclose(
        polish_weights(moved, _program(moved).solve(moved).q).q,
        polish_weights(inst, _program(inst).solve(inst).q).q[perm],
        atol=POLISHED_ATOL,
    )


# -- errors ----------------------------------------------------------------------------------
def test_infeasible_instances_raise_solver_error_naming_status():
    everyone_out = _instance(4, seed=9, excluded=[1, 1, 1, 1])
    with pytest.raises(SolverError, match="infeasible"):
        _program(everyone_out).solve(everyone_out)
    with pytest.raises(SolverError, match="excluded"):
        waterfilling_weights(everyone_out)
    # chi-square is infinite when a client with alpha_k > 0 gets no weight
    chi2_out = _instance(4, seed=9, bias="chi2", bias_weight=1.0, excluded=[1, 0, 0, 0])
    with pytest.raises(SolverError, match="infeasible"):
        _program(chi2_out).solve(chi2_out)


BAD_CALLS = [
    (lambda: WeightInstance([1.0, -1.0], 1.0, 0.0, [0.5, 0.5], [0.5, 0.5]), "'a'", "[0, inf)"),
    (lambda: WeightInstance([1.0, 1.0], -1.0, 0.0, [0.5, 0.5], [0.5, 0.5]), "'B'", "[0, inf)"),
    (lambda: WeightInstance([1.0, 1.0], 1.0, 0.0, [0.0, 0.5], [0.5, 0.5]), "'pi'", "(0, 1]"),
    (lambda: WeightInstance([1.0, 1.0], 1.0, 0.0, [0.5, 1.5], [0.5, 0.5]), "'pi'", "(0, 1]"),
    (lambda: WeightInstance([1.0, 1.0], 1.0, 0.0, [0.5, 0.5], [0.7, 0.7]), "'alpha'", "summing"),
    (lambda: WeightInstance([1.0, 1.0], 1.0, 0.0, [0.5, 0.5], [1.0]), "'alpha'", "shape (2,)"),
    (lambda: WeightInstance([1.0], 1.0, 0.0, [0.5], [1.0], Q=0.0), "'Q'", "(0, inf)"),
    (lambda: WeightInstance([1.0], 1.0, 0.0, [0.5], [1.0], bias="kl"), "'bias'", "one of"),
    (lambda: WeightInstance([1.0], 1.0, math.nan, [0.5], [1.0]), "'C'", "finite"),
    (
        lambda: WeightInstance.theorem1([1.0], 1.0, 0.0, [0.5], [1.0], kappa=0.5, Gamma=1.0),
        "'kappa'",
        "[1, inf)",
    ),
    (
        lambda: WeightInstance.theorem3([1.0], 1, 0, [0.5], [1.0], kappa=2, Gamma_prime=-1.0),
        "'Gamma_prime'",
        "[0, inf)",
    ),
    (lambda: WeightInstance.from_theorem2("x", [1.0]), "'program'", "sum_eta"),
    pytest.param(
        lambda: WeightInstance.from_theorem2(_theorem2_program(), np.full(6, 1 / 6), bias="tv"),
        "'bias'",
        "without kappa",
        marks=pytest.mark.paper("cafed"),
    ),
    (lambda: WeightProgram(0), "'num_clients'", "[1, 2147483647]"),
    (lambda: WeightProgram(2, bias="kl"), "'bias'", "one of"),
    (lambda: PROGRAMS["none"].solve(_instance(3)), "'instance'", "N=12"),
    (lambda: PROGRAMS["none"].solve("x"), "'instance'", "WeightInstance"),
    (
        lambda: waterfilling_weights(_instance(3, bias="chi2", bias_weight=1.0)),
        "'instance'",
        "bias",
    ),
    (lambda: waterfilling_weights(_instance(2, a=[0.0, 1.0])), "'a'", "(0, inf)"),
    (lambda: greedy_weights(_instance(2), lam=[0.5, 2.0]), "'lam'", "[-1, 1]"),
    (lambda: greedy_exclusion(lambda q: q.sum(-1), torch.ones(1, 2), [], tau=-1.0), "'tau'", "[0"),
    (
        lambda: weight_sensitivity(_instance(2, bias="tv", bias_weight=1.0), [0.5, 0.5]),
        "'instance'",
        "tv",
    ),
    (lambda: weight_sensitivity(_instance(2), [0.0, 0.0]), "'q'", "positive"),
    (lambda: polish_weights(_instance(2), [0.5, -0.5]), "'q'", "[0, inf)"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_raises_parameter_error(call, name, allowed):
    assert_parameter_error(call, name, allowed)


# -- adapter from CA-Fed Theorem 2 -------------------------------------------------------------
THM2 = dict(Q=1.0, E=2, M=8, L=2.0, Gamma=0.5, G=3.0, D=2.0, H=2.0, T_P=0, dist0_sq=1.0)


def _theorem2_program():
    from fedtheory.bounds import cafed

    eta = 0.02 / np.sqrt(np.arange(1, 52))
    pi = np.array([0.9, 0.8, 0.5, 0.3, 0.1, 0.05])
    sigma2 = np.array([1.0, 0.5, 2.0, 0.1, 1.0, 3.0])
    return cafed.theorem2_program(eta, sigma2=sigma2, pi=pi, lam=0.9, C_P=1.0, **THM2)


@pytest.mark.paper("cafed")
def test_theorem2_adapter_objective_is_the_theorem2_bound():
    prog = _theorem2_program()
    alpha = np.full(6, 1 / 6)
    inst = WeightInstance.from_theorem2(prog, alpha)
    q = np.array([0.3, 0.2, 0.2, 0.1, 0.1, 0.1])
    assert_tight(inst.objective(q), prog.bound(q))
    full = WeightInstance.from_theorem2(prog, alpha, kappa=2.0, bias="chi2", Gamma=0.3)
    p = effective_weights(q, prog.pi)
    assert_tight(full.objective(q), 8.0 * prog.bound(q) + 2 * 16 * 0.3 * chi_square(alpha, p))
    # the optimum of the bound is found by both paths and beats the unbiased weights
    sol, kkt = _program(inst).solve(inst), waterfilling_weights(inst)
    assert_tight(sol.objective, kkt.objective, rtol=OBJECTIVE_RTOL)
    unbiased = alpha / prog.pi / (alpha / prog.pi).sum()
    assert_upper_bound(kkt.objective, prog.bound(unbiased))
    J = weight_sensitivity(inst, kkt.q, curvature_scales_with_pi=True)
    assert J.shape == (6, 6)


def test_polish_adds_back_a_client_wrongly_left_out():
    """Active set: a positive weight set to zero (e.g. below the exclusion threshold) has a
    negative multiplier theta - lambda pi_k, so Newton puts it back."""
    inst = _instance(9, seed=12, C=0.0)
    kkt = waterfilling_weights(inst)
    smallest = np.argmin(np.where(kkt.q > 0, kkt.q, np.inf))
    start = kkt.q.copy()
    start[smallest] = 0.0
    assert 0 < (kkt.q > 0).sum() < 9
    np.testing.assert_allclose(polish_weights(inst, start).q, kkt.q, atol=POLISHED_ATOL)
