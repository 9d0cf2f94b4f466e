"""Algorithms of the simulator: vectorised == plain reference loop, limit and metamorphic
cases, FedAU weights step by step, FedLaAvg selection, determinism, bad input."""

from __future__ import annotations

import dataclasses
import math
import re
from fractions import Fraction

import numpy as np
import pytest
import torch

from fedtheory import sim
from fedtheory.availability import AlternatingBlocks, TwoStateMarkov
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.errors import DivergenceError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import (
    MIFA,
    AverageAll,
    AverageParticipating,
    ExponentialDecay,
    FedAU,
    FedAvg,
    FedVARP,
    FixedWeights,
    InverseTime,
    fedau_init,
    fedau_update,
    project_ball,
    reference,
    simulate,
    unbiased_weights,
)
from fedtheory.sim.divergence import algorithm_label
from tests.conftest import assert_parameter_error, assert_tight, of_registered_papers

N, D = 6, 3
PROB = QuadraticProblem.random(N, D, mu=0.5, L=2.0, seed=11)
PI = np.array([0.05, 0.1, 0.2, 0.3, 0.5, 0.8])
PROC = TwoStateMarkov(PI, 0.4)
W0 = np.array([1.0, -2.0, 0.5])


class GivenMask(AvailabilityProcess):
    """A fixed availability mask ``[R, T, N]`` (for limit cases)."""

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = np.asarray(mask, dtype=bool)
        self.num_clients = self.mask.shape[2]

    @property
    def marginals(self) -> np.ndarray:
        return self.mask.mean(axis=(0, 1))

    def _sample(self, rounds, replicates, seed, start):
        return self.mask[:replicates, start : start + rounds].copy()


def algorithms(n: int = N) -> dict[str, object]:
    """Every algorithm family, with every weighting rule and the non-default options, and
    every configuration a paper registers with its plain loop (``reference_loop``)."""
    common = {"local_steps": 3, "lr": 0.1}
    return {
        "fedavg-avg": FedAvg(AverageParticipating(), **common),
        "fedavg-all": FedAvg(AverageAll(), **common, server_lr=2.0),
        "fedavg-known-p": FedAvg(unbiased_weights(np.full(n, 1 / n), PI[:n]), **common),
        "fedavg-fixed-prox-ball": FedAvg(
            FixedWeights(np.linspace(0.1, 0.3, n)), **common, prox=0.5, radius=1.5
        ),
        "fedau-inf": FedAvg(FedAU(), **common),
        "fedau-K3": FedAvg(FedAU(cutoff=3), **common, server_lr=InverseTime(2.0, 2.0)),
        "mifa": MIFA(**common),
        "mifa-first": MIFA(**common, full_first_round=True),
        "fedvarp": FedVARP(**common),
        "fedvarp-formula": FedVARP(**common, skip_empty_rounds=False),
        **of_registered_papers(
            {
                "fedlaavg": lambda: {
                    "fedlaavg": sim.FedLaAvg(clients_per_round=2, local_steps=1, lr=0.1),
                },
                "mimic": lambda: {
                    "mimic": sim.MimiC(local_steps=3, lr=ExponentialDecay(0.1, 0.95, 0.02)),
                    "mimic-first": sim.MimiC(
                        **common, full_first_round=True, server_lr=InverseTime(3.0, 3.0)
                    ),
                },
            }
        ),  # fmt: skip
        **reference.examples(),  # each paper's, registered beside its plain loop
    }


ALGS = algorithms()


@pytest.mark.parametrize("key", list(ALGS))
def test_vectorised_equals_reference_loop(key):
    alg = ALGS[key]
    rec = simulate(PROB, PROC, alg, rounds=30, replicates=4, seed=3, w0=W0)
    assert (rec.available == 0).any() and (rec.available == N).sum() < 4 * 30  # rich masks
    for r in range(4):
        ref = reference.run(PROB, alg, rec.participation[r], W0)
        assert_tight(rec.iterates[r], ref, rtol=1e-11)


def always_available_variants() -> dict[str, object]:
    """Every algorithm and weighting rule, configured for clients available with pi = 1."""
    cfg = {"local_steps": 2, "lr": 0.1, "prox": 0.3, "radius": 2.0}
    uniform = np.full(N, 1 / N)
    return {
        "avg-participating": FedAvg(AverageParticipating(), **cfg),
        "avg-all": FedAvg(AverageAll(), **cfg),
        "known-p": FedAvg(unbiased_weights(uniform, np.ones(N)), **cfg),
        "fixed-alpha": FedAvg(FixedWeights(uniform), **cfg),
        "fedau-inf": FedAvg(FedAU(), **cfg),
        "fedau-K2": FedAvg(FedAU(cutoff=2), **cfg),
        "mifa": MIFA(**cfg),
        "fedvarp": FedVARP(**cfg),
        **of_registered_papers(
            {
                "fedlaavg": lambda: {"fedlaavg-K=N": sim.FedLaAvg(clients_per_round=N, **cfg)},
                "mimic": lambda: {"mimic": sim.MimiC(**cfg)},
            }
        ),
    }


@pytest.mark.parametrize("key", list(always_available_variants()))
def test_always_available_reproduces_full_participation_fedavg(key):
    """With every client always available, every rule is plain full-participation FedAvg
    (MimiC's corrections average to zero; MIFA/FedVARP tables are always fresh)."""
    full = GivenMask(np.ones((2, 12, N), dtype=bool))
    alg = always_available_variants()[key]
    base = FedAvg(AverageParticipating(), local_steps=2, lr=0.1, prox=0.3, radius=2.0)
    rec = simulate(PROB, full, alg, rounds=12, replicates=2, w0=W0)
    ref = simulate(PROB, full, base, rounds=12, replicates=2, w0=W0)
    assert_tight(rec.iterates, ref.iterates, rtol=1e-11)
    assert not np.allclose(ref.iterates[:, 1], ref.iterates[:, 0])  # the model does move


@pytest.mark.parametrize("key", list(always_available_variants()))
def test_one_client_reduces_to_sgd(key):
    """N = 1, always available: every algorithm is E steps of (proximal, projected) GD."""
    one = QuadraticProblem(PROB.A[:1], PROB.c[:1])
    alg = always_available_variants()[key]
    if isinstance(alg, FedAvg) and isinstance(alg.aggregator, FixedWeights):
        alg = FedAvg(FixedWeights([1.0]), local_steps=2, lr=0.1, prox=0.3, radius=2.0)
    if isinstance(alg, FedAvg) and key == "known-p":
        alg = FedAvg(unbiased_weights([1.0], [1.0]), local_steps=2, lr=0.1, prox=0.3, radius=2.0)
    if key == "fedlaavg-K=N":
        alg = sim.FedLaAvg(clients_per_round=1, local_steps=2, lr=0.1, prox=0.3, radius=2.0)
    rec = simulate(one, GivenMask(np.ones((1, 6, 1), dtype=bool)), alg, rounds=6, w0=W0)
    w, A, c = W0.copy(), one.A[0], one.c[0]
    for t in range(6):
        y = w.copy()
        for _ in range(2):
            y = y - 0.1 * (A @ (y - c) + 0.3 * (y - w))
        w = y * min(1.0, 2.0 / np.linalg.norm(y))
        assert_tight(rec.iterates[0, t + 1], w, rtol=1e-12)


def permuted_variants(perm: np.ndarray) -> list[tuple[object, object]]:
    """(algorithm on the original clients, the same on permuted clients)."""
    q = np.linspace(0.1, 0.6, N)
    cfg = {"local_steps": 2, "lr": 0.1}
    same = [
        FedAvg(AverageParticipating(), **cfg),
        FedAvg(AverageAll(), **cfg),
        FedAvg(FedAU(cutoff=4), **cfg),
        MIFA(**cfg),
        FedVARP(**cfg),
        *of_registered_papers(
            {
                "mimic": lambda: {"mimic": sim.MimiC(**cfg)},
                # with K < N ties are broken by index
                "fedlaavg": lambda: {"fedlaavg": sim.FedLaAvg(clients_per_round=N, **cfg)},
            }
        ).values(),
    ]
    pairs = [(a, a) for a in same]
    pairs.append((FedAvg(FixedWeights(q), **cfg), FedAvg(FixedWeights(q[perm]), **cfg)))
    return pairs


@pytest.mark.parametrize("index", range(len(permuted_variants(np.arange(N)))))
def test_permuting_clients_changes_nothing(index):
    perm = np.array([4, 2, 0, 5, 1, 3])
    mask = PROC.sample(25, replicates=2, seed=8).numpy()
    prob_p = QuadraticProblem(PROB.A[perm], PROB.c[perm])
    alg, alg_p = permuted_variants(perm)[index]
    rec = simulate(PROB, GivenMask(mask), alg, rounds=25, replicates=2, w0=W0)
    rec_p = simulate(prob_p, GivenMask(mask[:, :, perm]), alg_p, rounds=25, replicates=2, w0=W0)
    assert_tight(rec_p.iterates, rec.iterates, rtol=1e-10)


def test_fedlaavg_with_few_slots_depends_on_order_only_through_ties():
    """K < N: absent-longest is permutation-equivariant except for the index tie-break."""
    from fedtheory.sim import absent_longest

    mask = torch.tensor([[True, True, True, False]])
    last = torch.tensor([[3, -1, 1, -1]])
    assert absent_longest(mask, last, 2).tolist() == [[False, True, True, False]]
    tie = torch.tensor([[5, 2, 2, -1]])
    assert absent_longest(mask, tie, 1).tolist() == [[False, True, False, False]]
    assert absent_longest(mask, tie, 10).tolist() == mask.tolist()  # fewer than K: all


# FedAU Algorithm 2 worked by hand. Participation I_0..I_9 of one client:
PARTICIPATION = [0, 1, 0, 0, 1, 1, 0, 0, 0, 0]
# K = inf: intervals recorded at t=2 (2), t=5 (3), t=6 (1): running means 2, 2.5, 2.
OMEGA_K_INF = [1, 1, 2, 2, 2, Fraction(5, 2), 2, 2, 2, 2]
# K = 2: records at t=2 (2), t=4 (cutoff, 2), t=5 (1), t=6 (1), t=8 (cutoff, 2).
OMEGA_K2 = [1, 1, 2, 2, 2, Fraction(5, 3), Fraction(3, 2), Fraction(3, 2), Fraction(8, 5), 1.6]


def _no_inf(cutoff: float) -> int | None:
    """fedau_update's cutoff: None for K = inf (the plain loop takes math.inf)."""
    return None if cutoff == math.inf else cutoff


@pytest.mark.parametrize(
    ("cutoff", "expected"),
    [(math.inf, OMEGA_K_INF), (2, OMEGA_K2), (1, [1] * 10)],
    ids=["K=inf", "K=2", "K=1"],
)
def test_fedau_weights_match_algorithm2_by_hand(cutoff, expected):
    state = fedau_init(1, 1)
    seen = []
    for bit in PARTICIPATION:
        seen.append(state.omega.item())
        state = fedau_update(state, torch.tensor([[bool(bit)]]), _no_inf(cutoff))
    assert_tight(seen, [float(x) for x in expected], rtol=1e-15)
    mask = np.array(PARTICIPATION, dtype=bool)[:, None]
    assert_tight(reference.fedau_omega(mask, cutoff)[:, 0], seen, rtol=1e-15)


@pytest.mark.parametrize("cutoff", [1, 2, 5, 50, math.inf])
def test_fedau_vectorised_weights_equal_literal_algorithm2(cutoff):
    mask = TwoStateMarkov(np.linspace(0.05, 0.95, 20), 0.3).sample(120, replicates=3, seed=1)
    state = fedau_init(3, 20)
    omegas = []
    for t in range(120):
        omegas.append(state.omega)
        state = fedau_update(state, mask[:, t], _no_inf(cutoff))
    omegas = torch.stack(omegas, dim=1).numpy()  # [R, T, N]
    for r in range(3):
        assert_tight(omegas[r], reference.fedau_omega(mask[r].numpy(), cutoff), rtol=1e-13)


def test_fedau_weight_is_mean_of_cut_intervals():
    """omega_t = mean of the recorded intervals min(G, K) (FedAU Algorithm 2, code equivalent)."""
    mask = np.zeros((40, 1), dtype=bool)
    mask[[3, 4, 20], 0] = True  # intervals 4, 1, then 16 = cut at K = 7 twice + 2
    omega = reference.fedau_omega(mask, 7)
    assert omega[-1, 0] == pytest.approx(np.mean([4, 1, 7, 7, 2, 7, 7]), rel=1e-15)


@pytest.mark.parametrize("key", list(ALGS))
def test_same_seed_same_numbers(key):
    noisy = QuadraticProblem(PROB.A, PROB.c, noise_std=0.2)
    a = simulate(noisy, PROC, ALGS[key], rounds=10, replicates=2, seed=4, w0=W0)
    b = simulate(noisy, PROC, ALGS[key], rounds=10, replicates=2, seed=4, w0=W0)
    c = simulate(noisy, PROC, ALGS[key], rounds=10, replicates=2, seed=5, w0=W0)
    np.testing.assert_array_equal(a.iterates, b.iterates)
    assert not np.array_equal(a.iterates, c.iterates)


class CountingProblem:
    """Wraps a problem and records the batch size of every gradient call."""

    def __init__(self, problem) -> None:
        self.problem, self.sizes = problem, []
        self.num_clients, self.dim, self.alpha = problem.num_clients, problem.dim, problem.alpha

    def grad(self, w, clients, generator=None):
        self.sizes.append(int(clients.numel()))
        return self.problem.grad(w, clients, generator)

    def __getattr__(self, name):
        return getattr(self.problem, name)


@pytest.mark.parametrize("key", [
    "fedavg-avg", "mifa", "fedvarp",
    pytest.param("fedlaavg", marks=pytest.mark.paper("fedlaavg")),
    pytest.param("mimic", marks=pytest.mark.paper("mimic")),
])  # fmt: skip
def test_only_participants_compute_gradients(key):
    alg = ALGS[key]
    prob = CountingProblem(PROB)
    rec = simulate(prob, PROC, alg, rounds=15, replicates=3, seed=2)
    worked = rec.participants.sum(axis=0)  # [T]
    expected = [int(m) for m in worked if m > 0 for _ in range(alg.local_steps)]
    assert prob.sizes == expected
    if key == "fedlaavg":
        assert (rec.participants <= alg.clients_per_round).all()
        assert (rec.participants == np.minimum(rec.available, 2)).all()


@pytest.mark.parametrize(
    "key", ["fedavg-avg", "fedvarp", pytest.param("mimic-first", marks=pytest.mark.paper("mimic"))]
)
def test_divergence_names_round_replicate_and_algorithm(key):
    alg = dataclasses.replace(ALGS[key], lr=20.0)
    label = re.escape(algorithm_label(alg))
    with pytest.raises(DivergenceError, match=rf"{label} diverged in round \d+ of replicate"):
        simulate(PROB, PROC, alg, rounds=3000, replicates=2, seed=0)


BAD_CALLS = [
    (lambda: FedAvg(AverageParticipating(), local_steps=0), "'local_steps'", "[1, 2147483647]"),
    (lambda: MIFA(lr=-0.1), "'lr'", "(0, inf)"),
    pytest.param(
        lambda: sim.MimiC(server_lr=0.0),
        "'server_lr'",
        "(0, inf)",
        marks=pytest.mark.paper("mimic"),
    ),
    (lambda: FedVARP(prox=-1.0), "'prox'", "[0, inf)"),
    (lambda: FedAvg(AverageAll(), radius=0.0), "'radius'", "(0, inf)"),
    pytest.param(
        lambda: sim.FedLaAvg(clients_per_round=0),
        "'clients_per_round'",
        "[1, inf)",
        marks=pytest.mark.paper("fedlaavg"),
    ),
    (lambda: FedAU(cutoff=0), "'cutoff'", "[1, 2147483647]"),
    (lambda: FedAU(cutoff=2.5), "'cutoff'", "integer"),
    (lambda: InverseTime(0.0, 1.0), "'a'", "(0, inf)"),
    (lambda: reference.run(PROB, object(), np.ones((2, N)), W0), "'algorithm'", "FedAvg"),
    (lambda: ExponentialDecay(0.1, 1.5), "'decay'", "(0, 1]"),
    (lambda: ExponentialDecay(0.1, 0.9, -1.0), "'floor'", "[0, inf)"),
    (lambda: simulate(PROB, PROC, MIFA(), rounds=2, eval_every=0), "'eval_every'", "[1, inf)"),
    (
        lambda: simulate(PROB, PROC, MIFA(), rounds=2, biased_weights=[0.5, 0.5]),
        "'biased_weights'",
        "shape (6,)",
    ),
    (
        lambda: simulate(PROB, PROC, MIFA(), rounds=2, biased_weights=np.full(N, 0.5)),
        "'biased_weights'",
        "summing to 1",
    ),
]


@pytest.mark.parametrize(("call", "name", "allowed"), BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert "Got" in assert_parameter_error(call, name, allowed)


def test_schedules_values():
    assert InverseTime(2.0, 4.0)(0) == 0.5 and InverseTime(2.0, 4.0)(4) == 0.25
    decay = ExponentialDecay(0.1, 0.5, 0.02)
    assert [decay(t) for t in range(4)] == [0.1, 0.05, 0.025, 0.02]
    assert MIFA(lr=0.3).client_lr(7) == 0.3  # a float is a constant schedule


@pytest.mark.paper("mimic")
def test_mimic_server_rate_follows_its_schedule():
    assert sim.MimiC(server_lr=InverseTime(1.0, 1.0)).server_rate(1) == 0.5


def test_project_ball_keeps_inside_points_and_scales_outside_ones():
    w = torch.tensor([[0.3, 0.4], [3.0, 4.0]], dtype=torch.float64)  # norms 0.5 and 5
    out = project_ball(w, 1.0)
    assert_tight(out[0].numpy(), [0.3, 0.4])
    assert_tight(out[1].numpy(), [0.6, 0.8])
    center = torch.tensor([1.0, 1.0], dtype=torch.float64)
    assert_tight(project_ball(center + w, 1.0, center)[1].numpy(), [1.6, 1.8])


@pytest.mark.slow
@pytest.mark.parametrize(
    "key", [k for k in ALGS if ALGS[k].radius is None and getattr(ALGS[k], "clip", None) is None]
)  # a projection or a clipped update is not linear in the gradients
def test_noisy_runs_average_to_the_noise_free_reference(key):
    """Quadratics with additive zero-mean gradient noise: every update rule is linear in the
    gradients, so for a fixed mask E[w_t] is the noise-free iterate. z-test per coordinate
    and round over 400 replicates (|z| <= 4.5, i.e. p ~ 7e-6 per entry)."""
    reps, rounds = 400, 10
    noisy = QuadraticProblem(PROB.A, PROB.c, noise_std=0.3)
    mask = np.repeat(PROC.sample(rounds, seed=5).numpy(), reps, axis=0)  # [R, T, N]
    rec = simulate(noisy, GivenMask(mask), ALGS[key], rounds=rounds, replicates=reps, w0=W0)
    exact = reference.run(PROB, ALGS[key], mask[0], W0)[1:]  # [T, d]
    runs = rec.iterates[:, 1:]  # [R, T, d]
    z = (runs.mean(0) - exact) / (runs.std(0, ddof=1) / np.sqrt(reps))
    assert runs.std(0).min() > 0 and np.abs(z).max() <= 4.5, np.abs(z).max()


def test_example1_stored_update_methods_reach_the_optimum_fedavg_does_not():
    """FedLaAvg Example 1, unequal blocks (3, 1): FedAvg stays biased (the example's point),
    the methods that reuse stored updates converge to x* = 1/2 (deterministic gradients)."""
    from fedtheory.sim import FedLaAvg, MimiC

    prob, blocks = QuadraticProblem.example1(0.0, 1.0), AlternatingBlocks(3, 1)

    def final_gap(alg):
        return simulate(prob, blocks, alg, rounds=800).metrics["gap"][0, -8:].max()

    assert final_gap(FedAvg(AverageParticipating(), lr=0.05)) > 1e-2
    for alg in [
        MIFA(lr=0.05),
        FedVARP(lr=0.05),
        FedLaAvg(clients_per_round=1, lr=0.05),
        MimiC(lr=0.05, full_first_round=True),
    ]:
        assert final_gap(alg) <= 1e-12, alg.name


def test_mimic_with_one_participant_per_round_never_changes_its_corrections():
    """Derived: if |S_t| = 1, v = Delta_i + c_i, so c_i <- v - Delta_i = c_i. Without the
    forced full first round every c_i stays 0 and MimiC *is* FedAvg on Example 1."""
    from fedtheory.sim import MimiC

    prob, blocks = QuadraticProblem.example1(0.0, 1.0), AlternatingBlocks(3, 1)
    mimic = simulate(prob, blocks, MimiC(lr=0.05), rounds=40)
    fedavg = simulate(prob, blocks, FedAvg(AverageParticipating(), lr=0.05), rounds=40)
    np.testing.assert_array_equal(mimic.iterates, fedavg.iterates)
