r"""Step-size schedules :math:`t\mapsto\eta_t` for the client rate :math:`\eta_l` and the
server rate :math:`\eta_s` (or :math:`\eta_g`).

A schedule is any callable ``int -> float`` of the round :math:`t` (0-based): the client
rate :math:`\eta_t` then holds for the :math:`E` local steps of round :math:`t`, and the
server rate for its server step; a plain positive float means a constant rate. A client rate
that changes inside the local loop is a :class:`PerStep` schedule, which receives the global
SGD step :math:`s=tE+k` (``index="step"``; :math:`k=0,\dots,E-1` the local step, both
0-based) or the pair :math:`(t,k)` (``index="round_step"``): Li et al. (ICLR 2020,
Theorems 1-2) decrease :math:`\eta_s=2/(\mu(\gamma+s))` at every SGD step, which is
``PerStep(InverseTime(2 / mu, gamma))``. The three families of round schedules the papers
use:

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
from typing import Any

from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import Function, Integer, Option, Real, Text, declare
from fedtheory.errors import ParameterError

Schedule = Callable[[int], float]
StepSize = float | Schedule
"""A positive float (constant rate), a schedule ``t -> eta_t`` of the round, or (client rate
only) a :class:`PerStep` schedule."""


@declare(value=Real(0.0, low_open=True))
@dataclass(frozen=True)
class Constant:
    r""":math:`\eta_t=\eta` for every round."""

    value: float

    def __call__(self, t: int) -> float:
        Integer(low=0).check(t, "t", "Constant", {})
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
        return self.a / (Integer(low=0).check(t, "t", "InverseTime", {}) + self.b)


@declare(initial=Real(0.0, low_open=True), decay=Real(0.0, 1.0, low_open=True), floor=Real(0.0))
@dataclass(frozen=True)
class ExponentialDecay:
    r""":math:`\eta_t=\max(\eta_0\rho^t,\eta_{\min})` (MimiC code: ``rho = 0.99``,
    ``eta_min = 1e-5``)."""

    initial: float
    decay: float
    floor: float = 0.0

    def __call__(self, t: int) -> float:
        t = Integer(low=0).check(t, "t", "ExponentialDecay", {})
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
        return Real(low=0.0, low_open=True).check(value, f"{self.name}({t})", self.owner, {})


@declare(name=Text(), owner=Text())
def as_schedule(value: StepSize, name: str, owner: str) -> Schedule:
    """A schedule from a positive float (constant) or a callable, whose values are then
    checked when used (:class:`CheckedSchedule`); a :class:`PerStep` schedule is kept (its
    values are checked by :meth:`PerStep.rate`)."""
    if isinstance(value, Constant | PerStep):
        return value
    if callable(value):
        return CheckedSchedule(value, name, owner)
    return Constant(Real(low=0.0, low_open=True).check(value, name, owner, {}))


@declare(schedule=Function(), index=Option("step", "round_step"))
@dataclass(frozen=True)
class PerStep:
    r"""A client rate that changes at every local SGD step: step :math:`k` of round :math:`t`
    (both 0-based) runs with ``schedule(t * E + k)`` (``index="step"``, the global SGD step
    :math:`s=tE+k`) or ``schedule(t, k)`` (``index="round_step"``); every value must be a
    finite :math:`\eta>0`. Per-step rates are plain local SGD steps (no optimiser
    ``training``).

    Examples
    --------
    >>> li = PerStep(InverseTime(a=2 / 0.5, b=8.0))  # eta_s = 2 / (mu (gamma + s)), mu = 0.5
    >>> [round(r, 4) for r in li.rates(1, local_steps=2)]  # round 1: s = 2, 3
    [0.4, 0.3636]
    """

    schedule: Callable[..., float]
    index: str = "step"

    @declare("t", "local_steps", k=Integer(0))
    def rate(self, t: int, k: int, local_steps: int) -> float:
        r""":math:`\eta` of local step ``k`` (``< local_steps`` :math:`=E`) of round ``t``."""
        if k >= local_steps:
            raise ParameterError(
                f"The 'k' parameter of PerStep.rate must be a local step in [0, {local_steps - 1}]"
                f" (local_steps={local_steps}). Got {k} instead."
            )
        where: tuple[Any, ...] = (t * local_steps + k,) if self.index == "step" else (t, k)
        try:
            value = self.schedule(*where)
        except (TypeError, ValueError, ArithmeticError) as err:
            raise ParameterError(
                f"The 'schedule' parameter of PerStep must accept the "
                f"{'global SGD step s' if self.index == 'step' else 'round and local step (t, k)'}"
                f" {', '.join(map(str, where))}. Calling it raised {type(err).__name__}: {err}"
            ) from None
        at = ", ".join(map(str, where))
        return Real(low=0.0, low_open=True).check(value, f"schedule({at})", "PerStep", {})

    @declare("t", "local_steps")
    def rates(self, t: int, local_steps: int) -> tuple[float, ...]:
        """The rates of the ``local_steps`` :math:`=E` local steps of round ``t``."""
        what = f"{local_steps} calls of the schedule"
        check_seconds(seconds(rounds=local_steps), "PerStep.rates", what=what, fixes="fewer steps")
        return tuple(self.rate(t, k, local_steps) for k in range(local_steps))

    def __call__(self, t: int) -> float:
        raise ParameterError(
            "The 'lr' parameter is a PerStep schedule, whose rate changes inside round "
            f"t={t}; this method reads one client rate per round (FedAWE, the PEP of "
            "FedAWE): give it a schedule of the round."
        )
