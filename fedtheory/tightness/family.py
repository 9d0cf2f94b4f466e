r"""Instance families of an upper bound: the search space of the tightness search.

A :class:`Family` pairs an upper bound (a :class:`~fedtheory.bounds.Theorem`, catalogue or
your own) with a parametrised family of instances. A point of the family is

* integers (``Integer``: clients, dimension, horizon, ...), each in a range that may depend
  on the integers before it; those marked ``size`` are what shrinking makes small;
* a vector of reals, each in a box ``[low, high]`` (``Real``), whose names and number may
  depend on the integers.

``evaluate(integers, reals, seed)`` builds the instance and *measures* it: it returns a
:class:`Measurement` (the bounded quantity and the instance's constants, among them every
parameter of the theorem). The family then evaluates **the theorem it holds** on those
constants (:meth:`Family.measure`), so a family whose theorem is replaced
(``dataclasses.replace(family, theorem=mine)``) judges ``mine``. A point where a hypothesis of
the theorem fails is *not valid*: it is never a counterexample.

The decision at a point is the one judge's (:class:`fedtheory.bounds.judgement.Judge`, the
rule of the report): a counterexample needs the lower confidence limit (the exact value for
a deterministic measurement) above the bound plus the slack (the rounding floor of the
magnitudes that entered the computation, plus ``BOUND_RTOL`` times the bound); the bound
holds when the upper limit is within the slack; otherwise inconclusive.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from numbers import Integral

import numpy as np

from fedtheory.bounds.base import Theorem
from fedtheory.bounds.judgement import Judge, Judgement, MeasureError
from fedtheory.constraints import (
    Array,
    Bool,
    Finite,
    Function,
    Instance,
    Interval,
    MappingOf,
    Text,
    declare,
    record,
    shown,
)
from fedtheory.constraints import Integer as IntegerIn
from fedtheory.constraints import Real as RealIn
from fedtheory.errors import ParameterError
from fedtheory.verdict import Verdict

__all__ = ["Evaluation", "Family", "Integer", "Measurement", "Real", "scaled"]
# rebuildable: the analyses' helper (any value; nothing to check)

_LOG_CAP = 700.0  # scores are clipped to [-700, 700] (ratio 0 or inf)


@record(name=Text(), low=IntegerIn(), doc=Text(), size=Bool())
@dataclass(frozen=True)
class Integer:
    """An integer parameter in ``[low, high]``; ``high`` may be a function of the integers
    drawn before it (e.g. ``k <= K``). ``size``: shrinking a counterexample lowers it."""

    name: str
    low: int
    high: int | Callable[[Mapping[str, int]], int]
    doc: str
    size: bool = True

    def __post_init__(self) -> None:
        if not callable(self.high) and (
            isinstance(self.high, (bool, np.bool_)) or not isinstance(self.high, Integral)
        ):
            raise ParameterError(
                "The 'high' parameter of Integer must be an integer or a function of the "
                f"integers before it. Got {self.high!r} instead."
            )

    @declare(before=MappingOf(IntegerIn(), "integers"))
    def upper(self, before: Mapping[str, int]) -> int:
        """The upper end given the integers drawn before this one."""
        if not callable(self.high):
            return self.high
        try:
            high = self.high(before)
        except KeyError as err:
            raise ParameterError(
                f"The 'before' parameter of Integer.upper must hold the integers drawn before "
                f"'{self.name}' (its 'high' reads {err}). Got {shown(before)} instead."
            ) from None
        if isinstance(high, (bool, np.bool_)) or not isinstance(high, Integral):
            raise ParameterError(
                f"The 'high' parameter of Integer must return an integer. Got {shown(high)} at "
                f"{before} instead."
            )
        return int(high)


POINT = {"integers": MappingOf(IntegerIn(), "integers"), "reals": Array(ndim=1, min_size=0)}
"""A point of a family: its integers by name and its reals ``[n]`` (checked against the
family by ``Family._point``)."""


@record(name=Text(), low=RealIn(), high=RealIn())
@dataclass(frozen=True)
class Real:
    """A real parameter in the box ``[low, high]``."""

    name: str
    low: float
    high: float


@record(
    measured=RealIn(nan=True),
    constants=MappingOf(Finite(), "values without NaN or inf"),
    interval=Interval(none=True),
    magnitude=RealIn(0.0),
)
@dataclass(frozen=True)
class Measurement:
    r"""What a family's ``evaluate`` returns: the measured quantity and the constants.

    ``measured`` is exact, or for a Monte-Carlo family the mean over replicates with its 95%
    confidence ``interval`` (finite, low <= high); NaN only where the instance lies outside
    the theorem's hypotheses (never measured), never ``inf``. ``constants`` holds every
    parameter of the theorem (and any other constant worth printing); ``magnitude`` is the
    largest magnitude that entered the computation of either side (e.g. :math:`F(w)` and
    :math:`F^*` when the measured value is their difference), which sets the rounding floor."""

    measured: float
    constants: Mapping[str, float] = field(default_factory=dict)
    interval: tuple[float, float] | None = None  # 95% CI of a Monte-Carlo mean
    magnitude: float = 0.0


def _judged_measurement(judge: Judge, values: Mapping, at, *, replicates, seed) -> Measurement:
    """``judge``'s measure taken at ``at`` (the instance, or the values themselves) and judged
    against the theorem at ``values``: NaN outside the hypotheses (never measured), one
    measurement or ``replicates`` of them, and the magnitude of the computation where the
    measurement gave it (else 0: the family's judge reads it off the parameters and the
    bound's terms)."""
    if not judge.bound_at(values).valid:
        return Measurement(math.nan, values)
    if replicates is None:
        j = judge(values, judge.measure_at(at))
    else:
        out = judge.measure_at(at, replicates=replicates, seed=seed)
        j = judge(values, samples=out, shape=(replicates,))
    return Measurement(j.measured, values, j.interval, j.magnitude if j.scaled else 0.0)


@dataclass(frozen=True)
class Evaluation(Judgement):
    r"""One instance: the measured quantity next to the bound of the family's theorem, as
    judged by :class:`fedtheory.bounds.judgement.Judge` (rounding floor, rule, validity).

    What the search adds: :attr:`ratio` divides the *upper* confidence limit by the bound
    (the exact value for a deterministic measurement); :attr:`score`, what it maximises;
    :attr:`outcome` is never *violated* where a hypothesis of the theorem fails (``valid``
    false: no counterexample there); ``failure`` says where and how the measurement failed
    (it raised, or returned a non-number or a non-finite value): such a point is recorded,
    never a counterexample, and the search goes on."""

    failure: str = ""

    @property
    def constants(self) -> Mapping[str, float]:
        """The instance's constants (every parameter of the theorem)."""
        return self.values

    @property
    def ratio(self) -> float:
        """measured / bound (upper confidence limit / bound for a Monte-Carlo family); a
        zero bound gives inf when the measured value exceeds the floor, else 0."""
        if self.bound > 0:
            return float(self.high / self.bound)
        return math.inf if self.high > self.floor else 0.0

    @property
    def score(self) -> float:
        r"""What the search maximises: :math:`\log(m/(b+\text{floor}))` (upper limit
        :math:`m`), so that a ratio of rounding noise (measured 1e-17 over a bound of
        1e-22, both zero in exact arithmetic) never looks like a worst case; ``-700`` outside
        the hypotheses or at a zero measured value, at most ``700``."""
        top, bottom = self.high, self.bound + self.floor
        if not self.valid or top <= 0 or math.isnan(top):
            return -_LOG_CAP
        if bottom <= 0:
            return _LOG_CAP
        return float(np.clip(math.log(top / bottom), -_LOG_CAP, _LOG_CAP))

    @property
    def outcome(self) -> Verdict:
        """*holds*, *violated* (a counterexample) or *inconclusive* (the judge's outcome);
        never *violated* outside the hypotheses."""
        verdict = super().outcome
        return Verdict.INCONCLUSIVE if verdict is Verdict.VIOLATED and not self.valid else verdict

    @property
    def attained(self) -> bool:
        """Deterministic, valid, a bound above the rounding floor, and measured equal to it
        within the floor."""
        floor = self.floor
        return bool(
            self.valid
            and self.interval is None
            and self.bound > floor
            and abs(self.measured - self.bound) <= floor
        )

    def excess(self) -> str:
        """The relative excess in words, e.g. ``measured exceeds the bound by 3.1%``."""
        if self.bound <= 0:
            return f"measured {self.measured:.6g} exceeds the bound {self.bound:.6g}"
        rel = self.low / self.bound - 1.0
        amount = f"{100 * rel:.2g}%" if rel >= 1e-4 else f"a factor 1 + {rel:.2g}"
        what = "the lower 95% confidence limit" if self.interval is not None else "measured"
        return f"{what} exceeds the bound by {amount}"

    def as_dict(self) -> dict:
        return {
            "measured": self.measured,
            "bound": self.bound,
            "ratio": self.ratio,
            "outcome": self.outcome.value,
            "violated": self.violated,
            "valid": self.valid,
            "floor": self.floor,
            "interval": None if self.interval is None else list(self.interval),
            "constants": dict(self.constants),
            "failure": self.failure,
        }


@record(
    theorem=Instance(Theorem),
    description=Text(),
    reals=Function(),
    evaluate=Function(),
    monte_carlo=Bool(),
    tightness=Text(),
    supremum=RealIn(0.0, low_open=True, none=True),
    instance=Function(none=True),
    scale=RealIn(0.0, low_open=True),
    module=Text(none=True),
    proved_for=Instance(Theorem, none=True),
)
@dataclass(frozen=True)
class Family:
    r"""An upper bound and a family of instances to search.

    Parameters
    ----------
    theorem : Theorem
        The statement judged at every point (its ``key`` names the family); a catalogue
        theorem or your own.
    description : str
        The instances and what is measured (shown by the CLI and the report).
    integers : tuple of Integer
    reals : callable
        ``reals(integers) -> tuple[Real, ...]``, the continuous parameters.
    evaluate : callable
        ``evaluate(integers, reals [n], seed) -> Measurement``, whose ``constants`` give
        every parameter of ``theorem``.
    monte_carlo : bool
        The measured side is a mean over random replicates (drawn from ``seed``).
    tightness : str
        What is proved about the worst ratio (attained, approached, or nothing known).
    supremum : float, optional
        The proved supremum of measured / bound over the family for ``theorem``, where one
        is proved (:attr:`proved_supremum` drops it once the theorem is replaced).
    instance : callable, optional
        ``instance(integers, reals [n]) -> dict``: the instance in the paper's symbols
        (every number needed to rebuild it), printed with a counterexample.
    scale : float
        Factor applied to the bound (1 for the statement; see :func:`scaled`).
    module : str, optional
        The user file that registered the family (``fedtheory tightness --module``).
    proved_for : Theorem, optional
        The theorem ``supremum`` is proved for (set to ``theorem`` when omitted).
    """

    theorem: Theorem
    description: str
    integers: tuple[Integer, ...]
    reals: Callable[[Mapping[str, int]], tuple[Real, ...]]
    evaluate: Callable[[Mapping[str, int], np.ndarray, int], Measurement]
    monte_carlo: bool = False
    tightness: str = "no closed form for the worst case is known"
    supremum: float | None = None
    instance: Callable[[Mapping[str, int], np.ndarray], dict] | None = None
    scale: float = 1.0
    module: str | None = None
    proved_for: Theorem | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.integers, tuple) or not all(
            isinstance(i, Integer) for i in self.integers
        ):
            raise ParameterError(
                "The 'integers' parameter of Family must be a tuple of Integer. "
                f"Got {self.integers!r} instead."
            )
        if self.supremum is not None and self.proved_for is None:
            object.__setattr__(self, "proved_for", self.theorem)
        if self.theorem.kind != "upper bound":
            raise ParameterError(
                "The 'theorem' parameter of Family must be an upper bound (kind 'upper "
                f"bound'). Got {self.theorem.key!r} of kind {self.theorem.kind!r} instead."
            )

    @property
    def key(self) -> str:
        return self.theorem.key

    @property
    def proved_supremum(self) -> float | None:
        """The proved supremum of measured / bound for the theorem the family holds (divided
        by ``scale``); None if none is proved or the theorem was replaced."""
        if self.supremum is None or self.proved_for is not self.theorem:
            return None
        return self.supremum / self.scale

    def _point(self, integers: Mapping[str, int], reals: np.ndarray, owner: str) -> dict:
        """Refuse a point outside the family: ``integers`` must name the family's integers,
        each in its range (given those before it), and ``reals`` hold one value per real
        parameter, each in its box. Returns the integers as a dict."""
        names = [i.name for i in self.integers]
        if list(integers) != names:
            raise ParameterError(
                f"The 'integers' parameter of {owner} must name the family's integers {names} "
                f"in order. Got {list(integers)} instead."
            )
        before: dict[str, int] = {}
        for spec in self.integers:
            k, high = integers[spec.name], spec.upper(before)
            if not spec.low <= k <= high:
                raise ParameterError(
                    f"The 'integers' parameter of {owner} must hold {spec.name} in "
                    f"[{spec.low}, {high}]. Got {k} instead."
                )
            before[spec.name] = k
        boxes = self.reals(dict(before))
        inside = reals.size == len(boxes) and all(
            r.low <= v <= r.high for r, v in zip(boxes, reals.tolist(), strict=True)
        )
        if not inside:
            where = ", ".join(f"{r.name} in [{r.low:g}, {r.high:g}]" for r in boxes)
            raise ParameterError(
                f"The 'reals' parameter of {owner} must hold {len(boxes)} values ({where}). "
                f"Got {shown(reals)} instead."
            )
        return before

    @declare(seed=IntegerIn(0), **POINT)
    def measure(self, integers: Mapping[str, int], reals, seed: int = 0) -> Evaluation:
        """Measure the family at a point and evaluate its theorem there (bound times
        ``scale``); a failed hypothesis gives an evaluation that is not ``valid`` (its
        measured value NaN: never a counterexample, by design)."""
        integers = self._point(integers, reals, "Family.measure")
        judge = Judge(self.theorem, scale=self.scale, owner="Family.measure")
        try:
            m = self.evaluate(dict(integers), reals, seed)
        except MeasureError as err:  # the user's measurement failed here: recorded
            return self._failed(judge, err.instance, f"{err.function}: {err.error}")
        except Exception as err:  # noqa: BLE001 -- the family's own evaluate (a user's code)
            name = getattr(self.evaluate, "__qualname__", "evaluate")
            at = self.describe(integers, reals)
            return self._failed(judge, at, f"{name}: {type(err).__name__}: {err}")
        if not isinstance(m, Measurement):
            raise ParameterError(
                f"The 'evaluate' parameter of Family must return a Measurement. Got "
                f"{type(m).__name__} instead."
            )
        if math.isnan(m.measured) and not m.constants:  # no instance here (rejected draw)
            return self._failed(judge, {}, "")
        missing = [p for p in self.theorem.parameters if p not in m.constants]
        if missing:
            raise ParameterError(
                f"The 'theorem' parameter of Family must take its parameters from the "
                f"measured constants ({', '.join(m.constants)}). Got {self.theorem.title} "
                f"needing {missing} instead."
            )
        if math.isnan(m.measured) and not judge.bound_at(m.constants).valid:
            return self._failed(judge, m.constants, "")  # outside: not measured
        try:
            judged = judge(m.constants, m.measured, interval=m.interval, magnitude=m.magnitude)
        except MeasureError as err:  # NaN or inf: recorded, the search goes on
            name = getattr(self.evaluate, "__qualname__", "evaluate")
            return self._failed(judge, m.constants, f"{name}: {err.error}")
        fields = {f.name: getattr(judged, f.name) for f in dataclasses.fields(Judgement)}
        return Evaluation(**{**fields, "values": dict(m.constants)})

    def _failed(self, judge, at: Mapping, failure: str) -> Evaluation:
        """A point not measured: outside the hypotheses (``failure`` empty) or where the
        measurement failed (what failed, and how)."""
        try:
            result = judge.bound_at(at)
            bound, valid = float(np.max(result.total)), bool(result.valid)
        except (KeyError, ParameterError):  # the instance does not give the parameters
            bound, valid = math.nan, False
        where = f" at {dict(at)}" if failure else ""
        return Evaluation(math.nan, bound, dict(at), valid=valid, failure=failure + where)

    @declare(**POINT)
    def describe(self, integers: Mapping[str, int], reals) -> dict:
        """The instance in the paper's symbols (``instance``), else integers and reals."""
        integers, x = self._point(integers, reals, "Family.describe"), reals
        if self.instance is not None:
            return self.instance(dict(integers), x)
        names = [r.name for r in self.reals(dict(integers))]
        return {**integers, **dict(zip(names, x.tolist(), strict=True))}


@declare(family=Instance(Family), factor=RealIn(0.0, low_open=True))
def scaled(family: Family, factor: float) -> Family:
    r"""``family`` with its bound multiplied by ``factor``: with ``factor < 1`` a
    deliberately false, stronger statement (e.g. the catalogue bound divided by 10), on
    which the search must find a counterexample whenever the true worst ratio exceeds
    ``factor``."""
    return replace(family, scale=family.scale * factor)


def rebuildable(value):
    """``value`` as what rebuilds it: a quadratic problem as the text of its constructor
    call with its curvatures ``A``, client minimisers ``c`` and weights (its one-line
    ``repr`` omits them), an array as a list, a numpy scalar as a plain number, anything
    else as is."""
    if isinstance(value, np.generic):
        return value.item()
    if all(hasattr(value, a) for a in ("A", "c", "alpha", "noise_std")):
        return (
            f"{type(value).__name__}(A={np.asarray(value.A).tolist()}, "
            f"c={np.asarray(value.c).tolist()}, alpha={np.asarray(value.alpha).tolist()}, "
            f"noise_std={value.noise_std!r})"
        )
    return value.tolist() if isinstance(value, np.ndarray) else value
