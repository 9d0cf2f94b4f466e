r"""The memory budget every allocation in proportion to its arguments is checked against.

The budget is the ``max_memory`` argument of the call (bytes, or a string with a suffix
``K``, ``M``, ``G``, ``T``: ``"8G"``), else the environment variable
``FEDTHEORY_MAX_MEMORY`` (same forms), else the memory the operating system reports as
available (Linux: ``MemAvailable`` and the cgroup limit). :func:`check_bytes` refuses an
estimate above it with a :class:`~fedtheory.errors.ParameterError` naming the estimate,
the budget and what to change -- before anything is allocated.

This module does not import torch, so a sweep's configuration is checked without it.
"""

from __future__ import annotations

import os
from pathlib import Path

from fedtheory.errors import ParameterError
from fedtheory.params import check_int

__all__ = ["ENV", "available_bytes", "budget", "check_bytes", "size"]

ENV = "FEDTHEORY_MAX_MEMORY"
"""Environment variable holding the default memory cap (bytes or ``8G``)."""

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _parse_bytes(value: object, name: str, owner: str) -> int:
    """A byte count from an int or a string such as ``"512M"``/``"8G"``."""
    if isinstance(value, str):
        text = value.strip().upper().removesuffix("B")
        unit = text[-1:] if text[-1:] in _SUFFIX else ""
        number = text[: len(text) - len(unit)].strip()
        try:
            amount = float(number)
        except ValueError:
            amount = -1.0
        if not amount > 0 or amount * _SUFFIX[unit] > 2**62:
            raise ParameterError(
                f"The '{name}' parameter of {owner} must be a positive number of bytes, "
                f"optionally with a suffix K, M, G or T (e.g. '8G'). Got {value!r} instead."
            )
        return int(amount * _SUFFIX[unit])
    return check_int(value, name, owner, low=1)


def available_bytes() -> int | None:
    """Memory the operating system can give this process now (Linux ``MemAvailable``,
    lowered to the room left under a cgroup v2 limit), or ``None`` where it is not known."""
    found = []
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


def budget(max_memory: object, owner: str) -> tuple[int | None, str]:
    """The byte budget of a call and where it comes from (for the error message)."""
    if max_memory is not None:
        return _parse_bytes(max_memory, "max_memory", owner), "max_memory"
    env = os.environ.get(ENV)
    if env is not None:
        return _parse_bytes(env, ENV, owner), f"the environment variable {ENV}"
    return available_bytes(), "the available memory"


def size(b: int) -> str:
    """``b`` bytes in readable units (``1.5 GiB``)."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b} B"


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
