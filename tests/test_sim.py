"""Simulator: determinism, agreement with a plain loop, limit and metamorphic cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedtheory.availability import AlternatingBlocks, TwoStateMarkov
from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import (
    AverageParticipating,
    FedAvg,
    FixedWeights,
    simulate,
    unbiased_weights,
)
from tests.conftest import assert_tight

PROB = QuadraticProblem.random(5, 3, mu=0.5, L=3.0, seed=4)
PI = np.array([0.2, 0.4, 0.5, 0.7, 0.9])
PROC = TwoStateMarkov(PI, 0.5)


def _reference_fedavg(problem, mask, weights_fn, lr, steps, w0):
    """One client at a time, readable: the definition of FedAvg (noise-free)."""
    w = np.array(w0, float)
    out = [w.copy()]
    for m in mask:
        q = weights_fn(torch.from_numpy(m[None]))[0].numpy()
        step = np.zeros_like(w)
        for k in np.flatnonzero(m):
            y = w.copy()
            for _ in range(steps):
                y = y - lr * problem.A[k] @ (y - problem.c[k])
            step += q[k] * (y - w)
        w = w + step
        out.append(w.copy())
    return np.array(out)


@pytest.mark.parametrize(
    "agg", [AverageParticipating(), unbiased_weights(PROB.alpha, PI)], ids=["avg", "unbiased"]
)
def test_vectorised_fedavg_equals_plain_loop(agg):
    rec = simulate(
        PROB,
        PROC,
        FedAvg(agg, local_steps=3, lr=0.1),
        rounds=30,
        replicates=4,
        seed=2,
        w0=np.ones(3),
    )
    for r in range(4):
        ref = _reference_fedavg(PROB, rec.participation[r], agg, 0.1, 3, np.ones(3))
        assert_tight(rec.iterates[r], ref, rtol=1e-12)


def test_one_initial_model_per_replicate_is_each_replicates_own_start():
    """``w0 [R, d]``: replicate r starts at row r and runs as it would from a common start
    equal to that row (same seed: same availability and noise per replicate)."""
    noisy = QuadraticProblem(PROB.A, PROB.c, noise_std=0.3)
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=0.1)
    starts = np.array([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0]])
    rec = simulate(noisy, PROC, alg, rounds=15, replicates=2, seed=3, w0=starts)
    np.testing.assert_array_equal(rec.iterates[:, 0], starts)
    for r in range(2):
        common = simulate(noisy, PROC, alg, rounds=15, replicates=2, seed=3, w0=starts[r])
        np.testing.assert_array_equal(rec.iterates[r], common.iterates[r])
    with pytest.raises(ParameterError, match="'w0' parameter of simulate"):
        simulate(noisy, PROC, alg, rounds=2, replicates=3, seed=3, w0=starts)


def test_same_seed_same_numbers_and_noise_depends_on_seed():
    noisy = QuadraticProblem(PROB.A, PROB.c, noise_std=0.3)
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=0.1)
    a = simulate(noisy, PROC, alg, rounds=20, replicates=3, seed=5)
    b = simulate(noisy, PROC, alg, rounds=20, replicates=3, seed=5)
    c = simulate(noisy, PROC, alg, rounds=20, replicates=3, seed=6)
    np.testing.assert_array_equal(a.iterates, b.iterates)
    assert not np.array_equal(a.iterates, c.iterates)


def test_always_available_every_rule_is_full_participation():
    full = TwoStateMarkov(np.full(5, 0.999999), 0.0)  # available with prob. 1 - 1e-6
    ones = AlternatingBlocks(1, 1, group1=[True] * 5)  # group 1 every other round ...
    alg_avg = FedAvg(AverageParticipating(), lr=0.1)
    alg_unb = FedAvg(FixedWeights(PROB.alpha), lr=0.1)  # = unbiased with pi = 1
    rec = simulate(PROB, full, alg_avg, rounds=10, seed=0)
    assert rec.participation.all()
    rec_u = simulate(PROB, full, alg_unb, rounds=10, seed=0)
    assert_tight(rec.iterates, rec_u.iterates, rtol=1e-12)  # alpha uniform: same rule
    assert ones.sample(2)[0, 1].sum() == 0  # ... and nobody in the other: w unchanged
    rec_b = simulate(PROB, ones, alg_avg, rounds=2, seed=0)
    np.testing.assert_array_equal(rec_b.iterates[0, 2], rec_b.iterates[0, 1])


def test_permuting_clients_changes_nothing():
    perm = np.array([3, 0, 4, 1, 2])
    prob_p = QuadraticProblem(PROB.A[perm], PROB.c[perm])
    proc_p = TwoStateMarkov(PI[perm], 0.5)
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=0.1)
    mask = PROC.sample(15, seed=1)[0].numpy()
    ref = _reference_fedavg(PROB, mask, AverageParticipating(), 0.1, 2, np.zeros(3))
    ref_p = _reference_fedavg(prob_p, mask[:, perm], AverageParticipating(), 0.1, 2, np.zeros(3))
    assert_tight(ref, ref_p, rtol=1e-12)
    assert simulate(prob_p, proc_p, alg, rounds=3).iterates.shape == (1, 4, 3)


def test_one_client_reduces_to_gradient_descent():
    one = QuadraticProblem(PROB.A[:1], PROB.c[:1])
    rec = simulate(
        one,
        AlternatingBlocks(1, 1, group1=[True]),
        FedAvg(AverageParticipating(), local_steps=1, lr=0.2),
        rounds=1,
        w0=np.ones(3),
    )
    gd = np.ones(3) - 0.2 * one.A[0] @ (np.ones(3) - one.c[0])
    assert_tight(rec.iterates[0, 1], gd, rtol=1e-12)


def test_divergence_stops_with_round_replicate_and_algorithm():
    label = r"fedavg\[avg-participating\]"
    with pytest.raises(DivergenceError, match=rf"{label} diverged in round \d+ of replicate 0"):
        simulate(
            PROB, PROC, FedAvg(AverageParticipating(), local_steps=5, lr=5.0), rounds=2000, seed=0
        )
