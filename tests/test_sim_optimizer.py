"""The simulator's optimisers (momentum, weight decay, epochs) against ``torch.optim.SGD`` in a
plain torch loop, the vectorised local training against its one-pair loop, and the x-bar
evaluation (float64, tight tolerance)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedtheory.availability import Bernoulli
from fedtheory.data import FederatedDataset
from fedtheory.errors import ParameterError
from fedtheory.problems import LogisticRegressionProblem
from fedtheory.sim import AverageParticipating, FedAvg, simulate
from fedtheory.sim.evaluation import ClientMean
from fedtheory.sim.optimizer import (
    SGD,
    Training,
    epoch_batches,
    epoch_keys,
    local_training,
    local_training_loop,
    sgd_init,
    sgd_step,
)

TIGHT = 1e-12
RIDGE = 1e-3


def _problem(batch_size=4) -> LogisticRegressionProblem:
    """Binary logistic regression on clients of unequal sizes (5, 9, 3, 7 samples)."""
    gen = np.random.default_rng(0)
    sizes = (5, 9, 3, 7)
    features = [gen.standard_normal((n, 3)) for n in sizes]
    labels = [(gen.random(n) < 0.5).astype(float) for n in sizes]
    data = FederatedDataset.from_clients(features, labels)
    return LogisticRegressionProblem(data, ridge=RIDGE, batch_size=batch_size, fused=False)


def _torch_loss(problem, w, k, idx) -> torch.Tensor:
    """Mean logistic loss of client k's samples ``idx`` plus the problem's ridge term."""
    X = torch.from_numpy(problem.data.features[k][idx])
    y = torch.from_numpy(problem.data.labels[k][idx])
    z = X @ w
    return (torch.nn.functional.softplus(z) - y * z).mean() + 0.5 * RIDGE * (w * w).sum()


def test_sgd_step_equals_torch_sgd_tight():
    gen = torch.Generator().manual_seed(0)
    opt = SGD(momentum=0.9, weight_decay=1e-2)
    w = torch.randn(3, generator=gen, dtype=torch.float64)
    p = torch.nn.Parameter(w.clone())
    ref = torch.optim.SGD([p], lr=0.05, momentum=0.9, weight_decay=1e-2)
    state = sgd_init((), 3, w)
    for _ in range(6):
        g = torch.randn(3, generator=gen, dtype=torch.float64)
        w, state = sgd_step(w, g, state, lr=0.05, opt=opt)
        p.grad = g.clone()
        ref.step()
        assert torch.allclose(w, p.detach(), rtol=TIGHT, atol=TIGHT)


def test_inactive_rows_keep_model_and_buffer_tight():
    w, g = torch.ones(2, 3, dtype=torch.float64), torch.full((2, 3), 0.5, dtype=torch.float64)
    state = sgd_init((2,), 3, w)
    w1, s1 = sgd_step(w, g, state, lr=0.1, opt=SGD(momentum=0.5), active=torch.tensor([1, 0]) > 0)
    assert torch.equal(w1[1], w[1]) and torch.equal(s1.buffer[1], state.buffer[1])
    assert s1.started.tolist() == [True, False]


def test_epoch_batches_cover_each_sample_once_per_pass():
    keys = epoch_keys(2, 3, 9, torch.Generator().manual_seed(1), torch.zeros(1))
    index, weight = epoch_batches(keys, torch.tensor([9, 5]), 4)
    for m, n in enumerate((9, 5)):
        for e in range(3):
            used = index[m, e][weight[m, e] > 0]
            assert sorted(used.tolist()) == list(range(n))
            sizes = (weight[m, e] > 0).sum(-1)  # 4, 4, 1 and 4, 1, 0
            expected = [min(4, n - 4 * j) for j in range(3)]
            assert sizes.tolist() == [max(0, s) for s in expected]


@pytest.mark.parametrize("local", ["epochs", "steps"])
def test_local_training_equals_its_one_pair_loop_tight(local):
    problem = _problem()
    training = Training(client=SGD(momentum=0.9, weight_decay=1e-2), local=local)
    clients = torch.tensor([1, 0, 3, 1, 2])
    w = torch.randn(5, 3, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    state = sgd_init((5,), 3, w)
    state = state._replace(buffer=state.buffer + 0.1, started=torch.tensor([1, 0, 1, 0, 0]) > 0)
    out = {}
    for name, fn in (("fast", local_training), ("loop", local_training_loop)):
        out[name] = fn(problem, w, clients, state, steps=2, lr=0.1, prox=0.3,
                       training=training, generator=torch.Generator().manual_seed(3))  # fmt: skip
    (d1, s1), (d2, s2) = out["fast"], out["loop"]
    assert torch.allclose(d1, d2, rtol=TIGHT, atol=TIGHT)
    assert torch.allclose(s1.buffer, s2.buffer, rtol=TIGHT, atol=TIGHT)
    assert torch.equal(s1.started, s2.started)


def _torch_fedavg(problem, masks, rounds, *, lr, server_lr, epochs, batch, seed):
    """FedAvg over the active clients with torch.optim.SGD(momentum 0.9, weight decay 1e-2)
    at every client (kept across rounds) and at the server, epochs of shuffled mini-batches
    in the order the simulator draws: the authors' code of CA-Fed, written plainly."""
    n, d = problem.num_clients, problem.dim
    server = torch.nn.Parameter(torch.zeros(d, dtype=torch.float64))
    server_opt = torch.optim.SGD([server], lr=server_lr, momentum=0.9, weight_decay=1e-2)
    models = [torch.nn.Parameter(torch.zeros(d, dtype=torch.float64)) for _ in range(n)]
    opts = [torch.optim.SGD([p], lr=lr, momentum=0.9, weight_decay=1e-2) for p in models]
    counts = problem.data.counts
    for t in range(rounds):
        active = [k for k in range(n) if masks[t][k]]
        gen = torch.Generator().manual_seed(seed + t)
        keys = torch.rand((len(active), epochs, counts.max()), generator=gen, dtype=torch.float64)
        deltas = []
        for m, k in enumerate(active):
            with torch.no_grad():
                models[k].copy_(server)
            for e in range(epochs):
                order = torch.argsort(keys[m, e, : counts[k]], stable=True).tolist()
                for start in range(0, counts[k], batch):
                    opts[k].zero_grad()
                    _torch_loss(problem, models[k], k, order[start : start + batch]).backward()
                    opts[k].step()
            deltas.append((models[k] - server).detach())
        if active:
            server_opt.zero_grad()
            server.grad = -sum(deltas) / len(active)
            server_opt.step()
    return server.detach()


def test_fedavg_with_momentum_epochs_equals_torch_sgd_loop_tight():
    problem = _problem(batch_size=4)
    masks = np.array([[1, 1, 0, 1], [0, 1, 1, 1], [0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 1, 1]])
    code = SGD(momentum=0.9, weight_decay=1e-2)
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=0.05, server_lr=0.7,
                 training=Training(client=code, server=code, local="epochs"))  # fmt: skip
    state = alg.init(problem, torch.zeros(1, problem.dim, dtype=torch.float64))
    for t, mask in enumerate(masks):
        gen = torch.Generator().manual_seed(10 + t)
        state = alg.step(problem, state, torch.from_numpy(mask[None] > 0), t, gen)
    ref = _torch_fedavg(problem, masks, len(masks), lr=0.05, server_lr=0.7, epochs=2,
                        batch=4, seed=10)  # fmt: skip
    assert torch.allclose(state.w[0], ref, rtol=TIGHT, atol=TIGHT)


def test_plain_training_is_the_papers_round_exactly():
    problem = _problem()
    process = Bernoulli([0.6, 0.5, 0.9, 0.4])
    plain = FedAvg(AverageParticipating(), local_steps=2, lr=0.1)
    same = FedAvg(AverageParticipating(), local_steps=2, lr=0.1, training=Training())
    a, b = (simulate(problem, process, x, rounds=6, replicates=2, seed=4) for x in (plain, same))
    assert np.array_equal(a.iterates, b.iterates)


def test_zero_momentum_epochs_with_one_batch_are_full_gradient_steps_tight():
    """Epochs with a batch covering every client's data are full-gradient steps: the same as
    plain steps on a full-batch problem."""
    full = _problem(batch_size=None)
    process = Bernoulli([0.6, 0.5, 0.9, 0.4])
    steps = FedAvg(AverageParticipating(), local_steps=3, lr=0.1)
    epochs = FedAvg(AverageParticipating(), local_steps=3, lr=0.1,
                    training=Training(local="epochs", batch_size=16))  # fmt: skip
    a, b = (simulate(full, process, x, rounds=5, replicates=2, seed=1) for x in (steps, epochs))
    assert np.allclose(a.iterates, b.iterates, rtol=TIGHT, atol=TIGHT)


def test_client_mean_records_the_mean_of_the_client_models_tight():
    from fedtheory.sim import FedAWE

    problem = _problem()
    process = Bernoulli([0.6, 0.5, 0.9, 0.4])
    inner = FedAWE(local_steps=2, lr=0.1)
    alg = ClientMean(inner)
    w0 = torch.zeros(2, problem.dim, dtype=torch.float64)
    state = alg.init(problem, w0)
    mask = torch.tensor([[1, 0, 1, 1], [0, 1, 0, 0]]) > 0
    state = alg.step(problem, state, mask, 0, torch.Generator().manual_seed(0))
    assert torch.allclose(state.w, state.inner.x.mean(1), rtol=TIGHT, atol=TIGHT)
    assert not torch.allclose(state.w, state.inner.w)  # x-bar is not the server model
    rec = simulate(problem, process, alg, rounds=4, replicates=2, seed=0)
    direct = simulate(problem, process, inner, rounds=4, replicates=2, seed=0)
    assert rec.iterates.shape == direct.iterates.shape
    assert not np.allclose(rec.iterates[:, -1], direct.iterates[:, -1])


def test_bad_set_ups_are_refused_naming_the_parameter():
    with pytest.raises(ParameterError, match="'momentum' parameter of SGD"):
        SGD(momentum=1.0)
    with pytest.raises(ParameterError, match="'local' parameter of Training"):
        Training(local="passes")
    with pytest.raises(ParameterError, match="'training' parameter of FedAvg"):
        FedAvg(AverageParticipating(), training="momentum")
    with pytest.raises(ParameterError, match="'algorithm' parameter of ClientMean"):
        ClientMean(3)
