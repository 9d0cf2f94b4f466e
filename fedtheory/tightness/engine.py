r"""The tightness search: the instance of a family that maximises measured / bound.

For an upper bound :math:`m(x)\le b(x)` on a family of instances :math:`x` satisfying its
hypotheses, :func:`search` looks for :math:`\sup_x m(x)/b(x)` in three steps:

1. **explore** (a third of the budget): hypothesis draws points of the family
   (``Integer`` ranges, ``Real`` boxes) and ``hypothesis.target`` steers the draws toward
   large :math:`\log(m/b)`; a point with :math:`m>b` (a counterexample) is raised, so
   hypothesis *shrinks* it (fewer clients, shorter horizon, simpler reals) before it is
   reported;
2. **local optimisation** (the rest): from the best point of each of the ``starts`` best
   integer configurations, Nelder-Mead (``scipy.optimize.minimize``, bounded to the boxes,
   first simplex pointing into the box, restarted while it improves) maximises
   :math:`\log(m/b)` over the reals with the integers fixed; the boxes are the
   reparametrisation that keeps the hypotheses true, so every iterate is a valid instance;
3. **size minimisation** of a counterexample found in step 2 (at most one more budget):
   each ``size`` integer in turn is capped at smaller values (its lowest values first, then
   halving the distance to the current value) and steps 1-2 are rerun with a fifth of the
   budget under the caps; the smallest instance still violating the bound is kept.

A Monte-Carlo family compares the upper 95% confidence limit of the mean with the bound
(:class:`~fedtheory.tightness.family.Evaluation`), uses common random numbers (one seed for
every point, so the objective is deterministic), and re-measures the worst instance with
independent replicates (``seed + CONFIRMATION_OFFSET``): the search maximises over noise,
so the fresh measurement is the one to quote; a Monte-Carlo counterexample must violate the
bound at both seeds.

The result is a :class:`SearchResult`, saved as a JSON that :func:`reproduce` re-evaluates.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisDeprecationWarning
from scipy.optimize import minimize

from fedtheory.errors import ParameterError
from fedtheory.io import atomic_write_text
from fedtheory.params import check_bool, check_instance, check_int, check_seed
from fedtheory.tightness.family import Evaluation, Family

DEFAULT_BUDGET = 300
"""Evaluations of the measured side per search. A counterexample's shrinking spends more:
hypothesis's shrinker (a few dozen evaluations in practice) or step 3 (at most one more
budget)."""
CONFIRMATION_OFFSET = 7919
"""A Monte-Carlo worst instance is re-measured with seed ``seed + CONFIRMATION_OFFSET``."""
_LOG_CAP = 700.0  # log(ratio) is clipped to [-700, 700] (ratio 0 or inf)


@dataclass(frozen=True)
class Point:
    """A point of a family with its evaluation."""

    integers: Mapping[str, int]
    reals: Mapping[str, float]
    evaluation: Evaluation

    @property
    def ratio(self) -> float:
        return self.evaluation.ratio

    def vector(self) -> np.ndarray:
        """The reals in the family's order ``[n]``."""
        return np.array(list(self.reals.values()), dtype=float)

    def as_dict(self) -> dict:
        return {
            "integers": dict(self.integers),
            "reals": dict(self.reals),
            **self.evaluation.as_dict(),
        }


@dataclass(frozen=True)
class SearchResult:
    """The largest ratio found, the instance attaining it, and a counterexample if any."""

    key: str
    title: str
    reference: str
    description: str
    tightness: str
    scale: float
    seed: int
    budget: int
    evaluations: int
    monte_carlo: bool
    worst: Point
    counterexample: Point | None
    confirmation: Evaluation | None  # Monte Carlo: the worst instance at an independent seed

    @property
    def ratio(self) -> float:
        """The worst ratio to quote: the independent re-measurement for a Monte-Carlo
        family, else the largest ratio found."""
        return self.worst.ratio if self.confirmation is None else self.confirmation.ratio

    def as_dict(self) -> dict:
        from fedtheory.sim.record import library_versions

        return {
            "key": self.key,
            "title": self.title,
            "reference": self.reference,
            "description": self.description,
            "tightness": self.tightness,
            "scale": self.scale,
            "seed": self.seed,
            "budget": self.budget,
            "evaluations": self.evaluations,
            "monte_carlo": self.monte_carlo,
            "ratio": self.ratio,
            "worst": self.worst.as_dict(),
            "confirmation": None if self.confirmation is None else self.confirmation.as_dict(),
            "counterexample": None
            if self.counterexample is None
            else self.counterexample.as_dict(),
            "versions": library_versions(),
            "code": source_digest(),
        }

    def save(self, path) -> Path:
        """Write :meth:`as_dict` as JSON (atomically); returns the path."""
        path = Path(path)
        atomic_write_text(path, json.dumps(self.as_dict(), indent=2))
        return path


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


def _score(ratio: float) -> float:
    """log(ratio), clipped so that 0 and inf stay finite (hypothesis.target needs it)."""
    if ratio <= 0:
        return -_LOG_CAP
    return float(np.clip(math.log(ratio), -_LOG_CAP, _LOG_CAP))


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

    @property
    def worst(self) -> Point:
        return max(self.points, key=lambda p: p.ratio)


def _points(family: Family, caps: Mapping[str, int]):
    """Hypothesis strategy of ``(integers, reals [n])`` inside the family (integers capped)."""

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
    """Step 1: target-guided draws; returns the shrunk counterexample if one is drawn."""

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
        target(_score(point.ratio), label="log(measured / bound)")
        if point.evaluation.violated:
            raise _Violation(point)

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
            probe()
    except _Violation as found:
        return found.point
    return None


def _inward_simplex(x: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Nelder-Mead's first simplex ``[n+1, n]``: ``x`` and one step of a tenth of the box
    along each axis, toward the box's interior (hypothesis favours the boxes' ends; a step
    outward would be clipped to a flat simplex that never leaves the face)."""
    step = 0.1 * (high - low) * np.where(x - low < high - x, 1.0, -1.0)
    return np.vstack([x, x + np.diag(step)])


def _local(family, record, start: Point, evaluations: int) -> Point | None:
    """Step 2 from ``start``: bounded Nelder-Mead on the reals; returns a counterexample if
    one is met (the optimisation stops there)."""
    boxes = [(r.low, r.high) for r in family.reals(start.integers)]
    if not boxes or evaluations < 2:
        return None

    def loss(x):
        point = record(start.integers, np.clip(x, low, high))
        if point.evaluation.violated:
            raise _Violation(point)
        return -_score(point.ratio)

    low, high = np.array(boxes).T
    x, first = start.vector(), len(record.points)
    try:  # restarts: Nelder-Mead's simplex collapses; a fresh one around the best point helps
        while (left := evaluations - (len(record.points) - first)) > len(boxes) + 1:
            options = {
                "maxfev": left,
                "xatol": 1e-12,
                "fatol": 1e-14,
                "adaptive": len(boxes) > 4,
                "initial_simplex": _inward_simplex(x, low, high),
            }
            res = minimize(loss, x, method="Nelder-Mead", bounds=boxes, options=options)
            if np.array_equal(np.clip(res.x, low, high), x):
                break
            x = np.clip(res.x, low, high)
    except _Violation as found:
        return found.point
    return None


def _search_once(
    family, record, budget: int, seed: int, starts: int, caps
) -> tuple[Point | None, bool]:
    """Steps 1-2 with ``budget`` evaluations: a counterexample (or None) and whether
    hypothesis found (and so shrank) it."""
    first = len(record.points)
    found = _explore(family, record, max(budget // 3, 1), seed, caps)
    if found is not None:
        return found, True
    tried = sorted(record.points[first:], key=lambda p: p.ratio, reverse=True)
    distinct: list[Point] = []  # the best point of each of the best integer configurations
    for p in tried:
        if all(p.integers != q.integers for q in distinct):
            distinct.append(p)
        if len(distinct) == starts:
            break
    for i, start in enumerate(distinct):
        left = budget - (len(record.points) - first)
        found = _local(family, record, start, left // (len(distinct) - i))
        if found is not None:
            return found, False
    return None, False


def _smaller(low: int, current: int) -> list[int]:
    """Candidate caps below ``current``: the lowest values, then halving the distance."""
    out = {v for v in (low, low + 1, low + 2) if v < current}
    gap = current - low
    while gap > 1:
        gap //= 2
        out.add(current - gap)
    return sorted(v for v in out if low <= v < current)


def _minimise_size(family, record, found: Point, budget: int, seed: int, starts: int) -> Point:
    """Step 3: lower each ``size`` integer while a counterexample remains."""
    spent_from = len(record.points)
    for spec in family.integers:
        if not spec.size:
            continue
        for cap in _smaller(spec.low, found.integers[spec.name]):
            if len(record.points) - spent_from >= budget:
                return found
            caps = {**found.integers, spec.name: cap}
            smaller, _ = _search_once(family, record, max(budget // 5, 10), seed, starts, caps)
            if smaller is not None:
                found = smaller
                break
    return found


def search(
    family: Family,
    *,
    budget: int = DEFAULT_BUDGET,
    seed: int = 0,
    starts: int = 3,
    shrink: bool = True,
) -> SearchResult:
    r"""Search ``family`` for the largest measured / bound (see the module docstring).

    Parameters
    ----------
    family : Family
        E.g. ``FAMILIES["cafed.theorem1"]``, or ``scaled(FAMILIES[key], 0.1)`` for a
        deliberately false statement.
    budget : int
        Evaluations of the measured side for steps 1-2 (shrinking a counterexample spends
        more, see ``DEFAULT_BUDGET``); the search stops at the first counterexample.
    seed : int
        Seeds hypothesis and the Monte-Carlo replicates: same seed, same result.
    starts : int
        Local optimisations from the best point of each of the ``starts`` best integer
        configurations explored.
    shrink : bool
        Minimise the size of a counterexample found by the local optimisation.

    Examples
    --------
    >>> from fedtheory.tightness import FAMILIES, search
    >>> result = search(FAMILIES["divergences.tv_chi_square"], budget=60, seed=0)
    >>> bool(0.99 < result.ratio <= 1.0), result.counterexample is None
    (True, True)
    """
    owner = "tightness.search"
    family = check_instance(family, Family, "family", owner)
    budget = check_int(budget, "budget", owner, low=3)
    seed = check_seed(seed, owner)
    starts = check_int(starts, "starts", owner, low=1)
    shrink = check_bool(shrink, "shrink", owner)
    record = _Recorder(family, seed)
    found, shrunk = _search_once(family, record, budget, seed, starts, {})
    if found is not None and shrink and not shrunk:
        found = _minimise_size(family, record, found, budget, seed, starts)
    worst = record.worst
    confirmation = None
    if family.monte_carlo:
        confirmation = family.measure(worst.integers, worst.vector(), seed + CONFIRMATION_OFFSET)
        if found is not None:
            again = family.measure(found.integers, found.vector(), seed + CONFIRMATION_OFFSET)
            found = found if again.violated else None
    return SearchResult(
        key=family.key,
        title=family.theorem.title,
        reference=family.theorem.reference,
        description=family.description,
        tightness=family.tightness,
        scale=family.scale,
        seed=seed,
        budget=budget,
        evaluations=len(record.points),
        monte_carlo=family.monte_carlo,
        worst=worst,
        counterexample=found,
        confirmation=confirmation,
    )


def reproduce(saved) -> Evaluation:
    """Re-evaluate the worst instance of a saved search (a path to its JSON, or the dict of
    :meth:`SearchResult.as_dict`) with the seed it was found with."""
    from fedtheory.tightness.families import FAMILIES
    from fedtheory.tightness.family import scaled

    data = json.loads(Path(saved).read_text()) if isinstance(saved, str | Path) else saved
    if not isinstance(data, dict) or data.get("key") not in FAMILIES:
        raise ParameterError(
            f"The 'saved' parameter of tightness.reproduce must be a saved search of one of "
            f"{sorted(FAMILIES)}. Got {str(saved)[:80]!r} instead."
        )
    family = FAMILIES[data["key"]]
    if data["scale"] != 1.0:
        family = scaled(family, data["scale"])
    worst = data["worst"]
    return family.measure(worst["integers"], list(worst["reals"].values()), data["seed"])
