"""The MLP problem: its closed-form batched forward and backward passes against autograd
through a plain torch.nn module (one pair at a time, and ``torch.func`` over pairs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.func import functional_call, grad, hessian, vmap

from fedtheory.data import FederatedDataset, dirichlet_label_split, load_digits, partition
from fedtheory.problems import MLPProblem
from fedtheory.sim.evaluation import ClientMean
from tests.conftest import assert_near_zero, assert_parameter_error, assert_tight


def small_data(seed: int = 0) -> FederatedDataset:
    gen = np.random.default_rng(seed)
    counts = (5, 9, 2)
    xs = [gen.standard_normal((m, 3)) for m in counts]
    ys = [gen.integers(0, 3, size=m).astype(float) for m in counts]
    return FederatedDataset.from_clients(xs, ys, num_classes=3)


def reference_loss_and_grad(problem: MLPProblem, theta: np.ndarray, k: int):
    """Plain torch.nn: load theta into a module, cross-entropy on client k, backward."""
    net = torch.nn.Sequential(
        torch.nn.Linear(3, 4, dtype=torch.float64),
        torch.nn.Tanh(),
        torch.nn.Linear(4, 3, dtype=torch.float64),
    )
    torch.nn.utils.vector_to_parameters(torch.from_numpy(theta.copy()), net.parameters())
    X, y = problem.data.client(k)
    loss = torch.nn.functional.cross_entropy(net(torch.from_numpy(X)), torch.from_numpy(y).long())
    loss = loss + 0.5 * problem.ridge * sum((p**2).sum() for p in net.parameters())
    loss.backward()
    grad = torch.cat([p.grad.reshape(-1) for p in net.parameters()])
    return loss.item(), grad.numpy()


def test_losses_and_gradients_equal_a_plain_module():
    prob = MLPProblem(small_data(), hidden=(4,), ridge=0.03)
    assert prob.dim == 3 * 4 + 4 + 4 * 3 + 3
    gen = np.random.default_rng(1)
    thetas = gen.standard_normal((4, prob.dim))
    losses = prob.client_losses(thetas)  # [4, N]
    clients = torch.tensor([0, 1, 2, 1])
    grads = prob.grad(torch.from_numpy(thetas), clients).numpy()  # full batch, all pairs
    for i, theta in enumerate(thetas):
        for k in range(3):
            ref_loss, ref_grad = reference_loss_and_grad(prob, theta, k)
            assert_tight(losses[i, k], ref_loss, rtol=1e-12)
            if k == clients[i]:
                assert_tight(grads[i], ref_grad, rtol=1e-10)
        assert_tight(prob.client_grads(theta)[clients[i]], grads[i], rtol=1e-12)


def test_per_sample_gradients_average_to_the_client_gradient():
    prob = MLPProblem(small_data(2), hidden=(4,), ridge=0.0, batch_size=2)
    theta = prob.initial_point()
    per = prob._per_sample_grads(torch.from_numpy(theta)[None], prob._X, prob._y)  # [N, n, d]
    mean = torch.einsum("ns,nsd->nd", prob._mean_weight, per).numpy()
    assert_tight(mean, prob.client_grads(theta), rtol=1e-10)
    assert np.all(prob.noise_variance(theta)[:2] > 0) and prob.noise_variance(theta)[2] == 0


def test_local_optimum_is_stationary_and_its_gap_bound_is_its_value():
    prob = MLPProblem(small_data(), hidden=(4,), ridge=1e-2)
    w, value = prob.optimum()
    assert np.linalg.norm(prob.full_grad(w)) <= 1e-6
    assert_tight(value, prob.loss(w))
    assert prob.loss(w) < prob.loss(prob.initial_point())
    assert 0 <= prob.accuracy(w) <= 1 and prob.accuracy(w) >= prob.accuracy(prob.initial_point())
    # F >= 0 (cross-entropy and ridge): F(w_hat) - F* <= F(w_hat), the only certificate
    assert prob.optimality_gap_bound() == value > 0
    p = np.array([0.2, 0.3, 0.5])
    assert_tight(prob.optimality_gap_bound(p), prob.loss(prob.optimum(p)[0], p))


def test_gap_bound_is_near_zero_where_the_model_interpolates():
    prob = MLPProblem(small_data(), hidden=(8,), ridge=0.0)
    assert prob.accuracy(prob.optimum()[0]) == 1.0
    assert_near_zero(prob.optimality_gap_bound(), atol=1e-8)


def test_minibatch_gradients_are_deterministic_and_vectorised():
    prob = MLPProblem(small_data(), hidden=(4,), batch_size=3)
    w = torch.from_numpy(np.tile(prob.initial_point(), (6, 1)))
    clients = torch.tensor([0, 1, 2, 0, 1, 2])
    a = prob.grad(w, clients, torch.Generator().manual_seed(4))
    b = prob.grad(w, clients, torch.Generator().manual_seed(4))
    assert torch.equal(a, b)
    assert_tight(a[2].numpy(), a[5].numpy())  # client 2 has 2 <= 3 samples: exact gradient


# -- the closed form against autograd --------------------------------------------------------
class AutogradReference:
    """The same network as a torch.nn.Sequential, every quantity by autograd per pair
    (``torch.func.functional_call``), mapped over pairs with ``vmap``."""

    def __init__(self, problem: MLPProblem):
        sizes = (problem.data.num_features, *problem.hidden, problem.num_classes)
        layers: list[torch.nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=True):
            layers += [torch.nn.Linear(a, b, dtype=torch.float64), torch.nn.Tanh()]
        self.net = torch.nn.Sequential(*layers[:-1])
        self.shapes = [(name, p.shape) for name, p in self.net.named_parameters()]

    def logits(self, theta, X):
        params, start = {}, 0
        for name, shape in self.shapes:
            params[name] = theta[start : start + shape.numel()].view(shape)
            start += shape.numel()
        return functional_call(self.net, params, (X,))

    def losses(self, theta, X, y):
        z = self.logits(theta, X)
        return torch.logsumexp(z, -1) - z.gather(-1, y.long()[:, None])[:, 0]

    def loss(self, theta, X, y, c):
        return (c * self.losses(theta, X, y)).sum()

    def per_sample(self, theta, X, y):
        one = lambda t, x, label: self.losses(t, x[None], label[None])[0]  # noqa: E731
        return vmap(grad(one), in_dims=(None, 0, 0))(theta, X, y)

    def correct(self, theta, X, y):
        return self.logits(theta, X).argmax(-1) == y.long()


def random_instance(hidden, seed: int):
    """Clients of unequal sizes (padding), 4 classes, weights of scale 1 (tanh saturates)."""
    gen = np.random.default_rng(seed)
    counts = (6, 1, 9)
    xs = [gen.standard_normal((m, 5)) for m in counts]
    ys = [gen.integers(0, 4, size=m).astype(float) for m in counts]
    prob = MLPProblem(FederatedDataset.from_clients(xs, ys, num_classes=4), hidden=hidden)
    return prob, torch.from_numpy(gen.standard_normal((3, prob.dim)))


def assert_tight_to_scale(measured, expected, rtol=1e-12):
    """Equal to ``rtol`` times the largest entry of ``expected`` (some entries vanish)."""
    expected = np.asarray(expected)
    assert_tight(np.asarray(measured), expected, rtol=0.0, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("hidden", [(), (7,), (6, 3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_closed_form_equals_autograd_on_every_pair_tight(hidden, seed):
    """Loss, gradient and correct flags of every (point, client) pair, both on the
    broadcast layout of the exact metrics (points ``[P, 1, d]`` against ``X [N, n, p]``)
    and on the mini-batch layout (one client per point), and the one-pass terms."""
    prob, W = random_instance(hidden, seed)
    ref = AutogradReference(prob)
    X, y, c = (
        prob._X,
        prob._y,
        prob._mean_weight
        * torch.rand(
            prob._valid.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)
        ),
    )
    pairs = (0, None, None, None)
    loss = vmap(vmap(ref.loss, (None, 0, 0, 0)), pairs)(W, X, y, c)  # [P, N]
    grads = vmap(vmap(grad(ref.loss), (None, 0, 0, 0)), pairs)(W, X, y, c)  # [P, N, d]
    correct = vmap(vmap(ref.correct, (None, 0, 0)), (0, None, None))(W, X, y)  # [P, N, n]
    assert_tight_to_scale(prob._weighted_loss(W[:, None], X, y, c), loss)
    assert_tight_to_scale(prob._weighted_grad(W[:, None], X, y, c), grads)
    assert torch.equal(prob._correct(W[:, None], X, y), correct)
    terms = prob._data_terms(W[:, None], X, y, c)  # [P, N, 2 + d]
    assert_tight_to_scale(terms[..., 0], loss)
    assert torch.equal(terms[..., 1], (correct & (c > 0)).sum(-1).double())
    assert_tight_to_scale(terms[..., 2:], grads)
    k = torch.tensor([2, 0, 2])  # one client per point: the mini-batch layout of grad
    assert_tight_to_scale(prob._weighted_grad(W, X[k], y[k], c[k]), grads[[0, 1, 2], k])
    assert_tight_to_scale(prob._weighted_loss(W, X[k], y[k], c[k]), loss[[0, 1, 2], k])


@pytest.mark.parametrize("hidden", [(), (4,), (3, 2)])
def test_per_sample_gradients_and_hessians_equal_autograd_tight(hidden):
    prob, W = random_instance(hidden, 3)
    ref = AutogradReference(prob)
    X, y, c = prob._X, prob._y, prob._mean_weight
    per = vmap(vmap(ref.per_sample, (None, 0, 0)), (0, None, None))(W, X, y)  # [P, N, n, d]
    assert_tight_to_scale(prob._per_sample_grads(W[:, None], X, y), per)
    H = vmap(vmap(hessian(ref.loss), (None, 0, 0, 0)), (0, None, None, None))(W, X, y, c)
    assert_tight_to_scale(prob._weighted_hessian(W[:, None], X, y, c), H)


def test_float32_gradients_are_the_float64_ones_rounded():
    prob, W = random_instance((7,), 4)
    low = MLPProblem(prob.data, hidden=(7,), compute_dtype=torch.float32)
    clients = torch.tensor([0, 1, 2])
    exact = prob.grad(W, clients).numpy()
    assert_tight_to_scale(low.grad(W, clients).numpy(), exact, rtol=1e-5)


BAD_CALLS = [
    (lambda: MLPProblem(small_data(), hidden=(0,)), "'hidden'", "[1, 2147483647]"),
    (
        lambda: MLPProblem(FederatedDataset.from_clients([np.ones((1, 2))], [[0.0]])),
        "'data'",
        "num_classes",
    ),
    (lambda: MLPProblem(small_data(), seed=-1), "'seed'", "[0, inf)"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)


def _authors_fedawe(problem: MLPProblem, masks, *, lr0: float, steps: int, w0, clip=0.5):
    """FedAWE as the authors' code runs it (mingxiang12/FedAWE, ``varying_awe.py`` and
    ``util.py``), written plainly with torch.nn and torch.optim.SGD, one client at a time:
    rate eta_0 / sqrt(t/10+1), ``steps`` SGD steps on the client's whole data (a client with
    fewer samples than the batch), the echoed delta times the rounds since the last
    participation, the aggregated delta clipped at norm ``clip`` (0.5 in the code; None: not
    clipped), eta_g = 1. Returns the server model and x-bar, the mean of the client models
    (the code's ``evaluate``)."""
    sizes = (problem.data.num_features, *problem.hidden, problem.num_classes)
    net = torch.nn.Sequential(
        torch.nn.Linear(sizes[0], sizes[1], dtype=torch.float64),
        torch.nn.Tanh(),
        torch.nn.Linear(sizes[1], sizes[2], dtype=torch.float64),
    )
    w_global = torch.from_numpy(w0.copy())
    w_local = [w_global.clone() for _ in range(problem.num_clients)]
    count = [1] * problem.num_clients
    clipped = 0
    for t, mask in enumerate(masks):
        opt = torch.optim.SGD(net.parameters(), lr=lr0 / np.sqrt(t / 10 + 1))
        local, delta, active = 0.0, 0.0, 0
        for n, on in enumerate(mask):
            if not on:
                count[n] += 1
                continue
            torch.nn.utils.vector_to_parameters(w_local[n].clone(), net.parameters())
            X, y = (torch.from_numpy(a) for a in problem.data.client(n))
            for _ in range(steps):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(net(X), y.long()).backward()
                opt.step()
            trained = torch.nn.utils.parameters_to_vector(net.parameters()).detach()
            local = local + w_local[n]
            delta = delta + (trained - w_local[n]) * count[n]
            active, count[n] = active + 1, 1
        if active:
            v = delta / active
            if clip is not None:
                clipped += int(v.norm() > clip)
                v = v / v.norm() * clip if v.norm() > clip else v
            w_global = local / active + v
        for n, on in enumerate(mask):
            if on:
                w_local[n] = w_global.clone()
    return w_global, torch.stack(w_local).mean(0), clipped


@pytest.mark.parametrize("clip", [0.5, None, 0.4])
def test_fedawe_on_the_mlp_equals_the_authors_plain_loop_tight(clip):
    """The Table 2 path (FedAWE's code variant scored on x-bar, an MLP on a per-client
    Dirichlet split of the digits, batch 128 larger than every client) against the
    authors' loop, round by round, with clipped and unclipped rounds and a round without
    active clients; at the code's clip 0.5 and, as ``fedawe-table2`` varies it (its own
    construction), without a clip and at another norm."""
    from fedtheory.sim import FedAWE
    from fedtheory.validation.papers.fedawe import table2

    X, y = load_digits(intercept=False)
    parts = dirichlet_label_split(y[:150], 5, 0.1, per="client", min_size=2, seed=0)
    data = partition(X[:150], y[:150], parts, num_classes=10)
    assert data.counts.max() < 128
    problem = MLPProblem(data, hidden=(6,), ridge=0.0, batch_size=128, seed=3)
    masks = np.array([[1, 1, 0, 1, 0], [0, 1, 1, 0, 0], [0, 0, 0, 0, 0], [1, 0, 1, 1, 1],
                      [0, 0, 1, 0, 1], [1, 1, 1, 1, 1]]) > 0  # fmt: skip
    if clip == 0.5:
        alg = ClientMean(FedAWE(variant="code", lr=0.3, local_steps=3))
    else:
        s = table2.settings("tiny") | {"local_steps": 3}
        alg = table2.algorithms(s, np.full(5, 0.5), dict.fromkeys(table2.TABLE_7, 0.3),
                                clip=clip)["fedawe"]  # fmt: skip
    w0 = problem.initial_point()
    state = alg.init(problem, torch.from_numpy(w0)[None])
    for t, mask in enumerate(masks):
        state = alg.step(problem, state, torch.from_numpy(mask[None]), t,
                         torch.Generator().manual_seed(t))  # fmt: skip
    server, x_bar, clipped = _authors_fedawe(problem, masks, lr0=0.3, steps=3, w0=w0, clip=clip)
    if clip is not None:
        assert 0 < clipped < len(masks) - 1  # both branches of the clip are exercised
    assert_tight(state.inner.w[0].numpy(), server.numpy(), rtol=1e-12)
    assert_tight(state.w[0].numpy(), x_bar.numpy(), rtol=1e-12)
