"""Registry of validations (claim families)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from matplotlib.figure import Figure

from fedtheory.constraints import (
    Function,
    Instance,
    Label,
    MappingOf,
    Option,
    Real,
    Text,
    Texts,
    declare,
)
from fedtheory.sweep.targets import register_target
from fedtheory.verdict import Comparison

__all__ = ["CHECKS", "SIZES", "Check", "Size", "register", "with_wrong_bounds"]

Data = dict[str, np.ndarray]

Size = Literal["tiny", "quick", "full"]
SIZES: tuple[Size, ...] = ("tiny", "quick", "full")
"""The sizes of a check (:mod:`fedtheory.validation.machinery.kinds` re-exports them):
``tiny``: seconds, for the tests; ``quick``: all validations together within 5 minutes on
2 cores; ``full``: paper-scale settings."""
SIZE = Option(*SIZES)
"""A check's size."""


class FolderName(Text):
    """A non-empty string without spaces or slashes (it names a folder)."""

    def describe(self, args):
        return "a non-empty string without spaces or slashes (it names a folder)"

    def convert(self, value, args):
        ok = super().convert(value, args) is not None and not any(c in value for c in " /\\")
        return value if ok else None

    def hostile(self):
        return [*super().hostile(), ("space", "a b"), ("slash", "a/b")]


@declare(
    name=FolderName(),
    title=Text(),
    claim=Text(),
    settings=Function(),
    compute=Function(),
    judge=Function(),
    plot=Function(),
    bounds=Texts(),
    notes=Function(none=True),
    setups=Function(none=True),
    module=Label(),
    sweep=Function(none=True),
    sweep_check=Function(none=True),
    cost=Real(0.0, none=True),
)
@dataclass(frozen=True)
class Check:
    """A validation.

    ``settings(size)`` gives the JSON-able instance and sizes; ``compute(settings)`` the
    data arrays (no plotting, deterministic from the settings' seed) including, side by
    side with what was measured, every bound or prediction the verdicts use, under the
    keys listed in ``bounds``; ``judge(data, settings)`` the verdict rows (reading bounds
    from ``data`` only, so that :func:`with_wrong_bounds` can break them);
    ``plot(data, settings, fig)`` draws measured and bound in the same axes, in the style of
    :mod:`fedtheory.validation.machinery.plots` (panels via ``plots.panels``, legends via
    ``plots.legend``), and returns a caption (or ``None``) saying which curves coincide or
    are floored and how they are kept visible; the optional
    ``notes(data, settings)`` states measured facts that no theorem claims (e.g. an
    empirical ordering), shown in the report without a verdict. A check defined outside
    the package (``fedtheory.validation.custom``) records in ``module`` the file that
    registers it, for the report's reproduce command. The optional
    ``sweep(settings, seed)`` measures one point of a sweep (``fedtheory sweep``, see
    :mod:`fedtheory.sweep.targets`): ``settings`` are this check's settings with scalar
    overrides, and it returns the ``measured`` samples next to the ``bound``; the optional
    ``sweep_check(settings)`` refuses, before any sweep work, a point ``sweep`` cannot run
    (unknown names, values out of range, memory) with a ``ParameterError``. The optional
    ``cost`` is the measured compute time of the quick size on one core, in seconds: a
    parallel run (:func:`fedtheory.validation.machinery.runner.run`) starts the longest first.
    """

    name: str
    title: str
    claim: str
    settings: Callable[[Size], dict]
    compute: Callable[[dict], Data]
    judge: Callable[[Data, dict], list[Comparison]]
    plot: Callable[[Data, dict, Figure], str | None]
    bounds: tuple[str, ...] = ()
    notes: Callable[[Data, dict], list[str]] | None = None  # observations without a verdict
    setups: Callable[[Data, dict], list] | None = None  # a finding's set-up tables (SetUp)
    module: str = ""  # the user's file that registers it (``fedtheory validate --module``)
    sweep: Callable[[dict, int], dict] | None = None  # one point of a sweep
    sweep_check: Callable[[dict], None] | None = None  # refuses a point before any work
    cost: float | None = None  # seconds of the quick compute on one core (None: unknown)


WRONG_SHIFT = 1e6
"""How far below zero :func:`with_wrong_bounds` moves every bound."""


@declare(check=Instance(Check), data=MappingOf())
def with_wrong_bounds(check: Check, data: Data) -> Data:
    r"""``data`` with every bound/prediction array replaced by the deliberately wrong
    :math:`-(|b|+1)-10^6`: below any non-negative measured quantity, different from every
    prediction, and (a shift, so a baseline's spread across replicates is kept) far beyond
    the detectable difference of an ordering judged on few replicates, so each verdict row
    inside its theorem's assumptions must turn *violated*."""
    return {
        k: (-(np.abs(v) + 1.0) - WRONG_SHIFT if k in check.bounds else v) for k, v in data.items()
    }


CHECKS: dict[str, Check] = {}


@declare(check=Instance(Check))
def register(check: Check) -> Check:
    if check.name in CHECKS:
        raise KeyError(f"validation {check.name!r} is registered twice")
    if not check.bounds:
        raise KeyError(f"validation {check.name!r} must name the data arrays holding its bounds")
    CHECKS[check.name] = check
    if check.sweep is not None:  # the sweep layer's plug-in: `fedtheory sweep` finds it
        register_target(check.name, settings=check.settings, point=check.sweep,
                        check=check.sweep_check)  # fmt: skip
    return check
