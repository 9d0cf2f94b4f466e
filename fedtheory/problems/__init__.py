"""Federated problem instances with exactly computed constants (shared by bounds and sim)."""

from fedtheory.problems.base import FederatedProblem
from fedtheory.problems.data_backed import SAMPLING, ClassificationProblem, DataProblem
from fedtheory.problems.logistic import LogisticRegressionProblem, MultinomialLogisticProblem
from fedtheory.problems.quadratic import QuadraticProblem

__all__ = [
    "SAMPLING",
    "ClassificationProblem",
    "DataProblem",
    "FederatedProblem",
    "LogisticRegressionProblem",
    "MultinomialLogisticProblem",
    "QuadraticProblem",
]
