"""MimiC objective bias Omega^t: vectorised path against a plain loop, zero for identical
clients and full participation, non-vanishing for heterogeneous clients with unequal dropout."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fedtheory.availability import TwoStateMarkov
from fedtheory.bounds import mimic
from fedtheory.problems import QuadraticProblem
from tests.conftest import assert_near_zero, assert_tight


def _loop_reference(problem, w, mask):
    R, T, N = mask.shape
    out = np.zeros((R, T, problem.dim))
    for r in range(R):
        for t in range(T):
            grads = [
                problem.grad(torch.tensor(w[r, t])[None], torch.tensor([i]))[0].numpy()
                for i in range(N)
            ]
            full = sum(problem.alpha[i] * grads[i] for i in range(N))
            active = [grads[i] for i in range(N) if mask[r, t, i]]
            agg = sum(active) / len(active) if active else np.zeros(problem.dim)
            out[r, t] = agg - full
    return out


def test_vectorised_bias_equals_plain_loop():
    prob = QuadraticProblem.random(4, 3, seed=2)
    mask = TwoStateMarkov([0.9, 0.6, 0.3, 0.2], 0.3).sample(6, replicates=3, seed=1).numpy()
    w = np.random.default_rng(0).normal(size=(3, 6, 3))
    res = mimic.objective_bias(prob, w, mask)
    assert_tight(res.omega, _loop_reference(prob, w, mask))
    assert_tight(res.squared_norm, np.sum(res.omega**2, -1))


def test_identical_clients_and_full_participation_give_zero_bias():
    same = QuadraticProblem(np.tile(np.diag([1.0, 3.0]), (4, 1, 1)), np.ones((4, 2)))
    mask = TwoStateMarkov([0.9, 0.6, 0.3, 0.2], 0.0).sample(50, replicates=2, seed=3).numpy()
    mask[:, :, 0] = True  # no empty round: identical clients then agree with grad f exactly
    w = np.random.default_rng(1).normal(size=(2, 50, 2))
    assert_near_zero(mimic.objective_bias(same, w, mask).omega, atol=1e-12)
    hetero = QuadraticProblem.random(4, 2, seed=5)  # uniform alpha
    full = np.ones((2, 50, 4), dtype=bool)
    assert_near_zero(mimic.objective_bias(hetero, w, full).omega, atol=1e-12)


def test_unequal_dropout_bias_does_not_vanish_but_equal_dropout_mean_does():
    prob = QuadraticProblem.random(3, 2, spread=2.0, seed=7)
    point = prob.optimum()[0]
    rounds, reps = 3000, 4
    unequal = TwoStateMarkov([0.9, 0.5, 0.1], 0.0).sample(rounds, replicates=reps, seed=0)
    equal = TwoStateMarkov([0.5, 0.5, 0.5], 0.0).sample(rounds, replicates=reps, seed=0)
    for mask, vanishing_mean in ((unequal.numpy(), False), (equal.numpy(), True)):
        res = mimic.objective_bias(prob, point, mask)
        se = res.omega.std(axis=1) / math.sqrt(rounds)  # [R, d]
        if vanishing_mean:
            assert np.all(np.abs(res.mean_bias) <= 4.5 * se)
        else:
            assert np.all(np.max(np.abs(res.mean_bias) / se, axis=1) > 10)
        sq_se = res.squared_norm.std(axis=1) / math.sqrt(rounds)
        assert np.all(res.mismatch > 10 * sq_se)  # E||Omega||^2 > 0 in both cases


def test_weighted_average_uses_the_rates():
    prob = QuadraticProblem.random(2, 1, seed=0)
    mask = np.array([[[True, False], [False, True]]])
    res = mimic.objective_bias(prob, np.zeros(1), mask, eta=[3.0, 1.0])
    assert_tight(res.mismatch, (3 * res.squared_norm[:, 0] + res.squared_norm[:, 1]) / 4)
    sched = mimic.lemma6_schedule(2.0, 5.0, 4)
    assert_tight(sched, 2.0 / (np.arange(4) + 5.0))


def test_noisy_problems_and_wrong_masks_are_refused():
    noisy = QuadraticProblem.random(2, 1, noise_std=0.1, seed=0)
    with pytest.raises(ValueError, match="noise_std"):
        mimic.objective_bias(noisy, np.zeros(1), np.ones((1, 2, 2), dtype=bool))
    with pytest.raises(ValueError, match="'mask' parameter of objective_bias"):
        mimic.objective_bias(QuadraticProblem.random(3, 1, seed=0), np.zeros(1), np.ones((1, 2, 2)))
