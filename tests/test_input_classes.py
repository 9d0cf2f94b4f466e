"""Regression tests of the input classes the fuzz draws (``tests/test_fuzz_public_api.py``,
``test_every_input_class_is_refused_or_answered``): one test per class of fix. A paper's
modules are imported inside the tests that use them, so that the file runs in a copy without
that paper."""

from __future__ import annotations

import math
import re
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch

from fedtheory.availability import TraceReplay
from fedtheory.bounds.judgement import Judge
from fedtheory.budget import ENV, TIME_ENV
from fedtheory.constraints import MAX_INTEGER, Integer
from fedtheory.data import cafed_clustered
from fedtheory.errors import ParameterError
from fedtheory.io import atomic_write_text, import_file, save_npz
from fedtheory.optim.greedy import greedy_exclusion
from fedtheory.pep.participation import Participation
from fedtheory.problems import QuadraticProblem
from fedtheory.problems.logistic import LogisticRegressionProblem
from fedtheory.sim import E3CS, run_selection
from fedtheory.sim.memory import empty_table, refresh
from fedtheory.sim.record import RunRecord


def test_an_integer_without_an_upper_end_refuses_401_digits_with_a_short_message():
    from fedtheory.pep.fedlaavg import example1_plateau

    with pytest.raises(ParameterError, match=re.escape("at most 2**63 - 1")) as info:
        example1_plateau(t1=1, t2=1, periods=10**400, gamma=0.1)
    assert "'periods'" in str(info.value) and len(str(info.value)) < 300
    assert Integer(0).convert(MAX_INTEGER, {}) == MAX_INTEGER


@pytest.mark.parametrize("where", ["folder", "under a file"])
def test_a_writer_refuses_a_folder_or_a_path_under_a_file_naming_the_path_given(where):
    path = Path(tempfile.mkdtemp())
    if where == "under a file":
        (path / "f").write_text("")
        path = path / "f" / "x.npz"
    for write in (
        lambda: save_npz(path, {"x": np.zeros(2)}),
        lambda: atomic_write_text(path, "x"),
        lambda: RunRecord(np.zeros((1, 2, 2)), None, {}, {}).save(path),
    ):
        with pytest.raises(ParameterError, match="'path' parameter") as info:
            write()
        assert str(path) in str(info.value) and ".tmp" not in str(info.value)


def test_an_array_name_that_is_not_a_string_is_refused_by_name():
    with pytest.raises(ParameterError, match="'arrays' parameter of save_npz"):
        save_npz(Path(tempfile.mkdtemp()) / "a.npz", {7: np.zeros(2)})


@pytest.mark.parametrize("content", [bytes(range(256)), b"[[0], [1"])
def test_a_damaged_trace_file_is_refused_naming_it(content):
    path = Path(tempfile.mkdtemp()) / "trace.json"
    path.write_bytes(content)
    with pytest.raises(ParameterError, match="'path' parameter of TraceReplay.from_file") as info:
        TraceReplay.from_file(path, num_clients=2)
    assert str(path) in str(info.value)


def test_a_python_file_that_does_not_compile_is_refused_before_it_runs():
    path = Path(tempfile.mkdtemp()) / "m.py"
    path.write_text("X = (\n")
    with pytest.raises(ParameterError, match="compiles") as info:
        import_file(path, owner="f", prefix="m")
    assert str(path) in str(info.value)


def test_nan_inside_a_mapping_of_settings_is_refused():
    with pytest.raises(ParameterError, match="'config' parameter of RunRecord"):
        RunRecord(np.zeros((1, 2, 2)), None, {}, {"lr": math.nan})


def test_a_tensor_of_another_dtype_or_requiring_grad_is_refused_naming_it():
    from fedtheory.sim import CaFed

    table = empty_table(2, 3, 2)
    rep, cli = torch.tensor([0, 1]), torch.tensor([1, 2])
    with pytest.raises(ParameterError, match="'delta'.*float64"):
        refresh(table, rep, cli, torch.ones(2, 2, dtype=torch.float32))
    with pytest.raises(ParameterError, match=r"not requiring grad \(pass delta.detach\(\)\)"):
        refresh(table, rep, cli, torch.ones(2, 2, dtype=torch.float64, requires_grad=True))
    cafed = CaFed(alpha=np.full(3, 1 / 3), pi=np.full(3, 0.5), lam=np.zeros(3), losses="exact")
    problem = QuadraticProblem.random(3, 2, seed=0)
    w = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ParameterError, match="'w' parameter"):
        cafed.reported_losses(problem, w, torch.ones(2, 3, dtype=torch.bool), torch.Generator())


@pytest.mark.parametrize("columns", [2, 4])
def test_orders_must_fit_the_weights_they_visit(columns):
    q = torch.ones(1, columns, dtype=torch.float64)
    with pytest.raises(ParameterError, match="'orders' parameter of greedy_exclusion"):
        greedy_exclusion(lambda c: c.sum(-1), q, [torch.tensor([[2, 0, 1]])])


def test_claim1_allocation_with_a_denormal_weight_is_k_over_K():
    from fedtheory.bounds import e3cs

    out = e3cs.claim1_allocation(np.array([1.0, 2.0, 5e-324]), 2, 0.1)
    np.testing.assert_allclose(out, 2 / 3, rtol=1e-15)


def test_a_gradient_at_a_nan_point_and_an_overflowing_local_sgd_are_refused():
    problem = QuadraticProblem.random(3, 2, seed=0)
    w = torch.full((2, 2), math.nan, dtype=torch.float64)
    with pytest.raises(ParameterError, match="'w' parameter of QuadraticProblem.grad"):
        problem.grad(w, torch.tensor([0, 1]))
    logistic = LogisticRegressionProblem(cafed_clustered(4, 3, 10, seed=0), batch_size=None)
    start = torch.zeros(2, logistic.dim, dtype=torch.float64)
    with pytest.raises(ParameterError, match="'lr' parameter of LogisticRegressionProblem"):
        logistic.local_sgd(start, torch.tensor([0, 1]), steps=2, lr=1e308, prox=0.0)


def test_an_alternating_pattern_with_a_huge_block_is_its_first_rounds():
    from fedtheory.pep.fedlaavg import example1_setting

    def reference(rounds, blocks):
        owner = np.repeat(np.arange(len(blocks)), blocks)
        who = owner[np.arange(rounds) % len(owner)]
        return np.arange(len(blocks))[None, :] == who[:, None]

    for rounds, blocks in [(10, [2, 3]), (5, [9, 1]), (9, [1, 20]), (12, [3, 1, 2])]:
        got = Participation.alternating(rounds, len(blocks), blocks=np.array(blocks))
        np.testing.assert_array_equal(got.masks[0], reference(rounds, blocks))
    big = example1_setting(t1=10**9, t2=1, T=5, a2=1.0)["participation"]
    assert big.masks[0][:, 0].all()


def test_judge_of_refuses_measured_and_bound_shapes_that_do_not_broadcast():
    from fedtheory.bounds import fedau

    judge = Judge(fedau.theorem1)
    with pytest.raises(ParameterError, match=re.escape("measured of shape (3,) and bound of sh")):
        judge.of(np.ones(3), np.ones(2))
    with pytest.raises(ParameterError, match=re.escape("samples of shape (3,) and bound of sha")):
        judge.of(None, np.ones(2), samples=np.ones((4, 3)))
    assert judge.of(np.ones(3), 2.0).bound == 2.0  # a scalar bound broadcasts


def test_a_cutoff_that_drives_the_cost_is_named_in_the_time_refusal():
    # T^2 min(K_cut, T) / 2 = 5e14 multiply-adds: above any time budget at any machine speed
    from fedtheory.bounds import fedau

    with pytest.raises(ParameterError, match=r"min\(K_cut, T\) = 100000") as info:
        fedau.weight_error_exact(0.5, 10**9, rounds=10**5)
    assert "a smaller K_cut" in str(info.value)


def test_a_success_matrix_is_checked_without_a_float_copy(monkeypatch):
    """run_selection's budget refusal comes before any copy wider than the bool matrix."""
    success = np.ones((100, 10, 100), dtype=bool)  # 10^5 cells
    monkeypatch.setenv(ENV, "1")
    tracemalloc.start()
    try:
        with pytest.raises(ParameterError, match=r"selections \[100, 10, 100\]"):
            run_selection(E3CS(2, eta=0.5), success)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * success.size, peak  # a float64 copy alone is 8 bytes a cell


def test_local_sgd_steps_are_refused_at_the_kernels_measured_cost_per_step(monkeypatch):
    """10^7 steps of one pair reading 30 cells each: 0.6 s at the optimistic 2 ns a cell,
    under the 1 s budget; a step of the kernel (ten logistic terms) measured on any machine
    costs more than 100 ns, so the call is refused before it runs."""
    problem = LogisticRegressionProblem(cafed_clustered(4, 3, 10, seed=0), batch_size=None)
    monkeypatch.setenv(TIME_ENV, "1")
    start = torch.zeros(1, problem.dim, dtype=torch.float64)
    with pytest.raises(ParameterError, match="a step measured on this machine") as info:
        problem.local_sgd(start, torch.tensor([0]), steps=10**7, lr=0.01, prox=0.0)
    assert "10000000 steps" in str(info.value)
