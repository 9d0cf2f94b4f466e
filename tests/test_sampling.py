"""Samplers of exactly m of N clients (fedtheory.availability.sampling), shared by MimiC's
time-varying participation and E3CS's selectors: inclusion frequencies against the exact
laws, the successive sampler's bias (refutation of "inclusion probabilities = p"), the
subset enumeration against brute force, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from fedtheory import rng
from fedtheory.availability.sampling import (
    capped_inclusion_probabilities,
    successive_inclusion_probabilities,
    successive_sample,
    systematic_sample,
)
from tests.conftest import assert_parameter_error, assert_tight, binomial_frequencies_ok

ALPHA = 1e-4
"""Family-wise level of the frequency tests (Bonferroni over clients)."""

N_DRAWS = 200_000
P_TEST = np.array([0.95, 0.7, 0.5, 0.35, 0.3, 0.2])  # E3CS-like allocation, sums to k = 3
P_ONES = np.array([1.0, 1.0, 0.5, 0.25, 0.25, 0.0])  # two capped clients, one zero, k = 3
W_MIMIC = np.array([0.4, 0.3, 0.2, 0.1])  # MimiC-like weights, m = 2: capped p = 2 w


def _draws(sampler, weights, m, *, n=N_DRAWS, seed=0) -> np.ndarray:
    """``n`` independent draws ``bool [n, N]`` from the counter-based SELECTION stream."""
    return sampler(np.tile(weights, (n, 1)), m, rng.numpy_rng(seed, 0, rng.SELECTION))


def _rejection_pvalue(freq, p, n) -> float:
    """Bonferroni p-value of "the inclusion probabilities are p"."""
    z = np.abs(freq - p) / np.sqrt(p * (1 - p) / n)
    return float(min(1.0, 2 * stats.norm.sf(z.max()) * p.size))


def _inclusion_by_permutations(w: np.ndarray, m: int) -> np.ndarray:
    """Successive sampling's inclusion probabilities over all ordered draws (brute force)."""
    incl = np.zeros(len(w))
    for seq in itertools.permutations(range(len(w)), m):
        prob, rest = 1.0, w.sum()
        for i in seq:
            prob *= w[i] / rest
            rest -= w[i]
        incl[list(seq)] += prob
    return incl


@pytest.mark.parametrize("sampler", [systematic_sample, successive_sample])
def test_samplers_pick_exactly_m_and_never_a_zero_weight(sampler):
    sel = _draws(sampler, P_ONES, 3, n=5000)
    assert sel.dtype == bool and sel.shape == (5000, 6)
    assert np.all(sel.sum(axis=1) == 3) and not sel[:, 5].any()


@pytest.mark.parametrize("sampler", [systematic_sample, successive_sample])
def test_samplers_are_deterministic_given_the_stream(sampler):
    a, b, c = (_draws(sampler, P_TEST, 3, n=50, seed=s) for s in (4, 4, 5))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_systematic_always_takes_capped_clients_successive_does_not():
    assert _draws(systematic_sample, P_ONES, 3, n=5000)[:, :2].all()
    # successive sampling misses a p = 1 client with positive probability: E3CS's capped
    # clients (S_t) are not sure to be selected as implemented
    assert successive_inclusion_probabilities(P_ONES, 3)[0] < 0.99
    assert not _draws(successive_sample, P_ONES, 3, n=5000)[:, :2].all()


@pytest.mark.parametrize("weights, m", [(P_TEST, 3), (W_MIMIC, 2)])
def test_systematic_sampling_has_inclusion_probabilities_exactly_p(weights, m):
    p = capped_inclusion_probabilities(weights[None], m)[0]
    freq = _draws(systematic_sample, p, m).mean(axis=0)
    assert binomial_frequencies_ok(freq, p, N_DRAWS, ALPHA)


@pytest.mark.parametrize("weights, m", [(P_TEST, 3), (W_MIMIC, 2)])
def test_successive_sampling_follows_the_enumeration_and_refutes_proportional_inclusion(weights, m):
    proportional = capped_inclusion_probabilities(weights[None], m)[0]
    exact = successive_inclusion_probabilities(weights, m)
    assert np.max(np.abs(exact - proportional)) > 0.03  # the bias, exactly
    freq = _draws(successive_sample, weights, m, seed=1).mean(axis=0)
    assert binomial_frequencies_ok(
        freq, exact, N_DRAWS, ALPHA
    )  # the enumeration describes the sampler ...
    assert _rejection_pvalue(freq, proportional, N_DRAWS) < 1e-12  # ... and p is rejected


def test_mimic_instance_successive_bias_value():
    # w = (0.4, 0.3, 0.2, 0.1), m = 2: P(client 0) = 0.4 + sum_j 0.4 w_j / (1 - w_j) by
    # hand (first draw, or second after j), against 2 w_0 = 0.8 if proportional.
    assert_tight(capped_inclusion_probabilities(W_MIMIC[None], 2)[0], 2 * W_MIMIC)
    by_hand = 0.4 + sum(w * 0.4 / (1 - w) for w in (0.3, 0.2, 0.1))
    assert_tight(successive_inclusion_probabilities(W_MIMIC, 2)[0], by_hand)
    assert abs(by_hand - 0.8) > 0.08


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_successive_enumeration_equals_brute_force_and_limits(m):
    w = np.minimum(np.random.default_rng(m).dirichlet(np.ones(6)) * m, 1.0)
    assert_tight(successive_inclusion_probabilities(w, m), _inclusion_by_permutations(w, m))
    assert_tight(successive_inclusion_probabilities(3.0 * w, m), _inclusion_by_permutations(w, m))
    if m == 1:  # a single draw has marginals w / sum w
        assert_tight(successive_inclusion_probabilities(w, 1), w / w.sum())
    assert_tight(successive_inclusion_probabilities(np.full(6, m / 6), m), np.full(6, m / 6))


@given(st.lists(st.floats(0.01, 10.0), min_size=2, max_size=12), st.data())
def test_capped_inclusion_probabilities_sum_to_m_and_are_proportional_below_the_cap(w, data):
    w = np.array(w)
    m = data.draw(st.integers(1, len(w)))
    p = capped_inclusion_probabilities(w[None], m)[0]
    assert_tight(p.sum(), m)
    assert np.all(p <= 1 + 1e-12)
    free = p < 1 - 1e-9
    if free.any():
        ratio = p[free] / w[free]
        assert_tight(ratio, np.full(ratio.shape, ratio[0]), rtol=1e-7)
        assert w[~free].min(initial=np.inf) >= w[free].max() * (1 - 1e-9)


# ---------------------------------------------------------------- bad input

GEN = np.random.default_rng(0)
P_OK = np.full((2, 5), 0.4)

BAD_CALLS = [
    (lambda: successive_sample(np.ones((2, 3)), 4, GEN), "'m'", "[1, 3]"),
    (lambda: successive_sample([[1.0, 0.0, 0.0]], 2, GEN), "'m'", "of a row (1)"),
    (lambda: successive_sample(-P_OK, 2, GEN), "'weights'", "[0, inf)"),
    (lambda: successive_sample(P_OK, 2, None), "'generator'", "numpy.random.Generator"),
    (lambda: successive_sample(P_OK, 2, torch.Generator()), "'generator'", "(Generator) instead"),
    (lambda: systematic_sample(P_OK, 3, GEN), "'inclusion'", "summing to m=3"),
    (lambda: systematic_sample(P_OK * 3, 5, GEN), "'inclusion'", "[0, 1]"),
    (lambda: systematic_sample(P_OK, 6, GEN), "'m'", "[1, 5]"),
    (lambda: systematic_sample(P_OK, 2, None), "'generator'", "numpy.random.Generator"),
    (lambda: successive_inclusion_probabilities([0.5, -1.5], 1), "'weights'", "[0, inf)"),
    (lambda: successive_inclusion_probabilities(np.full(17, 0.1), 1), "'len(weights)'", "[1, 16]"),
    (lambda: successive_inclusion_probabilities([1.0, 0.0], 2), "'m'", "of a row (1)"),
    (lambda: capped_inclusion_probabilities(np.zeros((1, 3)), 1), "'weights'", "(0, inf)"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
