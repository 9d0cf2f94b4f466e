"""Issue 12's statements, property-tested on instances inside their hypotheses: CA-Fed
Lemmas 2-3, (5), (21)-(23) and product chains; E3CS Claim 1, Fact 9, (9) and the zero-regret
remark; FedAU Lemma B.3.3; FedLaAvg Lemma 2 (staleness)."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory import markov
from fedtheory.availability import Bernoulli, TwoStateMarkov
from fedtheory.bounds import cafed, e3cs, fedau, fedlaavg
from fedtheory.optim.e3cs import best_fixed_allocation
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import E3CS, FedAvg, FedLaAvg, FixedWeights, InverseTime, run_selection, simulate
from fedtheory.sim.selection.allocation import prob_alloc
from tests.conftest import assert_near_zero, assert_tight, assert_upper_bound


# --- CA-Fed -----------------------------------------------------------------------------------
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


# --- E3CS -------------------------------------------------------------------------------------
@given(st.integers(2, 12), st.data())
def test_claim1_alpha_gives_k_over_K_for_every_client(K, data):
    k = data.draw(st.integers(1, K))
    sigma = data.draw(st.floats(0.0, k / K)) if k < K else 0.0
    w = np.exp(data.draw(st.lists(st.floats(-30, 30), min_size=K, max_size=K)))
    p = e3cs.claim1_allocation(w, k, sigma)
    assert_tight(p, e3cs.claim1.evaluate(sigma_t=sigma, k=k, K=K).total, rtol=1e-12)
    assert_upper_bound(p, 1.0) and assert_tight(p.sum(), k)


@given(st.integers(0, 10_000), st.floats(0.0, 1.0))
def test_fact9_on_the_best_fixed_allocation(seed, c):
    K, k = 8, 3
    x = np.random.default_rng(seed).random((40, K)) < 0.5
    sigma = c * k / K
    q = best_fixed_allocation(x.astype(float), k, sigma).q
    cap = e3cs.fact9.evaluate(sigma_t=sigma, k=k, K=K).total
    assert_upper_bound(q * (k - K * sigma), cap)


def test_eq9_realised_cep_has_the_expected_mean_with_exact_marginals():
    x = Bernoulli(np.linspace(0.1, 0.9, 8)).sample(60, replicates=400, seed=3)
    rec = run_selection(E3CS(3, eta=0.5, sampler="systematic"), x, seed=1)
    diff = rec.cep[:, -1] - e3cs.expected_cep.evaluate(sum_px=rec.expected_cep[:, -1]).total
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert abs(diff.mean()) <= 4 * se


def test_zero_regret_when_sigma_is_k_over_K():
    x = Bernoulli(np.linspace(0.1, 0.9, 10)).sample(50, replicates=4, seed=0)
    rec = run_selection(E3CS(2, sigma=0.2, eta=0.5), x, seed=0)
    zero = e3cs.zero_regret.evaluate(sum_quota=0.0).total
    assert_near_zero(rec.regret - zero, atol=1e-9)


def test_prob_alloc_states_of_a_run_meet_claim1_and_fact9():
    x = Bernoulli(np.linspace(0.1, 0.9, 10)).sample(80, replicates=2, seed=0)
    selector = E3CS(3, sigma=0.05, eta=0.5)
    state = selector.init(2, 10)
    xt = torch.as_tensor(x)
    for t in range(80):
        w = torch.exp(state.log_w - state.log_w.amax(1, keepdim=True)).numpy()
        assert_upper_bound(e3cs.claim1_allocation(w, 3, 0.05), 1.0)
        p = prob_alloc(state.log_w, 3, 0.05).p.numpy()
        cap = e3cs.fact9.evaluate(sigma_t=0.05, k=3, K=10).total
        assert_upper_bound(p - 0.05, cap)  # the allocation's own quota times (k - K sigma)
        choice = selector.select(state, t, np.random.default_rng(t))
        state = selector.update(state, t, choice, xt[:, t])


# --- FedAU ------------------------------------------------------------------------------------
@settings(max_examples=40)
@given(st.integers(0, 10_000))
def test_lemma_b33_holds_on_quadratic_clients_inside_its_hypotheses(seed):
    rng = np.random.default_rng(seed)
    N, d, L, I = int(rng.integers(1, 6)), int(rng.integers(1, 3)), rng.uniform(0.2, 3), 3
    gamma = rng.uniform(0.05, 1) / (4 * np.sqrt(15) * L * I)
    eta = rng.uniform(0.05, 1) / (4 * L * I) / gamma
    p = rng.uniform(0.05, 1, N)
    step = fedau.quadratic_descent_step(
        rng.normal(size=(N, d)) * 2, rng.normal(size=d) * 3, L=L, gamma=gamma, eta=eta, I=I,
        sigma2=rng.uniform(0, 2), p=p, omega=rng.uniform(0, 3, N) / p,
        phi=rng.dirichlet(np.ones(N)),
    )  # fmt: skip
    assert_upper_bound(step.expected_next, fedau.lemma_b33.evaluate(**step.lemma_inputs).total)


def test_quadratic_descent_step_equals_monte_carlo():
    rng = np.random.default_rng(0)
    e, x = rng.normal(size=(3, 2)), np.array([1.0, -2.0])
    kw = dict(L=1.5, gamma=0.02, eta=2.0, I=3, sigma2=0.8, p=[0.3, 0.6, 0.9],
              omega=[2.0, 1.0, 0.5], phi=[0.2, 0.3, 0.5])  # fmt: skip
    exact = fedau.quadratic_descent_step(e, x, **kw).expected_next
    n = 200_000
    part = rng.random((n, 3)) < np.array(kw["p"])
    y = np.broadcast_to(x, (n, 3, 2)).copy()
    for _ in range(kw["I"]):
        y -= kw["gamma"] * (kw["L"] * (y - e) + rng.normal(size=y.shape) * np.sqrt(0.4))
    nxt = x + kw["eta"] / 3 * np.einsum("mn,n,mnd->md", part, kw["omega"], y - x)
    f = 0.5 * kw["L"] * np.einsum("n,mnd->m", kw["phi"], (nxt[:, None] - e) ** 2)
    assert abs(f.mean() - exact) <= 5 * f.std() / np.sqrt(n)


# --- FedLaAvg ---------------------------------------------------------------------------------
@settings(max_examples=15)
@given(st.integers(2, 8), st.integers(1, 4), st.integers(1, 4))
def test_staleness_of_fedlaavg_runs_within_lemma2(N, K, E):
    K = min(K, N)
    rng = np.random.default_rng(N * 100 + K * 10 + E)
    t_all = np.arange(60)[:, None]
    once = (t_all + rng.integers(0, E, N)) % E == 0  # each client once in every E rounds
    mask = torch.as_tensor(once | (rng.random((60, N)) < 0.3))[None]  # [1, T, N]
    prob = QuadraticProblem.random(N, 1, seed=0)
    alg = FedLaAvg(clients_per_round=K, lr=0.1)
    state = alg.init(prob, torch.zeros(1, 1, dtype=torch.float64))
    worst = 0
    for t in range(60):
        state = alg.step(prob, state, mask[:, t], t)
        if t >= fedlaavg.staleness_bound(N, K, E):  # every client has participated by then
            worst = max(worst, int((t - state.last).max()))
    assert_upper_bound(worst, fedlaavg.staleness.evaluate(N=N, k=K, E_avail=E).total)
