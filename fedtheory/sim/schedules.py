r"""Step-size schedules :math:`t\mapsto\eta_t` for the client rate :math:`\eta_l` and the
server rate :math:`\eta_s` (or :math:`\eta_g`).

A schedule is any callable ``int -> float``; a plain positive float means a constant rate.
The three families the papers use:

* constant (CA-Fed, FedAU, FedLaAvg experiments);
* :math:`\eta_t=a/(t+b)` (CA-Fed Theorem 2's decreasing rates; MimiC Lemma 6 builds its
  global rates in this form, SPEC §1.4);
* :math:`\eta_t=\max(\eta_0\,\rho^t,\eta_{\min})` (MimiC's official code: local rate
  ``lr * lr_decay**t`` floored at ``1e-5``, SPEC §1.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fedtheory.params import check_real

Schedule = Callable[[int], float]
StepSize = float | Schedule
"""A positive float (constant rate) or a schedule ``t -> eta_t``."""


@dataclass(frozen=True)
class Constant:
    r""":math:`\eta_t=\eta` for every round."""

    value: float

    def __post_init__(self) -> None:
        check_real(self.value, "value", "Constant", low=0.0, low_open=True)

    def __call__(self, t: int) -> float:
        return self.value


@dataclass(frozen=True)
class InverseTime:
    r""":math:`\eta_t=a/(t+b)` with :math:`a,b>0` (MimiC Lemma 6; CA-Fed Theorem 2)."""

    a: float
    b: float

    def __post_init__(self) -> None:
        check_real(self.a, "a", "InverseTime", low=0.0, low_open=True)
        check_real(self.b, "b", "InverseTime", low=0.0, low_open=True)

    def __call__(self, t: int) -> float:
        return self.a / (t + self.b)


@dataclass(frozen=True)
class ExponentialDecay:
    r""":math:`\eta_t=\max(\eta_0\rho^t,\eta_{\min})` (MimiC code: ``rho = 0.99``,
    ``eta_min = 1e-5``)."""

    initial: float
    decay: float
    floor: float = 0.0

    def __post_init__(self) -> None:
        owner = "ExponentialDecay"
        check_real(self.initial, "initial", owner, low=0.0, low_open=True)
        check_real(self.decay, "decay", owner, low=0.0, high=1.0, low_open=True)
        check_real(self.floor, "floor", owner, low=0.0)

    def __call__(self, t: int) -> float:
        return max(self.initial * self.decay**t, self.floor)


def as_schedule(value: StepSize, name: str, owner: str) -> Schedule:
    """A schedule from a positive float (constant) or a callable (returned unchanged)."""
    if callable(value):
        return value
    return Constant(check_real(value, name, owner, low=0.0, low_open=True))
