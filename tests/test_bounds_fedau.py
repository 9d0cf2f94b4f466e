"""FedAU: cut-off geometric law against summation and scipy, Theorem 3's per-round inequality
against an exact computation (itself checked by Monte Carlo), Theorems 1-2, Corollary 4."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from fedtheory.bounds import divergences, fedau
from fedtheory.bounds.symbols import NOTATION
from fedtheory.errors import HypothesisViolation
from fedtheory.testing.strategies import probabilities, simplex
from tests.conftest import assert_tight, assert_upper_bound


@given(probabilities, st.integers(1, 60))
def test_cutoff_geometric_pmf_matches_scipy_and_moments_match_summation(p, K):
    pmf = fedau.cutoff_geometric_pmf(p, K)
    k = np.arange(1, K + 1)
    scipy_pmf = np.where(k < K, stats.geom.pmf(k, p), stats.geom.sf(K - 1, p))
    assert_tight(pmf, scipy_pmf)
    assert_tight(pmf.sum(), 1.0)
    mean = float(pmf @ k)
    var = float(pmf @ k**2) - mean**2
    assert_tight(fedau.cutoff_mean.evaluate(p=p, K_cut=K).total, mean, rtol=1e-8)
    assert_tight(fedau.cutoff_variance.evaluate(p=p, K_cut=K).total, var, rtol=1e-6)
    # bias identity p E S - 1 = -(1-p)^K and the proof's p^2 Var S <= 1 - p
    assert_tight(p * mean - 1, -((1 - p) ** K), rtol=1e-8)
    assert_upper_bound(p**2 * var, 1 - p)


def _monte_carlo_weights(p, K, rounds, replicates, seed):
    """Algorithm 2 run directly on Bernoulli(p) participation, vectorised over replicates:
    the weights omega_t, t = 0..T-1, as ``[R, T]``."""
    rng = np.random.default_rng(seed)
    part = rng.random((replicates, rounds)) < p
    count = np.zeros(replicates)
    total = np.zeros(replicates)
    gap = np.zeros(replicates)
    omega = np.empty((replicates, rounds))
    for t in range(rounds):
        omega[:, t] = np.where(count > 0, total / np.maximum(count, 1), 1.0)
        gap += 1
        record = part[:, t] | (gap == K)
        count += record
        total += np.where(record, gap, 0)
        gap = np.where(record, 0, gap)
    return omega


@pytest.mark.parametrize("p, K", [(0.1, 5), (0.5, 3), (0.8, 10), (0.3, 1)])
def test_exact_weight_error_agrees_with_monte_carlo(p, K):
    rounds, reps = 25, 40_000
    err = (p * _monte_carlo_weights(p, K, rounds, reps, seed=1) - 1) ** 2
    mean, se = err.mean(0), err.std(0, ddof=1) / math.sqrt(reps)
    exact = fedau.weight_error_exact(p, K, rounds)
    assert np.all(np.abs(mean - exact) <= 4.5 * se + 1e-12)  # 4.5 s.e. over 25 rounds


def _weight_error_dynamic_programme(p: float, K: int, rounds: int) -> np.ndarray:
    """The law of (intervals m, their sum s, gap counter c) propagated round by round (the
    previous implementation of weight_error_exact, O(T^3 K)): an independent reference."""
    law = np.zeros((rounds, rounds, K))  # [m, s, c]
    law[0, 0, 0] = 1.0
    m, s = np.arange(rounds)[:, None], np.arange(rounds)[None, :]
    err = (p * np.where(m > 0, s / np.maximum(m, 1), 1.0) - 1.0) ** 2  # [m, s]
    out = np.empty(rounds)
    for r in range(rounds):
        out[r] = np.einsum("msc,ms->", law, err)
        new = np.zeros_like(law)
        for c in range(K):
            gap, mass = c + 1, law[..., c]
            record = p * mass if gap < K else mass
            if gap < rounds:
                new[1:, gap:, 0] += record[:-1, : rounds - gap]
            if gap < K:
                new[..., gap] += (1 - p) * mass
        law = new
    return out


@given(st.floats(1e-6, 1.0), st.integers(1, 15), st.integers(1, 40))
def test_exact_weight_error_equals_the_round_by_round_dynamic_programme(p, K, rounds):
    assert_tight(
        fedau.weight_error_exact(p, K, rounds), _weight_error_dynamic_programme(p, K, rounds)
    )


def test_exact_weight_error_is_vectorised_over_probabilities():
    p = np.array([[0.1, 0.5], [0.9, 1.0]])
    out = fedau.weight_error_exact(p, 4, 30)
    assert out.shape == (2, 2, 30)
    for idx in np.ndindex(2, 2):
        assert_tight(out[idx], _weight_error_dynamic_programme(p[idx], 4, 30))


@given(st.floats(0.02, 0.98), st.integers(1, 12), st.integers(2, 40))
def test_theorem3_per_round_inequality_holds_exactly(p, K, rounds):
    exact = fedau.weight_error_exact(p, K, rounds)
    bound = fedau.theorem3_per_round.evaluate(p=p, K_cut=K, t=np.arange(1, rounds)).total
    assert_upper_bound(exact[1:], bound)
    assert_upper_bound(exact.mean(), fedau.weight_error_bound([p], K, rounds))


@given(st.floats(0.02, 0.98), st.integers(1, 30))
def test_K_equal_one_gives_weight_one_and_tight_bias(p, rounds):
    exact = fedau.weight_error_exact(p, 1, rounds)
    assert_tight(exact, (1 - p) ** 2)  # omega_t = 1 at every round
    bias = fedau.theorem3_per_round.evaluate(p=p, K_cut=1, t=rounds).terms["bias"]
    assert_tight(bias, (1 - p) ** 2)


@given(simplex(5), st.lists(st.floats(0.05, 1.0), min_size=5, max_size=5))
def test_fedau_and_cafed_effective_weights_are_one_quantity(omega, p):
    """FedAU Theorem 1's weights omega_n p_n / P are CA-Fed (4)'s pi_k q_k / pi^T q."""
    assert_tight(fedau.effective_weights(omega, p), divergences.effective_weights(omega, p),
                 rtol=1e-12)  # fmt: skip


@given(st.lists(st.floats(0.02, 1.0), min_size=2, max_size=6))
def test_theorem1_effective_weights(p):
    p = np.array(p)
    assert_tight(fedau.effective_weights(1 / p, p), np.full(p.size, 1 / p.size))
    assert_tight(fedau.effective_weights(np.ones_like(p), p), p / p.sum())
    perm = np.arange(p.size)[::-1]
    omega = np.linspace(1.0, 3.0, p.size)
    assert_tight(
        fedau.effective_weights(omega[perm], p[perm]), fedau.effective_weights(omega, p)[perm]
    )


@given(
    st.floats(0.0, 5.0), st.floats(1e-4, 0.01), st.floats(0.1, 3.0), st.integers(1, 10),
    st.integers(2, 500), st.floats(0.0, 2.0), st.floats(0.0, 2.0), st.floats(0.1, 3.0),
    st.floats(0.0, 2.0), st.floats(0.0, 1.0), st.floats(0.1, 4.0), st.integers(1, 200),
)  # fmt: skip
def test_theorem2_numeric_equals_hand_transcription(F, g, e, I, T, psi, d2, L, s2, W, Q, N):
    res = fedau.theorem2.evaluate(
        strict=False, F_gap=F, gamma=g, eta=e, I=I, T=T, Psi_G=psi, delta2=d2, L=L,
        sigma2=s2, weight_error=W, Q_w=Q, N=N,
    )  # fmt: skip
    want = (
        F / (g * e * I * T)
        + (psi + d2 + g**2 * L**2 * I * s2) * W
        + g * e * L * Q * (I * d2 + s2) / N
        + g**2 * L**2 * I * (I * d2 + s2)
    )
    assert_tight(res.total, want)
    ok = g <= 1 / (4 * math.sqrt(15) * L * I) and g * e <= min(
        1 / (2 * L * I), N / (27 * L * I * Q)
    )
    assert res.valid == ok


def test_theorem2_violation_names_condition_and_both_sides():
    with pytest.raises(
        HypothesisViolation, match=r"FedAU Theorem 2: hypothesis gamma <= 1/\(4 sqrt"
    ):
        fedau.theorem2.evaluate(
            F_gap=1.0, gamma=1.0, eta=1.0, I=1, T=10, Psi_G=0.0, delta2=1.0, L=1.0,
            sigma2=1.0, weight_error=0.1, Q_w=1.0, N=10,
        )  # fmt: skip


@given(
    st.floats(0.02, 0.9), st.integers(2, 10**6), st.floats(0.1, 10.0), st.integers(1, 10),
    st.floats(0.1, 10.0), st.integers(1, 1000), st.floats(0.1, 5.0), st.floats(0.0, 2.0),
    st.floats(0.01, 2.0),
)  # fmt: skip
def test_corollary4_choices_satisfy_theorem2_and_balance_bias(p_min, T, L, I, F, N, Q, d2, s2):
    ch = fedau.corollary4_choices(
        p_min=p_min, T=T, L=L, I=I, F_gap=F, N=N, Q=Q, delta2=d2, sigma2=s2
    )
    assert_tight((1 - p_min) ** (2 * ch.K), 1 / T)  # c^K = T: the bias (1-p)^{2K} is 1/T
    assert_tight(ch.gamma * ch.eta, ch.gamma_eta)
    assert ch.K_int >= ch.K
    values = dict(
        F_gap=F, gamma=ch.gamma, eta=ch.eta, I=I, T=T, Psi_G=0.0, delta2=d2, L=L, sigma2=s2,
        weight_error=0.0, Q_w=Q, N=N,
    )  # fmt: skip
    at = {NOTATION[name].symbol: value for name, value in values.items()}
    for cond in fedau.theorem2.conditions:  # Theorem 2's hypotheses, as sympy sides
        assert cond.rel == "<="
        lhs, rhs = float(cond.lhs.subs(at)), float(sp.sympify(cond.rhs).subs(at))
        if lhs > rhs:  # the choice sits on this boundary: equality, up to rounding
            assert_tight(lhs, rhs)


def test_theorem3_order_variance_decreases_with_T_and_bias_with_K():
    T = np.array([3, 10, 100, 1000])
    res = fedau.theorem3_order.evaluate(p=0.2, K_cut=5, T=T)
    assert np.all(np.diff(res.terms["variance"]) < 0)
    bias = fedau.theorem3_order.evaluate(p=0.2, K_cut=np.array([1, 2, 5, 10]), T=100).terms["bias"]
    assert np.all(np.diff(bias) < 0)


def test_measured_weight_error_matches_exact_law_and_bound():
    """Weights of Algorithm 2 on simulated participation: their measured weight error agrees
    with the exact value and stays below Theorem 3's explicit bound."""
    p, K, rounds, reps = np.array([0.2, 0.6]), 4, 30, 20_000
    omega = np.stack(
        [_monte_carlo_weights(pj, K, rounds, reps, seed=10 + j) for j, pj in enumerate(p)], -1
    )  # [R, T, N]
    measured = fedau.weight_error_measured(p, omega)
    exact = fedau.weight_error_exact(p, K, rounds).mean()
    assert abs(measured.mean() - exact) <= 4.5 * measured.std(ddof=1) / np.sqrt(reps)
    assert_upper_bound(exact, fedau.weight_error_bound(p, K, rounds))


@given(
    st.floats(0.01, 10.0), st.integers(1, 10), st.floats(0.1, 10.0), st.integers(1, 1000),
    st.floats(0.0, 5.0), st.floats(0.1, 5.0), st.floats(0.1, 5.0), st.integers(2, 10**6),
    st.floats(0.0, 2.0), st.floats(0.0, 2.0),
)  # fmt: skip
def test_corollary4_numeric_equals_hand_transcription(F, I, L, N, Psi, Q, R, T, d2, s2):
    res = fedau.corollary4.evaluate(
        F_gap=F, I=I, L=L, N=N, Psi_G=Psi, Q_w=Q, R_c=R, T=T, delta2=d2, sigma2=s2
    )
    by_hand = (
        math.sqrt(s2) * math.sqrt(L * F * Q) / math.sqrt(N * I * T)
        + math.sqrt(d2) * math.sqrt(L * F * Q) / math.sqrt(N * T)
        + (Psi + d2 + s2 / (I * T)) * R * math.log(T) ** 2 / T
        + (L * F * (1 + Q / N) + d2 + s2 / T) / T
    )
    assert_tight(res.total, by_hand)
    with pytest.raises(HypothesisViolation, match="FedAU Corollary 4"):
        fedau.corollary4.evaluate(
            F_gap=F, I=I, L=L, N=N, Psi_G=Psi, Q_w=Q, R_c=R, T=1, delta2=d2, sigma2=s2
        )
