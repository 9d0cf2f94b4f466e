r"""One judge: a measurement against a theorem at an instance.

Every route that compares a measured quantity with a :class:`~fedtheory.bounds.Theorem`
(:func:`fedtheory.validation.theorem_check`, :func:`fedtheory.testing.check_theorem`, the
tightness search's :meth:`fedtheory.tightness.Family.measure` and
:func:`fedtheory.testing.assert_upper_bound`) goes through :class:`Judge`: it evaluates the
theorem on its own parameters at the instance (bound, terms, validity of the hypotheses),
takes the measurement (a number, a :class:`fedtheory.verdict.Measured` with the magnitude of
its computation, a mean with its confidence interval, or replicates), forms the rounding
floor and applies the verdict rule of :mod:`fedtheory.verdict.outcomes`. The result is a
:class:`Judgement`, whose :meth:`Judgement.row` is the verdict row of the report.

**The rounding floor.** A deterministic comparison adds
:func:`fedtheory.verdict.rounding_floor` of the magnitudes that entered the computation:

* with a :class:`~fedtheory.verdict.Measured`, its ``scale``, the measured value, the bound
  and the bound's terms;
* with a bare number (the computation's magnitude unknown), the measured value, the bound,
  the bound's terms **and the instance's parameters**: a bound of exactly 0 met by a
  rounding residue (:math:`(1-\eta\mu)^{2T}\|x_0-x^*\|^2=0` at :math:`x_0=x^*`, measured
  7.7e-34 with :math:`\eta,\mu\approx 1`) holds within rounding. Where the excess is above
  that floor but within :data:`UNSCALED_ULPS` machine epsilons of the largest magnitude,
  rounding of a larger computation cannot be ruled out: the outcome is *inconclusive*, and
  the row says ``within rounding of the bound: return Measured(value, scale)``.

Below :data:`UNDERFLOW` (64 smallest normal floats) every difference is rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from fedtheory.constraints import (
    Array,
    Bool,
    Either,
    Exemplified,
    Finite,
    Function,
    Instance,
    InstanceOf,
    Label,
    MappingOf,
    Real,
    Text,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.verdict import (
    BOUND_RTOL,
    ROUNDING_ULPS,
    Comparison,
    Measured,
    Verdict,
    compare_equal,
    compare_mean_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
    format_ratio,
    mean_intervals,
    replicates_needed,
    rounding_floor,
)
from fedtheory.verdict.intervals import _pointwise_level
from fedtheory.verdict.outcomes import (
    _CODES,
    _equivalence_codes,
    _final,
    _outside_note,
    _upper_codes,
    near,
)

UNSCALED_ULPS = 1024.0 * ROUNDING_ULPS
"""Machine epsilons per unit of the largest visible magnitude within which the excess of a
bare number (no :class:`~fedtheory.verdict.Measured` scale) over its bound may still be
rounding of a larger computation: *inconclusive*, never *violated*."""

UNDERFLOW = ROUNDING_ULPS * float(np.finfo(float).smallest_normal)
"""The smallest rounding floor: below it values underflow (5e-324 over a bound of 0 is
rounding)."""

WITHIN_ROUNDING = "within rounding of the bound: return Measured(value, scale)"
"""What a row says when a bare number exceeds its bound by no more than rounding could."""

EXACT_RTOL = 1e-9
"""Default relative tolerance of a deterministic exact statement."""


THEOREM = InstanceOf("fedtheory.bounds.base:Theorem")
"""A theorem parameter (imported at the first check: base imports nothing of this module)."""
VALUES = Exemplified(
    MappingOf(Finite(), "values without NaN or inf"),
    lambda args: {p: c.example(args) for p, c in args["self"].theorem.constraints.items()},
)
"""A theorem's parameter values, a mapping (the theorem checks each value)."""
REPLICATES = Exemplified(Array(min_size=2, none=True), lambda args: None)
"""Replicates ``[n, ...]`` of a random measurement, or None (then ``measured`` is given:
so is it in the generated tests' valid call)."""
NOTHING = object()
"""Default of ``measured`` and ``samples`` (``None`` is a measurement to refuse)."""


class MeasureError(ParameterError):
    """The user's measurement returned something other than finite numbers of the expected
    shape at an instance (a ``ParameterError`` of its ``measure`` parameter). Carries the
    function's name, the instance and what was wrong."""

    def __init__(self, message: str, *, function: str, instance: Mapping, error: str) -> None:
        self.function, self.instance, self.error = function, dict(instance), error
        super().__init__(message)


def _check_measurable(theorem, owner: str) -> None:
    """``theorem`` is a statement a measurement is compared with (an upper bound or an
    exact statement), else ParameterError."""
    if theorem.kind not in ("upper bound", "exact"):
        raise ParameterError(
            f"The 'theorem' parameter of {owner} must be an upper bound or an exact statement "
            f"(a number to compare with). Got {theorem.key!r} of kind {theorem.kind!r} instead."
        )


def _largest(*arrays) -> float:
    """The largest finite magnitude among ``arrays`` (0 if none)."""
    out = 0.0
    for a in arrays:
        a = np.abs(np.asarray(a, dtype=float))
        a = a[np.isfinite(a)]
        if a.size:
            out = max(out, float(a.max()))
    return out


@dataclass(frozen=True)
class Judgement:
    r"""A measured quantity next to a theorem's value at one instance, and the outcome.

    ``measured`` is the value (a deterministic measurement, possibly an array of points) or
    the mean of the replicates, with its confidence ``interval`` (``None``: deterministic);
    ``magnitude`` the largest magnitude that entered the computation, ``scaled`` whether
    the measurement gave it (:class:`~fedtheory.verdict.Measured`) or it was read off the
    instance's parameters and the bound's terms (module docstring). ``valid`` is false where
    a hypothesis of the theorem fails (``reason`` says which); ``samples`` holds the
    replicates when there are any.

    Examples
    --------
    >>> Judgement(1.0 + 1e-8, 1.0).outcome.value
    'violated'
    >>> Judgement(7.7e-34, 0.0, magnitude=1.0).outcome.value
    'holds'
    """

    measured: float | np.ndarray
    bound: float | np.ndarray
    values: Mapping[str, float] = field(default_factory=dict)
    interval: tuple | None = None  # confidence interval of a Monte-Carlo mean
    valid: bool = True
    magnitude: float = 0.0
    scaled: bool = False
    kind: str = "upper bound"  # or "exact"
    rtol: float = BOUND_RTOL
    atol: float = 0.0
    margin: float | None = None  # equivalence margin of an exact statement on a mean
    samples: np.ndarray | None = None  # [n, ...] replicates
    confidence: float = 0.95
    theorem: str = ""
    reference: str = ""
    reason: str = ""

    @property
    def low(self):
        return self.measured if self.interval is None else self.interval[0]

    @property
    def high(self):
        return self.measured if self.interval is None else self.interval[1]

    @property
    def floor(self) -> float:
        """The rounding floor added to the slack (module docstring), plus ``atol``."""
        scale = rounding_floor(self.measured, self.bound, self.magnitude)
        return max(scale, UNDERFLOW) + self.atol

    @property
    def band(self) -> float:
        """How far a bare number may exceed its bound by rounding of a computation larger
        than its visible magnitudes (:data:`UNSCALED_ULPS`); the floor for a scaled one."""
        if self.scaled or self.interval is not None:
            return self.floor
        wide = rounding_floor(self.measured, self.bound, self.magnitude, ulps=UNSCALED_ULPS)
        return max(wide, self.floor)

    def _code(self, floor: float) -> int:
        """0 holds, 1 inconclusive, 2 violated (worst point), with this floor."""
        low, high, bound = (np.asarray(v, dtype=float) for v in (self.low, self.high, self.bound))
        if np.isnan(low).any() or np.isnan(high).any() or np.isnan(bound).any():
            return 1
        if self.kind == "upper bound":
            return int(np.max(_upper_codes(low, high, bound, floor, self.rtol)))
        if self.interval is None:
            return 0 if bool(np.all(near(high, bound, rtol=self.rtol, atol=floor))) else 2
        margin = -np.inf if self.margin is None else self.margin
        return int(np.max(_equivalence_codes(low, high, bound, margin)))

    @property
    def within_rounding(self) -> bool:
        """A bare number beyond the floor but within :attr:`band`: not decided."""
        return self._code(self.floor) == 2 and self._code(self.band) == 0

    @property
    def outcome(self) -> Verdict:
        """The rule at this instance (:mod:`fedtheory.verdict.outcomes`): *holds*,
        *violated* or *inconclusive* (a NaN side, an interval across the bound, or a bare
        number :attr:`within_rounding`), whether or not the hypotheses hold."""
        code = self._code(self.floor)
        return Verdict.INCONCLUSIVE if code == 2 and self.within_rounding else _CODES[code]

    @property
    def verdict(self) -> Verdict:
        """:attr:`outcome`, or *outside assumptions* where a hypothesis fails."""
        return _final(self.outcome, self.valid)

    @property
    def violated(self) -> bool:
        """A counterexample: inside the hypotheses and the outcome *violated*."""
        return self.valid and self.outcome is Verdict.VIOLATED

    @property
    def ratios(self) -> np.ndarray:
        """measured (upper limit) / bound at every point; NaN where the bound is within the
        rounding floor of 0 and met within it (a ratio of rounding, e.g. 1e-31 over 1e-117,
        is no worst case)."""
        high, bound = np.asarray(self.high, dtype=float), np.asarray(self.bound, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.kind == "upper bound":
                r = np.where(bound != 0, high / bound, np.where(high > self.floor, np.inf, 0.0))
                rounding = (np.abs(bound) <= self.floor) & (high > bound)
                return np.where(rounding & (high <= bound + self.floor), np.nan, r)
            return np.abs(high / bound - 1.0)

    @property
    def ratio(self) -> float:
        """The largest of :attr:`ratios` (``-inf`` where every point is rounding)."""
        r = self.ratios
        return float(np.max(np.where(np.isnan(r), -np.inf, r))) if r.size else -math.inf

    def ratio_text(self) -> str:
        """The ratio for people (:func:`fedtheory.verdict.format_ratio`; within the rounding
        floor of 1: *1 within rounding*)."""
        high, bound = float(np.max(self.high)), float(np.max(self.bound))
        return format_ratio(high, bound, self.floor if self.interval is None else 0.0)

    def needed(self) -> int | None:
        """Replicates that would decide an *inconclusive* Monte-Carlo outcome at the measured
        spread (:func:`fedtheory.verdict.replicates_needed`); None otherwise."""
        if self.outcome is not Verdict.INCONCLUSIVE or self.samples is None:
            return None
        m, lo, hi, b = (float(np.max(v)) for v in (self.measured, self.low, self.high, self.bound))
        return replicates_needed(len(self.samples), m, lo, hi, b + self.floor)

    @declare(claim=Label(), confidence=Real(0.0, 1.0, low_open=True, high_open=True, none=True))
    def row(self, claim: str = "", *, confidence: float | None = None) -> Comparison:
        """The verdict row (:class:`fedtheory.verdict.Comparison`) with the detail of the
        report: the rows of :mod:`fedtheory.verdict.statements` for values and replicates
        (``confidence`` overrides the family-wise level, e.g. a look of adaptive
        replication)."""
        ref, hold, upper = self.reference, self.valid, self.kind == "upper bound"
        level = self.confidence if confidence is None else confidence
        if self.samples is not None:
            if upper:
                return compare_mean_upper_bound(
                    claim,
                    ref,
                    self.samples,
                    self.bound,
                    assumptions_hold=hold,
                    confidence=level,
                    floor=self.floor,
                )
            return compare_mean_equal(
                claim,
                ref,
                self.samples,
                self.bound,
                margin=self.margin,
                assumptions_hold=hold,
                confidence=level,
            )
        if self.interval is not None:
            low, high = (float(np.max(v)) for v in self.interval)
            detail = f"95% CI of the mean [{low:.4g}, {high:.4g}]" + _outside_note(
                self.outcome, hold
            )
            rel = "<=" if upper else "=="
            return Comparison(
                claim,
                ref,
                rel,
                float(np.max(self.measured)),
                float(np.max(self.bound)),
                self.verdict,
                detail,
                (low, high),
            )
        if upper:
            row = compare_upper_bound(
                claim,
                ref,
                self.measured,
                self.bound,
                assumptions_hold=hold,
                floor=self.floor,
                rtol=self.rtol,
            )
        else:
            row = compare_equal(
                claim,
                ref,
                self.measured,
                self.bound,
                rtol=self.rtol,
                atol=self.floor,
                assumptions_hold=hold,
            )
        if self.within_rounding:
            row = replace(row, verdict=self.verdict, detail=f"{row.detail}; {WITHIN_ROUNDING}")
        return row


JUDGE = {
    "owner": Text(),
    "theorem": THEOREM,
    "measure": Function(none=True),
    "rtol": Real(0.0, 1.0, none=True),
    "atol": Real(0.0),
    "margin": Real(0.0, none=True),
    "confidence": Real(0.0, 1.0, low_open=True, high_open=True),
    "scale": Real(0.0, low_open=True),
}
""":class:`Judge`'s declared parameters, checked in its ``__post_init__`` so that an error
names ``owner``, the public function the judge works for (``check_theorem``,
``theorem_check``, ...)."""


@dataclass(frozen=True)
class Judge:
    r"""The one judge of a measurement against ``theorem`` (module docstring).

    Parameters
    ----------
    theorem : Theorem
        An upper bound or an exact statement.
    measure : callable, optional
        The user's measurement, where there is one (its name is printed when what it
        returned is refused).
    rtol, atol : float, optional
        Relative slack (default :data:`fedtheory.verdict.BOUND_RTOL` for an upper bound,
        :data:`EXACT_RTOL` for an exact statement) and absolute slack added to the rounding
        floor.
    margin : float, optional
        Equivalence margin of an exact statement on a Monte-Carlo mean.
    confidence : float
        Family-wise confidence of a Monte-Carlo interval.
    scale : float
        Factor applied to the bound (a deliberately scaled bound, e.g. halved).
    owner : str
        The public function whose parameters the errors name.
    """

    theorem: object
    measure: Callable | None = None
    rtol: float | None = None
    atol: float = 0.0
    margin: float | None = None
    confidence: float = 0.95
    scale: float = 1.0
    owner: str = "judge"

    def __post_init__(self) -> None:
        owner = JUDGE["owner"].check(self.owner, "owner", "Judge", {})
        for name, constraint in JUDGE.items():
            object.__setattr__(self, name, constraint.check(getattr(self, name), name, owner, {}))
        _check_measurable(self.theorem, self.owner)
        if self.rtol is None:
            default = BOUND_RTOL if self.theorem.kind == "upper bound" else EXACT_RTOL
            object.__setattr__(self, "rtol", default)

    def upper_bound(self) -> Judge:
        """This judge, where its theorem is an upper bound (a search maximises
        measured/bound); otherwise a ParameterError naming ``theorem``."""
        if self.theorem.kind != "upper bound":
            raise ParameterError(
                f"The 'theorem' parameter of {self.owner} must be an upper bound. Got "
                f"{self.theorem.key!r} of kind {self.theorem.kind!r} instead."
            )
        return self

    @property
    def name(self) -> str:
        """The measurement's name as errors print it."""
        return getattr(self.measure, "__qualname__", None) or repr(self.measure)

    @declare(values=VALUES)
    def bound_at(self, values: Mapping):
        """The theorem at ``values`` (its parameters; extra keys ignored), terms and total
        times ``scale``: a :class:`~fedtheory.bounds.BoundResult` (``valid`` false where a
        hypothesis fails)."""
        result = self.theorem.evaluate(strict=False, **self._parameters(values))
        if self.scale == 1.0:
            return result
        terms = {k: np.asarray(v) * self.scale for k, v in result.terms.items()}
        return replace(result, terms=terms, total=np.asarray(result.total) * self.scale)

    def _parameters(self, values: Mapping) -> dict:
        """The theorem's parameters taken from ``values``, else ParameterError naming the
        missing ones."""
        th = self.theorem
        missing = [p for p in th.parameters if p not in values]
        if missing:  # the rule and the hints of Theorem.evaluate: other keys are ignored
            from fedtheory.bounds.base import _nearest

            unknown = sorted(set(values) - set(th.parameters))
            hints = "".join(
                f" {k!r}: did you mean {near[0]!r}?"
                for k in unknown
                if (near := _nearest(k, missing))
            )
            raise ParameterError(
                f"The 'values' parameter of {self.owner} must give every parameter of "
                f"{th.title} ({', '.join(th.parameters)}; other keys are ignored). Got "
                f"{dict(values)!r} (missing {missing}, unknown {unknown or 'none'}) instead."
                + hints
            )
        return {p: values[p] for p in th.parameters}

    @declare(values=VALUES)
    def measure_at(self, values: Mapping, **extra):
        """``measure(**values, **extra)``; whatever it raises (a ``DivergenceError`` of the
        simulator, any error of the user's code) becomes a :class:`MeasureError` naming the
        function, the instance and the error."""
        if self.measure is None:
            raise ParameterError(
                f"The 'measure' parameter of {self.owner} must be a callable to measure at "
                "values. Got None instead."
            )
        try:
            return self.measure(**values, **extra)
        except (KeyboardInterrupt, MeasureError):
            raise
        except Exception as err:  # noqa: BLE001 -- the user's code: any failure is reported
            error = f"{type(err).__name__}: {err}"
            raise MeasureError(
                f"The 'measure' parameter of {self.owner} must not raise. Got {error} from "
                f"{self.name} at {dict(values)} instead.",
                function=self.name, instance=values, error=error,
            ) from err  # fmt: skip

    def __call__(
        self,
        values: Mapping,
        measured=NOTHING,
        *,
        samples=NOTHING,
        interval: tuple | None = None,
        magnitude: float = 0.0,
        where: str | None = None,
        shape: tuple[int, ...] | None = None,
    ) -> Judgement:
        r"""Judge ``measured`` (a number or array of points, or a
        :class:`~fedtheory.verdict.Measured`; with ``interval``, a mean and its confidence
        interval) or ``samples [n, ...]`` (i.i.d. replicates) against the theorem at
        ``values`` (its parameters; extra keys are ignored). ``magnitude``: the largest
        magnitude of the computation where the caller knows it (a tightness family's
        ``Measurement``). A non-number, a non-finite value or (with ``shape``) another
        shape is a :class:`MeasureError` naming ``where`` (default: the values)."""
        values = MappingOf().check(values, "values", self.owner, {})
        params = self._parameters(values)
        result = self.bound_at(params)
        bound = np.asarray(result.total, dtype=float)
        terms = _largest(*result.terms.values())
        if (measured is NOTHING) == (samples is NOTHING):
            raise ParameterError(
                f"The 'measured' parameter of {self.owner} must be given, or 'samples', not "
                f"both. Got {'both' if measured is not NOTHING else 'neither'} instead."
            )
        random = samples is not NOTHING
        scaled = isinstance(measured, Measured) or magnitude > 0
        if isinstance(measured, Measured):
            magnitude = max(magnitude, abs(float(measured.scale)))
            measured = measured.value
        value = self._numbers(samples if random else measured, values, where, shape)
        if not random and interval is None and not scaled:
            magnitude = _largest(*params.values()) if _numeric(params) else 0.0
        return self._of(
            None if random else value,
            bound,
            samples=value if random else None,
            interval=interval,
            valid=bool(result.valid),
            magnitude=max(terms, magnitude),
            scaled=scaled,
            values=params,
            reason=result.reason,
        )

    @declare(
        measured=Array(none=True),
        bound=Array(),
        samples=REPLICATES,
        interval=Array(shape=(2,), none=True),
        valid=Bool(),
        magnitude=Real(0.0),
        scaled=Bool(),
        values=MappingOf(Finite(), "values without NaN or inf"),
        reason=Label(),
    )
    def of(
        self,
        measured,
        bound,
        *,
        samples=None,
        interval: tuple | None = None,
        valid: bool = True,
        magnitude: float = 0.0,
        scaled: bool = False,
        values: Mapping | None = None,
        reason: str = "",
    ) -> Judgement:
        """The :class:`Judgement` of numbers already taken (a validation's stored data):
        ``measured`` (or ``samples [n, ...]``, whose mean and Bonferroni-corrected interval
        it computes) against ``bound`` (shapes that broadcast), with this judge's settings."""
        if (measured is None) == (samples is None):
            raise ParameterError(
                f"The 'measured' parameter of {self.owner}.of must be given, or 'samples', not "
                f"both. Got {'both' if measured is not None else 'neither'} instead."
            )
        name, shape = ("measured", np.shape(measured)) if samples is None else (
            "samples", np.shape(samples)[1:])  # fmt: skip
        try:
            np.broadcast_shapes(shape, np.shape(bound))
        except ValueError:
            raise ParameterError(
                f"The '{name}' and 'bound' parameters of {self.owner}.of must have shapes that "
                f"broadcast together (one value per point of the bound). Got {name} of shape "
                f"{shape} and bound of shape {np.shape(bound)} instead."
            ) from None
        given = dict(interval=interval, valid=valid, magnitude=magnitude, scaled=scaled)
        return self._of(measured, bound, samples=samples, values=values, reason=reason, **given)

    def _of(self, measured, bound, *, samples, interval, valid, magnitude, scaled, values,
            reason) -> Judgement:  # fmt: skip
        """:meth:`of` without its checks (a bound outside the hypotheses may be NaN)."""
        shared = dict(
            values=dict(values or {}), valid=bool(valid), kind=self.theorem.kind,
            rtol=self.rtol, atol=self.atol, margin=self.margin, confidence=self.confidence,
            theorem=self.theorem.key, reference=self.theorem.reference, reason=reason,
        )  # fmt: skip
        bound = _scalar(np.asarray(bound, dtype=float))
        if samples is not None:
            x = np.asarray(samples, dtype=float)
            if x.ndim == 0 or x.shape[0] < 2:
                raise ParameterError(
                    f"The 'samples' parameter of {self.owner} must hold at least 2 replicates "
                    f"[n, ...]. Got shape {x.shape} instead."
                )
            points = x.reshape(x.shape[0], -1)
            ci = mean_intervals(points, _pointwise_level(self.confidence, points.shape[1]))
            squeeze = (lambda a: float(a[0])) if points.shape[1] == 1 else (lambda a: a)
            return Judgement(
                squeeze(ci.mean), bound, interval=(squeeze(ci.low), squeeze(ci.high)),
                magnitude=max(magnitude, _largest(x)), scaled=True, samples=x, **shared,
            )  # fmt: skip
        value = _scalar(np.asarray(measured, dtype=float))
        if interval is not None:
            interval, scaled = tuple(float(v) for v in interval), True
        return Judgement(
            value, bound, interval=interval, magnitude=magnitude, scaled=scaled, **shared
        )

    def _numbers(self, raw, instance: Mapping, where: str | None, shape) -> np.ndarray:
        """``raw`` as finite floats (of ``shape``), else :class:`MeasureError`."""
        where = where or f"{self.name} at {dict(instance)}"
        what = "a number" if not shape else f"an array [{shape[0]}] (one value per replicate)"

        def refuse(got: str, error: str):
            return MeasureError(
                f"The 'measure' parameter of {self.owner} must return {got} at {where} instead.",
                function=self.name, instance=instance, error=error,
            )  # fmt: skip

        try:
            if np.asarray(raw).dtype.kind in "SUO":  # text ("0.5" too) or objects
                raise TypeError
            out = np.asarray(raw, dtype=float)
        except (TypeError, ValueError):
            got = f"{type(raw).__name__} {str(raw)[:60]!r}"
            raise refuse(f"{what}. Got {got}", f"returned {got}") from None
        if shape is not None and out.shape != tuple(shape):
            got = f"shape {out.shape}"
            raise refuse(f"{what}. Got {got}", f"returned {got}")
        if not np.all(np.isfinite(out)):
            got = f"{int(np.sum(~np.isfinite(out)))} NaN or inf of {out.size}"
            raise refuse(f"finite numbers. Got {got}", f"returned {got}")
        return out


Judge.__init__.__constraints__ = JUDGE  # as declare marks it: found by constraints_of


def _scalar(a: np.ndarray):
    return float(a) if np.ndim(a) == 0 else a


def _numeric(values: Mapping) -> bool:
    try:
        return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in values.values())
    except (TypeError, ValueError):
        return False


@declare(
    theorem=THEOREM,
    values=MappingOf(Finite(), "values without NaN or inf"),
    # non-finite numbers: the judge's MeasureError ("must return finite numbers")
    measured=Either(Array(finite=False), Instance(Measured), none=True),
    samples=Exemplified(Array(min_size=2, finite=False, none=True), lambda args: None),
)
def judge(theorem, values: Mapping, measured=None, *, samples=None, **options) -> Judgement:
    r"""Judge a measurement against ``theorem`` at ``values``: ``Judge(theorem,
    **options)(values, measured, samples=samples)`` (:class:`Judge`).

    Examples
    --------
    >>> from fedtheory.bounds import fedau
    >>> j = judge(fedau.theorem3_per_round, {"p": 0.5, "K_cut": 3, "t": 4}, 0.01)
    >>> j.outcome.value, j.valid
    ('holds', True)
    """
    given = {"measured": measured, "samples": samples}
    given = {k: NOTHING if v is None else v for k, v in given.items()}
    return Judge(theorem, **options)(values, given["measured"], samples=given["samples"])


__all__ = [
    "EXACT_RTOL",
    "UNDERFLOW",
    "UNSCALED_ULPS",
    "WITHIN_ROUNDING",
    "Judge",
    "Judgement",
    "MeasureError",
    "judge",
]
