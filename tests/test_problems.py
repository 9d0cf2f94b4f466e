"""Quadratic problems: exact minimisers and constants, checked against first principles."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.testing.strategies import quadratic_problems, simplex
from tests.conftest import assert_near_zero, assert_tight, assert_upper_bound


@given(quadratic_problems(), simplex(5))
def test_optimum_has_zero_weighted_gradient(problem, raw):
    p = raw[: problem.num_clients] / raw[: problem.num_clients].sum()
    w, value = problem.optimum(p)
    grads = problem.grad(
        torch.from_numpy(np.tile(w, (problem.num_clients, 1))), torch.arange(problem.num_clients)
    ).numpy()
    assert_near_zero(p @ grads, atol=1e-9 * (1 + np.abs(grads).max()))
    assert_tight(value, problem.loss(w, p))


@given(
    st.integers(2, 5), st.integers(1, 3), st.floats(0.1, 2.0), st.floats(1.0, 20.0),
    st.integers(0, 2**31 - 1),
)  # fmt: skip
def test_constants_bound_every_curvature(n, d, mu, ratio, seed):
    """mu and L are the extreme curvatures requested (attained by construction), and every
    curvature measured from gradient differences along random directions lies between them."""
    problem = QuadraticProblem.random(n, d, mu=mu, L=mu * ratio, seed=seed)
    assert_tight([problem.mu, problem.L], [mu, mu * ratio])
    assert_tight(problem.kappa, ratio)
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(64 * n, d, generator=gen, dtype=torch.float64)
    v = torch.randn(64 * n, d, generator=gen, dtype=torch.float64)
    clients = torch.arange(n).repeat(64)
    curvature = ((problem.grad(w + v, clients) - problem.grad(w, clients)) * v).sum(1) / (
        v * v
    ).sum(1)
    assert_upper_bound(mu, curvature.numpy())
    assert_upper_bound(curvature.numpy(), mu * ratio)
    assert_near_zero(problem.client_losses(problem.c).diagonal())  # F_k(w_k^*) = F_k^* = 0


def test_one_eigenvalue_cannot_attain_two_extremes():
    # it used to return mu = L = 10 silently for mu=1, L=10 (the first entry was overwritten)
    with pytest.raises(ParameterError, match="'L' parameter of QuadraticProblem.random"):
        QuadraticProblem.random(1, 1, mu=1.0, L=10.0)
    assert_tight([QuadraticProblem.random(1, 1, mu=2.0, L=2.0).mu], [2.0])


def test_gamma_is_heterogeneity_at_optimum():
    prob = QuadraticProblem.example1(0.0, 1.0)
    # F = ((x)^2 + (x-1)^2)/2 with x* = 1/2, F_k(x*) = 1/4
    assert_tight(prob.gamma(), 0.25)
    assert_tight(prob.gamma([0.9, 0.1]), 0.81)  # w_B^* = 0.1: F_1 = 0.01, F_2 = 0.81
    identical = QuadraticProblem(np.ones((3, 2, 2)) * np.eye(2), np.ones((3, 2)))
    assert_near_zero(identical.gamma())


def test_gamma_says_which_heterogeneity_cafed_max_or_li_et_al_weighted_gap():
    """CA-Fed's Gamma = max_k F_k(w_p^*) - F_k^* (the default, unchanged) and Li et al.
    2020's Gamma = F^* - sum_k p_k F_k^*, each recomputed from the client losses."""
    from scipy.optimize import minimize

    problem = QuadraticProblem.random(4, 2, seed=3)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    w_star = minimize(lambda w: problem.loss(w, p), np.zeros(2), tol=1e-12).x
    f_star = problem.loss(w_star, p)
    client_minima = [minimize(lambda w, k=k: problem.client_losses(w)[k], np.zeros(2),
                              tol=1e-12).fun for k in range(4)]  # fmt: skip
    li = problem.gamma(p, kind="li")
    assert li == pytest.approx(f_star - np.dot(p, client_minima), abs=1e-8)
    losses = problem.client_losses(w_star)
    assert problem.gamma(p) == problem.gamma(p, kind="cafed")
    assert problem.gamma(p) == pytest.approx(np.max(losses - client_minima), abs=1e-6)
    assert 0 <= li <= problem.gamma(p)  # a weighted mean below the max
    with pytest.raises(ParameterError, match="'kind' parameter of QuadraticProblem.gamma"):
        problem.gamma(kind="fedavg")
