"""Exact metrics of many points (all replicates of an evaluation round) in few chunks:
the chunks are sized by what one point's pass keeps alive, not by the data table, and the
numbers equal those of one point at a time."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.constraints import trusted
from fedtheory.data import cafed_clustered
from fedtheory.problems import LeastSquaresProblem, LogisticRegressionProblem, data_backed
from fedtheory.sim import evaluate_metrics
from tests.conftest import assert_parameter_error, assert_tight

DATA = cafed_clustered(20, 6, 30, seed=0)
PROBLEMS = {
    "logistic": LogisticRegressionProblem(DATA, batch_size=8),
    "least squares": LeastSquaresProblem(DATA, batch_size=8),
}


def _passes(problem, monkeypatch, points) -> tuple[dict, int]:
    """``exact_metrics`` of ``points`` and the number of passes (chunks) it made."""
    calls = []
    terms = problem._data_terms

    def counted(*args):
        calls.append(args[0].shape[0])
        return terms(*args)

    monkeypatch.setattr(problem, "_data_terms", counted)
    try:
        return problem.exact_metrics(points), len(calls)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_all_replicates_in_one_pass_equal_one_point_at_a_time(name, monkeypatch):
    problem = PROBLEMS[name]
    points = np.random.default_rng(1).normal(size=(256, 2, problem.dim))  # [R, rounds, d]
    batched, passes = _passes(problem, monkeypatch, points)
    assert passes == 1  # 512 points of 20 clients x 30 samples: far below the chunk size
    monkeypatch.setattr(data_backed, "_CHUNK_ELEMENTS", 1)  # one point per pass
    single, passes = _passes(problem, monkeypatch, points)
    assert passes == 512
    for key in batched:
        assert_tight(batched[key], single[key], rtol=1e-13)


def test_chunks_are_sized_by_the_pass_not_by_the_data_table(monkeypatch):
    problem = PROBLEMS["logistic"]
    N, n, p = problem._X.shape
    per_point = problem._point_elements((N, n, p))
    assert per_point == N * (8 * n + problem.dim)  # no copy of the data table [N, n, p]
    monkeypatch.setattr(data_backed, "_CHUNK_ELEMENTS", 100 * per_point)
    points = np.zeros((1024, problem.dim))
    _, passes = _passes(problem, monkeypatch, points)
    assert passes == 11  # ceil(1024 / 100)
    metrics = evaluate_metrics(problem, points.reshape(512, 2, -1))
    assert metrics["gap"].shape == (512, 2)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_public_exact_metrics_refuses_an_overflow_that_simulate_reports(name):
    """At ``w`` near 1e308 the losses overflow: the public call refuses it naming ``w``;
    inside ``simulate``'s rounds (``trusted``) the inf is returned for the run's divergence
    report (DivergenceError naming the metric)."""
    problem = PROBLEMS[name]
    w = np.full((2, problem.dim), 1e200)
    assert_parameter_error(lambda: problem.exact_metrics(w), "'w'", "keep the result finite")
    with trusted():
        losses = problem.exact_metrics(w)["client_losses"]
    assert not np.isfinite(losses).all()
