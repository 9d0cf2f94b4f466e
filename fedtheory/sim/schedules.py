r"""Step-size schedules :math:`t\mapsto\eta_t` for the client rate :math:`\eta_l` and the
server rate :math:`\eta_s` (or :math:`\eta_g`).

A schedule is any callable ``int -> float``; a plain positive float means a constant rate.
The three families the papers use:

* constant (CA-Fed, FedAU, FedLaAvg experiments);
* :math:`\eta_t=a/(t+b)` (CA-Fed Theorem 2's decreasing rates; MimiC Lemma 6 builds its
  global rates in this form, MimiC Sec. 6);
* :math:`\eta_t=\max(\eta_0\,\rho^t,\eta_{\min})` (MimiC's official code: local rate
  ``lr * lr_decay**t`` floored at ``1e-5``, MimiC's code).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fedtheory.constraints import Function, Real, Text, declare
from fedtheory.errors import ParameterError
from fedtheory.params import check_int, check_real

Schedule = Callable[[int], float]
StepSize = float | Schedule
"""A positive float (constant rate) or a schedule ``t -> eta_t``."""


@declare(value=Real(0.0, low_open=True))
@dataclass(frozen=True)
class Constant:
    r""":math:`\eta_t=\eta` for every round."""

    value: float

    def __call__(self, t: int) -> float:
        check_int(t, "t", "Constant", low=0)
        return self.value


@declare(a=Real(0.0, low_open=True), b=Real(0.0, low_open=True))
@dataclass(frozen=True)
class InverseTime:
    r""":math:`\eta_t=a/(t+b)` with :math:`a,b>0` (MimiC Lemma 6; CA-Fed Theorem 2)."""

    a: float
    b: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.a / self.b):  # the largest rate, eta_0 = a / b
            raise ParameterError(
                f"The 'b' parameter of InverseTime must keep eta_0 = a/b finite. "
                f"Got a={self.a:g}, b={self.b:g} instead."
            )

    def __call__(self, t: int) -> float:
        return self.a / (check_int(t, "t", "InverseTime", low=0) + self.b)


@declare(initial=Real(0.0, low_open=True), decay=Real(0.0, 1.0, low_open=True), floor=Real(0.0))
@dataclass(frozen=True)
class ExponentialDecay:
    r""":math:`\eta_t=\max(\eta_0\rho^t,\eta_{\min})` (MimiC code: ``rho = 0.99``,
    ``eta_min = 1e-5``)."""

    initial: float
    decay: float
    floor: float = 0.0

    def __call__(self, t: int) -> float:
        t = check_int(t, "t", "ExponentialDecay", low=0)
        return max(self.initial * self.decay**t, self.floor)


@declare(schedule=Function(), name=Text(), owner=Text())
@dataclass(frozen=True)
class CheckedSchedule:
    r"""A schedule whose every value is checked when it is used: ``schedule(t)`` must be a
    finite real :math:`\eta_t>0` (a negative rate would silently run gradient ascent)."""

    schedule: Schedule
    name: str
    owner: str

    def __call__(self, t: int) -> float:
        try:
            value = self.schedule(t)
        except (TypeError, ValueError, ArithmeticError) as err:
            raise ParameterError(
                f"The '{self.name}' parameter of {self.owner} must be a schedule t -> eta_t "
                f"that accepts round t={t}. Calling it raised {type(err).__name__}: {err}"
            ) from None
        return check_real(value, f"{self.name}({t})", self.owner, low=0.0, low_open=True)


@declare(name=Text(), owner=Text())
def as_schedule(value: StepSize, name: str, owner: str) -> Schedule:
    """A schedule from a positive float (constant) or a callable, whose values are then
    checked when used (:class:`CheckedSchedule`)."""
    if isinstance(value, Constant):
        return value
    if callable(value):
        return CheckedSchedule(value, name, owner)
    return Constant(check_real(value, name, owner, low=0.0, low_open=True))
