"""FedLaAvg: its bound on Example 1 against a direct run of FedLaAvg, the round-based bound
(41) and the Corollary's step size by hand, and the staleness lemma on simulated availability."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.bounds import fedlaavg
from fedtheory.errors import HypothesisViolation
from tests.conftest import assert_tight, assert_upper_bound


def _fedlaavg_example1(x0, e1, e2, t1, t2, T):
    """FedLaAvg (Alg. 1, one available client per iteration) on Example 1 with exact
    gradients and gamma = 1/(2 sqrt T). Both cached gradients start at x_0 (T_i = 0)."""
    gamma = 1 / (2 * math.sqrt(T))
    e = (e1, e2)
    x, cached, xs = x0, [2 * (x0 - e1), 2 * (x0 - e2)], []
    for t in range(T):
        i = 0 if t % (t1 + t2) < t1 else 1
        cached[i] = 2 * (x - e[i])
        x = x - gamma * (cached[0] + cached[1]) / 2
        xs.append(x)
    xs = np.array(xs)
    f = (xs - (e1 + e2) / 2) ** 2  # f(x) - f(x^*)
    return xs[np.argmin(f)]


@given(
    st.floats(-5, 5), st.floats(-3, 3), st.floats(-3, 3), st.integers(1, 20), st.integers(1, 20),
    st.integers(4, 3000),
)  # fmt: skip
def test_fedlaavg_bound_holds_on_example1(x0, e1, e2, t1, t2, T):
    x_hat = _fedlaavg_example1(x0, e1, e2, t1, t2, T)
    res = fedlaavg.fedlaavg_bound.evaluate(x0=x0, e1=e1, e2=e2, t1=t1, t2=t2, T=T)
    assert_upper_bound((x_hat - (e1 + e2) / 2) ** 2, res.total)
    I, G = max(t1, t2), max(2 * abs(x0 - (e1 + e2) / 2), abs(e1 - e2))
    assert_tight(res.total, (x0 - (e1 + e2) / 2) ** 2 / math.sqrt(T) + I**2 * G**2 / (4 * T))


@given(
    st.floats(0.0, 5.0), st.floats(1e-3, 0.25), st.integers(1, 100), st.integers(1, 10),
    st.floats(0.0, 2.0), st.integers(1, 100), st.integers(1, 20), st.floats(0.0, 2.0),
)  # fmt: skip
def test_round_bound_equals_hand_transcription(B, g, R, C, s2, N, I, G):
    L = 1.0
    res = fedlaavg.round_bound.evaluate(F_gap=B, gamma=g, R=R, C=C, sigma2=s2, L=L, N=N, I=I, G=G)
    want = (
        4 * B / (g * R * C)
        + 4 * g * s2 * L / N
        + 2 * g * I * C * L * (G**2 + s2) / math.sqrt(N)
        + (2 * I**2 / (1 - 2 * g * L) + 4 * I**2 + 4 * I + 2) * g**2 * C**2 * L**2 * G**2
    )
    assert_tight(res.total, want)


def test_round_bound_requires_small_step_and_grows_with_staleness():
    kw = dict(F_gap=1.0, R=100, C=5, sigma2=1.0, L=2.0, N=10, G=1.0)
    with pytest.raises(HypothesisViolation, match=r"gamma <= 1/\(4L\).*0\.2.*0\.125"):
        fedlaavg.round_bound.evaluate(gamma=0.2, I=1, **kw)
    totals = fedlaavg.round_bound.evaluate(gamma=0.01, I=np.arange(1, 10), **kw).total
    assert np.all(np.diff(totals) > 0)


@given(st.floats(0.01, 1.0), st.integers(1, 10**4), st.floats(0.1, 10.0), st.integers(1, 50))
def test_corollary_step_by_hand_and_its_hypothesis(beta, N, L, E):
    T = 10**6
    res = fedlaavg.corollary_step.evaluate(strict=False, beta=beta, N=N, L=L, E_avail=E, T=T)
    gamma = math.sqrt(beta) * N**0.25 / (2 * L * math.sqrt(E) * math.sqrt(T))
    assert_tight(res.total, gamma)
    assert res.valid == (gamma <= 1 / (4 * L))
    rounds = fedlaavg.corollary_step_rounds.evaluate(
        strict=False, beta=beta, N=N, L=L, E_avail=E, C=10, R=T // 10
    )
    assert_tight(rounds.total, math.sqrt(beta) * N**0.25 / (2 * L * 10 * math.sqrt(E * T / 10)))


@given(st.integers(2, 12), st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_staleness_lemma_holds_for_absent_longest_selection(N, K, E, seed):
    """Assumption 4 (each client available at least once in every E successive iterations)
    and the absent-longest rule give t - T_i^t <= ceil(N/K) E (Lemma 5)."""
    K = min(K, N)
    rng = np.random.default_rng(seed)
    last_avail = np.zeros(N, dtype=int)  # iteration 0 counts as available
    last_pick = np.zeros(N, dtype=int)
    worst = 0
    for t in range(1, 10 * E * N + 20):
        avail = (rng.random(N) < 0.3) | (t - last_avail >= E)
        last_avail[avail] = t
        idx = np.flatnonzero(avail)
        chosen = idx[np.argsort(last_pick[idx], kind="stable")[:K]]
        last_pick[chosen] = t
        worst = max(worst, int(np.max(t - last_pick)))
    assert worst <= fedlaavg.staleness_bound(N, K, E)


@given(st.floats(1e-3, 0.24), st.integers(1, 20), st.floats(0.5, 4.0), st.integers(1, 1000))
def test_theorem3_order_by_hand(g, I, G, N):
    kw = dict(L=1.0, sigma2=0.5, F_gap=2.0, T=1000)
    res = fedlaavg.theorem3_order.evaluate(gamma=g, I=I, G=G, N=N, **kw)
    want = g * I * (G**2 + 0.5) / math.sqrt(N) + g**2 * I**2 * G**2 / (1 - 2 * g) + 2.0 / (g * 1000)
    assert_tight(res.total, want)
