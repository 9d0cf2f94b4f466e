"""The server's samplers (Li et al. 2020 Schemes I and II, uniform, Bernoulli): the
vectorised run equals its plain loop, the draws follow their exact inclusion laws and
expected weights (statistical criteria, fixed seeds), they sample among the available
clients, limit cases, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from fedtheory.availability import Bernoulli, TwoStateMarkov
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import (
    AverageParticipating,
    FedAvg,
    FixedWeights,
    InverseTime,
    PerStep,
    SampleBernoulli,
    SampledFedAvg,
    SampleUniform,
    SampleWithoutReplacement,
    SampleWithReplacement,
    reference,
    run_sampled,
    simulate,
)
from tests.conftest import (
    TIGHT_RTOL,
    assert_parameter_error,
    assert_tight,
    binomial_frequencies_ok,
)

N, D = 6, 3
PROB = QuadraticProblem.random(N, D, mu=0.5, L=2.0, seed=5)
P = np.array([0.05, 0.1, 0.15, 0.2, 0.2, 0.3])
PI = np.array([0.1, 0.3, 0.5, 0.6, 0.8, 1.0])
PROC = TwoStateMarkov(np.linspace(0.2, 0.9, N), 0.4)
W0 = np.array([1.0, -1.0, 2.0])
LI = PerStep(InverseTime(a=4.0, b=8.0))
SAMPLERS = {
    "scheme-I": SampleWithReplacement(3, P),
    "scheme-II": SampleWithoutReplacement(3, P),
    "uniform": SampleUniform(2),
    "bernoulli": SampleBernoulli(PI, P),
}
ALPHA = 1e-3
"""Family-wise level of each statistical check (Bonferroni over its entries)."""


@pytest.mark.parametrize("key", list(SAMPLERS))
def test_vectorised_sampled_fedavg_equals_its_plain_loop(key):
    alg = SampledFedAvg(SAMPLERS[key], local_steps=3, lr=LI, seed=7)
    rec = simulate(PROB, PROC, alg, rounds=15, replicates=4, seed=2, w0=W0)
    assert (rec.available < N).any() and (rec.participants < rec.available).any()
    assert_tight(rec.iterates, run_sampled(PROB, alg, rec.participation, W0), rtol=1e-12)
    one = simulate(PROB, PROC, alg, rounds=15, seed=2, w0=W0)
    assert_tight(one.iterates[0], reference.run(PROB, alg, one.participation[0], W0), rtol=1e-12)


AVAILABLE = {
    "all": np.ones(N, bool),
    "some": np.array([True, False, True, True, False, True]),
    "fewer-than-k": np.array([False, True, False, False, False, True]),
}


@pytest.mark.parametrize("avail", list(AVAILABLE))
@pytest.mark.parametrize("key", list(SAMPLERS))
def test_inclusion_frequencies_and_mean_weights_match_the_exact_laws(key, avail):
    sampler, reps = SAMPLERS[key], 20_000
    available = np.broadcast_to(AVAILABLE[avail], (reps, N))
    gen = np.random.default_rng(11)
    sample = sampler.draw(available, sampler.uniforms(reps, N, gen))
    assert not (sample.selected & ~available).any()  # among the available only
    assert binomial_frequencies_ok(sample.selected.mean(0), sampler.inclusion(available[0]),
                                   reps, ALPHA)  # fmt: skip
    # mean weights: within a normal interval of the sample's standard error (Bonferroni)
    expected = sampler.expected_weights(available[0])
    se = sample.weights.std(0, ddof=1) / np.sqrt(reps)
    z = stats.norm.ppf(1 - ALPHA / (2 * N))
    assert np.all(np.abs(sample.weights.mean(0) - expected) <= z * se + TIGHT_RTOL * expected)


def test_scheme_one_counts_are_multinomial():
    """Scheme I's weights are counts / K with counts ~ Multinomial(K, p) (all available):
    a chi-square test of the count of client 0 against Binomial(K, p_0)."""
    sampler, reps = SAMPLERS["scheme-I"], 20_000
    gen = np.random.default_rng(3)
    counts = sampler.draw(np.ones((reps, N), bool), sampler.uniforms(reps, N, gen)).weights * 3
    observed = np.bincount(np.rint(counts[:, 0]).astype(int), minlength=4)
    expected = stats.binom.pmf(np.arange(4), 3, P[0]) * reps
    assert stats.chisquare(observed, expected).pvalue > ALPHA


@pytest.mark.parametrize("key", list(SAMPLERS))
def test_sampling_among_an_availability_process_follows_the_conditional_law(key):
    """Per client, the number of rounds it is sampled minus the sum of its exact inclusion
    probabilities given each round's availability is within a normal bound."""
    alg = SampledFedAvg(SAMPLERS[key], local_steps=1, lr=0.1, seed=1)
    rec = simulate(PROB, PROC, alg, rounds=400, replicates=10, seed=4, w0=W0,
                   record={"selected": lambda state, mask: state.participants})  # fmt: skip
    selected, mask = rec.recorded["selected"], rec.participation  # [R, T, N]
    assert not (selected & ~mask).any()
    incl = SAMPLERS[key].inclusion(mask)
    z = stats.norm.ppf(1 - ALPHA / (2 * N))
    # the draws are independent given the masks: a sum of Bernoulli variables per client
    dev = (selected - incl).sum((0, 1))
    sd = np.sqrt((incl * (1 - incl)).sum((0, 1)))
    assert np.all(np.abs(dev) <= z * np.maximum(sd, 1e-12))


@pytest.mark.parametrize(
    ("sampler", "base"),
    [
        (SampleUniform(N), FedAvg(AverageParticipating(), local_steps=2, lr=0.1)),
        (SampleWithoutReplacement(N, P), FedAvg(FixedWeights(P), local_steps=2, lr=0.1)),
        (SampleBernoulli(np.ones(N), P), FedAvg(FixedWeights(P), local_steps=2, lr=0.1)),
    ],
)
def test_sampling_everybody_is_fedavg_with_the_same_weights(sampler, base):
    """k = N (Scheme II's n/m = 1) or pi = 1: every available client, the rule's weights."""
    avail = Bernoulli(np.full(N, 0.6))
    rec = simulate(PROB, avail, SampledFedAvg(sampler, local_steps=2, lr=0.1), rounds=8,
                   replicates=2, w0=W0)  # fmt: skip
    ref = simulate(PROB, avail, base, rounds=8, replicates=2, w0=W0)
    assert_tight(rec.iterates, ref.iterates, rtol=1e-12)


def test_bad_input_names_the_parameter():
    assert_parameter_error(lambda: SampleWithReplacement(0, P), "'k'", "[1,")
    assert_parameter_error(lambda: SampleWithoutReplacement(2, [0.5, 0.6]), "'p'", "summing to 1")
    assert_parameter_error(lambda: SampleBernoulli([0.0, 1.0], [0.5, 0.5]), "'pi'", "(0, 1]")
    assert_parameter_error(lambda: SampleBernoulli([0.5, 1.0], [1.0]), "'p'", "2")
    wrong = SampledFedAvg(SampleWithReplacement(2, [0.5, 0.5]))
    assert_parameter_error(lambda: simulate(PROB, PROC, wrong, rounds=2), "'sampler'", "N=6")
    assert_parameter_error(lambda: SampledFedAvg(SampleUniform(2), full_first_round=True),
                           "full_first_round", "False")  # fmt: skip
    assert_parameter_error(lambda: SampledFedAvg("uniform"), "'sampler'", "uniforms")
