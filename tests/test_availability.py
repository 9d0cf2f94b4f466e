"""Availability processes (marginals, lag-1 correlation, restart), estimators, builders."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy import stats

from fedtheory.availability import AlternatingBlocks, TwoStateMarkov, builders, estimators
from fedtheory.errors import ParameterError
from fedtheory.markov import two_state_transitions
from tests.conftest import assert_parameter_error, assert_tight

PROCESSES = [
    AlternatingBlocks(3, 2, group1=[True, False, True]),
    TwoStateMarkov([0.1, 0.5, 0.9], [0.9, -0.5, 0.0]),
]


@pytest.mark.parametrize("proc", PROCESSES, ids=repr)
def test_same_seed_same_mask_and_restart_reproduces_remaining_rows(proc):
    a = proc.sample(40, replicates=3, seed=7)
    assert a.shape == (3, 40, proc.num_clients) and a.dtype == torch.bool
    assert torch.equal(a, proc.sample(40, replicates=3, seed=7))
    assert torch.equal(a[:, 17:], proc.sample(23, replicates=3, seed=7, start=17))


def test_alternating_blocks_pattern():
    mask = AlternatingBlocks(2, 1).sample(6)[0].int().tolist()
    assert mask == [[1, 0], [1, 0], [0, 1], [1, 0], [1, 0], [0, 1]]
    np.testing.assert_array_equal(AlternatingBlocks(2, 1).marginals, [2 / 3, 1 / 3])


@pytest.mark.slow
def test_markov_frequencies_and_lag1_correlation_match_within_confidence():
    pi = np.array([0.1, 0.5, 0.9, 0.3])
    lam = np.array([0.9, -0.5, 0.0, 0.6])
    reps, T = 400, 200
    x = TwoStateMarkov(pi, lam).sample(T, replicates=reps, seed=3).numpy().astype(float)
    # Stationary start: x[:, 0] is exactly Bernoulli(pi) across independent replicates.
    for k in range(4):
        res = stats.binomtest(int(x[:, 0, k].sum()), reps, pi[k])
        assert res.pvalue > 1e-3, (k, res)
    # Per-replicate time averages are i.i.d. across replicates: t-test their mean = pi.
    freq = x.mean(axis=1)  # [R, N]
    for k in range(4):
        assert stats.ttest_1samp(freq[:, k], pi[k]).pvalue > 1e-3
    # Lag-1 autocorrelation per replicate, then a t-test across replicates against lambda.
    c = x - pi
    lag1 = (c[:, 1:] * c[:, :-1]).mean(axis=1) / (pi * (1 - pi))  # [R, N]
    for k in range(4):
        assert stats.ttest_1samp(lag1[:, k], lam[k]).pvalue > 1e-3, (k, lag1[:, k].mean())


# --- Online estimators (CA-Fed §IV-A, (15)-(18)) --------------------------------------------------

EST_PI = np.array([0.9, 0.1, 0.5, 0.3])
EST_LAM = np.array([0.9, 0.9, -0.5, 0.0])


def run_estimator(proc, rounds: int, replicates: int, seed: int):
    mask = proc.sample(rounds, replicates=replicates, seed=seed).numpy()  # [R, T, N]
    state = estimators.init((replicates, proc.num_clients))
    for t in range(rounds):
        state = estimators.update(state, mask[:, t])
    return state, mask


def test_counts_match_a_direct_count_and_update_is_pure():
    proc = TwoStateMarkov(EST_PI, EST_LAM)
    state, mask = run_estimator(proc, 50, 3, 0)
    prev, nxt = mask[:, :-1], mask[:, 1:]
    assert state.rounds == 50 and state.transitions == 49
    np.testing.assert_array_equal(state.on, mask.sum(axis=1))
    np.testing.assert_array_equal(state.n11, (prev & nxt).sum(axis=1))
    np.testing.assert_array_equal(state.n10, (prev & ~nxt).sum(axis=1))
    np.testing.assert_array_equal(state.n00, (~prev & ~nxt).sum(axis=1))
    np.testing.assert_array_equal(state.n01, (~prev & nxt).sum(axis=1))
    before = state.on.copy()
    estimators.update(state, torch.ones(3, 4, dtype=torch.bool))
    np.testing.assert_array_equal(state.on, before)


def test_prior_alone_gives_the_prior_means():
    est = estimators.estimate(estimators.init((1, 2)), estimators.BetaPrior(on=3.0, off=1.0))
    assert_tight(est.pi, np.full((1, 2), 0.75))
    assert_tight(est.lam, np.zeros((1, 2)))


class _CodeEstimatorTranscription:
    """CA-Fed's ``BayesianActivityEstimator`` written out literally, one replicate: lists of
    active ids, a time step that starts at 1, prior pseudo-counts from the TRUE pi and
    stability, joint counts divided by ``time_step + H``."""

    def __init__(self, pi, lam, horizon=100):
        self.n = len(pi)
        self.time_step = 1
        self.horizon = horizon
        self.part_vec = np.zeros(self.n, dtype=int)
        self.part_prior = pi * horizon
        self.act_vec = np.zeros(self.n, dtype=int)
        self.inact_vec = np.zeros(self.n, dtype=int)
        self.act_prior = (pi + lam - lam * pi) * horizon
        self.inact_prior = (1 - pi + lam * pi) * horizon
        self.active = []

    def gather(self, active):
        for k in active:
            self.part_vec[k] += 1
        part_rate = (self.part_vec + self.part_prior) / (self.time_step + self.horizon)
        old, self.active = list(self.active), list(active)
        for k in range(self.n):
            if k in old and k in self.active:
                self.act_vec[k] += 1
            elif k not in old and k not in self.active:
                self.inact_vec[k] += 1
        act_rate = (self.act_vec + self.act_prior) / (self.time_step + self.horizon)
        inact_rate = (self.inact_vec + self.inact_prior) / (self.time_step + self.horizon)
        return part_rate, act_rate + inact_rate - 1

    def step(self):
        self.time_step += 1


def test_code_estimator_equals_a_literal_transcription_of_the_code_on_a_long_sequence():
    pi = np.array([0.9, 0.1, 0.5, 0.3, 0.4])
    lam = np.array([0.9, 0.9, -0.5, 0.0, -0.6])
    T, R = 3000, 2
    state = estimators.init((R, 5))
    mask = TwoStateMarkov(pi, lam).sample(T, replicates=R, seed=21).numpy()  # [R, T, N]
    code = [_CodeEstimatorTranscription(pi, lam) for _ in range(R)]
    prior = estimators.cafed_code_estimate(state, pi, lam)
    assert_tight(prior.lam, np.broadcast_to(lam, (R, 5)))  # t = 0: the prior is the truth
    for t in range(T):
        state = estimators.update(state, mask[:, t])
        got = estimators.cafed_code_estimate(state, pi, lam, horizon=100)
        for r in range(R):
            want_pi, want_lam = code[r].gather(np.flatnonzero(mask[r, t]).tolist())
            code[r].step()
            np.testing.assert_allclose(got.pi[r], want_pi, rtol=1e-13, atol=0)
            np.testing.assert_allclose(got.lam[r], want_lam, rtol=1e-13, atol=1e-13)
    assert np.all(np.abs(got.lam - lam) > 0.1)  # after 3000 rounds: far from the truth


@pytest.mark.slow
def test_conditional_estimator_converges_and_published_estimator_has_its_biased_limit():
    T, R = 20_000, 40
    state, _ = run_estimator(TwoStateMarkov(EST_PI, EST_LAM), T, R, seed=12)
    good = estimators.estimate(state)
    code = estimators.cafed_code_estimate(state, EST_PI, EST_LAM, horizon=100.0)
    a, c = two_state_transitions(EST_PI, EST_LAM)  # a = P(on->on), c = P(off->on)
    b = 1 - c
    H = 100.0
    # The code's estimate is linear in the counts, so its mean at finite T is exact:
    # E[n11] = (T-1) pi a, E[n00] = (T-1)(1 - pi) b under the stationary start, plus the
    # code's transition from its all-off initial state, off with probability 1 - pi.
    n00 = (T - 1) * (1 - EST_PI) * b + (1 - EST_PI)
    code_mean = ((T - 1) * EST_PI * a + a * H) / (T + H) + (n00 + b * H) / (T + H)
    for k in range(4):
        assert stats.ttest_1samp(good.lam[:, k], EST_LAM[k]).pvalue > 1e-3, k
        assert stats.ttest_1samp(good.pi_chain[:, k], EST_PI[k]).pvalue > 1e-3, k
        assert stats.ttest_1samp(good.pi[:, k], EST_PI[k]).pvalue > 1e-3, k
        assert stats.ttest_1samp(code.lam[:, k], code_mean[k] - 1).pvalue > 1e-3, k
    limit = estimators.cafed_code_lambda_limit(EST_PI, EST_LAM)
    assert_tight(limit, EST_PI * a + (1 - EST_PI) * b - 1)
    assert_tight(limit[0], -0.018)  # derived: pi = lambda = 0.9
    # finite-T prior weight H/(T+H) = 0.5%, pulling towards lambda
    assert np.all(np.abs(code.lam.mean(axis=0) - limit) < 0.01 * (1 + np.abs(EST_LAM - limit)))
    assert np.all(np.abs(code.lam.mean(axis=0) - EST_LAM) > 0.2)  # far from the truth


BAD_ESTIMATOR_CALLS = [
    (lambda: estimators.BetaPrior(on=0.0), "'on'", "(0, inf)"),
    (lambda: estimators.init((0, 3)), "'shape'", "entries in [1, "),
    (
        lambda: estimators.update(estimators.init((2, 3)), np.ones((2, 4), bool)),
        "'mask_t'",
        "(2, 3)",
    ),
    (lambda: estimators.update(estimators.init((1, 2)), [[0, 2]]), "'mask_t'", "boolean"),
    (
        lambda: estimators.cafed_code_estimate(estimators.init((1, 1)), [0.5], [0.5], horizon=0.0),
        "'horizon'",
        "(0, inf)",
    ),
    (
        lambda: estimators.cafed_code_estimate(estimators.init((1, 1)), [1.0], [0.5]),
        "'pi'",
        "(0, 1)",
    ),
    (
        lambda: estimators.cafed_code_estimate(estimators.init((1, 1)), [0.9], [-0.5]),
        "'lam'",
        "[1 - 1/max(pi, 1-pi), 1]",
    ),
    (
        lambda: estimators.cafed_code_estimate(estimators.init((1, 2)), [0.5] * 3, [0.5]),
        "'pi'",
        "(2,)",
    ),
    (lambda: estimators.cafed_code_lambda_limit(1.5, 0.0), "'pi'", "[0, 1]"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_ESTIMATOR_CALLS)
def test_estimator_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)


# --- Builders of the papers' populations --------------------------------------------------------


def test_cafed_paper_population_has_equal_cells():
    pop = builders.cafed_population(variant="paper", seed=1)
    proc = pop.process
    assert proc.num_clients == 24 and np.bincount(pop.group).tolist() == [12, 12]
    assert_tight(np.sort(np.unique(proc.pi)), [0.1, 0.9])
    for grp, more, corr in itertools.product((0, 1), (False, True), (False, True)):
        cell = (pop.group == grp) & (pop.more_available == more) & (pop.correlated == corr)
        assert cell.sum() == 3
        assert_tight(proc.pi[cell], np.full(3, 0.9 if more else 0.1))
    assert_tight(proc.lam[pop.correlated], np.full(12, 0.9))
    assert np.all(np.abs(proc.lam[~pop.correlated]) < 0.05)  # 5 eps


def test_cafed_code_population_correlates_only_less_available_clients():
    pop = builders.cafed_population(variant="code", seed=1)
    assert pop.correlated.sum() == 6 and not np.any(pop.correlated & pop.more_available)
    assert_tight(pop.process.lam[pop.correlated], np.full(6, 0.9))


@pytest.mark.parametrize("variant, mean, sd", [("paper", 0.0, 1e-2), ("code", 5e-3, 5e-3)])
def test_cafed_weak_correlations_follow_their_normal_law(variant, mean, sd):
    pop = builders.cafed_population(variant=variant, num_clients=8000, seed=3)
    weak = pop.process.lam[~pop.correlated]
    assert stats.kstest(weak, stats.norm(mean, sd).cdf).pvalue > 1e-3


def test_fedau_probabilities_follow_the_formula_and_the_minimum():
    counts = np.array([[3, 1, 0], [0, 0, 5], [1, 1, 2]])
    q = np.array([0.7, 0.2, 0.1])
    p = builders.fedau_participation_probabilities(counts, mean=0.1, minimum=0.05, q=q)
    kappa = counts / counts.sum(axis=1, keepdims=True)
    expected = np.maximum(0.05, 3 * 0.1 * kappa @ q)
    assert_tight(p, expected)
    assert_tight(p[1], 0.05)  # 0.3 * 0.1 = 0.03 < minimum


def dirichlet_label_counts(clients: int, classes: int, samples: int, seed: int) -> np.ndarray:
    """Dirichlet(0.1) label split (FedAU's experiments; its code's util.py) as counts
    [clients, classes]."""
    gen = np.random.default_rng(seed)
    shares = gen.dirichlet(np.full(clients, 0.1), classes)  # [C, N] split of each class
    return np.stack([gen.multinomial(samples // classes, s) for s in shares], axis=1)


def test_fedau_probabilities_exceed_one_for_cifar100_and_the_decision_is_explicit():
    # FedAU's code does not clip p_n at 1: with C = 100 classes and mean 0.1 (C * mean = 10),
    # p_n > 1 can occur.
    # It does, but only for a minority of draws of (split, q): count them over 100 seeds.
    raised = []
    for seed in range(100):
        counts = dirichlet_label_counts(250, 100, 50_000, seed=seed)
        counts = counts[counts.sum(axis=1) > 0]
        try:
            builders.fedau_participation_probabilities(counts, mean=0.1, seed=seed)
        except ParameterError as err:
            assert "'mean'" in str(err) and "above_one='cap'" in str(err)
            raised.append(seed)
            capped = builders.fedau_participation_probabilities(
                counts, mean=0.1, seed=seed, above_one="cap"
            )
            assert capped.max() == 1.0
    assert 0 < len(raised) < 50, raised
    # With 10 classes C * mean = 1 and <kappa, q> <= 1, so p_n <= 1 always.
    counts = dirichlet_label_counts(250, 10, 50_000, seed=1)
    p10 = builders.fedau_participation_probabilities(counts[counts.sum(axis=1) > 0])
    assert np.all(p10 <= 1.0) and np.all(p10 >= 0.02)


def test_mimic_static_levels():
    assert_tight(builders.mimic_static_probabilities(6, 0.2), [0.2, 0.4, 0.6, 0.8, 1.0, 0.2])


BAD_BUILDER_CALLS = [
    (lambda: builders.cafed_population(variant="authors"), "'variant'", "'code'"),
    (lambda: builders.cafed_population(num_clients=20), "'num_clients'", "multiple of 8"),
    (lambda: builders.cafed_population(g=0.5), "'g'", "[0, 0.5)"),
    (lambda: builders.cafed_population(nu=-0.5), "'lam'", "1 - 1/max(pi, 1-pi)"),
    (lambda: builders.fedau_participation_probabilities([[0, 0]]), "'label_counts'", "1 empty row"),
    (lambda: builders.fedau_participation_probabilities([[1, -1]]), "'label_counts'", "[0, inf)"),
    (lambda: builders.fedau_participation_probabilities([[1, 1]], mean=0), "'mean'", "(0, 1]"),
    (
        lambda: builders.fedau_participation_probabilities([[1, 1]], q=[0.5, 0.6]),
        "'q'",
        "summing to 1",
    ),
    (
        lambda: builders.fedau_participation_probabilities([[1, 1]], q=[0.2, 0.3, 0.5]),
        "'q'",
        "shape (2,)",
    ),
    (
        lambda: builders.fedau_participation_probabilities([[1, 1]], above_one="clip"),
        "'above_one'",
        "'cap'",
    ),
    (lambda: builders.mimic_static_probabilities(4, 1.5), "'minimum'", "[0, 1]"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_BUILDER_CALLS)
def test_builder_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
