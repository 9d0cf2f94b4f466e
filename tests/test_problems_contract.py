"""Contract tests run on every problem implementation: shapes, dtypes, consistency between
the stochastic and the exact paths, determinism, client permutations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedtheory.data import FederatedDataset, cafed_clustered, gaussian_linear
from fedtheory.problems import (
    FederatedProblem,
    LeastSquaresProblem,
    LogisticRegressionProblem,
    MLPProblem,
    MultinomialLogisticProblem,
    QuadraticProblem,
)
from tests.conftest import assert_tight


def multiclass_data() -> FederatedDataset:
    gen = np.random.default_rng(5)
    counts = (6, 3, 9)
    xs = [gen.standard_normal((m, 2)) for m in counts]
    ys = [gen.integers(0, 3, size=m).astype(float) for m in counts]
    return FederatedDataset.from_clients(xs, ys, num_classes=3)


def permuted(data: FederatedDataset, order) -> FederatedDataset:
    clients = [data.client(k) for k in order]
    return FederatedDataset.from_clients(
        [x for x, _ in clients], [y for _, y in clients], num_classes=data.num_classes
    )


BUILDERS = {
    "quadratic": lambda order=None: QuadraticProblem.random(3, 2, seed=4),
    "least_squares": lambda order=None: LeastSquaresProblem(
        permuted(gaussian_linear(3, 2, 7, seed=1), order or range(3)), ridge=0.1
    ),
    "logistic": lambda order=None: LogisticRegressionProblem(
        permuted(cafed_clustered(3, 2, 8, seed=1), order or range(3))
    ),
    "multinomial": lambda order=None: MultinomialLogisticProblem(
        permuted(multiclass_data(), order or range(3))
    ),
    "mlp": lambda order=None: MLPProblem(
        permuted(multiclass_data(), order or range(3)), hidden=(3,), ridge=1e-2
    ),
}


@pytest.fixture(params=sorted(BUILDERS), scope="module")
def problem(request):
    return BUILDERS[request.param]()


def test_protocol_shapes_and_exact_paths_agree(problem):
    assert isinstance(problem, FederatedProblem)
    n, d = problem.num_clients, problem.dim
    assert_tight(problem.alpha.sum(), 1.0)
    w = np.random.default_rng(0).standard_normal((4, d))
    clients = torch.tensor([0, 2, 1, 2])
    g = problem.grad(torch.from_numpy(w), clients)  # exact: no batch, no noise
    assert g.shape == (4, d) and g.dtype == torch.float64
    grads = problem.client_grads(w)  # [4, N, d]
    assert grads.shape == (4, n, d)
    assert_tight(g.numpy(), grads[np.arange(4), clients.numpy()], rtol=1e-10)
    assert problem.client_losses(w).shape == (4, n)
    assert_tight(problem.loss(w), problem.client_losses(w) @ problem.alpha)
    w_star, value = problem.optimum()
    assert_tight(value, problem.loss(w_star))
    assert np.linalg.norm(problem.alpha @ problem.client_grads(w_star)) <= 1e-6
    assert problem.grad(torch.zeros(0, d, dtype=torch.float64), clients[:0]).shape == (0, d)


def test_gamma_is_heterogeneity_at_the_optimum(problem):
    w_star, _ = problem.optimum()
    gamma = problem.gamma()
    assert gamma >= 0
    if hasattr(problem, "client_optima"):
        _, f_k = problem.client_optima()
        assert_tight(gamma, np.max(problem.client_losses(w_star) - f_k))


@pytest.mark.parametrize("name", ["least_squares", "logistic", "multinomial"])
def test_permuting_clients_changes_nothing(name):
    base, perm = BUILDERS[name](), BUILDERS[name]([2, 0, 1])
    w_a, f_a = base.optimum()
    w_b, f_b = perm.optimum()
    assert_tight(f_b, f_a, rtol=1e-10)
    assert_tight(w_b, w_a, rtol=1e-7)
    assert_tight(perm.gamma(), base.gamma(), rtol=1e-7)
    assert_tight(perm.noise_variance(w_a), base.noise_variance(w_a)[[2, 0, 1]])
    assert_tight(perm.L, base.L) and assert_tight(perm.mu, base.mu)


@pytest.mark.parametrize("name", ["least_squares", "logistic", "multinomial", "mlp"])
def test_minibatch_path_is_deterministic_and_consumes_only_its_generator(name):
    full = BUILDERS[name]()
    prob = type(full)(full.data, ridge=full.ridge, batch_size=2)
    w = torch.zeros(6, prob.dim, dtype=torch.float64) + 0.1
    clients = torch.tensor([0, 1, 2, 0, 1, 2])
    a = prob.grad(w, clients, torch.Generator().manual_seed(11))
    torch.manual_seed(0)  # global state must play no role
    b = prob.grad(w, clients, torch.Generator().manual_seed(11))
    assert torch.equal(a, b)


@pytest.mark.parametrize(
    "module",
    [
        "fedtheory.data.federated",
        "fedtheory.data.synthetic",
        "fedtheory.data.splits",
        "fedtheory.data.digits",
        "fedtheory.problems.ball",
        "fedtheory.problems.least_squares",
        "fedtheory.problems.logistic",
        "fedtheory.problems.mlp",
        "fedtheory.problems.quadratic",
    ],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
