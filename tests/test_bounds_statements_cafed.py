"""CA-Fed's statements, property-tested on instances inside their hypotheses: Lemmas 2-3,
(5), (21)-(23) and product chains."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory import markov
from fedtheory.availability import TwoStateMarkov
from fedtheory.bounds import cafed
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import FedAvg, FixedWeights, InverseTime, simulate
from tests.conftest import assert_tight, assert_upper_bound


@given(st.lists(st.tuples(st.floats(0.05, 0.95), st.floats(-0.9, 0.95)), min_size=1, max_size=3))
def test_product_chain_lambda_is_the_largest_client_lambda(chains):
    mats = []
    for pi, lam in chains:
        low, _ = markov.lambda_feasible_range(pi)
        mats.append(markov.two_state_matrix(pi, max(lam, float(low) + 1e-3)))
    rates = [markov.mixing_rate(P) for P in mats]
    got = cafed.product_lambda.evaluate(lam_max=max(rates)).total
    assert_tight(markov.mixing_rate(markov.kron_chain(mats)), got, rtol=1e-9)


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.integers(2, 4))
def test_eq5_holds_with_the_numerical_mixing_constants(seed, n):
    P = np.random.default_rng(seed).dirichlet(np.ones(n), size=n)  # [n, n], positive a.s.
    mix = markov.mixing_constants(P)
    pi = markov.stationary_distribution(P)
    t = np.arange(1, 60)
    dev = np.array([np.abs(np.linalg.matrix_power(P, s) - pi).max() for s in t])
    bound = cafed.eq5.evaluate(C_P=mix.C_P, lam=mix.rate, t=t, T_P=mix.T_P).total
    above_rounding = bound > 1e-10  # matrix powers carry ~1e-15 of rounding
    assert_upper_bound(dev[above_rounding], bound[above_rounding], rtol=1e-9)


@given(st.floats(0.5, 0.99), st.floats(0.1, 5.0), st.floats(0.1, 5.0), st.integers(0, 5))
def test_eq23_holds_where_the_min_in_J_t_does_not_bind(lam, C_P, H, T_P):
    T = 400
    J = cafed.theorem2_aggregates(np.ones(T + 1), lam=lam, C_P=C_P, T_P=T_P, H=H).J
    t = np.arange(1, T + 1)
    res = cafed.eq23.evaluate(strict=False, J_t=J, t=t, C_P=C_P, H=H, lam=lam)
    inside = J >= np.log(2 * C_P * H * t) / np.log(1 / lam)
    assert_upper_bound((C_P * lam**J)[inside], res.total[inside])
    assert res.valid == bool(inside.all())


def _ball_run(lam: float, rounds: int = 60, replicates: int = 16):
    """Projected FedAvg with fixed weights on a quadratic problem (CA-Fed (3)), with Lemma 1's
    constants on the ball W."""
    prob = QuadraticProblem.random(3, 2, mu=1.0, L=2.0, spread=1.0, noise_std=0.5, seed=1)
    radius = 1.5 * float(np.linalg.norm(prob.c, axis=1).max())
    pi = np.array([0.3, 0.6, 0.8])
    q = prob.alpha.copy()
    schedule = InverseTime(0.5, 10.0)  # eta_t = 0.5/(t + 10) <= 1/(2L(EQ+1)) = 1/12
    eta = np.array([schedule(t) for t in range(rounds + 1)])
    process = TwoStateMarkov(pi, lam)
    alg = FedAvg(FixedWeights(q), local_steps=2, lr=schedule, radius=radius)
    rec = simulate(prob, process, alg, rounds=rounds, replicates=replicates, seed=0)
    L_k = np.linalg.eigvalsh(prob.A)[:, -1]
    D = float(np.max(L_k * (radius + np.linalg.norm(prob.c, axis=1))))
    sigma2 = np.full(3, prob.dim * prob.noise_std**2)
    consts = cafed.lemma1_constants(D, sigma2, 2 * radius)
    return prob, pi, q, eta, rec, consts, sigma2, process


def test_eq21_and_eq22_on_a_projected_fedavg_run():
    prob, pi, q, eta, rec, c, _, _ = _ball_run(0.5)
    w = rec.iterates  # [R, T+1, d]
    step = np.linalg.norm(np.diff(w, axis=1), axis=-1)  # [R, T]
    # (22) bounds the conditional mean given A_t; sum_{k in A_t} q_k <= Q bounds it for every A_t
    assert_upper_bound(step.mean(axis=0), cafed.eq22.evaluate(
        eta_t=eta[:-1], G=c.G, E=2, q_active=q.sum()).total)  # fmt: skip
    v, u = w[:, 1:].reshape(-1, 2), w[:, :-1].reshape(-1, 2)
    gap = np.abs(prob.client_losses(v) - prob.client_losses(u))  # [M, N]
    dist = np.linalg.norm(v - u, axis=1)
    assert_upper_bound(gap.max(axis=1), cafed.eq21.evaluate(D=c.D, diff_norm=dist).total)


def test_lemmas_2_and_3_bound_their_sums_on_a_projected_run():
    prob, pi, q, eta, rec, c, sigma2, process = _ball_run(0.9, rounds=80, replicates=32)
    mix = process.mixing_constants()
    p = FixedWeights(q).effective_weights(pi)
    w_b, _ = prob.optimum(p)
    w = rec.iterates  # [R, T+1, d]
    mask = rec.participation  # [R, T, N]
    T = mask.shape[1]
    t = np.arange(1, T)  # rounds 1..T-1 (iterate t is w_{t,0})
    losses = prob.client_losses(w.reshape(-1, 2)).reshape(w.shape[0], w.shape[1], -1)
    fb = prob.client_losses(w_b[None])[0]  # [N]
    active = mask[:, t].astype(float)  # [R, T-1, N]
    lhs2 = np.einsum("t,rtn,n,rtn->r", eta[t], active, q, losses[:, t] - fb)
    agg = cafed.theorem2_aggregates(eta[:T], lam=mix.rate, C_P=mix.C_P, T_P=mix.T_P, H=c.H)
    C1 = cafed.lemma2.evaluate(
        dist0_B_sq=float(w_b @ w_b), E=2, pi_q_sq_sigma=float(np.sum(pi * q**2 * sigma2)),
        sum_eta_sq=float(np.sum(eta[t] ** 2)), pi_q=float(pi @ q), G=c.G, L=prob.L,
        Q=float(q.sum()), Gamma=prob.gamma(p), eta_max=float(eta[t].max()),
    ).total  # fmt: skip
    assert_upper_bound(lhs2.mean(), C1)
    J = agg.J[t - 1]
    lhs3 = np.einsum("t,rtn,n,rtn->r", eta[t], active, q, losses[:, t - J] - losses[:, t])  # [R]
    C3 = cafed.lemma3.evaluate(
        E=2, D=c.D, G=c.G, Q=float(q.sum()), pi_q=float(pi @ q),
        sum_J_eta=cafed.lookback_sum(eta[:T], agg.J),
    ).total  # fmt: skip
    assert_upper_bound(lhs3.mean(), C3)
