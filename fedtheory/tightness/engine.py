r"""The tightness search: the instance of a family that maximises measured / bound.

For an upper bound :math:`m(x)\le b(x)` on a family of instances :math:`x`, :func:`search`
looks for :math:`\sup_x m(x)/b(x)` in four steps (``method="global"``, the default):

1. **explore** (a tenth of the budget): points of the family drawn from a generator seeded
   by ``seed`` (each integer at its lowest value with probability 1/2, else uniform in its
   range: worst cases are often small; each real at an end of its box with probability 0.2,
   else uniform in it);
2. **global search** (the rest but the polish): CMA-ES (Hansen's ``cma``) over the reals
   and the integers with a fixed range that the reals do not depend on (a horizon ``T``,
   local steps ``E``: moved as the reals are, rounded down from their coordinate), in
   coordinates that map each box or range to :math:`[0,1]`, the other integers fixed, from the
   smallest integer configuration and the best explored ones (``starts`` in all), by
   successive halving (three quarters of the stage: half of it shared by all the
   configurations, half by the better half of them), then the rest for the best
   configuration from its best point with a smaller initial step; restarts double the
   population (the IPOP rule);
3. **polish** (two fifths of the budget): each integer of the best point moved to the ends
   of its range and to its neighbours (kept if better), then bounded Nelder-Mead (scipy)
   from the best point, restarted while it improves;
4. **shrinking** of a counterexample found in steps 2-3 (at most one more budget): each
   ``size`` integer in turn is capped at smaller values (its lowest values first, then
   halving the distance to the current value) and steps 1-3 rerun with a fifth of the
   budget under the caps; then each real is rounded to the fewest decimals that keep the
   counterexample.

``method="local"`` is the earlier search, kept for comparison
(``benchmarks/bench_tightness.py``): a third of the budget on hypothesis draws steered by
``hypothesis.target`` toward large :math:`\log(m/b)` (a counterexample met there is shrunk
by hypothesis), the rest on Nelder-Mead from the best point of each of the ``starts`` best
integer configurations. Hypothesis mixes constants found in the loaded modules into its
draws, so its results may change with what else is imported; the default search draws from
its own generator and depends on the seed only.

Every point is judged by the report's verdict rule
(:func:`fedtheory.verdict.upper_bound_outcome`): a counterexample needs the measured value (the
lower 95% confidence limit for a Monte-Carlo family) above the bound plus the rounding
floor, and a point outside the theorem's hypotheses is never one (the optimisers see it as
the worst score). When the worst ratio reaches 1 within the rounding floor at a valid
instance, the bound is *attained* there.

A Monte-Carlo family compares the upper 95% confidence limit of the mean with the bound,
uses common random numbers (one seed for every point, so the objective is deterministic),
and re-measures the worst instance with independent replicates
(``seed + CONFIRMATION_OFFSET``): the search maximises over noise, so the fresh measurement
is the one to quote; a Monte-Carlo counterexample must violate the bound at both seeds.

The result is a :class:`SearchResult`, saved as a JSON that :func:`reproduce` re-evaluates.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from fedtheory.constraints import Bool, Instance, Integer, Location, MappingOf, Option, declare
from fedtheory.constraints import Real as RealIn
from fedtheory.errors import ParameterError
from fedtheory.io import atomic_write_text
from fedtheory.tightness.family import Evaluation, Family
from fedtheory.tightness.seeded import seed_only_draws

DEFAULT_BUDGET = 400
"""Evaluations of the measured side per search. A counterexample's shrinking spends more:
hypothesis's shrinker (a few dozen evaluations in practice) or step 4 (at most one more
budget)."""
METHODS = ("global", "local")
CONFIRMATION_OFFSET = 7919
"""A Monte-Carlo worst instance is re-measured with seed ``seed + CONFIRMATION_OFFSET``."""
_DECIMALS = 7  # a counterexample's reals are rounded to at most this many decimals
_EXPLORE = 0.1  # share of the budget for step 1 (global search)
_PROBE = 0.75  # share of step 2 for the successive halving over the integer configurations
_POLISH = 0.4  # share of the budget for step 3
_SIGMA_FINAL = 0.1  # CMA-ES's initial step on the best configuration (box coordinates)


@dataclass(frozen=True)
class Point:
    """A point of a family with its evaluation; ``instance``, set by :func:`search` on the
    worst point and the counterexample, is the point decoded in the theorem's symbols
    (:meth:`Family.describe`: a drawn instance, not its raw ``choice[k]`` values)."""

    integers: Mapping[str, int]
    reals: Mapping[str, float]
    evaluation: Evaluation
    instance: Mapping | None = None

    @property
    def ratio(self) -> float:
        return self.evaluation.ratio

    def vector(self) -> np.ndarray:
        """The reals in the family's order ``[n]``."""
        return np.array(list(self.reals.values()), dtype=float)

    @declare(family=Instance(Family, none=True))
    def as_dict(self, family: Family | None = None) -> dict:
        """The point as JSON-able data; with ``family``, also its instance in the paper's
        symbols (:meth:`Family.describe`)."""
        out = {"integers": dict(self.integers), "reals": dict(self.reals)}
        if family is not None:
            out["instance"] = family.describe(self.integers, self.vector())
        return {**out, **self.evaluation.as_dict()}


@dataclass(frozen=True)
class SearchResult:
    """The largest ratio found, the instance attaining it, and a counterexample if any."""

    key: str
    title: str
    reference: str
    description: str
    tightness: str
    supremum: float | None  # proved supremum of measured / bound over the family
    scale: float
    seed: int
    budget: int
    method: str
    evaluations: int
    monte_carlo: bool
    worst: Point
    counterexample: Point | None
    confirmation: Evaluation | None  # Monte Carlo: the worst instance at an independent seed
    worst_instance: Mapping  # the worst instance in the paper's symbols
    counterexample_instance: Mapping | None
    module: str | None = None  # the user file that registered the family
    failures: tuple[str, ...] = ()  # where and how the measurement failed (recorded points)
    outside: int = 0  # points outside the theorem's hypotheses (never measured)
    measured: int = 0  # points measured: inside the hypotheses, the measurement a number

    @declare(share=RealIn(0.0, 1.0))
    def measured_too_few(self, share: float = 0.0) -> bool:
        """Fewer points measured than ``share`` of the evaluations, or none at all: the
        search proves nothing (``fedtheory tightness`` exits with status 4)."""
        return self.measured == 0 or self.measured < share * self.evaluations

    @property
    def ratio(self) -> float:
        """The worst ratio to quote: the independent re-measurement for a Monte-Carlo
        family, else the largest ratio found."""
        return self.worst.ratio if self.confirmation is None else self.confirmation.ratio

    @property
    def attained(self) -> bool:
        """measured = bound within the rounding floor at a valid instance (deterministic)."""
        return self.confirmation is None and self.worst.evaluation.attained

    @property
    def reached(self) -> float | None:
        """The worst ratio as a fraction of the proved supremum (None without one)."""
        return None if self.supremum is None else self.ratio / self.supremum

    def summary(self) -> str:
        """One line: the worst ratio, with the proved supremum and *attained* if so."""
        quoted = self.worst.evaluation if self.confirmation is None else self.confirmation
        text = f"worst ratio {quoted.ratio_text()}"
        if self.supremum is not None:
            text = (
                f"proved supremum {self.supremum:g}, reached {quoted.ratio_text()}"
                f" ({100 * self.reached:.2f}% of it)"
            )
        return text + ("; attained" if self.attained else "")

    def point_lines(self) -> list[str]:
        """What was not measured, when anything was: the points outside the hypotheses (and
        their rate) and those where the measurement failed (the first of them in full)."""
        lines = []
        if not self.measured:
            lines.append(f"nothing measured: none of the {self.evaluations} points was measured")
        if self.outside:
            lines.append(
                f"outside the hypotheses: {self.outside} of {self.evaluations} points "
                f"({100 * self.outside / self.evaluations:.0f}%), not measured"
            )
        if self.failures:
            lines.append(
                f"the measurement failed at {len(self.failures)} of {self.evaluations} points "
                f"(recorded; the search went on); first: {self.failures[0]}"
            )
        return lines

    def counterexample_lines(self) -> list[str]:
        """The counterexample as the CLI prints it: measured, bound, ratio and excess, the
        instance in the paper's symbols and its constants (``[]`` without one)."""
        cex = self.counterexample
        if cex is None:
            return []
        c = cex.evaluation
        constants = {k: v for k, v in c.constants.items() if k not in cex.integers}
        return [
            f"COUNTEREXAMPLE (shrunk): measured {c.measured:.6g} > bound {c.bound:.6g} "
            f"(ratio {c.ratio_text()}): {c.excess()}",
            f"  instance: {format_values(self.counterexample_instance)}",
            f"  constants: {format_values(constants)}",
        ]

    def as_dict(self) -> dict:
        from fedtheory.sim.record import library_versions

        def point(p, instance):
            return None if p is None else {**p.as_dict(), "instance": dict(instance)}

        return {
            "key": self.key,
            "title": self.title,
            "reference": self.reference,
            "description": self.description,
            "tightness": self.tightness,
            "supremum": self.supremum,
            "scale": self.scale,
            "seed": self.seed,
            "budget": self.budget,
            "method": self.method,
            "evaluations": self.evaluations,
            "monte_carlo": self.monte_carlo,
            "ratio": self.ratio,
            "attained": self.attained,
            "worst": point(self.worst, self.worst_instance),
            "confirmation": None if self.confirmation is None else self.confirmation.as_dict(),
            "counterexample": point(self.counterexample, self.counterexample_instance),
            "module": self.module,
            "failures": list(self.failures),
            "outside": self.outside,
            "measured": self.measured,
            "versions": library_versions(),
            "code": source_digest(),
        }

    @declare(path=Location(suffixes=(".json",), writable=True))
    def save(self, path) -> Path:
        """Write :meth:`as_dict` as JSON (encoded in full first, then written atomically: a
        failure leaves no file); returns the path."""
        if path.is_dir():
            raise ParameterError(
                f"The 'path' parameter of SearchResult.save must be a file path, not a folder. "
                f"Got '{path}' (a folder) instead."
            )
        atomic_write_text(path, json.dumps(self.as_dict(), indent=2))
        return path


def _value(v) -> str:
    if isinstance(v, np.ndarray) and v.ndim == 0:  # a scalar array (a measured constant)
        v = v.item()
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


@declare(values=MappingOf())
def format_values(values: Mapping) -> str:
    """``name=value, ...`` with floats to 6 significant digits (an instance, constants)."""
    return ", ".join(f"{k}={_value(v)}" for k, v in values.items())


@cache
def source_digest() -> str:
    """SHA-256 of the ``fedtheory`` sources (the code version a saved search ran with)."""
    import fedtheory

    h = hashlib.sha256()
    for path in sorted(Path(fedtheory.__file__).parent.rglob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()


class _Violation(Exception):
    """Raised inside the search when a point violates the bound (hypothesis shrinks it)."""

    def __init__(self, point: Point) -> None:
        super().__init__(point)
        self.point = point


class _Recorder:
    """Evaluates points, counts the evaluations and remembers every point."""

    def __init__(self, family: Family, seed: int) -> None:
        self.family, self.seed = family, seed
        self.points: list[Point] = []

    def __call__(self, integers: Mapping[str, int], x: np.ndarray) -> Point:
        reals = self.family.reals(integers)
        ev = self.family.measure(integers, x, self.seed)
        point = Point(dict(integers), {r.name: float(v) for r, v in zip(reals, x, strict=True)}, ev)
        self.points.append(point)
        return point

    def spent(self, since: int) -> int:
        return len(self.points) - since

    def best(self, since: int = 0) -> Point:
        return max(self.points[since:], key=lambda p: p.evaluation.score)

    @property
    def worst(self) -> Point:
        return self.best(0)


def _points(family: Family, caps: Mapping[str, int]):
    """Hypothesis strategy of ``(integers, reals [n])`` inside the family (integers capped)."""
    from hypothesis import strategies as st

    @st.composite
    def draw_point(draw):
        ints: dict[str, int] = {}
        for spec in family.integers:
            high = min(spec.upper(ints), caps.get(spec.name, spec.upper(ints)))
            ints[spec.name] = draw(st.integers(spec.low, max(spec.low, high)))
        x = [draw(st.floats(r.low, r.high, allow_nan=False)) for r in family.reals(ints)]
        return ints, np.array(x, dtype=float)

    return draw_point()


def _explore(family, record, examples: int, seed: int, caps) -> Point | None:
    """Step 1 of the local search: target-guided hypothesis draws; returns the shrunk
    counterexample if one is drawn."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings, target
    from hypothesis import seed as hypothesis_seed

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.target, Phase.shrink),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(_points(family, caps))
    def probe(drawn):
        point = record(*drawn)
        target(point.evaluation.score, label="log(measured / bound)")
        if point.evaluation.violated:
            raise _Violation(point)

    from hypothesis.errors import HypothesisDeprecationWarning

    try:
        with warnings.catch_warnings():
            # hypothesis compares the global `random` state before and after each draw; the
            # strategy draws only integers and floats, but in a Dask worker (validate
            # --workers) the worker's own threads use `random` meanwhile: a false alarm
            warnings.filterwarnings(
                "ignore",
                message="Do not use the `random` module inside strategies",
                category=HypothesisDeprecationWarning,
            )
            with seed_only_draws():
                probe()
    except _Violation as found:
        return found.point
    return None


def _sample(family, record, examples: int, rng: np.random.Generator, caps) -> Point | None:
    """Step 1 of the global search: ``examples`` points drawn from ``rng`` (each integer
    at its lowest value with probability 1/2, else uniform in its range, capped; each real
    at the low end of its box with probability 0.1, at the high end with probability 0.1,
    else uniform: worst cases often sit on a face); returns the first counterexample met."""
    for _ in range(examples):
        ints: dict[str, int] = {}
        for spec in family.integers:
            high = min(spec.upper(ints), caps.get(spec.name, spec.upper(ints)))
            drawn = int(rng.integers(spec.low, max(spec.low, high) + 1))
            ints[spec.name] = spec.low if rng.random() < 0.5 else drawn
        low, high = _boxes(family, ints)
        u = rng.random((2, low.size))
        x = np.where(u[0] < 0.1, low, np.where(u[0] > 0.9, high, low + u[1] * (high - low)))
        point = record(ints, x)
        if point.evaluation.violated:
            return point
    return None


def _boxes(family, integers) -> tuple[np.ndarray, np.ndarray]:
    boxes = np.array([(r.low, r.high) for r in family.reals(integers)], dtype=float)
    return (boxes[:, 0], boxes[:, 1]) if boxes.size else (np.zeros(0), np.zeros(0))


def _inward_simplex(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Nelder-Mead's first simplex ``[n+1, n]``: ``x`` and one step of a tenth of the box
    along each axis, toward the box's interior (hypothesis favours the boxes' ends; a step
    outward would be clipped to a flat simplex that never leaves the face)."""
    step = 0.1 * (high - low) * np.where(x - low < high - x, 1.0, -1.0)
    return np.vstack([x, x + np.diag(step)])


def _local(family, record, start: Point, evaluations: int) -> Point | None:
    """Bounded Nelder-Mead on the reals from ``start``; returns a counterexample if one is
    met (the optimisation stops there)."""
    from scipy.optimize import minimize

    low, high = _boxes(family, start.integers)
    n = low.size
    if not n or evaluations < 2:
        return None

    def loss(x):
        point = record(start.integers, np.clip(x, low, high))
        if point.evaluation.violated:
            raise _Violation(point)
        return -point.evaluation.score

    x, first = start.vector(), len(record.points)
    try:  # restarts: Nelder-Mead's simplex collapses; a fresh one around the best point helps
        while (left := evaluations - record.spent(first)) > n + 1:
            options = {
                "maxfev": left,
                "xatol": 1e-12,
                "fatol": 1e-14,
                "adaptive": n > 4,
                "initial_simplex": _inward_simplex(x, low, high),
            }
            bounds = list(zip(low, high, strict=True))
            res = minimize(loss, x, method="Nelder-Mead", bounds=bounds, options=options)
            if np.array_equal(np.clip(res.x, low, high), x):
                break
            x = np.clip(res.x, low, high)
    except _Violation as found:
        return found.point
    return None


def _movable(family, integers: Mapping[str, int], caps) -> list[tuple]:
    """The integers that step 2 moves with the reals: ``(spec, low, high)`` of each integer
    with a fixed range (capped by ``caps``) whose value leaves the reals unchanged (their
    names and boxes at both ends of its range equal those at ``integers``); an integer
    that the reals depend on (a number of clients giving one weight each) stays fixed."""
    reals, out = family.reals(integers), []
    for spec in family.integers:
        if callable(spec.high):
            continue
        high = min(spec.high, caps.get(spec.name, spec.high))
        if high <= spec.low:
            continue
        ends = ({**integers, spec.name: v} for v in (spec.low, high))
        if all(family.reals(e) == reals for e in ends):
            out.append((spec, spec.low, high))
    return out


def _cma(
    family, record, start: Point, evaluations: int, seed: int, sigma: float = 0.3, caps=None
) -> Point | None:
    r"""Step 2 from ``start``: CMA-ES in box coordinates :math:`[0,1]^{n+m}` over the reals
    and the ``m`` integers that leave the reals unchanged (:func:`_movable`; coordinate
    :math:`u` of an integer in :math:`[a,b]` is the integer :math:`a+\lfloor u(b-a+1)
    \rfloor`, at most :math:`b`), restarted with a doubled population while ``evaluations``
    last; returns a counterexample if one is met."""
    import cma

    low, high = _boxes(family, start.integers)
    moved = _movable(family, start.integers, caps or {})
    n = low.size + len(moved)
    if n < 2:  # CMA-ES needs two dimensions; one real is Nelder-Mead's
        return _local(family, record, start, evaluations)
    width = np.where(high > low, high - low, 1.0)
    first, popsize, restart = len(record.points), 4 + int(3 * math.log(n)), 0

    def coordinates(point: Point) -> np.ndarray:
        u = [(point.integers[s.name] - a + 0.5) / (b - a + 1) for s, a, b in moved]
        return np.clip(np.concatenate([(point.vector() - low) / width, u]), 0.0, 1.0)

    def at(z: np.ndarray) -> tuple[dict, np.ndarray]:
        z = np.clip(z, 0.0, 1.0)
        ints = dict(start.integers)
        for (s, a, b), u in zip(moved, z[low.size :], strict=True):
            ints[s.name] = min(a + int(u * (b - a + 1)), b)
        return ints, low + width * z[: low.size]

    x0 = coordinates(start)
    try:
        while (left := evaluations - record.spent(first)) >= popsize:
            options = {
                "bounds": [0.0, 1.0],
                "seed": int(seed) * 1009 + restart + 1,
                "verbose": -9,
                "maxfevals": left,
                "popsize": popsize,
                "tolfun": 1e-13,
                "tolx": 1e-13,
            }
            es = cma.CMAEvolutionStrategy(x0, sigma, options)
            while not es.stop() and evaluations - record.spent(first) >= es.popsize:
                xs = es.ask()
                scores = []
                for z in xs:
                    point = record(*at(z))
                    if point.evaluation.violated:
                        raise _Violation(point)
                    scores.append(-point.evaluation.score)
                es.tell(xs, scores)
            x0 = coordinates(record.best(first))
            popsize, restart = 2 * popsize, restart + 1
    except _Violation as found:
        return found.point
    return None


def _configurations(family, record, points, starts: int, caps) -> list[Point]:
    """Start points of step 2: the smallest integer configuration (every integer at its
    lowest value; worst cases and counterexamples are often small), then the best point of
    each of the next best explored configurations, ``starts`` in all."""
    smallest: dict[str, int] = {}
    for spec in family.integers:
        smallest[spec.name] = spec.low
    ranked = sorted(points, key=lambda p: p.evaluation.score, reverse=True)
    mine = [p for p in ranked if p.integers == smallest]
    if mine:
        distinct = [mine[0]]
    else:  # not drawn: the centre of its boxes
        low, high = _boxes(family, smallest)
        distinct = [record(smallest, 0.5 * (low + high))]
    for p in ranked:
        if len(distinct) == starts:
            break
        if all(p.integers != q.integers for q in distinct):
            distinct.append(p)
    return distinct


def _search_once(
    family, record, budget: int, seed: int, starts: int, caps, method: str
) -> tuple[Point | None, bool]:
    """Steps 1-3 with ``budget`` evaluations: a counterexample (or None) and whether
    hypothesis found (and so shrank) it."""
    first = len(record.points)
    if method == "local":
        found = _explore(family, record, max(budget // 3, 1), seed, caps)
        if found is not None:
            return found, True
    else:
        rng = np.random.default_rng([seed, len(record.points)])
        found = _sample(family, record, max(int(_EXPLORE * budget), 1), rng, caps)
        if found is not None:
            return found, False
    configs = _configurations(family, record, record.points[first:], starts, caps)
    if method == "local":
        for i, start in enumerate(configs):
            left = budget - record.spent(first)
            found = _local(family, record, start, left // (len(configs) - i))
            if found is not None:
                return found, False
        return None, False
    polish = int(_POLISH * budget)
    probe = int(_PROBE * (budget - record.spent(first) - polish))
    alive = configs
    while len(alive) > 1:  # successive halving: equal shares, then the better half again
        share, ranked = probe // (2 * len(alive)), []
        for start in alive:
            since = len(record.points)
            found = _cma(family, record, start, share, seed + len(alive), caps=caps)
            if found is not None:
                return found, False
            ranked.append(record.best(since) if record.spent(since) else start)
        ranked.sort(key=lambda p: p.evaluation.score, reverse=True)
        alive = ranked[: (len(alive) + 1) // 2] if len(alive) > 2 else ranked[:1]
    best = record.best(first)  # the rest for the best configuration, then the polish
    left = budget - record.spent(first) - polish
    found = _cma(family, record, best, left, seed + 1, sigma=_SIGMA_FINAL, caps=caps)
    if found is None:
        found = _integer_moves(family, record, record.best(first), caps)
    if found is None:
        found = _local(family, record, record.best(first), budget - record.spent(first))
    return found, False


def _integer_moves(family, record, best: Point, caps) -> Point | None:
    """Step 3's start: each integer in turn moved to its ends and to its neighbours (the
    reals kept, where their number does not change), kept when the score rises; returns a
    counterexample if one is met."""
    for i, spec in enumerate(family.integers):
        before = {s.name: best.integers[s.name] for s in family.integers[:i]}
        high = min(spec.upper(before), caps.get(spec.name, spec.upper(before)))
        now = best.integers[spec.name]
        for value in sorted({spec.low, high, now - 1, now + 1} - {now}):
            if not spec.low <= value <= high:
                continue
            ints = {**best.integers, spec.name: value}
            if any(ints[s.name] > s.upper(ints) for s in family.integers):
                continue
            if len(family.reals(ints)) != len(best.reals):
                continue
            trial = record(ints, best.vector())
            if trial.evaluation.violated:
                return trial
            if trial.evaluation.score > best.evaluation.score:
                best = trial
    return None


def _smaller(low: int, current: int) -> list[int]:
    """Candidate caps below ``current``: the lowest values, then halving the distance."""
    out = {v for v in (low, low + 1, low + 2) if v < current}
    gap = current - low
    while gap > 1:
        gap //= 2
        out.add(current - gap)
    return sorted(v for v in out if low <= v < current)


def _minimise_size(
    family, record, found: Point, budget: int, seed: int, starts: int, method: str = "global"
) -> Point:
    """Step 4: lower each ``size`` integer while a counterexample remains."""
    spent_from = len(record.points)
    for spec in family.integers:
        if not spec.size:
            continue
        for cap in _smaller(spec.low, found.integers[spec.name]):
            if record.spent(spent_from) >= budget:
                return found
            caps = {**found.integers, spec.name: cap}
            smaller, _ = _search_once(
                family, record, max(budget // 5, 10), seed, starts, caps, method
            )
            if smaller is not None:
                found = smaller
                break
    return found


def _short_decimals(family, record, found: Point) -> Point:
    """Step 4, reals: each real in turn is rounded to the fewest decimals (0, 1, ...) that
    keep the counterexample (and stay in its box)."""
    low, high = _boxes(family, found.integers)
    for i in range(low.size):
        x = found.vector()
        for decimals in range(_DECIMALS):
            value = round(float(x[i]), decimals)
            if value == x[i]:
                break
            if not low[i] <= value <= high[i]:
                continue
            trial = record(found.integers, np.where(np.arange(x.size) == i, value, x))
            if trial.evaluation.violated:
                found = trial
                break
    return found


MAX_BUDGET, MAX_STARTS = 100_000, 100
"""Largest ``budget`` and ``starts`` of :func:`search` (caps its time: hours, not years)."""


class _Budget(Integer):
    """An evaluation budget in ``[3, MAX_BUDGET]``; its edge value for generated tests is the
    lowest only (the highest is 100 000 evaluations: minutes, by design)."""

    def edges(self, valid):
        return [(label, v) for label, v in super().edges(valid) if v != self.high]


@declare(
    family=Instance(Family),
    budget=_Budget(3, MAX_BUDGET),
    seed=Integer(0),
    starts=Integer(1, MAX_STARTS),
    shrink=Bool(),
    method=Option(*METHODS),
)
def search(
    family: Family,
    *,
    budget: int = DEFAULT_BUDGET,
    seed: int = 0,
    starts: int = 3,
    shrink: bool = True,
    method: str = "global",
) -> SearchResult:
    r"""Search ``family`` for the largest measured / bound (see the module docstring).

    Parameters
    ----------
    family : Family
        E.g. ``FAMILIES["cafed.theorem1"]``, ``scaled(FAMILIES[key], 0.1)`` for a
        deliberately false statement, or a family of your own theorem
        (:func:`fedtheory.tightness.theorem_family`).
    budget : int
        Evaluations of the measured side for steps 1-3 (shrinking a counterexample spends
        more, see ``DEFAULT_BUDGET``); the search stops at the first counterexample.
    seed : int
        Seeds hypothesis, CMA-ES and the Monte-Carlo replicates: same seed, same result.
    starts : int
        Integer configurations searched by step 2 (the ``starts`` best explored).
    shrink : bool
        Minimise the size and the decimals of a counterexample found by steps 2-3.
    method : {"global", "local"}
        ``"global"``: steps 1-4 (CMA-ES, then Nelder-Mead); ``"local"``: the earlier search
        (hypothesis, then Nelder-Mead only), kept for comparison.

    Examples
    --------
    >>> from fedtheory.tightness import FAMILIES, search
    >>> result = search(FAMILIES["divergences.tv_chi_square"], budget=60, seed=0)
    >>> bool(0.99 < result.ratio), result.counterexample is None
    (True, True)
    """
    record = _Recorder(family, seed)
    found, shrunk = _search_once(family, record, budget, seed, starts, {}, method)
    if found is not None and shrink and not shrunk:
        found = _minimise_size(family, record, found, budget, seed, starts, method)
    if found is not None and shrink:
        found = _short_decimals(family, record, found)
    worst = record.worst
    confirmation = None
    if family.monte_carlo:
        confirmation = family.measure(worst.integers, worst.vector(), seed + CONFIRMATION_OFFSET)
        if found is not None:
            again = family.measure(found.integers, found.vector(), seed + CONFIRMATION_OFFSET)
            found = found if again.violated else None
    worst_instance = family.describe(worst.integers, worst.vector())
    worst = replace(worst, instance=worst_instance)
    if found is not None:
        found = replace(found, instance=family.describe(found.integers, found.vector()))
    return SearchResult(
        key=family.key,
        title=family.theorem.title,
        reference=family.theorem.reference,
        description=family.description,
        tightness=family.tightness,
        supremum=family.proved_supremum,
        scale=family.scale,
        seed=seed,
        budget=budget,
        method=method,
        evaluations=len(record.points),
        monte_carlo=family.monte_carlo,
        worst=worst,
        counterexample=found,
        confirmation=confirmation,
        worst_instance=worst_instance,
        counterexample_instance=None if found is None else found.instance,
        module=family.module,
        failures=tuple(p.evaluation.failure for p in record.points if p.evaluation.failure),
        outside=sum(not p.evaluation.valid and not p.evaluation.failure for p in record.points),
        measured=sum(p.evaluation.valid and not p.evaluation.failure for p in record.points),
    )


@declare(which=Option("worst", "counterexample"))
def reproduce(saved, *, which: str = "worst") -> Evaluation:
    """Re-evaluate an instance of a saved search (a path to its JSON, or the dict of
    :meth:`SearchResult.as_dict`) with the seed it was found with: ``which`` is
    ``"worst"`` or ``"counterexample"``. A user family is loaded again from the file that
    registered it (the JSON's ``module``)."""
    from fedtheory.tightness.custom import _family_of

    owner = "reproduce"
    try:
        data = json.loads(Path(saved).read_text()) if isinstance(saved, str | Path) else saved
    except (OSError, ValueError):  # missing, unreadable or not JSON
        raise ParameterError(
            f"The 'saved' parameter of {owner} must be a saved search (a readable JSON file or "
            f"its dict). Got {str(saved)[:80]!r} instead."
        ) from None
    family = _family_of(data, owner)
    point = data.get(which)
    if not isinstance(point, Mapping):
        raise ParameterError(
            f"The 'which' parameter of {owner} must name an instance the saved search holds. "
            f"Got {which!r} (absent) instead."
        )
    return family.measure(point["integers"], list(point["reals"].values()), data["seed"])
