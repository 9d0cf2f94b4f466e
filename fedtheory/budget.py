r"""The memory and time budgets every call in proportion to its arguments is checked against.

**Memory.** The budget is the ``max_memory`` argument of the call (bytes, or a string with
a suffix ``K``, ``M``, ``G``, ``T``: ``"8G"``), else the environment variable
``FEDTHEORY_MAX_MEMORY`` (same forms), else the memory the operating system can give this
process: Linux ``MemAvailable``, the room under a cgroup v2 limit, and the room under the
process's ``RLIMIT_AS`` (address space, against ``VmSize``) and ``RLIMIT_DATA`` (data
segment, against ``VmData``) where they are set, whichever is least. :func:`check_bytes`
refuses an estimate above it with a :class:`~fedtheory.errors.ParameterError` naming the
estimate, the budget and what to change -- before anything is allocated.

**Time.** The budget is the ``max_seconds`` argument of the call, else the environment
variable ``FEDTHEORY_MAX_SECONDS`` (seconds), else :data:`DEFAULT_SECONDS` (10 minutes).
:func:`seconds` estimates a call's time from its work -- rounds of a Python loop, cells of
a tensor ``[R, T, N, ...]`` touched, small matrix factorisations, floating-point operations
-- at the optimistic unit costs below (a fast, idle machine: the estimate is a lower bound,
so a call is refused only when it cannot finish within the budget), and
:func:`check_seconds` refuses an estimate above the budget the same way. Where that
optimistic estimate is above 1 % of the budget, a call whose cost grows with a size
(rounds, steps) also measures its cost per unit on this machine, now, with a probe of a few
units (:func:`unit_seconds`: milliseconds), and is refused if that many units at the
measured cost exceed the budget: the estimate then holds on a slow or loaded machine too.
A sweep's estimate
(:func:`task_seconds`) is the sum over its tasks of rounds x replicates x clients x
dimension x local steps read from each task's settings.

This module does not import torch, so a sweep's configuration is checked without it.
"""

from __future__ import annotations

import math
import os
import resource
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from fedtheory.constraints import Bytes, Function, Integer, MappingOf, Real, Text, declare
from fedtheory.errors import ParameterError

__all__ = [
    "DEFAULT_SECONDS",
    "ENV",
    "TIME_ENV",
    "available_bytes",
    "budget",
    "check_bytes",
    "check_seconds",
    "marginal_seconds",
    "seconds",
    "size",
    "task_seconds",
    "unit_seconds",
]

ENV = "FEDTHEORY_MAX_MEMORY"
"""Environment variable holding the default memory cap (bytes or ``8G``)."""

TIME_ENV = "FEDTHEORY_MAX_SECONDS"
"""Environment variable holding the default time cap of one call (seconds)."""

DEFAULT_SECONDS = 600.0
"""Time cap of one call without ``max_seconds`` or ``FEDTHEORY_MAX_SECONDS``: 10 minutes."""

ROUND_SECONDS = 5e-6
"""Cost of one iteration of a per-round Python loop (sampling a round: measured 33-80 us)."""
CELL_SECONDS = 2e-9
"""Cost of one cell of a tensor written or read in a vectorised operation (measured 10 ns)."""
MATRIX_SECONDS = 2e-6
"""Cost of one small batched matrix factorisation (QR, eigh; measured 15 us for 5 x 5)."""
FLOP_SECONDS = 2e-10
"""Cost of one floating-point operation of dense linear algebra (5 GFLOP/s)."""
PROBE_SHARE = 0.01
"""A call whose optimistic time is above this share of its budget has its cost per unit of
work (a round, a step) measured on this machine before it starts (:func:`check_seconds`)."""


def _parse_bytes(value: object, name: str, owner: str) -> int:
    """A byte count from an int or a string such as ``"512M"``/``"8G"``."""
    return Bytes().check(value, name, owner, {})


def _status_bytes(field: str) -> int:
    """A ``/proc/self/status`` size (``VmSize``, ``VmData``) in bytes; 0 where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _rlimit_room() -> list[int]:
    """Room left under the process's ``RLIMIT_AS`` and ``RLIMIT_DATA`` where they are set."""
    room = []
    for limit, used in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY:
            room.append(max(soft - _status_bytes(used), 0))
    return room


def available_bytes() -> int | None:
    """Memory the operating system can give this process now (Linux ``MemAvailable``,
    lowered to the room left under a cgroup v2 limit and under ``RLIMIT_AS`` /
    ``RLIMIT_DATA``), or ``None`` where it is not known."""
    found = _rlimit_room()
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        cgroup = Path("/sys/fs/cgroup")
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            used = int((cgroup / "memory.current").read_text().strip())
            found.append(max(int(limit) - used, 0))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


@declare(max_memory=Bytes(none=True), owner=Text())
def budget(max_memory: object, owner: str) -> tuple[int | None, str]:
    """The byte budget of a call and where it comes from (for the error message)."""
    if max_memory is not None:
        return _parse_bytes(max_memory, "max_memory", owner), "max_memory"
    env = os.environ.get(ENV)
    if env is not None:
        return _parse_bytes(env, ENV, owner), f"the environment variable {ENV}"
    return available_bytes(), "the available memory"


@declare(b=Integer(0))
def size(b: int) -> str:
    """``b`` bytes in readable units (``1.5 GiB``; ``2^1330 B`` beyond a float's range)."""
    if b >= 1 << 1000:  # b / scale would overflow a float
        return f"2^{b.bit_length() - 1} B"
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b} B"


@declare(nbytes=Integer(0), owner=Text(), what=Text(), fixes=Text())
def check_bytes(
    nbytes: int, owner: str, *, what: str, fixes: str, max_memory: object = None
) -> None:
    """Refuse an allocation of about ``nbytes`` bytes above the budget (module docstring).

    ``what`` describes the estimate (``"a mask [R, T, N] of 1e+12 cells"``) and ``fixes``
    what to change (``"fewer rounds or replicates"``)."""
    limit, source = budget(max_memory, owner)
    if limit is None or nbytes <= limit:
        return
    raise ParameterError(
        f"{owner} would need about {size(nbytes)} ({what}), more than {source} "
        f"({size(limit)}). Use {fixes}, or raise {ENV} / max_memory."
    )


@declare(rounds=Real(0.0), cells=Real(0.0), matrices=Real(0.0), flops=Real(0.0))
def seconds(*, rounds: float = 0, cells: float = 0, matrices: float = 0, flops: float = 0) -> float:
    """Optimistic time of a call doing this much work (module docstring: unit costs)."""
    return (rounds * ROUND_SECONDS + cells * CELL_SECONDS + matrices * MATRIX_SECONDS
            + flops * FLOP_SECONDS)  # fmt: skip


def time_budget(max_seconds: object, owner: str) -> tuple[float, str]:
    """The time budget of a call in seconds and where it comes from (for the message)."""
    if max_seconds is not None:
        return _parse_seconds(max_seconds, "max_seconds", owner), "max_seconds"
    env = os.environ.get(TIME_ENV)
    if env is not None:
        return _parse_seconds(env, TIME_ENV, owner), f"the environment variable {TIME_ENV}"
    return DEFAULT_SECONDS, "the default time limit"


def _parse_seconds(value: object, name: str, owner: str) -> float:
    try:
        x = float(value) if isinstance(value, (str, int, float)) and value is not True else -1.0
    except ValueError:
        x = -1.0
    if not 0 < x < float("inf") or isinstance(value, bool):
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be a positive finite number of seconds. "
            f"Got {value!r} instead."
        )
    return x


def _duration(x: float) -> str:
    """``x`` seconds in readable units (``71.6 us``, ``1.06 ns``)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x / 1e-9:.3g} ns"


@declare(run=Function(), units=Integer(1))
def marginal_seconds(run: Callable[[int], object], units: int) -> float:
    """Seconds one more unit of work costs in ``run(n)`` (which does ``n`` units):
    ``(time of run(1 + units) - time of run(1)) / units``, the fixed costs cancelled."""
    one = math.inf
    for _ in range(2):  # the fixed cost: the faster of two runs of one unit
        start = time.perf_counter()
        run(1)
        one = min(one, time.perf_counter() - start)
    start = time.perf_counter()
    run(1 + units)
    return max(time.perf_counter() - start - one, 0.0) / units


@declare(probe=Function())
def unit_seconds(probe: Callable[[], float]) -> float:
    """Seconds one unit of some work takes on this machine now: ``probe()`` times a small
    amount of that work itself and returns its seconds per unit; it runs twice (the first
    run warms caches and compiled code) and the faster run counts."""
    return min(probe(), probe())


@declare("max_seconds", estimate=Real(0.0), owner=Text(), what=Text(), fixes=Text(),
         units=Real(0.0, none=True), probe=Function(none=True), unit=Text(none=True))  # fmt: skip
def check_seconds(
    estimate: float,
    owner: str,
    *,
    what: str,
    fixes: str,
    max_seconds: object = None,
    units: float | None = None,
    probe: Callable[[], float] | None = None,
    unit: str | None = None,
) -> None:
    """Refuse a call estimated (:func:`seconds`) to run longer than the time budget.

    A call of ``units`` units of work (``unit``: "round", "step") whose optimistic
    ``estimate`` is above :data:`PROBE_SHARE` of the budget is also estimated at this
    machine's measured cost per unit (:func:`unit_seconds` of ``probe``: a few units of the
    same work, milliseconds); the larger estimate counts."""
    limit, source = time_budget(max_seconds, owner)
    measured = ""
    if probe is not None and units is not None and estimate > PROBE_SHARE * limit:
        per_unit = unit_seconds(probe)
        if units * per_unit > estimate:
            estimate = units * per_unit
            measured = f"; {_duration(per_unit)} a {unit or 'unit'} measured on this machine"
    if estimate <= limit:
        return
    raise ParameterError(
        f"{owner} would take at least about {estimate:.3g} s ({what}{measured}), more than "
        f"{source} ({limit:g} s). Use {fixes}, or raise {TIME_ENV} / max_seconds."
    )


WORK_SETTINGS = {
    "rounds": ("rounds", "horizon", "T"),
    "replicates": ("replicates",),
    "clients": ("num_clients", "clients", "N"),
    "dim": ("dim", "d"),
    "steps": ("local_steps", "E"),
}
"""The settings a sweep's task names its work by (the first present of each), as the
validations and the simulator spell them."""


def _setting(settings: Mapping, names: tuple[str, ...]) -> float:
    """The first of ``names`` in ``settings`` that is a number >= 1, else 1."""
    for name in names:
        value = settings.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
            return float(value)
    return 1.0


@declare(settings=MappingOf())
def task_seconds(settings: Mapping) -> float:
    """Optimistic time of one sweep task from its settings: a run of ``rounds`` rounds
    (:data:`WORK_SETTINGS`) costs ``rounds x (1 + steps)`` loop iterations and ``rounds x
    replicates x clients x dim x steps`` cells; a task naming no rounds is estimated at 0
    (its work is not known from its settings)."""
    if not any(name in settings for name in WORK_SETTINGS["rounds"]):
        return 0.0
    t, r, n, d, e = (_setting(settings, names) for names in WORK_SETTINGS.values())
    return seconds(rounds=t * (1 + e), cells=r * t * n * d * e)
