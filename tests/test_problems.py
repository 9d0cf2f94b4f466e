"""Quadratic problems: exact minimisers and constants, checked against first principles."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given

from fedtheory.problems import QuadraticProblem
from tests.conftest import assert_near_zero, assert_tight
from tests.strategies import quadratic_problems, simplex


@given(quadratic_problems(), simplex(5))
def test_optimum_has_zero_weighted_gradient(problem, raw):
    p = raw[: problem.num_clients] / raw[: problem.num_clients].sum()
    w, value = problem.optimum(p)
    grads = problem.grad(
        torch.from_numpy(np.tile(w, (problem.num_clients, 1))), torch.arange(problem.num_clients)
    ).numpy()
    assert_near_zero(p @ grads, atol=1e-9 * (1 + np.abs(grads).max()))
    assert_tight(value, problem.loss(w, p))


@given(quadratic_problems())
def test_constants_bound_every_curvature(problem):
    eig = np.linalg.eigvalsh(problem.A)
    assert problem.mu == eig.min() and problem.L == eig.max()
    assert problem.kappa >= 1.0
    assert_near_zero(problem.client_losses(problem.c).diagonal())  # F_k(w_k^*) = F_k^* = 0


def test_gamma_is_heterogeneity_at_optimum():
    prob = QuadraticProblem.example1(0.0, 1.0)
    # F = ((x)^2 + (x-1)^2)/2 with x* = 1/2, F_k(x*) = 1/4
    assert_tight(prob.gamma(), 0.25)
    assert_tight(prob.gamma([0.9, 0.1]), 0.81)  # w_B^* = 0.1: F_1 = 0.01, F_2 = 0.81
    identical = QuadraticProblem(np.ones((3, 2, 2)) * np.eye(2), np.ones((3, 2)))
    assert_near_zero(identical.gamma())
