"""Registry of validations (claim families)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from fedtheory.verdict import Comparison

Data = dict[str, np.ndarray]


@dataclass(frozen=True)
class Check:
    """A validation.

    ``settings(quick)`` gives the JSON-able instance and sizes; ``compute(settings)`` the
    data arrays (no plotting, deterministic from the settings' seed); ``judge(data,
    settings)`` the verdict rows; ``plot(data, settings, fig)`` draws measured and bound in
    the same axes.
    """

    name: str
    title: str
    claim: str
    settings: Callable[[bool], dict]
    compute: Callable[[dict], Data]
    judge: Callable[[Data, dict], list[Comparison]]
    plot: Callable[[Data, dict, Figure], None]


CHECKS: dict[str, Check] = {}


def register(check: Check) -> Check:
    if check.name in CHECKS:
        raise KeyError(f"validation {check.name!r} is registered twice")
    CHECKS[check.name] = check
    return check
