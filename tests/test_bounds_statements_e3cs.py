"""E3CS's statements, property-tested on instances inside their hypotheses: Claim 1, Fact 9,
(9) and the zero-regret remark."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.availability import Bernoulli
from fedtheory.bounds import e3cs
from fedtheory.optim.e3cs import best_fixed_allocation
from fedtheory.sim import E3CS, run_selection
from fedtheory.sim.selection.allocation import prob_alloc
from tests.conftest import assert_near_zero, assert_tight, assert_upper_bound


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
