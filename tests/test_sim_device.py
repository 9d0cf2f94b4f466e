"""The device path (``simulate(..., device=)``): batched torch operations on the given device,
checked on explicit CPU tensors (the code a CUDA device runs) and, where a GPU exists, on CUDA
(tests marked ``gpu``). Full-batch runs equal the fused kernel and the reference loop to
1e-10; mini-batch runs agree with the fused kernel in law; same seed and device, same numbers;
the fused kernel gives the same numbers on 1 and 2 threads."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest
import torch
from scipy import stats

from fedtheory import sim, threads
from fedtheory.availability import Bernoulli
from fedtheory.availability.estimators import BetaPrior
from fedtheory.data import cafed_clustered
from fedtheory.device import check_device
from fedtheory.problems import LogisticRegressionProblem, QuadraticProblem, fused
from fedtheory.sim import AverageParticipating, FedAvg, evaluate_metrics, reference, simulate
from fedtheory.sim.aggregation import _sum_per_replicate, _table_sum
from fedtheory.sim.selection import E3CS, PowD, SelectedFedAvg
from tests.conftest import (
    assert_parameter_error,
    assert_tight,
    binomial_frequencies_ok,
    of_registered_papers,
)
from tests.test_sim_algorithms import PI, PROC, algorithms

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
N = 6
DATA = cafed_clustered(N, 4, 20, seed=0)  # binary labels, 20 samples per client
W0 = np.array([0.3, -0.2, 0.1, 0.4])
ALPHA = np.full(N, 1 / N)


def every_algorithm() -> dict[str, object]:
    """The families of test_sim_algorithms plus CA-Fed, its baselines and E3CS selection."""
    common = {"local_steps": 2, "lr": 0.3}
    return {
        **algorithms(N),
        **of_registered_papers({"cafed": lambda: cafed_algorithms(common)}),
        "e3cs": SelectedFedAvg(E3CS(2, sigma=0.1, eta=0.5), local_steps=2, lr=0.3, seed=4),
        "pow-d": SelectedFedAvg(PowD(2, 3), local_steps=2, lr=0.3, seed=4),
    }


def cafed_algorithms(common: dict) -> dict[str, object]:
    """CA-Fed (oracle and Beta-prior estimates) and its baselines AdaFed and F3AST."""
    prior = BetaPrior(2.0, 1.0, 1.0, 3.0, 1.0, 1.0)
    return {
        "cafed-oracle": sim.CaFed(alpha=ALPHA, pi=PI, lam=np.full(N, 0.4), **common),
        "cafed-prior": sim.CaFed(alpha=ALPHA, prior=prior, **common),
        "adafed": FedAvg(sim.AdaFedWeights(ALPHA, PI), **common),
        "f3ast": FedAvg(sim.F3astWeights(ALPHA, PI, clients=2), **common),
    }


ALGS = every_algorithm()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key", list(ALGS))
def test_full_batch_device_path_equals_fused_kernel_and_reference_loop(key, device):
    """No randomness in the gradients: the torch path on ``device`` gives the fused kernel's
    numbers (CPU, the default path) to rounding, and the plain loop's."""
    alg = ALGS[key]
    kernel = LogisticRegressionProblem(DATA)
    stepwise = LogisticRegressionProblem(DATA, fused=False)
    assert kernel.fused and kernel.full_batch
    run = {
        "availability": PROC,
        "algorithm": alg,
        "rounds": 10,
        "replicates": 3,
        "seed": 2,
        "w0": W0,
    }
    expected = simulate(kernel, **run)
    got = simulate(stepwise, **run, device=device)
    assert got.config["device"].startswith(device)
    np.testing.assert_array_equal(got.participants, expected.participants)
    assert_tight(got.iterates, expected.iterates, rtol=1e-10)
    for key_metric in ("gap", "grad_sq", "accuracy"):
        assert_tight(got.metrics[key_metric], expected.metrics[key_metric], rtol=1e-10)
    if type(alg) in (*(type(a) for a in algorithms(N).values()),):
        for r in range(3):
            loop = reference.run(stepwise, alg, expected.participation[r], W0)
            assert_tight(got.iterates[r], loop, rtol=1e-10)


def simulate_kw(problem, process, alg, **kw):
    return simulate(problem, process, alg, **{"rounds": 6, "replicates": 4, "w0": W0, **kw})


@pytest.mark.paper("mimic")  # MimiC: per-client state, a decaying step size, a full first round
@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_same_device_same_numbers(device):
    minibatch = LogisticRegressionProblem(DATA, batch_size=5, fused=False)
    noisy = QuadraticProblem.random(N, 4, mu=0.5, L=2.0, seed=1, noise_std=0.3)
    process = Bernoulli(np.linspace(0.2, 0.9, N))
    alg = ALGS["mimic-first"]
    for problem in (minibatch, noisy):
        first = simulate_kw(problem, process, alg, seed=7, device=device)
        again = simulate_kw(problem, process, alg, seed=7, device=device)
        other = simulate_kw(problem, process, alg, seed=8, device=device)
        np.testing.assert_array_equal(first.iterates, again.iterates)
        np.testing.assert_array_equal(first.participation, again.participation)
        assert not np.array_equal(first.iterates, other.iterates)


def final_models(problem, device, seed: int, replicates: int) -> np.ndarray:
    """``w_T [R, d]`` of FedAvg with mini-batches, Bernoulli availability."""
    alg = FedAvg(ALGS["fedavg-avg"].aggregator, local_steps=3, lr=0.5)
    process = Bernoulli(np.linspace(0.3, 0.9, N))
    rec = simulate(problem, process, alg, rounds=4, replicates=replicates, seed=seed, w0=W0,
                   eval_every=4, device=device)  # fmt: skip
    return rec.iterates[:, -1]


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sampling", ["without_replacement", "with_replacement"])
def test_device_path_and_fused_kernel_agree_in_law(device, sampling):
    """Mini-batches drawn by the two samplers (keys + top-k on ``device``, partial
    Fisher-Yates in the kernel) from independent seeds: per coordinate of the final model,
    Welch's test on the means and Levene's on the spreads (Bonferroni, level 1e-3)."""
    reps = 2000
    kw = {"batch_size": 7, "sampling": sampling}
    kernel = final_models(LogisticRegressionProblem(DATA, **kw), None, 11, reps)
    torch_path = final_models(LogisticRegressionProblem(DATA, **kw, fused=False), device, 12, reps)
    level = 1e-3 / (2 * W0.size)
    for j in range(W0.size):
        assert stats.ttest_ind(kernel[:, j], torch_path[:, j], equal_var=False).pvalue > level
        assert stats.levene(kernel[:, j], torch_path[:, j]).pvalue > level
    assert kernel[:, 0].std() > 1e-3  # the noise is there: the test has something to compare


def device_mask(process, rounds, replicates, seed, start, device):
    """``process``'s mask drawn by its device sampler on ``device`` (on the CPU, the same
    code a CUDA device runs, called directly: ``sample`` keeps NumPy's numbers there)."""
    if device == "cpu":
        return process._sample_on(rounds, replicates, seed, start, torch.device("cpu"))
    return process.sample(rounds, replicates=replicates, seed=seed, start=start, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_device_sampler_has_the_law_and_restarts(device):
    p = np.array([0.0, 0.05, 0.3, 0.5, 0.9, 1.0])
    process = Bernoulli(p)
    mask = device_mask(process, 400, 20, 3, 0, device)
    assert mask.shape == (20, 400, N) and mask.dtype == torch.bool
    assert mask.device.type == torch.device(device).type
    freq = mask.double().mean((0, 1)).cpu().numpy()
    assert binomial_frequencies_ok(freq, p, 400 * 20, 1e-3)
    assert freq[0] == 0.0 and freq[-1] == 1.0
    tail = device_mask(process, 150, 20, 3, 250, device)
    assert torch.equal(tail, mask[:, 250:])  # round t depends only on (seed, t)


@pytest.mark.parametrize("device", DEVICES)
def test_metrics_on_the_device_equal_the_cpu(device):
    problem = LogisticRegressionProblem(DATA)
    w = np.random.default_rng(0).standard_normal((3, 2, 4))
    cpu = problem.exact_metrics(w)
    dev = problem.exact_metrics(w, device=device)
    for key in cpu:
        assert_tight(dev[key], cpu[key], rtol=1e-12)
    gap = evaluate_metrics(problem, w, biased_weights=PI / PI.sum(), device=device)
    assert_tight(gap["gap_B"], evaluate_metrics(problem, w, biased_weights=PI / PI.sum())["gap_B"])


@pytest.mark.parametrize("device", DEVICES)
def test_float32_compute_dtype_on_the_device_stays_close(device):
    run = {"availability": PROC, "algorithm": ALGS["fedavg-avg"], "rounds": 10, "replicates": 2,
           "w0": W0, "device": device}  # fmt: skip
    f64 = simulate(LogisticRegressionProblem(DATA, fused=False), **run)
    f32 = simulate(LogisticRegressionProblem(DATA, fused=False, compute_dtype=torch.float32), **run)
    assert_tight(f32.iterates, f64.iterates, rtol=1e-5)
    assert not np.array_equal(f32.iterates, f64.iterates)  # float32 did compute


def test_fused_kernel_gives_the_same_numbers_on_one_and_two_threads():
    problem = LogisticRegressionProblem(cafed_clustered(12, 5, 40, seed=3), batch_size=6)
    process = Bernoulli(np.linspace(0.2, 0.9, 12))
    alg = ALGS["fedavg-avg"]
    previous = torch.get_num_threads()
    try:
        records = []
        for count in (1, 2):
            torch.set_num_threads(count)
            with threads.regardless_of_load():  # two threads even on a busy machine
                records.append(simulate(problem, process, alg, rounds=5, replicates=6, seed=1))
    finally:
        torch.set_num_threads(previous)
    np.testing.assert_array_equal(records[0].iterates, records[1].iterates)
    gen = np.random.default_rng(2)  # uneven clients, repeated out of order: every split
    counts = np.array([12, 5, 3, 1, 40])
    X, y = gen.standard_normal((5, 40, 3)), (gen.random((5, 40)) < 0.5).astype(float)
    clients = gen.integers(0, 5, size=23)
    w, keys = gen.standard_normal((23, 3)), gen.integers(0, 2**64, size=23, dtype=np.uint64)
    opts = {"steps": 2, "batch": 4, "sampler": fused.WITHOUT_REPLACEMENT,
            "link": fused.LOGISTIC, "lr": 0.4, "ridge": 0.1, "prox": 0.2}  # fmt: skip
    one = fused.local_sgd_glm(X, y, counts, clients, w, keys, **opts)
    for count in (2, 3, 7, 40):
        many = fused.local_sgd_glm(X, y, counts, clients, w, keys, **opts, threads=count)
        np.testing.assert_array_equal(many, one)


def test_the_simulator_gives_torch_threads_to_the_kernel_and_restores_them(monkeypatch):
    monkeypatch.setattr(threads, "idle_cores", lambda: 2)  # as on an idle 2-core machine
    problem = LogisticRegressionProblem(cafed_clustered(6, 3, 20, seed=0), batch_size=4)
    seen = []

    class Spy(FedAvg):
        def step(self, problem, state, mask, t, generator):
            seen.append((torch.get_num_threads(), fused.threads()))
            return super().step(problem, state, mask, t, generator)

    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        spy = Spy(AverageParticipating(), local_steps=2, lr=0.1)
        simulate(problem, Bernoulli(np.full(6, 0.5)), spy, rounds=3)
        assert seen == [(1, 2)] * 3  # torch's ops on one thread, the kernel on both
        assert torch.get_num_threads() == 2 and fused.threads() == 2
        with fused.owns_the_cores() as outer:  # nested and overlapping blocks: last one out
            with fused.owns_the_cores() as inner:
                assert (outer, inner, torch.get_num_threads(), fused.threads()) == (2, 2, 1, 2)
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(RuntimeError), fused.owns_the_cores():
            raise RuntimeError("restored on errors too")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)


def _kernel_on_two_threads(queue) -> None:
    problem = LogisticRegressionProblem(cafed_clustered(6, 3, 20, seed=0), batch_size=4)
    w, clients = torch.zeros(40, 3, dtype=torch.float64), torch.arange(40) % 6
    with threads.regardless_of_load(), fused.owns_the_cores():
        gen = torch.Generator().manual_seed(0)
        queue.put(problem.local_sgd(w, clients, steps=2, lr=0.1, prox=0.0, generator=gen).numpy())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_the_kernel_threads_work_in_a_forked_child():
    previous = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        _kernel_on_two_threads(queue)  # the parent's pool exists before the fork
        parent = queue.get(timeout=60)
        child = context.Process(target=_kernel_on_two_threads, args=(queue,), daemon=True)
        child.start()
        np.testing.assert_array_equal(queue.get(timeout=60), parent)  # no deadlock
        child.join(timeout=60)
        assert child.exitcode == 0
    finally:
        torch.set_num_threads(previous)


def test_kernel_uniforms_are_uniform_and_independent_across_pairs_and_draws():
    keys = np.arange(2_000, dtype=np.uint64)  # adjacent keys: the hardest case for a hash
    u = fused.uniforms(keys, steps=5, batch=100)  # [5, 2000, 100]
    assert u.min() >= 0.0 and u.max() < 1.0
    counts = np.histogram(u, bins=64, range=(0.0, 1.0))[0]
    assert stats.chisquare(counts).pvalue > 1e-4
    flat = u.reshape(-1)
    for lag in (1, 100, 500):  # next draw, next step, next pair
        r = np.corrcoef(flat[:-lag], flat[lag:])[0, 1]
        assert abs(r) < 5 / np.sqrt(flat.size), (lag, r)


def test_bad_devices_are_refused_naming_the_parameter():
    problem = LogisticRegressionProblem(DATA)
    alg = ALGS["fedavg-avg"]
    for bad in (3, "tpu", "not a device"):
        assert_parameter_error(
            lambda bad=bad: simulate(problem, PROC, alg, rounds=1, device=bad), "device", "cpu"
        )
    missing = f"cuda:{torch.cuda.device_count()}"  # one past the last CUDA device
    assert_parameter_error(
        lambda: simulate(problem, PROC, alg, rounds=1, device=missing), "device", "available"
    )
    assert_parameter_error(lambda: Bernoulli([0.5]).sample(2, device=1.5), "device", "cuda")
    assert_parameter_error(lambda: problem.exact_metrics(W0, device="gpu0"), "device", "cpu")
    assert check_device(None, "device", "f") == torch.device("cpu")
    assert check_device(torch.device("cpu"), "device", "f") == torch.device("cpu")


@pytest.mark.parametrize("device", DEVICES)
def test_sums_per_replicate_are_the_same_on_every_run(device):
    """The table sum used off the CPU equals ``index_add`` (to rounding) and repeats exactly."""
    gen = torch.Generator().manual_seed(0)
    mask = torch.rand(7, 50, generator=gen) < 0.6
    rep, cli = mask.nonzero(as_tuple=True)
    values = torch.randn(rep.numel(), 3, generator=gen, dtype=torch.float64)
    expected = _sum_per_replicate(values, rep, cli, (7, 50))  # CPU: index_add
    args = [x.to(device) for x in (values, rep, cli)]
    got = [_sum_per_replicate(*args, (7, 50)).cpu() for _ in range(3)]
    assert_tight(_table_sum(*args, (7, 50)).cpu(), expected, rtol=1e-12)
    assert_tight(got[0], expected, rtol=1e-12)
    assert all(torch.equal(g, got[0]) for g in got)
