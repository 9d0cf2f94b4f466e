"""Every public function rejects bad input with an error naming the parameter and range. A
paper's statements are reached in its tests (its cases marked paper(name)), so that the file
runs in a copy without that paper."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedtheory import bounds
from fedtheory.availability import AlternatingBlocks, TwoStateMarkov
from fedtheory.bounds.divergences import chi_square, effective_weights, total_variation
from fedtheory.constraints import Option, Probabilities, StochasticMatrix
from fedtheory.errors import HypothesisViolation, ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import AverageParticipating, FedAvg, FixedWeights, simulate, unbiased_weights
from tests.conftest import assert_parameter_error

P2 = QuadraticProblem.example1(0.0, 1.0)

BAD_CALLS = [
    # (callable, parameter name, allowed range shown in the message)
    (lambda: TwoStateMarkov([0.5, 1.5], 0.0), "'pi'", "(0, 1)"),
    (lambda: TwoStateMarkov([0.5, math.nan], 0.0), "'pi'", "(0, 1)"),
    (lambda: TwoStateMarkov([0.9, 0.5], -0.5), "'lam'", "1 - 1/max(pi, 1-pi)"),
    (lambda: TwoStateMarkov("abc", 0.0), "'pi'", "real numbers"),
    (lambda: AlternatingBlocks(0, 1), "'t1'", "[1, 2147483647]"),
    (lambda: AlternatingBlocks(1.5, 1), "'t1'", "integer"),
    (lambda: AlternatingBlocks(1, 1, group1=[0, 2]), "'group1'", "boolean"),
    (lambda: QuadraticProblem(np.full((2, 1, 1), -1.0), np.zeros((2, 1))), "'A'", "positive"),
    (lambda: QuadraticProblem(np.ones((2, 1, 1)), np.zeros((3, 1))), "'c'", "shape"),
    (lambda: QuadraticProblem.random(3, 2, mu=2.0, L=1.0), "'L'", "[2, inf)"),
    (lambda: QuadraticProblem.random(0, 2), "'num_clients'", "[1, 2147483647]"),
    (lambda: P2.optimum([0.5, 0.6]), "'weights'", "summing to 1"),
    (lambda: FedAvg(AverageParticipating(), lr=-1.0), "'lr'", "(0, inf)"),
    (lambda: FedAvg(AverageParticipating(), local_steps=0), "'local_steps'", "[1, 2147483647]"),
    (lambda: FixedWeights([-1.0, 1.0]), "'q'", "[0, inf)"),
    (lambda: unbiased_weights([0.5, 0.5], [0.0, 0.5]), "'pi'", "(0, 1]"),
    (
        lambda: simulate(P2, AlternatingBlocks(1, 1), FedAvg(AverageParticipating()), rounds=0),
        "'rounds'",
        "[1, 2147483647]",
    ),
    (
        lambda: simulate(
            P2, AlternatingBlocks(1, 1), FedAvg(AverageParticipating()), rounds=2, seed=-1
        ),
        "'seed'",
        "[0, inf)",
    ),
    (
        lambda: simulate(
            P2, AlternatingBlocks(1, 1, group1=[1, 0, 1]), FedAvg(AverageParticipating()), rounds=2
        ),
        "'availability'",
        "N=2",
    ),
    (lambda: StochasticMatrix().check([[0.5, 0.4], [0.5, 0.5]], "P", "f", {}), "'P'", "row sums"),
    (lambda: Probabilities(size=3).check([0.5, 0.5], "p", "f", {}), "'p'", "shape (3,)"),
    (lambda: Option("a", "b").check("c", "kind", "f", {}), "'kind'", "one of 'a', 'b'. Got 'c'"),
    (lambda: chi_square([0.5, 0.5], [0.7, 0.7]), "'p'", "summing to 1"),
    (
        lambda: total_variation([1.5, -0.5], [0.5, 0.5]),
        "'alpha'",
        "entries in [0, 1], summing to 1",
    ),
    (lambda: effective_weights([0.0, 0.0], [0.5, 0.5]), "'q'", "(0, inf)"),
    pytest.param(
        lambda: bounds.cafed.theorem1.evaluate(kappa=2.0, gap_B=-1.0, chi2=0.1, Gamma=1.0),
        "'gap_B'",
        "[0, inf)",
        marks=pytest.mark.paper("cafed"),
    ),
    pytest.param(
        lambda: bounds.cafed.theorem1.evaluate(kappa=2.0, gap_B=1.0, chi2=math.inf, Gamma=1.0),
        "'chi2'",
        "finite",
        marks=pytest.mark.paper("cafed"),
    ),
    pytest.param(
        lambda: bounds.cafed.theorem3.evaluate(kappa=2.0, gap_B=1.0, d_tv=1.5, Gamma_prime=1.0),
        "'d_tv'",
        "[0, 1]",
        marks=pytest.mark.paper("cafed"),
    ),
    pytest.param(
        lambda: bounds.fedlaavg.end_of_period.evaluate(e1=0, e2=1, gamma=0.1, t1=1.5, t2=1),
        "'t1'",
        "integer",
        marks=pytest.mark.paper("fedlaavg"),
    ),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)


def test_missing_or_unknown_theorem_parameters_are_named():
    from fedtheory.bounds import cafed

    with pytest.raises(ParameterError, match="missing: \\['Gamma'\\]"):
        cafed.theorem1.evaluate(kappa=2.0, gap_B=1.0, chi2=0.1)
    with pytest.raises(ParameterError, match="missing: \\['Gamma'\\], unknown: \\['Gama'\\]"):
        cafed.theorem1.evaluate(kappa=2.0, gap_B=1.0, chi2=0.1, Gama=1.0)
    # a key that is not a parameter is ignored (Theorem.evaluate; check_theorem's constants)
    shared = cafed.theorem1.evaluate(kappa=2.0, gap_B=1.0, chi2=0.1, Gamma=1.0, foo=1)
    assert shared.total == cafed.theorem1.evaluate(kappa=2.0, gap_B=1.0, chi2=0.1, Gamma=1.0).total


def test_hypothesis_violation_is_a_different_error_naming_both_sides():
    from fedtheory.bounds import fedlaavg

    with pytest.raises(HypothesisViolation) as err:
        fedlaavg.end_of_period.evaluate(e1=0, e2=1, gamma=1.5, t1=2, t2=1)
    msg = str(err.value)
    assert "FedLaAvg Example 1" in msg and "gamma < 1" in msg and "1.5" in msg
    res = fedlaavg.end_of_period.evaluate(e1=0, e2=1, gamma=1.5, t1=2, t2=1, strict=False)
    assert not res.valid and "gamma < 1" in res.reason


def test_the_hand_checks_are_deprecated_and_no_module_imports_them():
    import ast
    import importlib
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    users = []
    for path in [*(root / "fedtheory").rglob("*.py"), *(root / "validation").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            if "fedtheory.params" in names:
                users.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not users, f"import fedtheory.constraints instead: {users}"
    sys.modules.pop("fedtheory.params", None)
    with pytest.warns(DeprecationWarning, match="fedtheory.constraints"):
        importlib.import_module("fedtheory.params")
