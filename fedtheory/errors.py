r"""Errors raised by fedtheory.

Two kinds of failure are kept apart on purpose:

* :class:`ParameterError` -- the input itself is wrong (type, range, NaN, shape).
* :class:`HypothesisViolation` -- the input is well formed but a theorem's hypothesis
  fails on it (for example a step size above the theorem's limit). The message names the
  theorem, the condition and the values of both sides.
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Exit statuses of the checks a CI job runs (``fedtheory tightness``, ``fedtheory
    validate --module``, :func:`fedtheory.testing.exit_status`)."""

    HOLDS = 0  # no counterexample, no row violated
    VIOLATED = 1  # a counterexample, or a row violated
    BAD_INPUT = 2  # a ParameterError: an unknown name, a bad argument, a file that is not Python
    USER_FUNCTION_FAILED = 3  # the user's function raised or returned no finite numbers
    NOTHING_MEASURED = 4  # fewer points measured than required (all outside the hypotheses)
    INTERNAL_ERROR = 70  # any command: an unexpected error, a bug (EX_SOFTWARE of sysexits.h)


class FedTheoryError(Exception):
    """Base class of every error fedtheory raises on purpose."""


class ParameterError(FedTheoryError, ValueError):
    """An argument has the wrong type, shape or value.

    The message has one uniform form: ``The 'p' parameter of bernoulli must be in (0, 1].
    Got 1.5 instead.``
    """


class NothingMeasured(FedTheoryError):
    """A check measured fewer of its points than required (every point outside the
    theorem's hypotheses, say): it proves nothing, so it never passes."""


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
    """A simulated run produced NaN or inf from finite inputs.

    Attributes
    ----------
    algorithm : str
        The algorithm with its aggregator, e.g. ``"fedavg[fedau]"``.
    round : int
        The round ``t`` whose result (the model :math:`w_{t+1}`, a per-client state or a
        metric of :math:`w_{t+1}`) is not finite; ``-1`` for a metric of the initial model.
    replicate : int
        The first replicate where it happened.
    quantity : str
        What is not finite (``"the model w"``, ``"the per-client state 'table.updates'"``,
        ``"the metric 'gap'"``).
    partial : RunRecord or None
        The run up to the last round at which everything was finite (every replicate), or
        ``None`` if not even the initial model's metrics were finite.
    """

    def __init__(
        self, algorithm: str, round: int, replicate: int, quantity: str, partial=None
    ) -> None:
        self.algorithm, self.round, self.replicate = algorithm, round, replicate
        self.quantity, self.partial = quantity, partial
        where = "at the initial model" if round < 0 else f"in round {round}"
        done = 0 if partial is None else partial.iterates.shape[1] - 1
        kept = f"; err.partial keeps the {done} round(s) before it" if done else ""
        super().__init__(
            f"{algorithm} diverged {where} of replicate {replicate}: "
            f"{quantity} is not finite{kept}."
        )

    def __reduce__(self):
        args = (self.algorithm, self.round, self.replicate, self.quantity, self.partial)
        return (type(self), args)
