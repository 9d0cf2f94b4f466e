"""Data-backed problems inside the simulator and the CA-Fed decomposition."""

from __future__ import annotations

import numpy as np

from fedtheory.availability import Bernoulli
from fedtheory.data import cafed_clustered, gaussian_linear
from fedtheory.problems import LeastSquaresProblem, LogisticRegressionProblem
from fedtheory.sim import FedAvg, FixedWeights, simulate
from tests.conftest import assert_upper_bound


def test_full_participation_full_batch_fedavg_reaches_the_certified_optimum():
    prob = LogisticRegressionProblem(cafed_clustered(6, 4, 30, seed=0))
    step = 1 / prob.L  # E = 1, full participation: gradient descent on F
    run = simulate(prob, Bernoulli(np.ones(6)), FedAvg(FixedWeights(prob.alpha), lr=step),
                   rounds=400)  # fmt: skip
    gap = run.metrics["gap"][0]
    # F(w) and F* are evaluated in different batches: a few ulps of F* of rounding on top
    rounding = 4 * np.finfo(float).eps * abs(prob.optimum()[1])
    assert gap[-1] <= 1e-8 and gap[-1] >= -prob.optimality_gap_bound() - rounding
    assert np.all(np.diff(gap) <= 1e-15)  # descent lemma with step 1/L
    assert run.metrics["grad_sq"][0, -1] <= 2 * prob.L * (gap[-1] + 1e-15)
    assert 0.5 < run.metrics["accuracy"][0, -1] <= 1


def test_cafed_theorems_hold_along_minibatch_runs_on_cafed_data():
    from fedtheory.bounds import cafed

    prob = LogisticRegressionProblem(cafed_clustered(8, 4, 40, seed=1), batch_size=8)
    pi = np.linspace(0.2, 0.9, 8)
    p_eff = pi * prob.alpha / np.sum(pi * prob.alpha)  # q = alpha
    run = simulate(prob, Bernoulli(pi), FedAvg(FixedWeights(prob.alpha), lr=0.3, local_steps=2),
                   rounds=60, replicates=4, seed=3)  # fmt: skip
    dec = cafed.decomposition(prob, run.iterates, p_eff)
    assert_upper_bound(dec.measured, dec.theorem1.total)
    assert_upper_bound(dec.measured, dec.theorem3.total)


def test_least_squares_in_the_simulator_is_deterministic():
    prob = LeastSquaresProblem(gaussian_linear(5, 3, 12, seed=2), batch_size=4)
    algo = FedAvg(FixedWeights(prob.alpha), lr=0.05, local_steps=3)
    a = simulate(prob, Bernoulli(np.full(5, 0.5)), algo, rounds=30, replicates=3, seed=9)
    b = simulate(prob, Bernoulli(np.full(5, 0.5)), algo, rounds=30, replicates=3, seed=9)
    assert np.array_equal(a.iterates, b.iterates)
    assert a.metrics["gap"][:, -1].max() < a.metrics["gap"][:, 0].min()
