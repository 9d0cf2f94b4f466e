"""Convex programs for aggregation weights (cvxpy, DPP), with independent solution paths."""

from fedtheory.optim.greedy import greedy_exclusion, greedy_weights
from fedtheory.optim.implicit import polish_weights, weight_sensitivity
from fedtheory.optim.instance import BIAS_KINDS, WeightInstance, weight_objective
from fedtheory.optim.kkt import waterfilling_weights
from fedtheory.optim.program import (
    SOLVER,
    SOLVER_OPTIONS,
    ZERO_WEIGHT_RTOL,
    WeightProgram,
    WeightSolution,
    excluded_clients,
)

__all__ = [
    "BIAS_KINDS",
    "SOLVER",
    "SOLVER_OPTIONS",
    "ZERO_WEIGHT_RTOL",
    "WeightInstance",
    "WeightProgram",
    "WeightSolution",
    "excluded_clients",
    "greedy_exclusion",
    "greedy_weights",
    "polish_weights",
    "waterfilling_weights",
    "weight_objective",
    "weight_sensitivity",
]
