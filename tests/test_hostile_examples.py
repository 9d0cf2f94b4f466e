"""Hostile calls an independent fuzz of the public API found answered with a raw exception,
a silent accept or a NaN: each now gets one line naming the parameter (a ParameterError).
The time budget, the process limits and the command line have their own tests
(``test_memory_checks.py``, ``test_cli_errors.py``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from fedtheory.availability import AlternatingBlocks, TwoStateMarkov
from fedtheory.budget import ENV, TIME_ENV
from fedtheory.errors import ParameterError
from fedtheory.optim import WeightInstance, greedy_weights, weight_objective
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import AverageParticipating, FedAvg, fedau_init, fedau_update, local_sgd
from fedtheory.sim.reference import server_update
from fedtheory.testing import assert_upper_bound

QUAD = QuadraticProblem.random(3, 2, seed=0)
ALG = FedAvg(AverageParticipating(), lr=0.1)
INSTANCE = dict(a=[1.0, 2.0], B=1.0, C=0.0, pi=[0.9, 0.1], alpha=[0.5, 0.5])


def _one_line(call, name: str) -> str:
    with pytest.raises(ParameterError) as err:
        call()
    message = str(err.value)
    assert "\n" not in message and f"'{name}' parameter of " in message, message
    return message


@pytest.mark.parametrize(
    "call, name, words",
    [
        (lambda: QUAD.grad(None, torch.tensor([0])), "w", "Got None instead"),
        (lambda: QUAD.grad(torch.zeros(1, 3, dtype=torch.float64), torch.tensor([0])), "w",
         "shape (any, 2)"),
        (lambda: QUAD.grad(torch.zeros(1, 2, dtype=torch.float64), torch.tensor([7])),
         "clients", "entries in [0, 3)"),
        (lambda: TwoStateMarkov.from_transitions(p_on_on=[], p_off_on=[]), "p_on_on",
         "Got [] (list)"),
        (lambda: TwoStateMarkov.from_transitions(p_on_on=[0.5], p_off_on=[0.5, 0.5]),
         "p_off_on", "shape (1,)"),
        (lambda: AlternatingBlocks(t1=2**70, t2=1), "t1", "(int)"),
        (lambda: assert_upper_bound(measured=-math.inf, bound=1.0), "measured", "-inf"),
        (lambda: assert_upper_bound(measured=0.5 + 0j, bound=1.0), "measured", "(complex)"),
        (lambda: assert_upper_bound(measured=0.5, bound=math.inf), "bound", "inf (float)"),
        (lambda: fedau_update(fedau_init(1, 1), torch.tensor([[True]]), math.inf), "cutoff",
         "or None"),
        (lambda: weight_objective(torch.zeros(2, dtype=torch.float64),
                                  WeightInstance(**INSTANCE)), "q", "pi^T q > 0"),
        (lambda: weight_objective(torch.tensor([-1.0, 2.0], dtype=torch.float64),
                                  WeightInstance(**INSTANCE)), "q", "entries in [0, inf)"),
        (lambda: greedy_weights(WeightInstance(**{**INSTANCE, "Q": 1e-320})), "instance",
         "Got f = inf"),
        (lambda: server_update(ALG, [0.0, math.nan], [0.0, 0.0], 0), "w", "finite"),
        (lambda: server_update(ALG, [0.0, 0.0], [math.inf, 0.0], 0), "v", "finite"),
        (lambda: local_sgd(QUAD, torch.ones(1, 2, dtype=torch.float64), torch.tensor([0]),
                           steps=2, lr=1e308), "lr", "keep the result finite"),
        (lambda: local_sgd(QUAD, torch.tensor([[0.0, math.nan]], dtype=torch.float64),
                           torch.tensor([0]), steps=1, lr=0.1), "w", "finite"),
    ],
)  # fmt: skip
def test_hostile_calls_get_one_line_naming_the_parameter(call, name, words):
    assert words in _one_line(call, name)


def test_a_huge_constant_of_the_weight_program_is_refused_or_finite():
    try:
        solution = greedy_weights(WeightInstance(**{**INSTANCE, "B": 1e308}))
    except ParameterError as err:
        assert "'instance' parameter of greedy_weights" in str(err)
    else:
        assert np.isfinite(solution.objective) and np.isfinite(solution.q).all()


def test_an_optimum_over_ten_million_clients_is_refused_before_any_work(monkeypatch):
    """QuadraticProblem.random(num_clients=10**7).optimum() ran for minutes: its matrices
    are refused by the memory budget, or, with memory to spare, by the time budget."""
    monkeypatch.setenv(ENV, "1G")
    with pytest.raises(ParameterError, match="QuadraticProblem.random would need about"):
        QuadraticProblem.random(num_clients=10**7, dim=2).optimum()
    monkeypatch.setenv(ENV, "1T")
    monkeypatch.setenv(TIME_ENV, "10")
    with pytest.raises(ParameterError, match="QuadraticProblem.random would take at least"):
        QuadraticProblem.random(num_clients=10**7, dim=2).optimum()
