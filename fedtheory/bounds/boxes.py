"""The box a theorem's parameter is drawn or searched in: its notation's interval, narrowed
by a user's range (:func:`fedtheory.testing.check_theorem` draws in it,
:func:`fedtheory.tightness.theorem_family` searches it)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from fedtheory.constraints import Real, interval
from fedtheory.errors import ParameterError

__all__ = ["DEFAULT_BOX", "POSITIVE_FLOOR"]  # Box, parameter_box: the analyses' (checked input)

DEFAULT_BOX = 100.0
"""Reals are drawn in ``[-10, 10]`` (unbounded) or ``[low, low + DEFAULT_BOX]`` (bounded
below); integers in ``[low, low + DEFAULT_BOX]``."""
POSITIVE_FLOOR = 1e-6
"""Smallest value drawn for a parameter that must be positive (``(0, ...)``), so that terms
such as ``1/x`` stay finite."""


@dataclass(frozen=True)
class Box:
    """The interval a parameter is drawn in (``integer``: its integers)."""

    low: float
    high: float
    integer: bool


def parameter_box(name: str, entry, ranges: Mapping, owner: str) -> Box:
    """The box of parameter ``name``: its notation ``entry``'s interval (open ends moved in by
    :data:`POSITIVE_FLOOR`, unbounded ends cut at ``+-10`` or ``low + DEFAULT_BOX``), or the
    user's ``ranges[name]`` inside it."""
    lo = entry.low if entry.low is not None else -10.0
    if entry.low is not None and entry.low_open:
        lo = entry.low + POSITIVE_FLOOR if not entry.integer else entry.low + 1
    if entry.high is not None:
        hi = entry.high - (POSITIVE_FLOOR if entry.high_open else 0.0)
    else:
        hi = lo + DEFAULT_BOX if entry.low is not None else 10.0
    if name in ranges:
        r = ranges[name]
        if not isinstance(r, (tuple, list)) or len(r) != 2:
            raise ParameterError(
                f"The 'ranges[{name}]' parameter of {owner} must be a pair (low, high). "
                f"Got {r!r} instead."
            )
        where = interval(entry.low, entry.high, low_open=entry.low_open, high_open=entry.high_open)
        a = Real(
            low=entry.low, high=entry.high, low_open=entry.low_open, high_open=entry.high_open
        ).check(r[0], f"ranges[{name}]", owner, {})
        b = Real(low=a, high=entry.high).check(r[1], f"ranges[{name}]", owner, {})
        if entry.high_open and entry.high is not None and b >= entry.high:
            raise ParameterError(
                f"The 'ranges[{name}]' parameter of {owner} must lie in {where}. Got {r!r} instead."
            )
        lo, hi = a, b
    if entry.integer:
        lo, hi = math.ceil(lo), math.floor(hi)
        if lo > hi:
            raise ParameterError(
                f"The 'ranges[{name}]' parameter of {owner} must contain an integer. "
                f"Got {ranges.get(name)!r} instead."
            )
    return Box(float(lo), float(hi), entry.integer)
