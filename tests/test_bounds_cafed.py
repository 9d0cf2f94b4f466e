"""CA-Fed Lemma 1 and Theorem 2: hand transcriptions, schedule aggregates against a plain loop,
the App. D program against the theorem, hypotheses, monotonicity, Lemma 1 on quadratics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.bounds import cafed
from fedtheory.errors import HypothesisViolation
from fedtheory.testing.strategies import quadratic_problems, simplex, step_schedules
from tests.conftest import assert_tight, assert_upper_bound

CONSTANTS = dict(Q=1.0, E=2, M=8, L=2.0, Gamma=0.5, G=3.0, D=2.0, H=2.0, T_P=0, dist0_sq=1.0)


def _hand_aggregates(eta, lam, C_P, T_P, H):
    """Plain loop over t = 1..T of the Theorem 2 sums."""
    T = len(eta) - 1
    s1 = s2 = s2i = sphi = 0.0
    js = []
    for t in range(1, T + 1):
        log_t = math.log(2 * C_P * H * t)
        j = min(max(math.ceil(log_t / math.log(1 / lam)), T_P), t)
        js.append(j)
        s1 += eta[t]
        s2 += eta[t] ** 2
        s2i += eta[t] ** 2 + 1 / t**2
        sphi += log_t * eta[t - j] ** 2
    return s1, s2, s2i, sphi, js


@given(
    step_schedules(),
    st.floats(0.5, 0.99),
    st.floats(0.1, 4.0),
    st.integers(0, 30),
    st.floats(0.05, 5.0),
)
def test_theorem2_aggregates_equal_plain_loop(eta, lam, C_P, T_P, H):
    agg = cafed.theorem2_aggregates(eta, lam=lam, C_P=C_P, T_P=T_P, H=H)
    s1, s2, s2i, sphi, js = _hand_aggregates(eta, lam, C_P, T_P, H)
    assert agg.J.tolist() == js
    for got, want in zip(
        (agg.sum_eta, agg.sum_eta_sq, agg.sum_eta_sq_inv, agg.sum_phi),
        (s1, s2, s2i, sphi),
        strict=True,
    ):
        assert_tight(got, want)


@given(
    st.floats(0.1, 5.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.1, 1.0),
    st.floats(0.05, 0.99), st.integers(1, 5), st.integers(1, 64), st.floats(0.2, 3.0),
    st.floats(0.1, 5.0), st.floats(0.0, 2.0), st.floats(0.0, 3.0), st.floats(-2.0, 5.0),
)  # fmt: skip
def test_theorem2_numeric_equals_hand_transcription(
    s1, s2, s2i, pi_q, lam, E, M, Q, L, gamma, R0, sphi
):
    kw = dict(G=1.5, D=0.7, noise_q=0.3, dist0_sq=R0, Gamma=gamma)
    res = cafed.theorem2.evaluate(
        strict=False, sum_eta=s1, sum_eta_sq=s2, sum_eta_sq_inv=s2i, sum_phi=sphi, pi_q=pi_q,
        lam=lam, E=E, M=M, Q=Q, L=L, T=10, T_P=0, eta_max=0.01, **kw,
    )  # fmt: skip
    upsilon = 2 / E * R0 + M * Q * s2i / 4
    psi = 4 * L * (E * Q + 2) * gamma * s2 + 2 / 3 * (E - 1) * (2 * E - 1) * 1.5**2 * s2
    phi = 2 * E * 0.7 * 1.5 * Q * sphi
    want = ((0.5 * s2 * 0.3 + upsilon) / pi_q + psi + phi / math.log(1 / lam)) / s1
    assert_tight(res.total, want)
    assert_tight(res.total, sum(res.terms.values()))


@given(step_schedules(), simplex(4), st.floats(0.55, 0.99))
def test_program_equals_theorem_at_every_q(eta, q, lam):
    eta = eta * 0.02 / eta.max()  # inside Lemma 2's step-size condition
    pi = np.array([0.9, 0.5, 0.3, 0.1])
    sigma2 = np.array([1.0, 0.5, 2.0, 0.1])
    prog = cafed.theorem2_program(eta, sigma2=sigma2, pi=pi, lam=lam, C_P=1.0, **CONSTANTS)
    agg = cafed.theorem2_aggregates(eta, lam=lam, C_P=1.0, T_P=0, H=CONSTANTS["H"])
    consts = {k: v for k, v in CONSTANTS.items() if k != "H"}
    res = cafed.theorem2.evaluate(
        **agg.as_kwargs(), **consts, lam=lam, pi_q=pi @ q, noise_q=np.sum(sigma2 * pi * q**2)
    )
    num = prog.numerator(q)
    assert_tight(prog.bound(q), res.total)
    assert_tight(num.total, num.noise + num.upsilon + num.psi + num.phi)
    assert_tight(num.noise, res.terms["noise"] * prog.sum_eta)


def test_theorem2_hypotheses_step_size_and_mixing_time():
    eta = np.full(11, 0.5)  # 0.5 > 1/(2L(EQ+1)) = 1/12
    with pytest.raises(
        HypothesisViolation, match="CA-Fed Theorem 2.*eta_t <= 1/\\(2L\\(EQ\\+1\\)\\)"
    ):
        cafed.theorem2_program(eta, sigma2=[1.0], pi=[0.5], lam=0.9, C_P=1.0, **CONSTANTS)
    agg = cafed.theorem2_aggregates(np.full(11, 0.01), lam=0.9, C_P=1.0, T_P=20, H=2.0)
    consts = {k: v for k, v in CONSTANTS.items() if k not in ("H", "T_P")}
    res = cafed.theorem2.evaluate(
        strict=False, **agg.as_kwargs(), **consts, T_P=20, lam=0.9, pi_q=0.5, noise_q=0.1
    )
    assert not res.valid and "T >= T_P" in res.reason


def test_theorem2_bound_grows_with_correlation_and_shrinks_with_horizon():
    pi, sigma2, q = np.array([0.8, 0.4]), np.array([1.0, 1.0]), np.array([0.5, 0.5])
    t = np.arange(0, 2001)
    eta = 0.02 / np.sqrt(1 + t)  # sum eta = inf, sum ln(t) eta^2 grows only like ln^2 T

    def bound(lam, T):
        prog = cafed.theorem2_program(
            eta[: T + 1], sigma2=sigma2, pi=pi, lam=lam, C_P=1.0, **CONSTANTS
        )
        return prog.bound(q)

    lams = [0.6, 0.8, 0.9, 0.95, 0.99]
    values = [bound(lam, 2000) for lam in lams]
    assert np.all(np.diff(values) > 0)
    horizons = [200, 500, 1000, 2000]
    assert np.all(np.diff([bound(0.9, T) for T in horizons]) < 0)


@given(quadratic_problems(), simplex(5), st.floats(0.5, 3.0), st.integers(0, 2**31 - 1))
def test_lemma1_constants_hold_on_a_ball_for_quadratics(problem, raw, radius, seed):
    """D = max_k lambda_max(A_k) (r + ||c_k||) bounds ||grad F_k|| on the ball W of radius r
    around w_B^*; then |F_k(w) - F_k(w_B^*)| <= H = D diam(W) on W (Lemma 1 (6), (8))."""
    n = problem.num_clients
    p = raw[:n] / raw[:n].sum()
    centre = problem.optimum(p)[0]
    lmax = np.linalg.eigvalsh(problem.A)[:, -1]
    D = float(np.max(lmax * (radius + np.linalg.norm(problem.c - centre, axis=1))))
    consts = cafed.lemma1_constants(D, np.full(n, 0.3), 2 * radius)
    assert_tight(consts.G**2, D**2 + 0.3)  # (7) by hand
    assert_tight(consts.H, D * 2 * radius)  # (8) by hand: H = D diam(W)
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(64, problem.dim))
    w = centre + radius * u / np.linalg.norm(u, axis=1, keepdims=True) * rng.random((64, 1))
    grads = np.einsum("kij,mkj->mki", problem.A, w[:, None, :] - problem.c[None])
    assert_upper_bound(np.linalg.norm(grads, axis=-1), D)
    gap = np.abs(problem.client_losses(w) - problem.client_losses(centre))
    assert_upper_bound(gap, consts.H)


def test_theorem2_takes_the_chain_constants_of_the_markov_tools():
    from fedtheory.markov import product_mixing_constants

    pi, lam2 = np.array([0.9, 0.5, 0.1]), np.array([0.9, 0.0, 0.5])
    chain = product_mixing_constants(pi, lam2)
    assert_tight(chain.rate, (1 + 0.9) / 2)
    eta = 0.01 / np.sqrt(1 + np.arange(301))
    consts = {k: v for k, v in CONSTANTS.items() if k != "T_P"}
    prog = cafed.theorem2_program(
        eta, sigma2=np.ones(3), pi=pi, lam=chain.rate, C_P=chain.C_P, T_P=chain.T_P, **consts
    )
    weaker = cafed.theorem2_program(
        eta, sigma2=np.ones(3), pi=pi, lam=chain.rate, C_P=2 * chain.C_P, T_P=chain.T_P, **consts
    )
    q = np.full(3, 1 / 3)
    assert prog.bound(q) < weaker.bound(q)  # a larger C_P only loosens the bound


@given(quadratic_problems(), st.floats(0.0, 1.0), st.floats(0.5, 3.0))
def test_lemma1_paper_constants_dominate_the_exact_ones(problem, noise, radius):
    """Lemma 1's G^2 = D^2 + max_k sigma_k^2 and H = D diam(W) bound the exact suprema that
    the problems layer computes on the ball W (same D)."""
    from fedtheory.problems import Ball, QuadraticProblem

    noisy = QuadraticProblem(problem.A, problem.c, alpha=problem.alpha, noise_std=noise)
    ball = Ball(noisy.optimum()[0], radius)
    exact = noisy.lemma1_constants(ball)
    assert np.isfinite(exact.D)  # see test_exact_lemma1_constants_with_tiny_linear_term
    D = exact.D
    paper = cafed.lemma1_constants(D, noisy.max_noise_variance(ball), 2 * radius)
    assert_upper_bound(np.max(exact.G_k), paper.G)
    assert_upper_bound(np.max(exact.H_k), paper.H)


def test_exact_lemma1_constants_with_tiny_linear_term():
    from fedtheory.problems import Ball, QuadraticProblem

    prob = QuadraticProblem(np.ones((2, 1, 1)), np.array([[-2.97e-103], [2.0e-103]]))
    with np.errstate(divide="raise", invalid="raise"):  # no division by zero on the way
        exact = prob.lemma1_constants(Ball(prob.optimum()[0], 1.0))
    assert np.isfinite(exact.D) and abs(exact.D - 1.0) < 1e-9  # sup_{|w|<=1} |w - c_k| = 1
