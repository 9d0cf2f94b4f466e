"""Threads fitted to the machine's load (fedtheory.threads): the count, the blocks that set
and restore torch's threads, and OpenMP's passive waiting."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from fedtheory import threads
from fedtheory.problems import fused


@pytest.fixture
def two_torch_threads():
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(previous)


def _machine(monkeypatch, *, cores: int, runnable: int | None, own: int) -> None:
    monkeypatch.setattr(threads, "_cores", lambda: cores)
    monkeypatch.setattr(threads, "_runnable", lambda: runnable)
    monkeypatch.setattr(threads, "_own_running_threads", lambda: own)


@pytest.mark.parametrize(
    ("cores", "runnable", "own", "idle"),
    [(2, 1, 1, 2), (2, 2, 1, 1), (2, 3, 1, 1), (2, 9, 1, 1), (8, 4, 2, 6), (4, None, 1, 4),
     (2, 1, 3, 2)],
)  # fmt: skip
def test_idle_cores_are_the_affinity_less_other_processes_runnable_threads(
    monkeypatch, cores, runnable, own, idle
):
    _machine(monkeypatch, cores=cores, runnable=runnable, own=own)
    assert threads.idle_cores() == idle


def test_idle_cores_reads_this_machine():
    assert 1 <= threads.idle_cores() <= len(os.sched_getaffinity(0))
    assert threads._own_running_threads() >= 1  # the thread reading is running


def test_available_caps_torch_threads_by_idle_cores_unless_told_otherwise(
    monkeypatch, two_torch_threads
):
    _machine(monkeypatch, cores=2, runnable=2, own=1)  # one other busy process
    assert threads.available() == 1 and fused.threads() == 1
    with threads.regardless_of_load():
        assert threads.available() == 2 and fused.threads() == 2
    _machine(monkeypatch, cores=2, runnable=1, own=1)  # idle machine
    assert threads.available() == 2


def test_fitted_to_load_sets_and_restores_torch_threads(monkeypatch, two_torch_threads):
    _machine(monkeypatch, cores=2, runnable=2, own=1)
    with threads.fitted_to_load() as outer:
        _machine(monkeypatch, cores=2, runnable=1, own=1)  # the outermost block fixed it
        with threads.fitted_to_load() as inner:
            assert (outer, inner, torch.get_num_threads()) == (1, 1, 1)
            with fused.owns_the_cores() as kernel:
                assert (kernel, torch.get_num_threads(), fused.threads()) == (1, 1, 1)
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError), threads.fitted_to_load():
        raise RuntimeError("restored on errors too")
    assert torch.get_num_threads() == 2


def _omp_policy(env: dict[str, str], first: str = "") -> str:
    code = f"{first}import os, fedtheory; print(os.environ.get('OMP_WAIT_POLICY'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_importing_fedtheory_asks_openmp_to_wait_passively_unless_the_user_chose():
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _omp_policy(env) == "PASSIVE"
    assert _omp_policy({**env, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
    assert _omp_policy(env, first="import torch; ") == "None"  # OpenMP has read it already
