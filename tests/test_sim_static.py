"""Static-shape rounds (``simulate(..., static_shapes=True)``): participants gathered to a
fixed capacity with padding, no host read-back in a steady-state round, checks batched per
chunk of rounds.

Where a round draws no random numbers, or every pair participates (capacity = number of
participants, so the same draws in the same order), the static round gives the default
path's numbers to ``SAME_ARITHMETIC_RTOL``: padding rows follow the participants, are zeroed
by selection and add exact zeros in the same sequential sum, so each participant's
arithmetic is the same sequence of operations (bit for bit in nearly every case; a batched
matrix product over another number of rows may round a last bit differently). Where padding
rows draw mini-batches, the later draws shift: the same law (tested), other numbers."""

from __future__ import annotations

import collections
import dataclasses
import os
import traceback

import numpy as np
import pytest
import torch
from scipy import stats
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from fedtheory import rng, sim
from fedtheory.availability import AlternatingBlocks, Bernoulli, TwoStateMarkov
from fedtheory.constraints import Indices, trusted
from fedtheory.errors import DivergenceError
from fedtheory.problems import LeastSquaresProblem, LogisticRegressionProblem, QuadraticProblem
from fedtheory.sim import (
    AverageAll,
    AverageParticipating,
    FedAvg,
    FedVARP,
    evaluate_metrics,
    runner,
    simulate,
)
from fedtheory.sim import _capture as capture
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import FedAU
from fedtheory.sim.f3ast import F3astOnline
from fedtheory.sim.optimizer import SGD, Training
from tests.conftest import ZERO_ATOL, of_registered_papers
from tests.test_sim_algorithms import PI
from tests.test_sim_device import ALGS, DATA, W0, N

FULL_BATCH = LogisticRegressionProblem(DATA, fused=False)
MINI_BATCH = LogisticRegressionProblem(DATA, batch_size=5, fused=False)
NOISY_QUADRATIC = QuadraticProblem.random(N, len(W0), noise_std=0.5, seed=3)
PROCESSES = {
    "markov": TwoStateMarkov(np.linspace(0.1, 0.8, N), 0.4),
    "bernoulli-rare": Bernoulli(np.full(N, 0.15)),
    "blocks": AlternatingBlocks(2, 3, group1=[True, False, True, False, False, True]),
    "always": Bernoulli(np.ones(N)),
}


class MoreThanAvailable(FedAvg):
    """FedAvg whose workers are the available clients and their right-hand neighbours: more
    participants than the availability count (the capacity's overflow)."""

    def participants(self, mask: torch.Tensor, t: int) -> torch.Tensor:
        return mask | mask.roll(1, -1)


MOMENTUM = SGD(momentum=0.9, weight_decay=1e-2)
EXTRA = {
    "fedavg-full-first": FedAvg(AverageParticipating(), local_steps=2, lr=0.3,
                                full_first_round=True),
    "more-than-available": MoreThanAvailable(FedAU(cutoff=3), local_steps=2, lr=0.3),
    **of_registered_papers({
        "fedlaavg": lambda: {"fedlaavg-first": sim.FedLaAvg(
            clients_per_round=2, local_steps=2, lr=0.3, full_first_round=True)},
        "fedawe": lambda: {"fedawe-first-ball": sim.FedAWE(
            local_steps=2, lr=0.3, full_first_round=True, radius=0.5)},
    }),
    "fedavg-momentum-ball": FedAvg(AverageParticipating(), local_steps=2, lr=0.3, radius=0.5,
                                   training=Training(client=MOMENTUM, server=MOMENTUM)),
    "fedavg-momentum-fresh-first-ball": FedAvg(
        FedAU(cutoff=3), local_steps=2, lr=0.3, full_first_round=True, radius=0.5,
        training=Training(client=MOMENTUM, persistent=False)),
    "fedavg-epochs": FedAvg(AverageAll(), local_steps=2, lr=0.3,
                            training=Training(client=MOMENTUM, local="epochs", batch_size=8)),
    "f3ast-online": FedAvg(F3astOnline(np.full(N, 1 / N), clients=2), local_steps=2, lr=0.3),
    **of_registered_papers({"cafed": lambda: {
        "cafed-first": sim.CaFed(alpha=np.full(N, 1 / N), pi=PI, lam=np.full(N, 0.4),
                                 local_steps=2, lr=0.3, full_first_round=True),
        "cafed-momentum": sim.CaFed(alpha=np.full(N, 1 / N), pi=PI, lam=np.full(N, 0.4),
                                    local_steps=2, lr=0.3, training=Training(client=MOMENTUM)),
    }}),
}  # fmt: skip
"""Beyond the families of ``ALGS``: forced full first rounds, more workers than available,
and the optimiser path (momentum buffers kept per client, or fresh each round; epochs)."""
EVERY = {**ALGS, **EXTRA}
"""Every algorithm family and option the static round must cover."""
SELECTING = {"fedlaavg", "fedlaavg-first", "cafed-oracle", "cafed-prior", "cafed-momentum",
             "cafed-first", "e3cs", "pow-d"}  # fmt: skip
"""Algorithms whose workers are a strict subset of the available clients: the capacity
(from the availability count) leaves padding rows even when every client is available."""
HOST_SIDE = {
    "cafed-oracle": ("optim/greedy.py",),
    "cafed-prior": ("optim/greedy.py",),
    "cafed-momentum": ("optim/greedy.py",),
    "cafed-first": ("optim/greedy.py",),
    "pow-d": ("sim/selection/",),
    "e3cs": ("sim/selection/",),  # none on the CPU; on a GPU the mask's copy to the host
}
"""The documented exceptions (``simulate``'s docstring): where their static rounds still
read back. CA-Fed's weights (the greedy exclusion, CA-Fed Algorithm 1 lines 16-27, runs
until every replicate has decided, a data-dependent number of passes); the selectors'
policies on the host (E3CS, Pow-d: NumPy generators and bandit state; Pow-d checks its loss
tensor)."""


def _both(problem, process, algorithm, **kw):
    kw = {"rounds": 10, "replicates": 3, "seed": 2, "w0": W0, **kw}
    default = simulate(problem, process, algorithm, **kw)
    return default, simulate(problem, process, algorithm, static_shapes=True, **kw)


SAME_ARITHMETIC_RTOL = 1e-12
"""Relative tolerance of two float64 runs doing the same operations on other row counts."""


def _assert_same_run(a, b) -> None:
    """Tight: iterates, metrics and effective weights to ``SAME_ARITHMETIC_RTOL``
    (``ZERO_ATOL`` at 0); participant counts exactly."""
    np.testing.assert_array_equal(a.participants, b.participants)
    pairs = [(a.iterates, b.iterates), *((a.metrics[k], b.metrics[k]) for k in a.metrics)]
    if a.effective_weights is not None:
        pairs.append((a.effective_weights, b.effective_weights))
    for x, y in pairs:
        np.testing.assert_allclose(x, y, rtol=SAME_ARITHMETIC_RTOL, atol=ZERO_ATOL)


@pytest.mark.parametrize("padding", ["capacity", "every-pair"])
@pytest.mark.parametrize("process", list(PROCESSES))
@pytest.mark.parametrize("key", list(EVERY))
def test_static_round_equals_default_tight_without_random_numbers(key, process, padding,
                                                                   monkeypatch):  # fmt: skip
    """Full-batch gradients: the same numbers whatever the padding (every algorithm, four
    availability processes, a forced full first round, more workers than available, the
    optimiser's buffers): padding rows change no stored per-client state. ``every-pair``
    gathers all RN pairs every round (the most padding rows, every absent client's)."""
    if padding == "every-pair":
        monkeypatch.setattr(gather, "capacity", lambda count, pairs: pairs)
    _assert_same_run(*_both(FULL_BATCH, PROCESSES[process], EVERY[key]))


@pytest.mark.parametrize("problem", [MINI_BATCH, NOISY_QUADRATIC], ids=["minibatch", "noise"])
@pytest.mark.parametrize("key", [k for k in EVERY if k not in SELECTING])
def test_static_round_every_pair_participating_draws_the_same_numbers(key, problem):
    """Every client available: capacity = participants, the same draws in the same order."""
    if key == "fedavg-epochs" and problem is NOISY_QUADRATIC:
        pytest.skip("training by epochs needs a problem with samples")
    _assert_same_run(*_both(problem, PROCESSES["always"], EVERY[key], replicates=4))


def _assert_same_state(want, got) -> None:
    """Tight on every floating field of two states (records of tensors, arrays, records),
    exact on the others."""
    (a_leaves, spec), (b_leaves, b_spec) = tree_flatten(want), tree_flatten(got)
    assert spec == b_spec
    for a, b in zip(a_leaves, b_leaves, strict=True):
        if dataclasses.is_dataclass(a):  # e.g. availability counts: arrays in a record
            _assert_same_state(dataclasses.astuple(a), dataclasses.astuple(b))
        elif not isinstance(a, torch.Tensor | np.ndarray):
            assert a == b
        elif np.asarray(a).dtype.kind == "f":
            np.testing.assert_allclose(b, a, rtol=SAME_ARITHMETIC_RTOL, atol=ZERO_ATOL)
        else:
            np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("key", list(EVERY))
def test_padding_rows_change_no_per_client_state(key):
    """Every pair gathered (every absent client's row is padding), from a first round that
    nobody works in and an initial model outside FedAWE's and FedAvg's balls: after each
    round every field of the state (models, memory tables, corrections, echoes, last-seen
    rounds, optimiser buffers, selector state) equals the default round's (tight; integer
    and boolean fields exactly)."""
    algorithm, reps = EVERY[key], 3
    masks = PROCESSES["markov"].sample(6, replicates=reps, seed=1)
    masks[:, 0] = False
    default = static = algorithm.init(FULL_BATCH, torch.from_numpy(W0).expand(reps, -1).clone())
    overflow = torch.zeros((), dtype=torch.bool)
    for t in range(masks.shape[1]):
        default = algorithm.step(FULL_BATCH, default, masks[:, t], t,
                                 rng.torch_generator(0, t, rng.GRADIENT_NOISE))  # fmt: skip
        with gather.static(masks[:, t].numel(), overflow):
            static = algorithm.step(FULL_BATCH, static, masks[:, t], t,
                                    rng.torch_generator(0, t, rng.GRADIENT_NOISE))  # fmt: skip
        _assert_same_state(default, static)
    assert not overflow


def test_fedlaavg_capacity_is_its_selection_not_the_available_clients(monkeypatch):
    """FedLaAvg selects at most K clients per replicate: the static capacity is bounded by
    RK instead of the available count (its padding would be most of the round), no round
    overflows (no rerun), and the run equals the default."""
    from fedtheory.sim import FedLaAvg

    algorithm = FedLaAvg(clients_per_round=2, local_steps=2, lr=0.3)
    sizes, flags = [], []
    static_round = gather.static

    def watched(size, overflow):
        sizes.append(size)
        flags.append(overflow)
        return static_round(size, overflow)

    monkeypatch.setattr(gather, "static", watched)
    default, static = _both(FULL_BATCH, PROCESSES["always"], algorithm)
    _assert_same_run(default, static)
    assert sizes == [3 * 2] * 10  # R K = 6 of the 18 available pairs, each round gathered once
    assert not any(bool(f) for f in flags)


def test_overflowing_rounds_are_replayed_with_every_pair():
    """A round with more workers than available clients overflows its capacity; the chunk
    is replayed with every pair gathered and nobody is dropped (equal to the default)."""
    default, static = _both(FULL_BATCH, PROCESSES["markov"], EXTRA["more-than-available"])
    assert (default.participants > default.available).any()  # the overflow did happen
    _assert_same_run(default, static)


LAW = {
    "fedavg": FedAvg(AverageParticipating(), local_steps=3, lr=0.5),
    "fedvarp": FedVARP(local_steps=3, lr=0.5),
    **of_registered_papers(
        {
            "mimic": lambda: {"mimic": sim.MimiC(local_steps=3, lr=0.5)},
            "fedawe": lambda: {"fedawe": sim.FedAWE(local_steps=3, lr=0.5)},
            "fedlaavg": lambda: {
                "fedlaavg": sim.FedLaAvg(clients_per_round=2, local_steps=3, lr=0.5)
            },
        }
    ),
    "fedavg-momentum": EXTRA["fedavg-momentum-ball"],
}
"""One algorithm per way of keeping per-client state, for the test in law."""


@pytest.mark.parametrize("key", list(LAW))
def test_static_mini_batch_rounds_have_the_default_law(key):
    """With padding, mini-batch draws differ: the final models of 300 replicates of the
    two paths (independent seeds) agree in law (two-sample Kolmogorov-Smirnov, p > 1e-3)."""
    algorithm = LAW[key]
    kw = {"rounds": 6, "replicates": 300, "w0": W0}
    default = simulate(MINI_BATCH, PROCESSES["markov"], algorithm, seed=5, **kw)
    static = simulate(MINI_BATCH, PROCESSES["markov"], algorithm, seed=6, static_shapes=True,
                      **kw)  # fmt: skip
    for j in range(MINI_BATCH.dim):
        a, b = default.iterates[:, -1, j], static.iterates[:, -1, j]
        assert stats.ks_2samp(a, b).pvalue > 1e-3


@pytest.mark.parametrize(
    "problem", [FULL_BATCH, LeastSquaresProblem(DATA)], ids=["logistic", "lsq"]
)
def test_static_metrics_reduced_on_the_device_equal_evaluate_metrics(problem):
    """The static run's metrics (per-client terms reduced where the run is, one read-back)
    equal :func:`evaluate_metrics` of its iterates, with the biased objective too."""
    biased = np.linspace(1.0, 2.0, N) / np.linspace(1.0, 2.0, N).sum()
    algorithm = FedAvg(AverageParticipating(), local_steps=2, lr=0.3)
    run = simulate(problem, PROCESSES["markov"], algorithm, rounds=9, replicates=5, w0=W0,
                   eval_every=4, biased_weights=biased, static_shapes=True)  # fmt: skip
    want = evaluate_metrics(problem, run.iterates[:, run.eval_rounds], biased_weights=biased)
    assert list(run.metrics) == list(want)
    for key in want:
        np.testing.assert_allclose(run.metrics[key], want[key], rtol=SAME_ARITHMETIC_RTOL,
                                   atol=ZERO_ATOL)  # fmt: skip


def test_gather_keeps_every_participant_once_or_flags_the_overflow():
    """Participants first (in ``nonzero`` order), distinct padding pairs after; a capacity
    below the count sets the device flag instead of dropping silently."""
    mask = torch.tensor([[True, False, True, False], [False, False, False, True]])
    overflow = torch.zeros((), dtype=torch.bool)
    with gather.static(5, overflow):
        rep, cli, valid = gather.pairs(mask)
    assert not overflow
    np.testing.assert_array_equal(valid, [True, True, True, False, False])
    np.testing.assert_array_equal(
        torch.stack([rep, cli])[:, :3], torch.stack(mask.nonzero(as_tuple=True))
    )
    assert len(set(zip(rep.tolist(), cli.tolist(), strict=True))) == 5
    with gather.static(2, overflow):
        gather.pairs(mask)
    assert overflow


def test_capacity_rounds_up_by_at_most_an_eighth():
    for count in range(0, 5000, 7):
        size = gather.capacity(count, 4000)
        assert min(count, 4000) <= size <= min(4000, max(count, count * 9 // 8 + 1))


def test_static_divergence_is_reported_like_the_default():
    """The batched check reruns the chunk with per-round checks: the same round, replicate,
    quantity and partial record as a run checked every round."""
    algorithm = FedAvg(AverageParticipating(), local_steps=2, lr=5.0)  # L = 10: unstable
    problem = QuadraticProblem.random(N, len(W0), seed=3)
    errors = []
    for static in (False, True):
        with pytest.raises(DivergenceError) as info:
            simulate(problem, PROCESSES["markov"], algorithm, rounds=200, replicates=3, seed=1,
                     w0=W0, static_shapes=static)  # fmt: skip
        errors.append(info.value)
    (a, b) = errors
    assert (a.round, a.replicate, a.quantity) == (b.round, b.replicate, b.quantity)
    assert 0 < a.round < 199
    np.testing.assert_array_equal(a.partial.iterates, b.partial.iterates)


REPLAYED = {
    "fedavg-all": ALGS["fedavg-all"],
    "fedau-K3": FedAvg(FedAU(cutoff=3), local_steps=2, lr=0.3),
    "prox-ball": ALGS["fedavg-fixed-prox-ball"],
    "mifa-first": ALGS["mifa-first"],
    "fedvarp": ALGS["fedvarp"],
    **of_registered_papers(
        {
            "mimic": lambda: {
                "mimic-first": sim.MimiC(local_steps=2, lr=0.3, full_first_round=True)
            },
        }
    ),
}


@pytest.mark.parametrize("problem", [MINI_BATCH, NOISY_QUADRATIC], ids=["minibatch", "noise"])
@pytest.mark.parametrize("key", list(REPLAYED))
def test_replayed_rounds_equal_the_eager_static_rounds(key, problem, monkeypatch):
    """The recorded round replayed on its buffers (the CUDA graph's stand-in off CUDA:
    same buffers, same reseeding, outputs overwritten every round) gives the eager static
    round's numbers bit for bit, across chunks of rounds, random numbers included; every
    round after the first is replayed."""
    algorithm = REPLAYED[key]
    kw = {"rounds": 9, "replicates": 3, "seed": 4, "w0": W0, "static_shapes": True}
    monkeypatch.setattr(runner, "CHUNK_ELEMENTS", 4 * 3 * N)  # chunks of 4 rounds
    eager = simulate(problem, PROCESSES["markov"], algorithm, **kw)
    calls = []
    replay = capture.ReplayedRound.__call__
    monkeypatch.setattr(capture, "EAGER_ON_CPU", True)
    monkeypatch.setattr(capture.ReplayedRound, "__call__",
                        lambda *a: calls.append(1) or replay(*a))  # fmt: skip
    replayed = simulate(problem, PROCESSES["markov"], algorithm, **kw)
    assert len(calls) == kw["rounds"] - 1
    np.testing.assert_array_equal(replayed.iterates, eager.iterates)
    np.testing.assert_array_equal(replayed.participants, eager.participants)
    if eager.effective_weights is not None:
        np.testing.assert_array_equal(replayed.effective_weights, eager.effective_weights)


def test_replayed_divergence_is_reported_like_the_default(monkeypatch):
    """A run whose replayed rounds diverge reports the default's DivergenceError: the
    chunk's first state survived the replays (copied), the chunk is rerun with checks."""
    algorithm = FedAvg(AverageParticipating(), local_steps=2, lr=5.0)
    problem = QuadraticProblem.random(N, len(W0), seed=3)
    kw = {"rounds": 200, "replicates": 3, "seed": 1, "w0": W0}
    monkeypatch.setattr(runner, "CHUNK_ELEMENTS", 16 * 3 * N)  # chunks of 16 rounds
    with pytest.raises(DivergenceError) as default:
        simulate(problem, PROCESSES["markov"], algorithm, **kw)
    monkeypatch.setattr(capture, "EAGER_ON_CPU", True)
    with pytest.raises(DivergenceError) as replayed:
        simulate(problem, PROCESSES["markov"], algorithm, static_shapes=True, **kw)
    a, b = default.value, replayed.value
    assert (a.round, a.replicate, a.quantity) == (b.round, b.replicate, b.quantity)
    assert a.round > 16  # not in the first chunk
    np.testing.assert_array_equal(a.partial.iterates, b.partial.iterates)


def test_only_algorithms_reading_t_through_constant_steps_are_replayed():
    cpu = torch.device("cpu")
    capture.EAGER_ON_CPU = True
    try:
        assert capture.replayable(REPLAYED["fedau-K3"], cpu, 1)
        assert not capture.replayable(REPLAYED["fedau-K3"], cpu, 0)  # the initial state
        assert not capture.replayable(ALGS["fedau-K3"], cpu, 1)  # server rate a/(t+b)
        assert not capture.replayable(EXTRA["more-than-available"], cpu, 1)  # a subclass
        assert capture.replayable(ALGS["mifa"], cpu, 1)
        papers = {"mimic": "exponentially decaying rate", "fedlaavg": "t in the last-seen rounds",
                  "fedawe": "t in the echoes"}  # fmt: skip
        for key in papers.keys() & ALGS.keys():  # the registered papers'
            assert not capture.replayable(ALGS[key], cpu, 1), papers[key]
        assert not capture.replayable(EXTRA["fedavg-momentum-ball"], cpu, 1)  # the optimiser
        decaying = FedAvg(AverageParticipating(), lr=lambda t: 1 / (t + 1))
        assert not capture.replayable(decaying, cpu, 1)
    finally:
        capture.EAGER_ON_CPU = False
    assert not capture.replayable(REPLAYED["fedau-K3"], cpu, 1)  # off CUDA by default


class HostReads(TorchDispatchMode):
    """Counts the operations that read a tensor back to the host (``nonzero``'s size, a
    scalar's value), keyed by the innermost fedtheory frame that asked for them."""

    READS = ("nonzero", "_local_scalar_dense", "is_nonzero", "item")

    def __init__(self) -> None:
        super().__init__()
        self.hits: collections.Counter = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in self.READS:
            package = f"{os.sep}fedtheory{os.sep}"  # the package's frames, not the tests'
            frames = [f for f in traceback.extract_stack() if package in f.filename]
            where = frames[-1] if frames else None
            self.hits[
                (func.overloadpacket.__name__, where and where.filename, where and where.lineno)
            ] += 1
        return func(*args, **(kwargs or {}))


def _device_only(hits) -> dict:
    """The reads a non-CPU device would make too: the declarations check values only on CPU
    tensors (``fedtheory/constraints/``, tested below), so their reads are left out."""
    return {k: v for k, v in hits.items() if "fedtheory/constraints/" not in str(k[1])}


@pytest.mark.parametrize("problem", [MINI_BATCH, NOISY_QUADRATIC], ids=["minibatch", "noise"])
@pytest.mark.parametrize("key", list(EVERY))
def test_steady_state_static_round_reads_nothing_back(key, problem):
    """A steady-state static round of every algorithm runs no ``nonzero`` and reads no
    scalar back (the documented exceptions: only where ``HOST_SIDE`` says), counted by a
    dispatch mode on CPU tensors; the default round does (the counter is not blind)."""
    algorithm = EVERY[key]
    if key == "fedavg-epochs" and problem is NOISY_QUADRATIC:
        pytest.skip("training by epochs needs a problem with samples")
    if key.startswith("cafed") and problem is NOISY_QUADRATIC:
        pytest.skip("CA-Fed's mini-batch losses need a problem with samples")
    reps = 3
    state = algorithm.init(problem, torch.from_numpy(W0).expand(reps, -1).clone())
    masks = PROCESSES["markov"].sample(4, replicates=reps, seed=0)
    overflow = torch.zeros((), dtype=torch.bool)
    for t in range(4):
        mask, gen = masks[:, t], rng.torch_generator(0, t, rng.GRADIENT_NOISE)
        with gather.static(gather.capacity(int(mask.sum()), mask.numel()), overflow):
            with HostReads() as reads, trusted():  # as in simulate's rounds
                state = algorithm.step(problem, state, mask, t, gen)
        if t >= 1:
            allowed = HOST_SIDE.get(key, ())
            left = {k for k in _device_only(reads.hits) if not any(a in str(k[1]) for a in allowed)}
            assert left == set()
    with HostReads() as reads:
        algorithm.step(problem, state, masks[:, 3], 3, rng.torch_generator(0, 3, 1))
    assert any(k[0] == "nonzero" for k in _device_only(reads.hits))


def test_declared_value_checks_skip_tensors_off_the_cpu():
    """Why the declarations' reads are left out above: off the CPU only shapes are checked."""
    with HostReads() as reads:
        Indices(4, shape=(None,)).check(torch.zeros(3, dtype=torch.int64, device="meta"),
                                        "clients", "test", {})  # fmt: skip
    assert not reads.hits


@pytest.mark.gpu
@pytest.mark.parametrize("key", [k for k in EVERY if k not in HOST_SIDE])
def test_steady_state_static_round_does_not_synchronise_on_cuda(key):
    """On CUDA a steady-state static round of every algorithm but the documented exceptions
    runs under ``set_sync_debug_mode("error")`` (any synchronising call raises)."""
    device = torch.device("cuda")
    algorithm = EVERY[key]
    reps = 3
    state = algorithm.init(MINI_BATCH, torch.from_numpy(W0).to(device).expand(reps, -1).clone())
    masks = PROCESSES["markov"].sample(4, replicates=reps, seed=0, device=device)
    sizes = [gather.capacity(int(c), reps * N) for c in masks.sum((0, 2)).cpu()]
    overflow = torch.zeros((), dtype=torch.bool, device=device)
    gens = [rng.torch_generator(0, t, rng.GRADIENT_NOISE, device) for t in range(4)]
    for t in range(4):
        with gather.static(sizes[t], overflow), trusted():  # as simulate calls the step
            if t <= 1:  # round 0 may start from fields still None; constants reach the GPU
                state = algorithm.step(MINI_BATCH, state, masks[:, t], t, gens[t])
                continue
            torch.cuda.set_sync_debug_mode("error")
            try:
                state = algorithm.step(MINI_BATCH, state, masks[:, t], t, gens[t])
            finally:
                torch.cuda.set_sync_debug_mode("default")
    assert torch.isfinite(state.w).all()


@pytest.mark.gpu
@pytest.mark.parametrize("key", list(REPLAYED))
def test_cuda_graph_replay_equals_the_eager_static_round(key, monkeypatch):
    """On CUDA the static rounds of FedAvg, MIFA, FedVARP and MimiC are captured in a CUDA
    graph and replayed with the generator reseeded per round: the numbers of the eager
    static rounds, bit for bit."""
    algorithm = REPLAYED[key]
    kw = {"rounds": 9, "replicates": 3, "seed": 4, "w0": W0, "static_shapes": True,
          "device": "cuda"}  # fmt: skip
    calls = []
    replay = capture.ReplayedRound.__call__
    monkeypatch.setattr(capture.ReplayedRound, "__call__",
                        lambda *a: calls.append(1) or replay(*a))  # fmt: skip
    replayed = simulate(MINI_BATCH, PROCESSES["markov"], algorithm, **kw)
    assert len(calls) == kw["rounds"] - 1
    monkeypatch.setattr(capture, "replayable", lambda *a: False)
    eager = simulate(MINI_BATCH, PROCESSES["markov"], algorithm, **kw)
    np.testing.assert_array_equal(replayed.iterates, eager.iterates)
