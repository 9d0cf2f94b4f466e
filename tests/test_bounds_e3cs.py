"""E3CS regret (27), optimal eta and (28): hand transcription, optimality of eta, limits and
monotonicity in T and in the fairness quota."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.bounds import e3cs
from fedtheory.testing.strategies import quota_schedules
from tests.conftest import assert_tight, assert_upper_bound

K, k = 10, 3


@given(quota_schedules(k=k, K=K), st.floats(0.01, 5.0))
def test_regret_numeric_equals_hand_transcription(sigma, eta):
    S = float(np.sum(k - K * sigma))
    res = e3cs.regret.evaluate(K=K, k=k, eta=eta, sum_quota=S)
    assert_tight(res.total, eta * S + K / eta * math.log(K))
    assert_tight(e3cs.quota_sum(sigma, k=k, K=K), S)


@given(quota_schedules(k=k, K=K, saturated=False))
def test_optimal_eta_minimises_27_and_gives_28(sigma):
    S = float(e3cs.quota_sum(sigma, k=k, K=K))
    eta_star = float(e3cs.optimal_eta.evaluate(K=K, k=k, sum_quota=S).total)
    best = float(e3cs.regret.evaluate(K=K, k=k, eta=eta_star, sum_quota=S).total)
    assert_tight(best, float(e3cs.regret_optimal.evaluate(K=K, k=k, sum_quota=S).total))
    grid = eta_star * np.geomspace(0.1, 10, 41)
    others = e3cs.regret.evaluate(K=K, k=k, eta=grid, sum_quota=S).total
    assert_upper_bound(best, others.min())


def test_sigma_zero_gives_two_sqrt_TKk_lnK():
    T = 400
    S = e3cs.quota_sum(np.zeros(T), k=k, K=K)
    res = e3cs.regret_optimal.evaluate(K=K, k=k, sum_quota=S)
    assert_tight(res.total, 2 * math.sqrt(T * K * k * math.log(K)))


def test_bound_grows_with_T_and_shrinks_as_sigma_approaches_k_over_K():
    horizons = np.array([10, 100, 1000])
    S = [e3cs.quota_sum(np.full(T, 0.1), k=k, K=K) for T in horizons]
    grows = e3cs.regret_optimal.evaluate(K=K, k=k, sum_quota=np.array(S)).total
    assert np.all(np.diff(grows) > 0)
    fractions = np.array([0.0, 0.5, 0.9, 0.99, 0.9999])
    S = [e3cs.quota_sum(np.full(100, c * k / K), k=k, K=K) for c in fractions]
    shrinks = e3cs.regret_optimal.evaluate(K=K, k=k, sum_quota=np.array(S)).total
    assert np.all(np.diff(shrinks) < 0) and shrinks[-1] < 1e-1 * shrinks[0]
