"""Federated problem instances with exactly computed constants (shared by bounds and sim)."""

from fedtheory.problems.base import FederatedProblem
from fedtheory.problems.quadratic import QuadraticProblem

__all__ = ["FederatedProblem", "QuadraticProblem"]
