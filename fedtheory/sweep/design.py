r"""What a sweep runs: named settings (a grid or a list of points) times replicate seeds.

A *point* is a dict of JSON scalars (``{"lam": 0.9, "participation": 0.3}``); a *task* is a
point with a replicate index and its seed. The seed of a task is a pure function of the
sweep's seed, the point's settings and the replicate (counter-based, as in
:mod:`fedtheory.rng`), never of the task's position or of the executor: the same task gets
the same seed whichever machine runs it, in whatever order, and adding points to a grid
leaves the seeds of the others unchanged.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import MAX_SIZE, Integer, JsonMapping, Size, declare
from fedtheory.errors import ParameterError

__all__ = ["Design", "Task", "grid", "point_seed", "points"]

STREAM = 101
"""Stream number of point seeds, apart from those of :mod:`fedtheory.rng` (not imported
here: it imports torch, and a sweep's workers need not)."""

RESERVED = ("replicate", "seed", "sample")
"""Column names of every sweep table besides the settings and the results."""

TASK_BYTES = 2048
"""Bytes a sweep keeps per task, roughly (the task, its seed and key, its row of the table
and its share of the table file): what :func:`check_tasks` multiplies by the number of
tasks."""


def check_tasks(num_points: int, replicates: int, owner: str) -> None:
    """Refuse a design of ``num_points`` points times ``replicates`` before it is built:
    more than ``MAX_SIZE`` tasks, or more memory (``TASK_BYTES`` a task) than the budget of
    :mod:`fedtheory.budget` (``FEDTHEORY_MAX_MEMORY``)."""
    tasks = num_points * replicates
    what = f"{num_points} points x {replicates} replicates = {tasks} tasks"
    if tasks > MAX_SIZE:
        raise ParameterError(
            f"The design of {owner} must have at most {MAX_SIZE} tasks. Got {what} instead."
        )
    check_bytes(tasks * TASK_BYTES, owner, what=f"{what} of about {TASK_BYTES} B",
                fixes="fewer points or replicates")  # fmt: skip


def canonical(point: Mapping) -> str:
    """The point as canonical JSON (sorted keys): its identity in seeds and result keys."""
    return json.dumps(dict(point), sort_keys=True, separators=(",", ":"))


@declare(seed=Integer(0), replicate=Integer(0))
def point_seed(seed: int, point: Mapping, replicate: int) -> int:
    r"""Seed of replicate ``replicate`` at ``point`` of a sweep with seed ``seed``.

    The SHA-256 of the point's canonical JSON, the sweep's seed, the stream
    ``STREAM`` and the replicate index feed a ``numpy.random.SeedSequence``, whose first
    64-bit word (top bit dropped) is the seed: a non-negative integer below :math:`2^{63}`.

    Examples
    --------
    >>> point_seed(0, {"lam": 0.5}, 0) == point_seed(0, {"lam": 0.5}, 0)
    True
    >>> point_seed(0, {"lam": 0.5}, 0) != point_seed(0, {"lam": 0.5}, 1)
    True
    """
    point = _check_point(point, "point", "point_seed")
    digest = hashlib.sha256(canonical(point).encode()).digest()
    words = np.frombuffer(digest[:16], dtype=np.uint32).tolist()
    state = np.random.SeedSequence([seed, STREAM, *words, replicate]).generate_state(
        1, dtype=np.uint64
    )
    return int(state[0] >> np.uint64(1))


@dataclass(frozen=True)
class Task:
    """One call of a sweep's function: ``fn(settings, seed)``.

    ``point`` holds the swept settings (the table's columns); ``settings`` the dict the
    function receives (the fixed settings updated with the point).
    """

    index: int  # position in the design (the table's row order)
    point: dict
    replicate: int
    seed: int
    settings: dict


@dataclass(frozen=True)
class Design:
    """Points (dicts of JSON scalars, all with the same names) times replicates.

    Build one with :func:`grid` or :func:`points`.
    """

    points: tuple[dict, ...]
    replicates: int
    seed: int

    @property
    def names(self) -> tuple[str, ...]:
        """The swept settings' names (the table's first columns)."""
        return tuple(self.points[0])

    def __len__(self) -> int:
        return len(self.points) * self.replicates

    @declare(fixed=JsonMapping())
    def tasks(self, fixed: Mapping | None = None) -> Iterator[Task]:
        """Every (point, replicate) in table order, with its seed; the function receives
        ``{**fixed, **point}`` (``fixed``: JSON settings, ``None`` for none)."""
        for i, point in enumerate(self.points):
            for r in range(self.replicates):
                yield Task(
                    index=i * self.replicates + r,
                    point=point,
                    replicate=r,
                    seed=point_seed(self.seed, point, r),
                    settings={**fixed, **point},
                )

    def __repr__(self) -> str:
        return (
            f"Design({len(self.points)} points over {list(self.names)} x {self.replicates} "
            f"replicates, seed={self.seed})"
        )


def _check_scalar(value: object, name: str, owner: str) -> object:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, str, int)) or (
        isinstance(value, Real) and np.isfinite(float(value))
    ):
        return float(value) if isinstance(value, Real) and not isinstance(value, int) else value
    raise ParameterError(
        f"The '{name}' parameter of {owner} must be a bool, int, finite float or str. "
        f"Got {value!r} instead."
    )


def _check_name(name: object, owner: str) -> str:
    if not isinstance(name, str) or not name or name in RESERVED:
        raise ParameterError(
            f"The setting names of {owner} must be non-empty strings other than {RESERVED}. "
            f"Got {name!r} instead."
        )
    return name


def _check_point(point: object, name: str, owner: str) -> dict:
    if not isinstance(point, Mapping) or not point:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be a non-empty dict of settings. "
            f"Got {point!r} instead."
        )
    return {
        _check_name(k, owner): _check_scalar(v, f"{name}[{k!r}]", owner) for k, v in point.items()
    }


@declare(replicates=Size(), seed=Integer(0))
def points(settings: Sequence[Mapping], *, replicates: int = 1, seed: int = 0) -> Design:
    """A design over an explicit list of points (dicts with the same setting names).

    Examples
    --------
    >>> points([{"lam": 0.0, "T": 50}, {"lam": 0.9, "T": 200}], replicates=4)
    Design(2 points over ['lam', 'T'] x 4 replicates, seed=0)
    """
    if isinstance(settings, (str, Mapping)) or not isinstance(settings, Sequence) or not settings:
        raise ParameterError(
            "The 'settings' parameter of points must be a non-empty list of dicts. "
            f"Got {settings!r} instead."
        )
    checked = tuple(_check_point(p, f"settings[{i}]", "points") for i, p in enumerate(settings))
    names = set(checked[0])
    for i, p in enumerate(checked):
        if set(p) != names:
            raise ParameterError(
                f"The 'settings' parameter of points must list dicts with the same names "
                f"{sorted(names)}. Got {sorted(p)} at position {i} instead."
            )
    check_tasks(len(checked), replicates, "points")
    if len({canonical(p) for p in checked}) != len(checked):
        raise ParameterError(
            "The 'settings' parameter of points must list distinct points. Got duplicates instead."
        )
    return Design(checked, replicates=replicates, seed=seed)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


@declare(replicates=Size(), seed=Integer(0))
def grid(axes: Mapping[str, Sequence], *, replicates: int = 1, seed: int = 0) -> Design:
    """The Cartesian product of named lists of values, last name varying fastest.

    Examples
    --------
    >>> d = grid({"lam": [0.0, 0.5, 0.9], "participation": [0.2, 0.5]}, replicates=8)
    >>> d, len(d)
    (Design(6 points over ['lam', 'participation'] x 8 replicates, seed=0), 48)
    """
    if not isinstance(axes, Mapping) or not axes:
        raise ParameterError(
            f"The 'axes' parameter of grid must be a non-empty dict of lists. Got {axes!r} instead."
        )
    sizes = []
    for name, values in axes.items():
        if isinstance(values, (str, Mapping)) or not isinstance(values, Sequence) or not values:
            raise ParameterError(
                f"The 'axes[{name!r}]' parameter of grid must be a non-empty list of values. "
                f"Got {_shown(values)} instead."
            )
        distinct = len({json.dumps(_check_scalar(v, f"axes[{name!r}]", "grid")) for v in values})
        if distinct != len(values):
            raise ParameterError(
                f"The 'axes[{name!r}]' parameter of grid must list distinct values. Got "
                f"{len(values)} values of which {len(values) - distinct} repeat earlier ones "
                "instead."
            )
        sizes.append(len(values))
    check_tasks(math.prod(sizes), replicates, "grid")
    names = list(axes)
    combos = [dict(zip(names, c, strict=True)) for c in itertools.product(*axes.values())]
    return points(combos, replicates=replicates, seed=seed)
