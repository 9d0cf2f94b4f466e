"""E3CS regret comparators: cvxpy LP == closed form, DPP re-solve, per-round oracle."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.errors import SolverError
from fedtheory.optim import e3cs
from fedtheory.optim.e3cs import (
    LP_RTOL,
    LP_SOLVER,
    best_fixed_allocation,
    best_fixed_allocation_lp,
    comparator_allocation,
    per_round_oracle,
)
from fedtheory.sim.selection.allocation import quota_incremental
from tests.conftest import assert_parameter_error, assert_tight, assert_upper_bound


@st.composite
def success_instances(draw):
    """(x [R, T, K] 0/1, k, sigma) with a constant or a per-round quota."""
    num_clients = draw(st.integers(2, 8))
    k = draw(st.integers(1, num_clients))
    rounds = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    rho = np.random.default_rng(seed).random(num_clients)
    x = (np.random.default_rng(seed + 1).random((2, rounds, num_clients)) < rho).astype(float)
    top = k / num_clients
    sigma = draw(
        st.one_of(
            st.floats(0.0, top),
            st.lists(st.floats(0.0, top), min_size=rounds, max_size=rounds).map(np.array),
        )
    )
    return x, k, sigma


def _direct_p_lp(x: np.ndarray, k: int, sigma: float) -> float:
    """The LP of E3CS Def. 1 (the comparator) for a constant quota: max sum_t sum_i p_i x_it,
    sum_i p_i = k, sigma <= p_i <= 1 (variables p, not q)."""
    p = cp.Variable(x.shape[1])
    prob = cp.Problem(cp.Maximize(cp.sum(x @ p)), [cp.sum(p) == k, p >= sigma, p <= 1])
    prob.solve(solver=LP_SOLVER)
    assert prob.status == cp.OPTIMAL
    return prob.value


@given(success_instances())
def test_lp_equals_closed_form(instance):
    x, k, sigma = instance
    closed = best_fixed_allocation(x, k, sigma)
    lp = best_fixed_allocation_lp(x, k, sigma)
    assert_tight(lp.cep, closed.cep, rtol=LP_RTOL)
    assert_tight(lp.q.sum(axis=-1), np.ones(2), rtol=LP_RTOL)
    # the closed form is feasible: p*_it = sigma_t + (k - K sigma_t) q_i in [sigma_t, 1]
    p = comparator_allocation(closed.q, k, sigma)
    assert_upper_bound(p, np.ones_like(p))
    assert_upper_bound(np.broadcast_to(np.atleast_1d(sigma)[:, None], p.shape[1:]), p)
    assert_tight((p * x).sum(axis=(-2, -1)), closed.cep)
    if np.ndim(sigma) == 0:
        for r in range(2):
            assert_tight(closed.cep[r], _direct_p_lp(x[r], k, sigma), rtol=LP_RTOL)


def test_sigma_zero_is_the_top_k_column_sums():
    x = (np.random.default_rng(0).random((50, 9)) < np.linspace(0.1, 0.9, 9)).astype(float)
    cols = np.sort(x.sum(axis=0))[::-1]
    for k in (1, 3, 9):
        assert best_fixed_allocation(x, k).cep == cols[:k].sum()


def test_constant_quota_fills_floor_then_remainder():
    # K = 5, k = 2, sigma = 0.1: (k - K sigma)/(1 - sigma) = 1.5/0.9 = 1.67 -> one client at
    # p = 1, the next one at 0.1 + (1.5 - 0.9) = 0.7, the rest at the floor 0.1.
    x = np.array([[1, 1, 1, 0, 0], [1, 1, 0, 1, 0], [1, 0, 0, 0, 0.0]])  # column sums 3,2,1,1,0
    p = comparator_allocation(best_fixed_allocation(x, 2, 0.1).q, 2, 0.1)[0]
    assert_tight(p, [1.0, 0.7, 0.1, 0.1, 0.1])
    assert_tight(best_fixed_allocation(x, 2, 0.1).cep, 3 + 0.7 * 2 + 0.1 * 2)


def test_uniform_quota_gives_uniform_comparator():
    x = np.random.default_rng(1).integers(0, 2, size=(3, 20, 6)).astype(float)
    for solver in (best_fixed_allocation, best_fixed_allocation_lp):
        res = solver(x, 2, 2 / 6)
        assert_tight(res.cep, x.sum(axis=(1, 2)) * 2 / 6)


def test_time_varying_quota_uses_one_fixed_q():
    x = (np.random.default_rng(2).random((40, 8)) < np.linspace(0.2, 0.9, 8)).astype(float)
    sigma = quota_incremental(2, 8, 40)
    res = best_fixed_allocation_lp(x, 2, sigma)
    assert res.q.shape == (8,) and res.status == cp.OPTIMAL
    # cap from the strictest round (sigma = 0 here, u = 1/k): q <= 1/2
    assert_upper_bound(res.q, np.full(8, 0.5), rtol=LP_RTOL)
    assert_tight(res.cep, best_fixed_allocation(x, 2, sigma).cep, rtol=LP_RTOL)


def test_dpp_and_resolve_equals_fresh_build():
    problem, gains, cap, q = e3cs._comparator_lp(6)
    assert problem.is_dpp()
    rng = np.random.default_rng(3)
    fresh = e3cs._comparator_lp.__wrapped__(6)
    for _ in range(3):
        g, u = rng.random(6) * 10, rng.uniform(1 / 6, 1.0)
        values = []
        for prob, g_par, u_par, _ in (e3cs._comparator_lp(6), fresh):
            g_par.value, u_par.value = g, u
            prob.solve(solver=LP_SOLVER)
            values.append(prob.value)
        assert_tight(values[0], values[1], rtol=LP_RTOL)


def test_solver_failure_raises_solver_error(monkeypatch):
    # an infeasible cap (q <= 0.5/K cannot sum to 1) must surface as SolverError with status
    def bad_cap(x, k, sigma):
        gains = np.einsum("...ti->...i", x)
        return gains, np.zeros(x.shape[:-2]), 0.5 / x.shape[-1]

    monkeypatch.setattr(e3cs, "_gains_and_cap", bad_cap)
    with pytest.raises(SolverError, match="infeasible"):
        best_fixed_allocation_lp(np.ones((3, 4)), 2)


@given(success_instances())
def test_per_round_oracle_equals_per_round_lp_and_dominates(instance):
    x, k, sigma = instance
    oracle = per_round_oracle(x, k, sigma)  # [2, T]
    s = np.broadcast_to(sigma, (x.shape[1],))
    for t in range(x.shape[1]):  # one round: the per-round optimum is that round's LP
        single = best_fixed_allocation(x[:, t : t + 1], k, s[t]).cep
        assert_tight(oracle[:, t], single, rtol=1e-12)
    assert_tight(oracle[0, 0], _direct_p_lp(x[0, :1], k, s[0]), rtol=LP_RTOL)
    assert_upper_bound(best_fixed_allocation(x, k, sigma).cep, oracle.sum(axis=-1))


BAD_CALLS = [
    (lambda: best_fixed_allocation(np.full((3, 4), 0.5), 2), "'success'", "0/1"),
    (lambda: best_fixed_allocation(np.ones(4), 2), "'success'", "(..., any, any)"),
    (lambda: best_fixed_allocation(np.ones((3, 4)), 5), "'k'", "[1, 4]"),
    (lambda: best_fixed_allocation_lp(np.ones((3, 4)), 2, 0.6), "'sigma'", "[0, 0.5]"),
    (lambda: per_round_oracle(np.ones((3, 4)), 2, [0.1, 0.2]), "'sigma'", ""),
    (lambda: comparator_allocation([0.5, 1.5], 1, 0.0), "'q'", "[0, 1]"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
