"""Every allocation in proportion to a user's size is estimated before it happens from its
real peak, and refused under the effective limit before anything is allocated; a call whose
time grows with a size is estimated at this machine's measured cost per unit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

from fedtheory import bounds
from fedtheory.availability import AlternatingBlocks, Bernoulli, TwoStateMarkov
from fedtheory.availability import markov as markov_module
from fedtheory.availability.builders import cafed_population
from fedtheory.availability.time_varying import TimeVaryingParticipation
from fedtheory.availability.trace import ids_to_mask
from fedtheory.budget import ENV
from fedtheory.data import cafed_clustered, gaussian_linear
from fedtheory.errors import ParameterError
from fedtheory.pep.participation import Participation

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

CALLS = {
    "fedlaavg_digits": lambda: AlternatingBlocks.fedlaavg_digits(3, num_clients=10**6),
    "cafed_population": lambda: cafed_population(num_clients=8 * 10**5),
    "alternating": lambda: Participation.alternating(10**6, 2),
    "markov.sample": lambda: TwoStateMarkov([0.5, 0.2], 0.5).sample(20000, replicates=3),
    "bernoulli.sample": lambda: Bernoulli([0.5] * 50).sample(2000, replicates=3),
    "blocks.sample": lambda: AlternatingBlocks(3, 2, group1=np.arange(1000) < 500).sample(
        2000, replicates=3
    ),
    "cafed_clustered": lambda: cafed_clustered(10**4, 5, 20),
    "gaussian_linear": lambda: gaussian_linear(10**3, 5, 20),
    "ids_to_mask": lambda: ids_to_mask([[0], [1]], 10**6, "f"),
    "inclusion_probabilities": lambda: TimeVaryingParticipation(3, 0.5).inclusion_probabilities(
        2, replicates=10**5
    ),
}
"""Calls whose memory grows with a size, at sizes of megabytes (NumPy: traced by
``tracemalloc``)."""

PAPER_CALLS = {
    "weight_error_exact": (
        "fedau",
        lambda: bounds.fedau.weight_error_exact(np.full(4, 0.5), 4, 2000),
    ),
    "theorem2_aggregates": (
        "cafed",
        lambda: bounds.cafed.theorem2_aggregates(
            1 / (np.arange(10**5 + 1) + 20.0), lam=0.5, C_P=2.0, T_P=1, H=1.0
        ),
    ),
}
"""Papers' statements of the same kind, reached at call time so that the file runs in a copy
without the paper (its case marked and left out there)."""


def _estimate(call, monkeypatch) -> float:
    """The call's own estimate, read from its refusal under a budget of one byte."""
    monkeypatch.setenv(ENV, "1")
    with pytest.raises(ParameterError, match="would need about") as info:
        call()
    monkeypatch.delenv(ENV)
    value, unit = re.search(r"would need about ([0-9.]+) (\w+)", str(info.value)).groups()
    return float(value) * UNITS[unit]


def _peak(call) -> int:
    call()  # compiled code and caches warm
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "call",
    [pytest.param(CALLS[name], id=name) for name in CALLS]
    + [
        pytest.param(call, id=name, marks=pytest.mark.paper(paper))
        for name, (paper, call) in PAPER_CALLS.items()
    ],
)
def test_the_memory_estimate_covers_the_traced_peak_with_a_margin(call, monkeypatch):
    """peak <= estimate <= 6 x peak + 9 MiB (the Markov sampler's fixed chunk of bridges)."""
    estimate = _estimate(call, monkeypatch)
    peak = _peak(call)
    assert peak <= estimate <= 6 * peak + 9 * (1 << 20), (peak, estimate)


def test_a_long_markov_window_is_drawn_in_chunks_with_the_same_numbers(monkeypatch):
    proc = [0.5, 0.3, 0.9], [0.5, 0.2, -0.1]
    chunked = TwoStateMarkov(*proc).sample(3000, replicates=2, seed=3, start=17)
    monkeypatch.setattr(markov_module, "BRIDGE_ROUNDS", 10**9)
    whole = TwoStateMarkov(*proc).sample(3000, replicates=2, seed=3, start=17)
    monkeypatch.setattr(markov_module, "BRIDGE_ROUNDS", 7)
    small = TwoStateMarkov(*proc).sample(3000, replicates=2, seed=3, start=17)
    assert bool((chunked == whole).all()) and bool((small == whole).all())


def test_a_cutoff_beyond_the_horizon_costs_nothing_and_changes_nothing():
    """Intervals longer than T - 1 never show in rounds 0..T-1: K >= T is the uncut law."""
    from fedtheory.bounds import fedau

    rounds = 40
    uncut = fedau.weight_error_exact(0.3, rounds, rounds)
    for k in (rounds + 1, 10**9):
        np.testing.assert_allclose(fedau.weight_error_exact(0.3, k, rounds), uncut, rtol=1e-13)
    assert not np.allclose(fedau.weight_error_exact(0.3, rounds - 5, rounds), uncut)


def test_a_call_the_measured_cost_puts_over_the_budget_is_refused_naming_it():
    """2.5e5 rounds at the optimistic 5 us are 1.25 s, under 1.5 s; a Markov round measured
    on any machine costs more than 6 us (a generator per round), so the call is refused."""
    with pytest.raises(ParameterError, match=r"us a round measured on this machine") as info:
        TwoStateMarkov([0.5], 0.5).sample(250_000, max_seconds=1.5)
    assert "250000 rounds" in str(info.value)


SIZED_CALLS = {
    "markov 10^8 rounds": (
        "TwoStateMarkov([.5], .5).sample(10**8)", "100000000 rounds"),
    "markov 10^7 rounds x 8 replicates x 4 clients": (
        "TwoStateMarkov([.5] * 4, .5).sample(10**7, replicates=8)", "10000000 rounds"),
    "fedlaavg_digits 10^9 clients": (
        "AlternatingBlocks.fedlaavg_digits(3, num_clients=10**9)", "1000000000 clients"),
    "cafed_clustered 10^7 clients": ("cafed_clustered(num_clients=10**7, samples=2, dim=2)",
                                     "features [10000000, 2, 2]"),
    "cafed_population 10^9 clients": (
        "cafed_population(num_clients=10**9)", "1000000000 clients"),
    "ids_to_mask 10^9 clients": ("ids_to_mask([[0], [1]], 10**9, 'f')", "[2, 1000000000]"),
    "simulate 10^7 rounds": ("simulate(QuadraticProblem.random(4, 2, seed=0), "
                             "Bernoulli([.3, .5, .7, .9]), FedAvg(AverageParticipating(), "
                             "lr=0.01), rounds=10**7, keep_masks=False)", "fewer rounds"),
    "local_sgd 10^8 steps": ("local_sgd(QuadraticProblem.random(4, 2, seed=0), "
                             "torch.zeros(3, 2, dtype=torch.float64), torch.tensor([0, 1, 2]), "
                             "steps=10**8, lr=0.01)", "100000000 steps"),
}  # fmt: skip
"""Sizes far beyond a machine: each refused (memory or time) before its work, naming the size."""

FEDAU_CALLS = {
    "weight_error_exact 10^7 rounds": (
        "bounds.fedau.weight_error_exact(0.5, 4, rounds=10**7)", "10000000^2"),
}  # fmt: skip
"""FedAU's size of the same kind, probed apart so that the file runs in a copy without FedAU."""

PROBE = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    import numpy as np, torch
    from fedtheory.availability import AlternatingBlocks, Bernoulli, TwoStateMarkov
    from fedtheory.availability.builders import cafed_population
    from fedtheory.availability.trace import ids_to_mask
    from fedtheory import bounds
    from fedtheory.data import cafed_clustered
    from fedtheory.errors import ParameterError
    from fedtheory.problems import QuadraticProblem
    from fedtheory.sim import AverageParticipating, FedAvg, local_sgd, simulate
    for line in sys.stdin.read().splitlines():
        try:
            eval(line)
            print("ran")
        except ParameterError as err:
            print("refused", str(err).replace(chr(10), " "))
        except BaseException as err:
            print("raw", type(err).__name__, str(err)[:200].replace(chr(10), " "))
    """
)


@pytest.mark.parametrize(
    "sizes",
    [
        pytest.param(SIZED_CALLS, id="shared"),
        pytest.param(FEDAU_CALLS, id="fedau", marks=pytest.mark.paper("fedau")),
    ],
)
def test_under_a_2_gib_address_space_every_size_is_refused_before_its_work(sizes):
    # a time budget of 60 s, far below what these sizes cost at any measured per-unit cost:
    # the time refusals do not depend on how fast or how loaded the machine is
    env = {k: v for k, v in os.environ.items() if k != ENV} | {"FEDTHEORY_MAX_SECONDS": "60"}
    calls = [code for code, _ in sizes.values()]
    out = subprocess.run(
        [sys.executable, "-c", PROBE], input="\n".join(calls), capture_output=True, text=True,
        env=env, timeout=600, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(out) == len(calls), out
    for (name, (_, size)), line in zip(sizes.items(), out, strict=True):
        assert line.startswith("refused"), f"{name}: {line}"
        assert size in line, f"{name}: {line}"
