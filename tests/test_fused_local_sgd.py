"""The fused local-SGD kernel (:mod:`fedtheory.problems.fused`): it equals a plain NumPy
transcription given the same uniforms, equals step-by-step ``grad`` on full batches, draws
batches with the exact law (uniform subsets, independent across steps), and gives unbiased
gradients with the exact noise variance; ``exact_metrics`` equals the separate passes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedtheory.data import FederatedDataset, cafed_clustered, gaussian_linear, load_digits_federated
from fedtheory.problems import (
    LeastSquaresProblem,
    LogisticRegressionProblem,
    MLPProblem,
    MultinomialLogisticProblem,
    fused,
)
from fedtheory.sim import local_sgd
from tests.conftest import assert_near_zero, assert_parameter_error, assert_tight, binomial_interval

SAMPLERS = {
    "without_replacement": fused.WITHOUT_REPLACEMENT,
    "with_replacement": fused.WITH_REPLACEMENT,
}


def uneven_data(labels: str) -> FederatedDataset:
    """Clients of 12, 5, 3 and 1 samples (padding), 3 features."""
    gen = np.random.default_rng(4)
    counts = [12, 5, 3, 1]
    xs = [gen.standard_normal((m, 3)) for m in counts]
    if labels == "binary":
        ys = [gen.integers(0, 2, size=m).astype(float) for m in counts]
    else:
        ys = [gen.standard_normal(m) for m in counts]
    return FederatedDataset.from_clients(xs, ys)


def plain_local_sgd(data, k, w, u, *, logistic, lr, ridge, prox, sampler):
    """One pair written literally: partial Fisher-Yates on ``u [E, b]``, then SGD steps."""
    X, y = data.features[k, : data.counts[k]], data.labels[k, : data.counts[k]]
    n = len(y)
    order, v = list(range(n)), w.copy()
    for step in u:
        if sampler == "with_replacement":
            batch = [int(x * n) for x in step]
        else:
            batch = []
            for i in range(min(len(step), n)):
                j = i + int(step[i] * (n - i))
                order[i], order[j] = order[j], order[i]
                batch.append(order[i])
        z = X[batch] @ v
        psi = 1 / (1 + np.exp(-z)) if logistic else z
        g = X[batch].T @ (psi - y[batch]) / len(batch) + ridge * v
        v = v - lr * (g + prox * (v - w))
    return v - w


@pytest.mark.parametrize("sampling", list(SAMPLERS))
@pytest.mark.parametrize("logistic", [True, False])
def test_kernel_equals_a_plain_transcription_of_its_uniforms(sampling, logistic):
    data = uneven_data("binary" if logistic else "real")
    clients = np.array([0, 1, 2, 3, 0, 0, 2])  # repeated clients, visited out of order
    gen = np.random.default_rng(0)
    w = gen.standard_normal((len(clients), 3))
    keys = gen.integers(0, 2**64, size=len(clients), dtype=np.uint64)
    u = fused.uniforms(keys, 3, 5)  # [E, M, b]
    options = {"lr": 0.3, "ridge": 0.1, "prox": 0.5}
    delta = fused.local_sgd_glm(
        data.features,
        data.labels,
        data.counts,
        clients,
        w,
        keys,
        steps=3,
        batch=5,
        sampler=SAMPLERS[sampling],
        link=fused.LOGISTIC if logistic else fused.IDENTITY,
        **options,
    )
    for m, k in enumerate(clients):
        expected = plain_local_sgd(
            data, k, w[m], u[:, m], logistic=logistic, sampler=sampling, **options
        )
        assert_tight(delta[m], expected)


@pytest.mark.parametrize("cls", [LogisticRegressionProblem, LeastSquaresProblem])
@pytest.mark.parametrize("batch", [None, 12])  # 12 >= every n_k: exact gradients too
def test_full_batch_fused_equals_step_by_step_grad(cls, batch):
    data = uneven_data("binary" if cls is LogisticRegressionProblem else "real")
    clients = torch.tensor([0, 1, 2, 3, 3, 0])
    w = torch.randn(6, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    kwargs = {"steps": 3, "lr": 0.2, "prox": 0.4}
    fast = cls(data, ridge=0.1, batch_size=batch)
    slow = cls(data, ridge=0.1, batch_size=batch, fused=False)
    assert fast.fused and not slow.fused
    assert_tight(
        local_sgd(fast, w, clients, **kwargs).numpy(), local_sgd(slow, w, clients, **kwargs).numpy()
    )


def test_results_of_a_pair_do_not_depend_on_the_other_pairs():
    data = cafed_clustered(5, 4, 30, seed=2)
    clients = np.array([4, 0, 4, 2, 1, 0])
    gen = np.random.default_rng(3)
    w, keys = gen.standard_normal((6, 4)), gen.integers(0, 2**64, size=6, dtype=np.uint64)
    args = (data.features, data.labels, data.counts)
    opts = {"steps": 2, "batch": 8, "sampler": fused.WITHOUT_REPLACEMENT,
            "link": fused.LOGISTIC, "lr": 0.5, "ridge": 0.0, "prox": 0.0}  # fmt: skip
    everything = fused.local_sgd_glm(*args, clients, w, keys, **opts)
    keep = np.array([5, 2, 3])
    alone = fused.local_sgd_glm(*args, clients[keep], w[keep], keys[keep], **opts)
    assert np.array_equal(everything[keep], alone)


@pytest.mark.slow
def test_fisher_yates_batches_are_uniform_subsets_independent_across_steps():
    n, b, reps = 9, 4, 30_000
    gen = np.random.default_rng(5)
    order = np.arange(n)
    rows = np.empty(b, dtype=np.int64)
    held = np.zeros((2, reps, n), dtype=bool)  # two consecutive steps, one arrangement
    for r in range(reps):
        order[:] = np.arange(n)  # reset per round, as the kernel does
        for step in range(2):
            fused.draw_batch(order, gen.random(b), n, b, fused.WITHOUT_REPLACEMENT, rows)
            held[step, r, rows] = True
            assert len(set(rows.tolist())) == b  # distinct samples
    lo, hi = binomial_interval(reps, b / n, 2 * n)
    assert np.all((held.sum(1) >= lo) & (held.sum(1) <= hi)), held.sum(1)
    within = held[1].T.astype(np.int64) @ held[1]  # second step: pairs b(b-1)/(n(n-1))
    upper = within[np.triu_indices(n, 1)]
    lo, hi = binomial_interval(reps, b * (b - 1) / (n * (n - 1)), upper.size)
    assert np.all((upper >= lo) & (upper <= hi)), upper
    across = held[0].T.astype(np.int64) @ held[1]  # steps independent: (b/n)^2
    lo, hi = binomial_interval(reps, (b / n) ** 2, n * n)
    assert np.all((across >= lo) & (across <= hi)), across


@pytest.mark.slow
@pytest.mark.parametrize("sampling", list(SAMPLERS))
def test_one_fused_step_is_unbiased_with_the_exact_noise_variance(sampling):
    data = uneven_data("binary")
    prob = LogisticRegressionProblem(data, ridge=0.1, batch_size=5, sampling=sampling)
    w = np.array([0.4, -1.1, 0.7])
    sigma2 = prob.noise_variance(w)  # [N]
    exact = prob.client_grads(w)  # [N, d]
    reps = 20_000
    clients = torch.arange(4).repeat_interleave(reps)
    points = torch.from_numpy(np.tile(w, (len(clients), 1)))
    gen = torch.Generator().manual_seed(0)
    g = -prob.local_sgd(points, clients, steps=1, lr=1.0, prox=0.0, generator=gen).numpy()
    for k in range(4):
        mine = g[clients.numpy() == k]
        sq = np.sum((mine - exact[k]) ** 2, axis=1)
        assert abs(sq.mean() - sigma2[k]) <= 5 * sq.std() / np.sqrt(reps) + 1e-12
        assert np.all(np.abs(mine.mean(0) - exact[k]) <= 5 * np.sqrt(sigma2[k] / reps) + 1e-12)
    if sampling == "without_replacement":
        assert_near_zero(sigma2[1:])  # n_k <= b: the whole client


def test_float32_data_reads_stay_close_to_float64():
    data = cafed_clustered(4, 3, 20, seed=1)
    w = torch.randn(5, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    clients = torch.tensor([0, 1, 2, 3, 1])
    out = []
    for dtype in (None, torch.float32):
        prob = LogisticRegressionProblem(data, batch_size=6, compute_dtype=dtype)
        gen = torch.Generator().manual_seed(7)
        out.append(prob.local_sgd(w, clients, steps=2, lr=0.3, prox=0.0, generator=gen).numpy())
    assert_tight(out[1], out[0], rtol=1e-6)


def test_fused_option_and_local_sgd_inputs_are_checked():
    data = cafed_clustered(3, 2, 10, seed=0)
    assert_parameter_error(lambda: LogisticRegressionProblem(data, fused=1), "fused", "a bool")
    prob = LogisticRegressionProblem(data, batch_size=4)
    w, clients = torch.zeros(2, 2, dtype=torch.float64), torch.tensor([0, 2])
    assert_parameter_error(
        lambda: prob.local_sgd(w, clients, steps=1, lr=0.1, prox=0.0), "generator", "Generator"
    )
    assert_parameter_error(
        lambda: prob.local_sgd(w, torch.tensor([0, 3]), steps=1, lr=0.1, prox=0.0),
        "clients",
        "[0, 3)",
    )
    assert_parameter_error(
        lambda: prob.local_sgd(w[:, :1], clients, steps=1, lr=0.1, prox=0.0), "w", "(any, 2)"
    )
    assert_parameter_error(
        lambda: prob.local_sgd(w, clients, steps=0, lr=0.1, prox=0.0), "steps", "[1, 2147483647]"
    )
    digits = load_digits_federated(3, seed=0)
    multi = MultinomialLogisticProblem(digits)
    assert not multi.fused and not MultinomialLogisticProblem(digits, fused=False).fused
    assert_parameter_error(
        lambda: MultinomialLogisticProblem(digits, fused=True), "fused", "None or False"
    )
    with pytest.raises(NotImplementedError, match="no fused"):
        multi.local_sgd(torch.zeros(1, multi.dim, dtype=torch.float64), torch.tensor([0]),
                        steps=1, lr=0.1, prox=0.0)  # fmt: skip


@pytest.mark.parametrize(
    "prob",
    [
        LogisticRegressionProblem(cafed_clustered(4, 3, 15, seed=0)),
        LeastSquaresProblem(gaussian_linear(4, 3, 15, seed=0), ridge=0.2),
        MultinomialLogisticProblem(load_digits_federated(4, seed=0)),
        MLPProblem(load_digits_federated(4, seed=0), hidden=(5,)),
    ],
    ids=["logistic", "least_squares", "multinomial", "mlp"],
)
def test_exact_metrics_equal_the_separate_passes(prob):
    w = np.random.default_rng(1).standard_normal((2, 3, prob.dim)) * 0.1
    out = prob.exact_metrics(w)
    assert_tight(out["client_losses"], prob.client_losses(w))
    assert_tight(out["client_grads"], prob.client_grads(w))
    if hasattr(prob, "accuracy"):
        assert_tight(out["accuracy"], prob.accuracy(w))
    else:
        assert "accuracy" not in out
