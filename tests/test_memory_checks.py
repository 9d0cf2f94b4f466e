"""Public entry points that allocate in proportion to their arguments check the memory
budget (``FEDTHEORY_MAX_MEMORY``, :mod:`fedtheory.budget`) before allocating: a hostile size
is refused at once with the estimate, whatever memory the machine has."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.availability import Bernoulli, Cyclic, TwoStateMarkov
from fedtheory.bounds import fedau, mimic
from fedtheory.budget import ENV, check_bytes
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
        lambda: Bernoulli(PI).sample(10, replicates=2**62),
        lambda: Cyclic(PI, period=10).sample(10**8),
        lambda: gaussian_linear(10**4, 100, 1000),
        lambda: cafed_clustered(10**4, 100, 1000),
        lambda: QuadraticProblem.random(10, 10**4),
        lambda: mimic.lemma6_schedule(1.0, 1.0, 10**9),
        lambda: fedau.weight_error_bound([0.5], 5, 10**9),
        lambda: fedau.weight_error_exact([0.5], 5, 10**9),
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
    with pytest.raises(ParameterError, match="'budget' parameter of tightness.search"):
        search(family, budget=10**12)
    with pytest.raises(ParameterError, match="'starts' parameter of tightness.search"):
        search(family, starts=10**9)
