"""Run record and runner: metrics, participation counts, effective weights, chunked
availability sampling, pandas table, save/load."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from fedtheory.availability import TwoStateMarkov
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import (
    AverageParticipating,
    FedAU,
    FedAvg,
    FixedWeights,
    RunRecord,
    evaluate_metrics,
    runner,
    simulate,
)
from tests.conftest import assert_tight

PROB = QuadraticProblem.random(4, 2, mu=0.5, L=2.0, seed=3)
PI = np.array([0.2, 0.4, 0.6, 0.8])
PROC = TwoStateMarkov(PI, 0.3)


class WithAccuracy(QuadraticProblem):
    """A quadratic that also offers ``accuracy`` (duck-typed metric)."""

    def accuracy(self, w):
        return (np.asarray(w)[..., 0] > 0).astype(float)


def test_metrics_gap_biased_gap_gradient_and_accuracy():
    prob = WithAccuracy(PROB.A, PROB.c)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    rec = simulate(prob, PROC, FedAvg(AverageParticipating()), rounds=6, biased_weights=p)
    w = rec.iterates[0]  # [T+1, d]
    assert_tight(rec.metrics["gap"][0], prob.loss(w) - prob.optimum()[1])
    assert_tight(rec.metrics["gap_B"][0], prob.loss(w, p) - prob.optimum(p)[1])
    grad = np.einsum("k,kij,tkj->ti", prob.alpha, prob.A, w[:, None, :] - prob.c)
    assert_tight(rec.metrics["grad_sq"][0], (grad**2).sum(-1), rtol=1e-12)
    assert_tight(rec.metrics["accuracy"][0], (w[:, 0] > 0).astype(float))
    assert "accuracy" not in evaluate_metrics(PROB, w)  # only when the problem offers it


def test_participation_counts_and_effective_weights():
    q = np.array([0.5, 0.1, 0.3, 0.2])
    rec = simulate(PROB, PROC, FedAvg(FixedWeights(q)), rounds=40, replicates=3, seed=1)
    np.testing.assert_array_equal(rec.available, rec.participation.sum(-1))
    np.testing.assert_array_equal(rec.participants, rec.available)
    counts = rec.participation.sum(axis=1)  # [R, N] rounds available
    expected = q * counts / (q * counts).sum(-1, keepdims=True)  # sum_t q_t / sum_t,h q_t
    assert_tight(rec.effective_weights, expected, rtol=1e-12)
    fedau = simulate(PROB, PROC, FedAvg(FedAU()), rounds=5, replicates=2)
    assert fedau.effective_weights.shape == (2, 4)


def test_mimic_has_no_effective_weights_and_its_first_round_may_be_full():
    from fedtheory.sim import MimiC

    assert simulate(PROB, PROC, MimiC(), rounds=3).effective_weights is None
    first = simulate(PROB, PROC, MimiC(full_first_round=True), rounds=3)
    assert first.participants[0, 0] == 4


def test_fedlaavg_participants_are_at_most_its_selection():
    from fedtheory.sim import FedLaAvg

    lazy = simulate(PROB, PROC, FedLaAvg(clients_per_round=1), rounds=20, seed=2)
    np.testing.assert_array_equal(lazy.participants, np.minimum(lazy.available, 1))


def test_chunked_availability_sampling_gives_the_same_run(monkeypatch):
    noisy = QuadraticProblem(PROB.A, PROB.c, noise_std=0.1)
    alg = FedAvg(FedAU(cutoff=5), local_steps=2)
    one = simulate(noisy, PROC, alg, rounds=30, replicates=2, seed=7)
    monkeypatch.setattr(runner, "CHUNK_ELEMENTS", 2 * 4 * 3)  # 3 rounds per chunk
    chunked = simulate(noisy, PROC, alg, rounds=30, replicates=2, seed=7)
    np.testing.assert_array_equal(one.participation, chunked.participation)
    np.testing.assert_array_equal(one.iterates, chunked.iterates)
    lean = simulate(noisy, PROC, alg, rounds=30, replicates=2, seed=7, keep_masks=False)
    assert lean.participation is None
    np.testing.assert_array_equal(lean.available, one.available)
    np.testing.assert_array_equal(lean.iterates, one.iterates)


def test_eval_every_keeps_the_last_round():
    rec = simulate(PROB, PROC, FedAvg(AverageParticipating()), rounds=10, eval_every=4)
    np.testing.assert_array_equal(rec.eval_rounds, [0, 4, 8, 10])
    full = simulate(PROB, PROC, FedAvg(AverageParticipating()), rounds=10)
    assert_tight(rec.metrics["gap"], full.metrics["gap"][:, [0, 4, 8, 10]])


def test_save_load_round_trip_with_every_field(tmp_path):
    rec = simulate(
        PROB, PROC, FedAvg(FedAU()), rounds=7, replicates=2, eval_every=3, biased_weights=PI / 2
    )
    rec.save(tmp_path / "run.npz")
    back = RunRecord.load(tmp_path / "run.npz")
    for name in ("iterates", "participation", "eval_rounds", "participants", "available"):
        np.testing.assert_array_equal(getattr(back, name), getattr(rec, name))
    np.testing.assert_array_equal(back.effective_weights, rec.effective_weights)
    assert back.metrics.keys() == rec.metrics.keys() == {"gap", "gap_B", "grad_sq"}
    for name, values in rec.metrics.items():
        np.testing.assert_array_equal(back.metrics[name], values)
    assert back.config == rec.config and back.versions["torch"] == torch.__version__


def test_to_pandas_rows_and_columns():
    pd = pytest.importorskip("pandas")
    rec = simulate(PROB, PROC, FedAvg(AverageParticipating()), rounds=5, replicates=2)
    table = rec.to_pandas()
    assert isinstance(table, pd.DataFrame) and len(table) == 2 * 6
    assert list(table.columns) == [
        "replicate",
        "round",
        "gap",
        "grad_sq",
        "participants",
        "available",
    ]
    assert np.isnan(table["participants"].iloc[5])


def test_to_pandas_without_pandas_says_how_to_install(monkeypatch):
    rec = simulate(PROB, PROC, FedAvg(AverageParticipating()), rounds=2)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        rec.to_pandas()


def test_exact_gradient_metric_is_chunked_without_changing_values(monkeypatch):
    rec = simulate(PROB, PROC, FedAvg(AverageParticipating()), rounds=9, replicates=2)
    monkeypatch.setattr(runner, "CHUNK_ELEMENTS", 3 * 4 * 2)  # 3 points per chunk
    chunked = evaluate_metrics(PROB, rec.iterates)
    assert_tight(chunked["grad_sq"], rec.metrics["grad_sq"], rtol=1e-14)


def _fedawe_by_hand(problem, proc, alg, *, rounds, replicates, seed):
    """FedAWE round by round through the Algorithm protocol with simulate's seed contract
    (mask of round t from (seed, t), gradient noise from rng.torch_generator(seed, t))."""
    from fedtheory import rng

    mask = proc.sample(rounds, replicates=replicates, seed=seed)
    state = alg.init(problem, torch.zeros(replicates, problem.dim, dtype=torch.float64))
    echo, x = [], []
    for t in range(rounds):
        state = alg.step(
            problem, state, mask[:, t], t, rng.torch_generator(seed, t, rng.GRADIENT_NOISE)
        )
        echo.append(state.echo.clone())
        x.append(state.x.clone())
    return torch.stack(echo, 1).numpy(), torch.stack(x, 1).numpy()


def test_recorders_record_any_function_of_the_state_every_round():
    from fedtheory.sim import FedAWE

    noisy = QuadraticProblem.random(4, 2, mu=0.5, L=2.0, noise_std=0.3, seed=3)
    alg = FedAWE(local_steps=2, lr=0.05)
    record = {"echo": lambda s, m: s.echo, "x": lambda s, m: s.x, "active": lambda s, m: m}
    rec = simulate(noisy, PROC, alg, rounds=12, replicates=3, seed=4, record=record)
    echo, x = _fedawe_by_hand(noisy, PROC, alg, rounds=12, replicates=3, seed=4)
    assert rec.recorded["echo"].shape == (3, 12, 4) and rec.recorded["x"].shape == (3, 12, 4, 2)
    np.testing.assert_array_equal(rec.recorded["echo"], echo)  # same seeds, same numbers
    np.testing.assert_array_equal(rec.recorded["x"], x)
    np.testing.assert_array_equal(rec.recorded["active"], rec.participation)
    without = simulate(noisy, PROC, alg, rounds=12, replicates=3, seed=4)
    np.testing.assert_array_equal(without.iterates, rec.iterates)  # recording changes nothing


def test_recorded_values_survive_save_and_load(tmp_path):
    alg = FedAvg(AverageParticipating(), lr=0.1)
    rec = simulate(PROB, PROC, alg, rounds=5, replicates=2, record={"w": lambda s, m: s.w})
    rec.save(tmp_path / "r.npz")
    np.testing.assert_array_equal(
        RunRecord.load(tmp_path / "r.npz").recorded["w"], rec.recorded["w"]
    )
    np.testing.assert_array_equal(rec.recorded["w"], rec.iterates[:, 1:])


@pytest.mark.parametrize(
    "record, match",
    [
        ([lambda s, m: s.w], r"dict\) of names to callables"),
        ({"w": 3.0}, r"dict\) of names to callables"),
        ({"w": lambda s, m: 1.0}, "a tensor \\[R=2, ...\\]. Got float"),
        ({"w": lambda s, m: s.w[:1]}, "a tensor \\[R=2, ...\\]. Got Tensor \\(1, 2\\)"),
    ],
)
def test_a_bad_recorder_is_refused_naming_record(record, match):
    with pytest.raises(
        ParameterError, match="'record' parameter of simulate must " + "(.|\\n)*" + match
    ):
        simulate(PROB, PROC, FedAvg(AverageParticipating(), lr=0.1), rounds=3, replicates=2,
                 record=record)  # fmt: skip


def test_a_recording_over_the_memory_budget_is_refused_before_it_is_kept():
    huge = {"big": lambda s, m: torch.zeros(2, 10**6, dtype=torch.float64)}
    with pytest.raises(ParameterError, match="the recorded 'big' \\[2, 1000, 1000000\\]"):
        simulate(PROB, PROC, FedAvg(AverageParticipating(), lr=0.1), rounds=1000, replicates=2,
                 record=huge, max_memory="1G")  # fmt: skip
