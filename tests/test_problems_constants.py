"""Constants on a ball (CA-Fed Lemma 1: D, G, H), noise variances, least squares' exact
constants: each bound is checked against the quantity at random points of the ball, and the
exact ones are checked to be attained."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from fedtheory.data import FederatedDataset, gaussian_linear
from fedtheory.problems import (
    Ball,
    LeastSquaresProblem,
    LogisticRegressionProblem,
    MultinomialLogisticProblem,
    QuadraticProblem,
    max_quadratic_on_ball,
)
from fedtheory.testing.strategies import federated_datasets, quadratic_problems, simplex
from tests.conftest import assert_parameter_error, assert_tight, assert_upper_bound


def points_in_ball(ball: Ball, count: int, seed: int) -> np.ndarray:
    """``count`` points ``[count, d]``: half on the sphere, half inside."""
    gen = np.random.default_rng(seed)
    u = gen.standard_normal((count, ball.dim))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    radius = np.where(np.arange(count) % 2 == 0, 1.0, gen.random(count) ** (1 / ball.dim))
    return ball.center + ball.radius * radius[:, None] * u


@st.composite
def balls(draw, dim: int):
    center = np.array(draw(st.lists(st.floats(-2, 2), min_size=dim, max_size=dim)))
    return Ball(center, draw(st.floats(0.05, 3.0)))


@given(st.integers(0, 2**31 - 1), st.floats(0.05, 3.0))
def test_trust_region_maximum_equals_brute_force_in_2d(seed, radius):
    gen = np.random.default_rng(seed)
    M = gen.standard_normal((2, 2))
    Q = M + M.T  # indefinite, convex or concave
    b, a = gen.standard_normal(2), gen.standard_normal()
    ball = Ball(gen.standard_normal(2), radius)
    r = radius * np.sqrt(np.linspace(0, 1, 300))[:, None]
    theta = np.linspace(0, 2 * np.pi, 2000)
    grid = ball.center + r[..., None] * np.stack([np.cos(theta), np.sin(theta)], -1)[None]
    values = 0.5 * np.einsum("...i,ij,...j->...", grid, Q, grid) + grid @ b + a
    bound = max_quadratic_on_ball(Q, b, a, ball)
    scale = 1 + np.abs(values).max()
    assert_upper_bound(values.max(), bound)  # certified against every grid point

    # attained: polish the best grid point with a constrained local solver (the grid alone
    # misses an interior maximum by its resolution), then compare with the bound
    def neg(x):
        return -(0.5 * x @ Q @ x + b @ x + a)

    start = grid.reshape(-1, 2)[np.argmax(values)]
    inside = {"type": "ineq", "fun": lambda x: radius**2 - np.sum((x - ball.center) ** 2)}
    x = minimize(neg, start, constraints=[inside], method="SLSQP", tol=1e-14).x
    x = ball.center + (x - ball.center) * radius / max(np.linalg.norm(x - ball.center), radius)
    polished = -neg(x)  # at a feasible witness (SLSQP may end a hair outside the ball)
    assert_upper_bound(polished, bound)
    assert bound - max(polished, values.max()) <= 1e-7 * scale


def test_trust_region_hard_case_and_zero_radius():
    # g orthogonal to the top eigenvector: the "hard case" of the trust-region problem
    Q, b = np.diag([2.0, -1.0]), np.array([0.0, 0.5])
    ball = Ball([0.0, 0.0], 1.0)
    theta = np.linspace(0, 2 * np.pi, 200001)
    u = np.stack([np.cos(theta), np.sin(theta)], -1)
    brute = np.max(0.5 * (2 * u[:, 0] ** 2 - u[:, 1] ** 2) + 0.5 * u[:, 1])
    assert_tight(max_quadratic_on_ball(Q, b, 0.0, ball), brute, rtol=1e-8)
    assert_tight(max_quadratic_on_ball(Q, b, 1.5, Ball([0.0, 2.0], 0.0)), 1.5 - 2.0 + 1.0)
    # a linear term below the float spacing at the multiplier (found by the bounds module)
    for tiny in (1e-103, 1e-300, 0.0):
        value = max_quadratic_on_ball(2 * np.eye(1), np.array([tiny]), 0.0, Ball([0.0], 1.0))
        assert_tight(value, 1.0)


def check_lemma_one(problem, ball, weights, seed):
    const = problem.lemma1_constants(ball, weights)
    w_ref, _ = problem.optimum(weights)
    pts = points_in_ball(ball, 40, seed)
    grads = np.stack([problem.client_grads(w) for w in pts])  # [P, N, d]
    grad_sq = np.sum(grads**2, -1)
    noise = np.stack([problem.noise_variance(w) for w in pts])  # [P, N]
    gap = np.abs(problem.client_losses(pts) - problem.client_losses(w_ref))
    assert_upper_bound(np.sqrt(grad_sq), const.D_k)
    assert_upper_bound(grad_sq + noise, const.G_k**2)
    assert_upper_bound(gap, const.H_k)
    assert_upper_bound(noise, problem.max_noise_variance(ball))
    assert const.D == const.D_k.max() and const.G >= const.D
    return const, pts


@settings(max_examples=25)
@given(quadratic_problems(max_dim=2), st.floats(0.0, 2.0), st.data())
def test_quadratic_lemma_one_constants_are_exact_suprema(problem, noise_std, data):
    problem = QuadraticProblem(problem.A, problem.c, alpha=problem.alpha, noise_std=noise_std)
    ball = data.draw(balls(problem.dim))
    const, _ = check_lemma_one(problem, ball, None, data.draw(st.integers(0, 2**31)))
    assert const.exact
    # attained: dense boundary search in d <= 2 (the maximum of a convex function is there)
    if problem.dim == 1:
        edge = ball.center + np.array([[-ball.radius], [ball.radius]])
    else:
        t = np.linspace(0, 2 * np.pi, 2001)
        edge = ball.center + ball.radius * np.stack([np.cos(t), np.sin(t)], -1)
    g = np.stack([problem.client_grads(w) for w in edge])
    d_best = np.sqrt(np.sum(g**2, -1)).max(0)
    assert np.all(const.D_k - d_best <= 1e-3 * (1 + const.D_k))


@settings(max_examples=20)
@given(st.integers(1, 4), st.integers(1, 3), st.floats(0.0, 1.0), st.data())
def test_least_squares_lemma_one_and_noise_forms(n, d, ridge, data):
    seed = data.draw(st.integers(0, 2**31))
    prob = LeastSquaresProblem(gaussian_linear(n, d, 6, seed=seed), ridge=ridge, batch_size=4)
    ball = data.draw(balls(d))
    const, pts = check_lemma_one(prob, ball, None, seed)
    assert const.exact
    assert_tight(prob.noise_forms()(pts), np.stack([prob.noise_variance(w) for w in pts]),
                 rtol=1e-8)  # fmt: skip
    assert_tight(prob.loss_forms()(pts), prob.client_losses(pts), rtol=1e-10)


@settings(max_examples=20)
@given(st.one_of(federated_datasets(), federated_datasets(num_classes=3)), st.data())
def test_logistic_lemma_one_bounds_hold_in_the_ball(data_set, data):
    cls = LogisticRegressionProblem if data_set.num_classes is None else MultinomialLogisticProblem
    prob = cls(data_set, ridge=0.1, batch_size=3)
    ball = data.draw(balls(prob.dim))
    const, _ = check_lemma_one(prob, ball, None, data.draw(st.integers(0, 2**31)))
    assert not const.exact


@settings(max_examples=30)
@given(federated_datasets(), st.data())
def test_logistic_curvature_on_a_ball_brackets_every_hessian(data_set, data):
    prob = LogisticRegressionProblem(data_set, ridge=0.05)
    ball = data.draw(balls(prob.dim))
    mu_w, L_w = prob.curvature_on_ball(ball)
    assert prob.mu <= mu_w <= L_w <= prob.L * (1 + 1e-12)
    pts = torch.from_numpy(points_in_ball(ball, 20, data.draw(st.integers(0, 2**31))))
    H = prob._weighted_hessian(pts[:, None, :], prob._X, prob._y, prob._mean_weight)
    eig = torch.linalg.eigvalsh(H).numpy() + prob.ridge  # [P, N, d]
    assert_upper_bound(mu_w, eig.min())
    assert_upper_bound(eig.max(), L_w)


@settings(max_examples=20)
@given(st.integers(1, 4), st.integers(1, 3), st.floats(0.0, 1.0), simplex(4), st.integers(0, 99))
def test_least_squares_constants_and_optimum_are_exact(n, d, ridge, raw, seed):
    data = gaussian_linear(n, d, 5, seed=seed)
    prob = LeastSquaresProblem(data, ridge=ridge)
    p = raw[:n] / raw[:n].sum()
    A = [data.client(k)[0].T @ data.client(k)[0] / 5 + ridge * np.eye(d) for k in range(n)]
    m = [data.client(k)[0].T @ data.client(k)[1] / 5 for k in range(n)]
    eig = np.linalg.eigvalsh(np.array(A))
    assert_tight(prob.L, eig.max())
    assert_tight(prob.mu, eig.min())
    H, rhs = (
        sum(pk * Ak for pk, Ak in zip(p, A, strict=True)),
        sum(pk * mk for pk, mk in zip(p, m, strict=True)),
    )
    w_exact = np.linalg.lstsq(H, rhs, rcond=None)[0]
    w, value = prob.optimum(p)
    assert_tight(prob.loss(w, p), prob.loss(w_exact, p), rtol=1e-12)
    assert_tight(value, prob.loss(w_exact, p), rtol=1e-12)


@pytest.mark.slow
def test_quadratic_noise_variance_matches_monte_carlo():
    prob = QuadraticProblem.random(3, 4, noise_std=0.7, seed=1)
    w = np.ones(4)
    reps = 20000
    clients = torch.arange(3).repeat(reps)
    points = torch.from_numpy(np.tile(w, (len(clients), 1)))
    g = prob.grad(points, clients, torch.Generator().manual_seed(0)).numpy()
    exact = prob.client_grads(w)[clients.numpy()]
    sq = np.sum((g - exact) ** 2, -1)
    assert abs(sq.mean() - prob.noise_variance(w)[0]) <= 5 * sq.std() / np.sqrt(len(sq))


def test_ball_projection_and_membership():
    ball = Ball([1.0, 0.0], 2.0)
    w = np.array([[1.0, 5.0], [1.5, 0.5]])
    proj = ball.project(w)
    assert_tight(proj[0], [1.0, 2.0])
    assert_tight(proj[1], w[1])
    assert ball.contains(proj).all() and not ball.contains(w[0])


BAD_CALLS = [
    (lambda: Ball([0.0], -1.0), "'radius'", "[0, inf)"),
    (lambda: Ball([[0.0]], 1.0), "'center'", "1 dimension"),
    (
        lambda: QuadraticProblem.random(2, 2).lemma1_constants(Ball([0.0], 1.0)),
        "'ball'",
        "dimension 2",
    ),
    (lambda: LeastSquaresProblem(gaussian_linear(2, 2, 3), ridge=-1.0), "'ridge'", "[0, inf)"),
    (
        lambda: FederatedDataset.from_clients([np.ones((2, 2))], [[0.0]]),
        "'features'",
        "n_k >= 1",
    ),
    (lambda: gaussian_linear(0, 2, 3), "'num_clients'", "[1, 2147483647]"),
    (lambda: gaussian_linear(2, 2, 3, noise=-0.1), "'noise'", "[0, 1e+06]"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
