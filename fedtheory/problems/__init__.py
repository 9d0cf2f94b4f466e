"""Federated problem instances with exactly computed constants (shared by bounds and sim)."""

from fedtheory.problems.ball import Ball, LemmaOneConstants, QuadraticForms, max_quadratic_on_ball
from fedtheory.problems.base import FederatedProblem
from fedtheory.problems.data_backed import SAMPLING, ClassificationProblem, DataProblem
from fedtheory.problems.least_squares import LeastSquaresProblem
from fedtheory.problems.logistic import LogisticRegressionProblem, MultinomialLogisticProblem
from fedtheory.problems.mlp import MLPProblem
from fedtheory.problems.quadratic import QuadraticProblem

__all__ = [
    "SAMPLING",
    "Ball",
    "LemmaOneConstants",
    "LeastSquaresProblem",
    "MLPProblem",
    "QuadraticForms",
    "max_quadratic_on_ball",
    "ClassificationProblem",
    "DataProblem",
    "FederatedProblem",
    "LogisticRegressionProblem",
    "MultinomialLogisticProblem",
    "QuadraticProblem",
]
