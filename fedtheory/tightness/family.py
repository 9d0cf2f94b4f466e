r"""Instance families of an upper bound: the search space of the tightness search.

A :class:`Family` pairs a catalogue upper bound with a parametrised family of instances that
satisfy its hypotheses *by construction* (the reparametrisation keeps every hypothesis true
on the whole box, so the search never needs to reject a point). A point of the family is

* integers (``Integer``: clients, dimension, horizon, ...), each in a range that may depend
  on the integers before it; those marked ``size`` are what shrinking makes small;
* a vector of reals, each in a box ``[low, high]`` (``Real``), whose names and number may
  depend on the integers.

``evaluate(integers, reals, seed)`` builds the instance, measures the bounded quantity and
evaluates the bound on it (with the catalogue :class:`~fedtheory.bounds.Theorem`), and
returns an :class:`Evaluation`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from fedtheory.bounds.base import Theorem
from fedtheory.errors import ParameterError
from fedtheory.params import check_bool, check_instance, check_real, check_str
from fedtheory.verdict import BOUND_RTOL

ZERO_ATOL = 1e-15
"""A measured value at most this large counts as zero where the bound is zero (rounding)."""


@dataclass(frozen=True)
class Integer:
    """An integer parameter in ``[low, high]``; ``high`` may be a function of the integers
    drawn before it (e.g. ``k <= K``). ``size``: shrinking a counterexample lowers it."""

    name: str
    low: int
    high: int | Callable[[Mapping[str, int]], int]
    doc: str
    size: bool = True

    def upper(self, before: Mapping[str, int]) -> int:
        """The upper end given the integers drawn before this one."""
        return self.high(before) if callable(self.high) else self.high


@dataclass(frozen=True)
class Real:
    """A real parameter in the box ``[low, high]``."""

    name: str
    low: float
    high: float


@dataclass(frozen=True)
class Evaluation:
    r"""One instance: the measured quantity next to the bound.

    ``measured`` is exact, or for a Monte-Carlo family the mean over replicates with its
    95% confidence ``interval``. :attr:`ratio` divides the *upper* confidence limit by the
    bound (so a ratio at most 1 means the bound holds with 95% confidence, as the report's
    verdicts judge it); :attr:`violated` needs the *lower* limit above the bound (a
    counterexample is claimed only with confidence)."""

    measured: float
    bound: float
    constants: Mapping[str, float] = field(default_factory=dict)
    interval: tuple[float, float] | None = None  # 95% CI of a Monte-Carlo mean

    @staticmethod
    def _over(value: float, bound: float) -> float:
        if bound > 0:
            return value / bound
        return np.inf if value > ZERO_ATOL else 0.0

    @property
    def ratio(self) -> float:
        """measured / bound (upper confidence limit / bound for a Monte-Carlo family)."""
        top = self.measured if self.interval is None else self.interval[1]
        return float(self._over(top, self.bound))

    @property
    def violated(self) -> bool:
        """measured > bound beyond rounding (lower confidence limit for Monte Carlo)."""
        low = self.measured if self.interval is None else self.interval[0]
        return bool(self._over(low, self.bound) > 1.0 + BOUND_RTOL)

    def as_dict(self) -> dict:
        return {
            "measured": self.measured,
            "bound": self.bound,
            "ratio": self.ratio,
            "violated": self.violated,
            "interval": None if self.interval is None else list(self.interval),
            "constants": dict(self.constants),
        }


@dataclass(frozen=True)
class Family:
    r"""A catalogue upper bound and a family of instances inside its hypotheses.

    Parameters
    ----------
    theorem : Theorem
        The catalogue statement (its ``key`` names the family).
    description : str
        The instances and what is measured (shown by the CLI and the report).
    integers : tuple of Integer
    reals : callable
        ``reals(integers) -> tuple[Real, ...]``, the continuous parameters.
    evaluate : callable
        ``evaluate(integers, reals [n], seed) -> Evaluation``.
    monte_carlo : bool
        The measured side is a mean over random replicates (drawn from ``seed``).
    tightness : str
        What is proved about the worst ratio (attained, approached, or nothing known).
    scale : float
        Factor applied to the bound (1 for the catalogue statement; see :func:`scaled`).
    """

    theorem: Theorem
    description: str
    integers: tuple[Integer, ...]
    reals: Callable[[Mapping[str, int]], tuple[Real, ...]]
    evaluate: Callable[[Mapping[str, int], np.ndarray, int], Evaluation]
    monte_carlo: bool = False
    tightness: str = "no closed form for the worst case is known"
    scale: float = 1.0

    def __post_init__(self) -> None:
        check_instance(self.theorem, Theorem, "theorem", "Family")
        check_str(self.description, "description", "Family")
        check_str(self.tightness, "tightness", "Family")
        if not isinstance(self.integers, tuple) or not all(
            isinstance(i, Integer) for i in self.integers
        ):
            raise ParameterError(
                "The 'integers' parameter of Family must be a tuple of Integer. "
                f"Got {self.integers!r} instead."
            )
        for name in ("reals", "evaluate"):
            if not callable(getattr(self, name)):
                raise ParameterError(
                    f"The '{name}' parameter of Family must be callable. "
                    f"Got {getattr(self, name)!r} instead."
                )
        check_bool(self.monte_carlo, "monte_carlo", "Family")
        check_real(self.scale, "scale", "Family", low=0.0, low_open=True)
        if self.theorem.kind != "upper bound":
            raise ParameterError(
                "The 'theorem' parameter of Family must be an upper bound (kind 'upper "
                f"bound'). Got {self.theorem.key!r} of kind {self.theorem.kind!r} instead."
            )

    @property
    def key(self) -> str:
        return self.theorem.key

    def measure(self, integers: Mapping[str, int], reals, seed: int = 0) -> Evaluation:
        """Evaluate the family at a point, with the bound multiplied by ``scale``."""
        ev = self.evaluate(dict(integers), np.asarray(reals, dtype=float), seed)
        return ev if self.scale == 1.0 else replace(ev, bound=ev.bound * self.scale)


def scaled(family: Family, factor: float) -> Family:
    r"""``family`` with its bound multiplied by ``factor``: with ``factor < 1`` a
    deliberately false, stronger statement (e.g. the catalogue bound divided by 10), on
    which the search must find a counterexample whenever the true worst ratio exceeds
    ``factor``."""
    family = check_instance(family, Family, "family", "scaled")
    factor = check_real(factor, "factor", "scaled", low=0.0, low_open=True)
    return replace(family, scale=family.scale * factor)
