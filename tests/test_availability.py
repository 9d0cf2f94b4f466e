"""Availability processes: marginals, lag-1 correlation, determinism and restart."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from fedtheory.availability import AlternatingBlocks, TwoStateMarkov

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
