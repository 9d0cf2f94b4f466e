"""Public entry points that allocate in proportion to their arguments check the memory
budget (``FEDTHEORY_MAX_MEMORY``, :mod:`fedtheory.budget`) before allocating: a hostile size
is refused at once with the estimate, whatever memory the machine has."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from fedtheory import bounds
from fedtheory.availability import Bernoulli, Cyclic, TwoStateMarkov
from fedtheory.budget import ENV, TIME_ENV, check_bytes, check_seconds
from fedtheory.data import cafed_clustered, gaussian_linear
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim.selection import allocation
from fedtheory.tightness import FAMILIES, search

PI = np.array([0.5, 0.5])


@pytest.fixture(autouse=True)
def small_budget(monkeypatch):
    monkeypatch.setenv(ENV, "64M")


@pytest.mark.parametrize(
    "call",
    [
        lambda: TwoStateMarkov(PI, 0.3).sample(10**9),
        lambda: Bernoulli(PI).sample(10**9),
        lambda: Bernoulli(PI).sample(10, replicates=2**30),
        lambda: Cyclic(PI, period=10).sample(10**8),
        lambda: gaussian_linear(10**4, 100, 1000),
        lambda: cafed_clustered(10**4, 100, 1000),
        lambda: QuadraticProblem.random(10, 10**4),
        # papers' statements reached at call time, so that the file runs in a copy without one
        pytest.param(
            lambda: bounds.mimic.lemma6_schedule(1.0, 1.0, 10**9), marks=pytest.mark.paper("mimic")
        ),
        pytest.param(
            lambda: bounds.fedau.weight_error_bound([0.5], 5, 10**9),
            marks=pytest.mark.paper("fedau"),
        ),
        pytest.param(
            lambda: bounds.fedau.weight_error_exact([0.5], 5, 10**9),
            marks=pytest.mark.paper("fedau"),
        ),
        lambda: allocation.quota_incremental(2, 10, 10**9),
    ],
)
def test_allocations_above_the_budget_are_refused_with_the_estimate(call):
    with pytest.raises(ParameterError, match=rf"would need about .* more than the environment "
                       rf"variable {ENV} \(64.0 MiB\)"):  # fmt: skip
        call()


def test_allocations_within_the_budget_run():
    assert tuple(TwoStateMarkov(PI, 0.3).sample(1000, replicates=4).shape) == (4, 1000, 2)
    assert gaussian_linear(3, 2, 4).features.shape == (3, 4, 2)


def test_the_budget_is_the_argument_then_the_environment(monkeypatch):
    check_bytes(2**30, "f", what="x", fixes="y", max_memory="2G")  # the argument wins
    with pytest.raises(ParameterError, match=r"than max_memory \(1.0 KiB\)"):
        check_bytes(2048, "f", what="x", fixes="y", max_memory=1024)
    monkeypatch.setenv(ENV, "lots")
    with pytest.raises(ParameterError, match=f"'{ENV}' parameter of f"):
        check_bytes(1, "f", what="x", fixes="y")


def test_tightness_search_budget_and_starts_are_capped():
    family = FAMILIES["divergences.tv_chi_square"]
    with pytest.raises(ParameterError, match="'budget' parameter of search"):
        search(family, budget=10**12)
    with pytest.raises(ParameterError, match="'starts' parameter of search"):
        search(family, starts=10**9)


# --- time -----------------------------------------------------------------------------------
def test_work_estimated_above_the_default_time_limit_is_refused_with_the_estimate(monkeypatch):
    """Bernoulli(...).sample(rounds=10**9, replicates=2) fits a large memory budget but its
    10^9 rounds cannot finish within the default 10 minutes: refused at once."""
    monkeypatch.setenv(ENV, "1T")
    monkeypatch.delenv(TIME_ENV, raising=False)
    with pytest.raises(ParameterError, match=r"Bernoulli.sample would take at least about "
                       r"[\d.e+]+ s \(1000000000 rounds of a mask \[2, 1000000000, 2\]"
                       r"(; [\d.]+ \w+ a round measured on this machine)?\), more "
                       r"than the default time limit \(600 s\)"):  # fmt: skip
        Bernoulli([0.3, 0.7]).sample(rounds=10**9, replicates=2)


def test_the_time_budget_is_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv(ENV, "1T")
    monkeypatch.setenv(TIME_ENV, "5")
    with pytest.raises(ParameterError, match=rf"more than the environment variable {TIME_ENV} "
                       r"\(5 s\)"):  # fmt: skip
        QuadraticProblem.random(10**7, 2)
    check_seconds(100.0, "f", what="x", fixes="y", max_seconds=200)  # the argument wins
    for bad in ("soon", "inf", "0", "-1"):
        monkeypatch.setenv(TIME_ENV, bad)
        with pytest.raises(ParameterError, match=f"'{TIME_ENV}' parameter of f"):
            check_seconds(1.0, "f", what="x", fixes="y")


RLIMIT_SCRIPT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_{kind}, (5 * 2**30, resource.RLIM_INFINITY))
from fedtheory.availability import TwoStateMarkov
from fedtheory.errors import ParameterError
try:
    TwoStateMarkov([0.5, 0.5], 0.3).sample(rounds=10**9, replicates=4)  # an 8 GB mask
except ParameterError as err:
    print(err)
"""


@pytest.mark.parametrize("kind", ["AS", "DATA"])
def test_the_memory_budget_reads_the_process_limits(kind, monkeypatch):
    """Under an address-space (or data) limit of 5 GiB a 10^9-round sample is refused by the
    memory check (it died with MemoryError when only MemAvailable was read)."""
    monkeypatch.delenv(ENV, raising=False)
    script = RLIMIT_SCRIPT.format(kind=kind)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "TwoStateMarkov.sample would need about" in done.stdout
    assert "more than the available memory" in done.stdout


def test_a_simulation_estimated_above_the_time_limit_is_refused_before_round_0(monkeypatch):
    from fedtheory.sim import AverageAll, FedAvg, simulate

    monkeypatch.setenv(ENV, "1T")
    monkeypatch.delenv(TIME_ENV, raising=False)
    algorithm = FedAvg(AverageAll(), local_steps=5, lr=0.1)
    what = r"\(100000000 rounds x 2 replicates x 4 clients x 2 dimensions x 5 local steps"
    with pytest.raises(ParameterError, match=r"simulate would take at least about .* " + what):
        simulate(QuadraticProblem.random(4, 2), Bernoulli(np.full(4, 0.5)), algorithm,
                 rounds=10**8, replicates=2)  # fmt: skip


def _small_run(**kwargs):
    from fedtheory.sim import AverageAll, FedAvg, simulate

    return simulate(QuadraticProblem.random(4, 2), Bernoulli(np.full(4, 0.5)),
                    FedAvg(AverageAll(), lr=0.1), **kwargs)  # fmt: skip


@pytest.mark.parametrize(
    "call, owner",
    [
        (lambda s: Bernoulli(PI).sample(10**6, replicates=2, max_seconds=s), "Bernoulli.sample"),
        (lambda s: QuadraticProblem.random(10**4, 10, max_seconds=s), "QuadraticProblem.random"),
        (lambda s: _small_run(rounds=10**6, max_seconds=s), "simulate"),
    ],
)
def test_max_seconds_overrides_the_environment_and_is_refused_with_the_estimate(
    call, owner, monkeypatch
):
    """``max_seconds=`` lowers (and raises) the environment's time cap for one call."""
    monkeypatch.setenv(ENV, "1T")
    monkeypatch.setenv(TIME_ENV, "1e9")  # the environment alone lets these through
    with pytest.raises(ParameterError, match=rf"{owner} would take at least about [0-9.e+]+ s "
                       r"\(.*\), more than max_seconds \(0.001 s\)"):  # fmt: skip
        call(1e-3)
    monkeypatch.setenv(TIME_ENV, "1e-3")  # and an argument above the environment runs
    assert Bernoulli(PI).sample(10, max_seconds=60).shape == (1, 10, 2)
    for bad in (0.0, -1.0, float("nan"), "60", True):
        with pytest.raises(ParameterError, match="'max_seconds' parameter of"):
            call(bad)


def test_a_sweep_estimated_above_the_time_limit_is_refused_before_any_task(monkeypatch):
    """The whole sweep's estimate sums rounds x replicates x clients x dim over the grid."""
    from fedtheory.budget import task_seconds
    from fedtheory.sweep import grid, run_sweep

    calls = []

    def point(settings, seed):
        calls.append(seed)
        return 0.0

    design = grid({"rounds": [10**6, 2 * 10**6], "num_clients": [1000]}, replicates=3)
    fixed = {"replicates": 8, "dim": 10, "local_steps": 2}
    estimate = sum(task_seconds(t.settings) for t in design.tasks(fixed))
    assert estimate == pytest.approx(3 * (3e6 * 3 * 5e-6 + 3e6 * 8 * 1000 * 10 * 2 * 2e-9))
    monkeypatch.delenv(TIME_ENV, raising=False)
    shown = re.escape(f"{estimate:.3g}")
    with pytest.raises(ParameterError, match=rf"run_sweep would take at least about {shown} s "
                       r"\(6 tasks: rounds x replicates x clients x dim summed over the grid\), "
                       "more than the default time limit"):  # fmt: skip
        run_sweep(point, design, fixed=fixed)
    assert calls == []
    assert len(run_sweep(point, design, fixed=fixed, max_seconds=10 * estimate)) == 6
