"""Ridge logistic regression (binary and multinomial): gradients, Hessians, optimum,
certified constants, mini-batch sampling and its exact noise variance."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.data import FederatedDataset, cafed_clustered
from fedtheory.problems import LogisticRegressionProblem, MultinomialLogisticProblem
from fedtheory.testing.strategies import federated_datasets, simplex
from tests.conftest import (
    assert_near_zero,
    assert_parameter_error,
    assert_tight,
    assert_upper_bound,
)

RIDGE = 0.05


def reference_client_loss(problem, w: torch.Tensor, k: int) -> torch.Tensor:
    """Independent transcription: one client, one sample at a time."""
    X, y = problem.data.client(k)
    total = torch.zeros((), dtype=torch.float64)
    for x, label in zip(torch.from_numpy(X), y, strict=True):
        if isinstance(problem, MultinomialLogisticProblem):
            z = w.reshape(problem.num_classes, -1) @ x
            total = total + torch.logsumexp(z, 0) - z[int(label)]
        else:
            z = w @ x
            total = total + torch.log1p(torch.exp(z)) - label * z
    return total / len(y) + 0.5 * problem.ridge * (w @ w)


def make(data, **kw):
    cls = LogisticRegressionProblem if data.num_classes is None else MultinomialLogisticProblem
    return cls(data, ridge=RIDGE, **kw)


datasets = st.one_of(federated_datasets(), federated_datasets(num_classes=3))


@settings(max_examples=15)
@given(datasets, st.integers(0, 2**31 - 1))
def test_loss_gradient_and_hessian_equal_autograd_of_reference(data, seed):
    prob = make(data)
    w = torch.from_numpy(np.random.default_rng(seed).standard_normal(prob.dim))
    for k in range(prob.num_clients):
        ref = reference_client_loss(prob, w, k)
        assert_tight(prob.client_losses(w.numpy())[k], ref.item(), rtol=1e-12)
        g_ref = torch.func.grad(lambda v, k=k: reference_client_loss(prob, v, k))(w)
        g = prob.grad(w[None], torch.tensor([k]))[0]  # full batch: exact gradient
        assert_tight(g.numpy(), g_ref.numpy(), rtol=1e-10)
        H_ref = torch.func.hessian(lambda v, k=k: reference_client_loss(prob, v, k))(w)
        X, y, c = prob._X[k], prob._y[k], prob._mean_weight[k]
        H = prob._weighted_hessian(w, X, y, c) + prob.ridge * torch.eye(
            prob.dim, dtype=torch.float64
        )
        assert_tight(H.numpy(), H_ref.numpy(), rtol=1e-9)


@given(datasets, st.integers(0, 2**31 - 1))
def test_certified_L_and_mu_bound_every_hessian(data, seed):
    prob = make(data)
    gen = np.random.default_rng(seed)
    for _ in range(3):
        w = torch.from_numpy(3 * gen.standard_normal(prob.dim))
        H = prob._weighted_hessian(w, prob._X, prob._y, prob._mean_weight)
        eig = torch.linalg.eigvalsh(
            H + prob.ridge * torch.eye(prob.dim, dtype=torch.float64)
        ).numpy()  # [N, d]
        assert_upper_bound(eig.max(), prob.L)
        assert_upper_bound(prob.mu, eig.min())


@settings(max_examples=20)
@given(datasets, simplex(5))
def test_optimum_has_zero_weighted_gradient_and_certified_gap(data, raw):
    prob = make(data)
    p = raw[: prob.num_clients] / raw[: prob.num_clients].sum()
    w, value = prob.optimum(p)
    assert np.linalg.norm(prob.full_grad(w, p)) <= 1e-10
    assert_tight(value, prob.loss(w, p))
    assert prob.optimality_gap_bound(p) <= 1e-20 / (2 * prob.mu)
    # no point nearby does better
    near = w + 1e-3 * np.random.default_rng(0).standard_normal((20, prob.dim))
    assert np.all(prob.loss(near, p) >= value)


def test_gamma_is_zero_for_identical_clients_and_positive_for_cafed_groups():
    x, y = cafed_clustered(1, 3, 40, seed=3).client(0)
    same = FederatedDataset.from_clients([x, x, x], [y, y, y])
    assert_near_zero(LogisticRegressionProblem(same).gamma(), atol=1e-15)
    prob = LogisticRegressionProblem(cafed_clustered(6, 3, 40, seed=3))
    w_k, f_k = prob.client_optima()
    assert_tight(np.diagonal(prob.client_losses(w_k)), f_k)
    assert prob.gamma() > 0 and prob.gamma([0.5, 0.5, 0, 0, 0, 0]) > 0


def test_default_alpha_is_proportional_to_client_sizes():
    data = FederatedDataset.from_clients([np.ones((3, 2)), np.ones((1, 2))], [[0, 1, 1], [0]])
    assert_tight(LogisticRegressionProblem(data).alpha, [0.75, 0.25])


def id_dataset(counts):
    """Feature = 1000 k + i identifies sample i of client k."""
    xs = [1000.0 * k + np.arange(m, dtype=float)[:, None] for k, m in enumerate(counts)]
    return FederatedDataset.from_clients(xs, [np.zeros(m) for m in counts])


@pytest.mark.parametrize("sampling", ["without_replacement", "with_replacement"])
def test_minibatches_hold_samples_of_their_own_client(sampling):
    counts = [10, 3, 7]
    prob = LogisticRegressionProblem(id_dataset(counts), batch_size=4, sampling=sampling)
    clients = torch.tensor([0, 1, 2, 0, 1, 2] * 50)
    X, _, c = prob._minibatch(clients, torch.Generator().manual_seed(0), torch.float64)
    ids = X[..., 0].numpy()
    for row, k, weights in zip(ids, clients.tolist(), c.numpy(), strict=True):
        used = row[weights > 0]
        assert_tight(weights.sum(), 1.0)
        assert np.all((used >= 1000 * k) & (used < 1000 * k + counts[k]))
        if sampling == "without_replacement":
            assert len(used) == min(4, counts[k]) and len(set(used)) == len(used)


def test_grad_of_pairs_equals_per_pair_computation_and_is_deterministic():
    prob = LogisticRegressionProblem(cafed_clustered(5, 4, 30, seed=1), batch_size=None)
    w = torch.randn(12, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    clients = torch.arange(12) % 5
    batched = prob.grad(w, clients)
    for m in range(12):
        assert_tight(batched[m].numpy(), prob.grad(w[m : m + 1], clients[m : m + 1])[0].numpy())
    mini = LogisticRegressionProblem(cafed_clustered(5, 4, 30, seed=1), batch_size=8)
    a = mini.grad(w, clients, torch.Generator().manual_seed(7))
    b = mini.grad(w, clients, torch.Generator().manual_seed(7))
    assert torch.equal(a, b)
    assert not torch.equal(a, mini.grad(w, clients, torch.Generator().manual_seed(8)))


def test_float32_points_give_float32_gradients_close_to_float64():
    prob = LogisticRegressionProblem(cafed_clustered(5, 4, 30, seed=1), batch_size=8)
    w = torch.randn(10, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    clients = torch.arange(10) % 5
    g64 = prob.grad(w, clients, torch.Generator().manual_seed(3))
    g32 = prob.grad(w.float(), clients, torch.Generator().manual_seed(3))
    assert g32.dtype == torch.float32
    assert_tight(g32.double().numpy(), g64.numpy(), rtol=1e-5)
    fast = LogisticRegressionProblem(prob.data, batch_size=8, compute_dtype=torch.float32)
    g = fast.grad(w, clients, torch.Generator().manual_seed(3))
    assert g.dtype == torch.float64 and torch.equal(g, g32.double())


@pytest.mark.slow
@pytest.mark.parametrize("sampling", ["without_replacement", "with_replacement"])
@pytest.mark.parametrize("multiclass", [False, True])
def test_noise_variance_matches_monte_carlo(sampling, multiclass):
    counts = [12, 5, 3, 1]  # batch 5: a proper subsample, the whole client, and smaller
    gen = np.random.default_rng(0)
    xs = [gen.standard_normal((m, 3)) for m in counts]
    classes = 3 if multiclass else 2
    ys = [gen.integers(0, classes, size=m).astype(float) for m in counts]
    data = FederatedDataset.from_clients(xs, ys, num_classes=3 if multiclass else None)
    prob = make(data, batch_size=5, sampling=sampling)
    w = gen.standard_normal(prob.dim)
    sigma2 = prob.noise_variance(w)  # [N]
    reps = 20000
    clients = torch.arange(len(counts)).repeat_interleave(reps)
    points = torch.from_numpy(np.tile(w, (len(clients), 1)))
    g = prob.grad(points, clients, torch.Generator().manual_seed(0)).numpy()
    full = LogisticRegressionProblem if not multiclass else MultinomialLogisticProblem
    exact = (
        full(data, ridge=RIDGE)
        .grad(torch.from_numpy(np.tile(w, (len(counts), 1))), torch.arange(len(counts)))
        .numpy()
    )
    for k in range(len(counts)):
        sq = np.sum((g[clients.numpy() == k] - exact[k]) ** 2, axis=1)  # [reps]
        half_width = 5 * sq.std() / np.sqrt(reps) + 1e-12
        assert abs(sq.mean() - sigma2[k]) <= half_width, (k, sq.mean(), sigma2[k])
        mean_err = np.abs(g[clients.numpy() == k].mean(0) - exact[k])  # unbiased
        assert np.all(mean_err <= 5 * np.sqrt(sigma2[k] / reps) + 1e-12)
    if sampling == "without_replacement":
        assert_near_zero(sigma2[1:])  # n_k <= b: the whole client, exact gradient


def test_accuracy_matches_direct_count():
    prob = LogisticRegressionProblem(cafed_clustered(4, 3, 25, seed=2))
    w = np.array([0.3, -1.0, 2.0])
    X = prob.data.features.reshape(-1, 3)
    y = prob.data.labels.reshape(-1)
    assert_tight(prob.accuracy(w), np.mean((X @ w > 0) == (y > 0.5)))
    test = cafed_clustered(4, 3, 7, seed=9)
    assert prob.accuracy(np.zeros((2, 3)), test).shape == (2,)


D2 = cafed_clustered(2, 3, 5, seed=0)
BAD_CALLS = [
    (lambda: LogisticRegressionProblem(D2, ridge=0.0), "'ridge'", "(0, inf)"),
    (lambda: LogisticRegressionProblem(D2, batch_size=0), "'batch_size'", "[1, 2147483647]"),
    (lambda: LogisticRegressionProblem(D2, sampling="poisson"), "'sampling'", "one of"),
    (lambda: LogisticRegressionProblem(D2, compute_dtype=torch.int32), "'compute_dtype'", "None"),
    (lambda: LogisticRegressionProblem(D2, alpha=[0.2, 0.2]), "'alpha'", "summing to 1"),
    (lambda: LogisticRegressionProblem(D2, alpha=[1.0]), "'alpha'", "shape (2,)"),
    (lambda: LogisticRegressionProblem(np.ones(3)), "'data'", "FederatedDataset"),
    (lambda: MultinomialLogisticProblem(D2), "'data'", "num_classes"),
    (lambda: LogisticRegressionProblem(D2).loss(np.zeros(4)), "'w'", "(..., 3)"),
    (lambda: LogisticRegressionProblem(D2).loss(np.full(3, np.nan)), "'w'", "finite"),
    (lambda: LogisticRegressionProblem(D2).optimum([1.0, 0.5]), "'weights'", "summing to 1"),
    (lambda: LogisticRegressionProblem(D2).accuracy(np.zeros(3), 5), "'data'", "features"),
    (
        lambda: LogisticRegressionProblem(FederatedDataset.from_clients([np.ones((1, 1))], [[2]])),
        "'data'",
        "{0, 1}",
    ),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
