"""Mini-batch path of data-backed problems: the batched contractions equal their einsum
definitions, ``grad`` equals a per-pair NumPy computation on the same batch, and the batches
have the exact law (distinct samples, inclusion frequencies b/n and b(b-1)/(n(n-1)) within
binomial confidence bounds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from fedtheory.data import FederatedDataset, cafed_clustered
from fedtheory.problems import LeastSquaresProblem, LogisticRegressionProblem
from fedtheory.problems.data_backed import matvec, vecmat
from tests.conftest import assert_tight, binomial_interval

GEN = torch.Generator().manual_seed(0)


@pytest.mark.parametrize(
    ("x_shape", "w_shape"),
    [((7, 5, 3), (7, 3)), ((5, 3), (3,)), ((4, 5, 3), (2, 1, 3)), ((4, 5, 3), (3,))],
)
def test_batched_contractions_equal_their_einsum_definitions(x_shape, w_shape):
    X = torch.randn(x_shape, generator=GEN, dtype=torch.float64)
    w = torch.randn(w_shape, generator=GEN, dtype=torch.float64)
    z = matvec(X, w)
    assert_tight(z.numpy(), torch.einsum("...sp,...p->...s", X, w).numpy())
    r = torch.randn(z.shape, generator=GEN, dtype=torch.float64)
    assert_tight(vecmat(r, X).numpy(), torch.einsum("...sp,...s->...p", X, r).numpy())


@pytest.mark.parametrize("cls", [LogisticRegressionProblem, LeastSquaresProblem])
def test_grad_equals_per_pair_numpy_computation_on_the_same_batch(cls):
    data = cafed_clustered(4, 3, 20, seed=3)
    prob = cls(data, ridge=0.1, batch_size=6)
    clients = torch.tensor([0, 1, 2, 3, 3, 1, 0])
    w = torch.randn(7, 3, generator=GEN, dtype=torch.float64)
    g = prob.grad(w, clients, torch.Generator().manual_seed(5)).numpy()
    X, y, c = prob._minibatch(clients, torch.Generator().manual_seed(5), torch.float64)
    for m in range(len(clients)):
        z = X[m].numpy() @ w[m].numpy()
        prediction = 1 / (1 + np.exp(-z)) if cls is LogisticRegressionProblem else z
        residual = prediction - y[m].numpy()  # d loss / d z for both models
        expected = X[m].numpy().T @ (c[m].numpy() * residual) + 0.1 * w[m].numpy()
        assert_tight(g[m], expected)


def ids_problem(counts: list[int], batch: int, sampling: str) -> LogisticRegressionProblem:
    """Feature = sample index: a batch's first feature lists the samples it holds."""
    xs = [np.arange(m, dtype=float)[:, None] for m in counts]
    data = FederatedDataset.from_clients(xs, [np.zeros(m) for m in counts])
    return LogisticRegressionProblem(data, batch_size=batch, sampling=sampling)


@pytest.mark.slow
def test_without_replacement_batches_are_uniform_random_subsets():
    n, b, reps = 9, 4, 40_000
    prob = ids_problem([n, 2], b, "without_replacement")
    clients = torch.zeros(reps, dtype=torch.long)
    X, _, c = prob._minibatch(clients, torch.Generator().manual_seed(1), torch.float64)
    ids = X[..., 0].long().numpy()  # [reps, b]
    assert np.all(c.numpy() == 1 / b)
    assert np.all(np.sort(ids, axis=1)[:, 1:] != np.sort(ids, axis=1)[:, :-1])  # distinct
    held = np.zeros((reps, n), dtype=bool)
    held[np.arange(reps)[:, None], ids] = True
    lo, hi = binomial_interval(reps, b / n, n)
    assert np.all((held.sum(0) >= lo) & (held.sum(0) <= hi)), held.sum(0)
    pairs = held.T.astype(np.int64) @ held  # joint inclusion counts [n, n]
    upper = pairs[np.triu_indices(n, 1)]
    lo, hi = binomial_interval(reps, b * (b - 1) / (n * (n - 1)), upper.size)
    assert np.all((upper >= lo) & (upper <= hi)), upper
    small = prob._minibatch(torch.ones(5, dtype=torch.long), GEN, torch.float64)
    for row, weights in zip(small[0][..., 0].numpy(), small[2].numpy(), strict=True):
        assert np.array_equal(np.sort(row[weights > 0]), [0, 1])  # n_k <= b: all samples
        assert_tight(weights[weights > 0], 0.5)


@pytest.mark.slow
def test_with_replacement_batches_are_iid_uniform_draws():
    n, b, reps = 7, 3, 30_000
    prob = ids_problem([n], b, "with_replacement")
    X, _, c = prob._minibatch(
        torch.zeros(reps, dtype=torch.long), torch.Generator().manual_seed(2), torch.float64
    )
    ids = X[..., 0].long().numpy()  # [reps, b]
    assert np.all(c.numpy() == 1 / b)
    for j in range(b):  # each slot uniform on the n samples (chi-square)
        counts = np.bincount(ids[:, j], minlength=n)
        assert stats.chisquare(counts).pvalue > 1e-3 / b
    same = (ids[:, 0] == ids[:, 1]).sum()  # independent slots collide with probability 1/n
    lo, hi = binomial_interval(reps, 1 / n, 1)
    assert lo <= same <= hi
