r"""Errors raised by fedtheory.

Two kinds of failure are kept apart on purpose:

* :class:`ParameterError` -- the input itself is wrong (type, range, NaN, shape).
* :class:`HypothesisViolation` -- the input is well formed but a theorem's hypothesis
  fails on it (for example a step size above the theorem's limit). The message names the
  theorem, the condition and the values of both sides.
"""

from __future__ import annotations


class FedTheoryError(Exception):
    """Base class of every error fedtheory raises on purpose."""


class ParameterError(FedTheoryError, ValueError):
    """An argument has the wrong type, shape or value.

    The message has one uniform form: ``The 'p' parameter of bernoulli must be in (0, 1].
    Got 1.5 instead.``
    """


class HypothesisViolation(FedTheoryError):
    """A theorem is evaluated outside its hypotheses."""

    def __init__(self, theorem: str, condition: str, lhs: object, rhs: object) -> None:
        self.theorem, self.condition, self.lhs, self.rhs = theorem, condition, lhs, rhs
        super().__init__(
            f"{theorem}: hypothesis {condition} fails (left side {lhs}, right side {rhs})."
        )


class SolverError(FedTheoryError):
    """A convex program is infeasible or its solver did not reach an optimum."""


class DivergenceError(FedTheoryError):
    """A simulated run produced NaN or inf."""
