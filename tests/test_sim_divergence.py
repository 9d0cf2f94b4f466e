"""Divergence is reported on every path with algorithm, round, replicate and quantity, the
rounds before it are kept; a run that cannot keep what it records stops before round 0."""

from __future__ import annotations

import pickle
from typing import NamedTuple

import numpy as np
import pytest
import torch

from fedtheory.availability import Bernoulli
from fedtheory.data import cafed_clustered
from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.problems import LogisticRegressionProblem, QuadraticProblem
from fedtheory.sim import (
    MIFA,
    AverageParticipating,
    FedAU,
    FedAvg,
    footprint,
    reference,
    simulate,
)
from fedtheory.sim.divergence import algorithm_label

DATA = cafed_clustered(6, 3, 20, seed=0)
QUAD = QuadraticProblem.random(3, 2, seed=0)


def _diverge(problem, algorithm, **kw) -> DivergenceError:
    with pytest.raises(DivergenceError) as info:
        simulate(problem, Bernoulli([0.5] * problem.num_clients), algorithm, **kw)
    return info.value


def _assert_partial_is_the_clean_prefix(err: DivergenceError, problem, algorithm, **kw):
    """``err.partial`` is finite, holds the rounds before ``err.round``, and equals a clean
    run of that length; one more round diverges."""
    part = err.partial
    assert part.iterates.shape[1] == err.round + 1
    assert np.isfinite(part.iterates).all()
    assert all(np.isfinite(v).all() for v in part.metrics.values())
    clean = simulate(
        problem, Bernoulli([0.5] * problem.num_clients), algorithm, **{**kw, "rounds": err.round}
    )
    np.testing.assert_array_equal(clean.iterates, part.iterates)
    for key, values in clean.metrics.items():
        np.testing.assert_array_equal(values, part.metrics[key])


@pytest.mark.parametrize(
    "algorithm",
    [MIFA(lr=1e3, local_steps=5), FedAvg(FedAU(), lr=1e6, local_steps=5)],
    ids=["mifa", "fedavg-fedau"],
)
def test_fused_and_op_by_op_paths_report_the_same_divergence(algorithm):
    kw = dict(rounds=300, replicates=2, seed=0)
    errors = [
        _diverge(LogisticRegressionProblem(DATA, fused=fused), algorithm, **kw)
        for fused in (True, False)
    ]
    for err in errors:
        assert err.algorithm == algorithm_label(algorithm)
        assert f"{err.algorithm} diverged in round {err.round} of replicate" in str(err)
    fused, plain = errors
    assert (fused.round, fused.replicate, fused.quantity) == (
        plain.round,
        plain.replicate,
        plain.quantity,
    )
    _assert_partial_is_the_clean_prefix(fused, LogisticRegressionProblem(DATA), algorithm, **kw)


def test_a_huge_step_on_a_quadratic_is_reported_not_returned_as_nan():
    alg = FedAvg(AverageParticipating(), lr=1e100)
    kw = dict(rounds=10, replicates=3, seed=1)
    err = _diverge(QUAD, alg, **kw)
    assert err.algorithm == "fedavg[avg-participating]"
    assert "metric" in err.quantity or "model" in err.quantity
    _assert_partial_is_the_clean_prefix(err, QUAD, alg, **kw)


def test_fedau_is_named_with_its_aggregator():
    assert algorithm_label(FedAvg(FedAU(cutoff=5))) == "fedavg[fedau]"
    assert algorithm_label(MIFA()) == "mifa"


class _State(NamedTuple):
    w: torch.Tensor  # [R, d]
    memory: torch.Tensor  # [R, N]


class _PoisonsItsMemory:
    """Keeps the model finite but writes NaN into replicate 1's per-client state in round 3."""

    name = "poison"

    def init(self, problem, w0):
        return _State(w0, torch.zeros(w0.shape[0], problem.num_clients, dtype=torch.float64))

    def step(self, problem, state, mask, t, generator=None):
        memory = state.memory.clone()
        if t == 3:
            memory[1, 0] = torch.nan
        return _State(state.w + 1.0, memory)


def test_per_client_state_is_checked_every_round():
    err = _diverge(QUAD, _PoisonsItsMemory(), rounds=10, replicates=2)
    assert (err.algorithm, err.round, err.replicate) == ("poison", 3, 1)
    assert err.quantity == "the per-client state 'memory'"
    assert err.partial.iterates.shape == (2, 4, 2)


def test_divergence_error_survives_pickling():
    err = _diverge(QUAD, FedAvg(AverageParticipating(), lr=1e100), rounds=5)
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err)
    assert (back.round, back.replicate, back.quantity) == (err.round, err.replicate, err.quantity)


class _CountsSteps:
    """FedAvg that counts its rounds."""

    name = "counting"

    def __init__(self):
        self.inner, self.steps = FedAvg(AverageParticipating()), 0

    def init(self, problem, w0):
        return self.inner.init(problem, w0)

    def step(self, problem, state, mask, t, generator=None):
        self.steps += 1
        return self.inner.step(problem, state, mask, t, generator)


BIG = dict(rounds=10**6, replicates=4)  # masks [4, 10^6, 3]: 12 MB


def test_a_run_that_cannot_keep_its_masks_fails_before_its_first_round():
    alg = _CountsSteps()
    with pytest.raises(ParameterError, match=r"keep_masks=False \(saves 11\.4 MiB\)") as info:
        simulate(QUAD, Bernoulli([0.5] * 3), alg, max_memory="8M", **BIG)
    assert "eval_every" in str(info.value) and "8.0 MiB" in str(info.value)
    assert alg.steps == 0


def test_the_cap_can_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(footprint.ENV, "1M")
    alg = _CountsSteps()
    with pytest.raises(ParameterError, match=footprint.ENV):
        simulate(QUAD, Bernoulli([0.5] * 3), alg, **BIG)
    assert alg.steps == 0
    monkeypatch.setenv(footprint.ENV, "lots")
    with pytest.raises(ParameterError, match=rf"'{footprint.ENV}' parameter of simulate"):
        simulate(QUAD, Bernoulli([0.5] * 3), alg, rounds=2)


def test_the_estimate_counts_what_the_run_keeps():
    state = FedAvg(AverageParticipating()).init(QUAD, torch.zeros(4, 2, dtype=torch.float64))
    kw = dict(replicates=4, rounds=100, num_clients=3, dim=2, state=state, chunk_elements=10)
    kept = footprint.estimate(eval_every=1, keep_masks=True, **kw)
    assert kept.masks == 4 * 100 * 3
    assert footprint.estimate(eval_every=1, keep_masks=False, **kw).masks == 0
    sparse = footprint.estimate(eval_every=50, keep_masks=True, **kw)
    assert sparse.metrics < kept.metrics
    assert kept.state == 2 * 4 * 2 * 8
    rec = simulate(QUAD, Bernoulli([0.5] * 3), FedAvg(AverageParticipating()), rounds=100,
                   replicates=4)  # fmt: skip
    stored = rec.iterates.nbytes + rec.participation.nbytes
    assert stored <= kept.masks + kept.iterates


def test_available_memory_is_known_on_linux():
    free = footprint.available_bytes()
    assert free is None or free > 0


def test_the_reference_loop_reports_divergence_too():
    alg = FedAvg(AverageParticipating(), lr=1e200)
    with pytest.raises(DivergenceError, match=r"fedavg\[avg-participating\] diverged in round 1"):
        reference.run(QUAD, alg, np.ones((5, 3), dtype=bool), np.ones(2))


def test_the_reference_loop_reports_the_first_non_finite_step():
    """The plain loop's steps refuse to pass inf on: the first client update that overflows
    is the divergence reported (round and quantity), not an inf iterate found at the end."""
    alg = FedAvg(AverageParticipating(), lr=1e200)
    with pytest.raises(DivergenceError, match=r"in round 1 of replicate 0: client 0's update"):
        reference.run(QUAD, alg, np.ones((5, 3), dtype=bool), np.ones(2))


# A run whose models stay finite (about 1e100 after one round) while their metric overflows:
# the divergence is found when the metrics are evaluated after the loop, and must be reported
# there as a DivergenceError of the round, not as the problem's own overflow refusal.
OVERFLOWING = dict(rounds=2, replicates=2, seed=0)
OVERFLOW_PATHS = {
    "default": (QuadraticProblem.random(4, 2, seed=0), {}),
    "static": (QuadraticProblem.random(4, 2, seed=0), {"static_shapes": True}),
    "fused": (LogisticRegressionProblem(DATA, fused=True), {}),
    "op-by-op": (LogisticRegressionProblem(DATA, fused=False), {}),
    "static-fused": (LogisticRegressionProblem(DATA, fused=True), {"static_shapes": True}),
    "metrics-once-after-the-loop": (QuadraticProblem.random(4, 2, seed=0), {"eval_every": 50}),
}


@pytest.mark.parametrize("path", sorted(OVERFLOW_PATHS))
def test_a_metric_that_overflows_after_the_loop_is_a_divergence_of_its_round(path):
    problem, options = OVERFLOW_PATHS[path]
    availability = Bernoulli(np.linspace(0.3, 0.9, problem.num_clients))
    alg = FedAvg(AverageParticipating(), lr=1e100)
    kw = {**OVERFLOWING, **options}
    with pytest.raises(DivergenceError) as info:
        simulate(problem, availability, alg, **kw)
    err = info.value
    assert (err.algorithm, err.quantity) == ("fedavg[avg-participating]", "the metric 'gap'")
    assert f"diverged in round {err.round} of replicate {err.replicate}" in str(err)
    assert 0 <= err.round < kw["rounds"] and 0 <= err.replicate < kw["replicates"]
    if err.round > 0:  # the rounds before it are kept, finite, as a clean run of that length
        assert err.partial.iterates.shape[1] == err.round + 1
        clean = simulate(problem, availability, alg, **{**kw, "rounds": err.round})
        np.testing.assert_array_equal(clean.iterates, err.partial.iterates)
    else:
        assert err.partial is None


def test_the_issue_run_names_round_1_of_replicate_0():
    """The run of the simulator guide's promise: two rounds at lr = 1e100 on 4 clients."""
    with pytest.raises(DivergenceError, match=r"in round 1 of replicate 0: the metric 'gap'"):
        simulate(QuadraticProblem.random(4, 2, seed=0), Bernoulli([0.3, 0.5, 0.7, 0.9]),
                 FedAvg(AverageParticipating(), lr=1e100), rounds=2, replicates=2)  # fmt: skip
