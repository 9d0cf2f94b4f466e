r"""What ``fedtheory sweep CONFIG.toml`` sweeps: a catalogue theorem's value, or a
validation's measured quantity next to its bound, over a grid of settings.

The configuration (TOML)::

    validation = "cafed-theorem2"  # or: theorem = "cafed.theorem2" (fedtheory list)
    size = "quick"                 # the validation's base settings (tiny, quick, full)
    seeds = 2                      # calls per point, each with its own derived seed
    seed = 0                       # the sweep's seed
    out = "sweep-cafed"            # folder for table.csv, summary.csv, figure.png/.svg
    title = "CA-Fed Theorem 2"     # the figure's title (default: the name)
    [settings]                     # fixed settings (override the validation's; theorem
    horizon = 200                  #   keywords for a theorem)
    [grid]                         # swept settings: the table's columns (1 or 2 are drawn)
    lam = [0.0, 0.5, 0.9]
    participation = [0.2, 0.4, 0.6]
    [labels]                       # optional axis labels (mathtext)
    lam = '$\lambda_k$'

Everything is checked before any work: an unknown key, setting or grid axis is refused with
the nearest valid name; every value with the setting's name and range (a theorem is
evaluated at every point; a validation's ``sweep_check`` is called at every point); the
number of tasks and each point's run against the memory budget
(``FEDTHEORY_MAX_MEMORY``, :mod:`fedtheory.budget`).

A validation is a plug-in: the layer above registers its measurement with
:func:`register_target` (:func:`fedtheory.validation.register` does it for every check
with a ``sweep``), and the caller passes where the registered targets come from
(``targets=``; ``fedtheory sweep`` loads the validation suite for it), so this module never
imports the validations.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fedtheory.constraints import (
    Function,
    Integer,
    Location,
    MappingOf,
    Names,
    Option,
    Text,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.sweep.design import Design, grid

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["SweepConfig", "Target", "load_config", "parse_config", "register_target"]

KEYS = (
    "validation", "theorem", "size", "seeds", "seed", "out", "title", "settings", "grid",
    "labels",
)  # fmt: skip


def _theorem_point(settings: dict, seed: int) -> dict:
    """``CATALOGUE[settings["theorem"]].evaluate(**rest, strict=False)`` as a row: each
    term, the ``total`` and ``valid`` (its hypotheses hold). Deterministic: ``seed`` is
    unused."""
    from fedtheory.bounds import CATALOGUE

    rest = {k: v for k, v in settings.items() if k != "theorem"}
    result = CATALOGUE[settings["theorem"]].evaluate(**rest, strict=False)
    return {**result.terms, "total": result.total, "valid": result.valid}


@dataclass(frozen=True)
class Target:
    """A sweepable measurement registered by a layer above: its base ``settings(size)``
    (``tiny``/``quick``/``full``), one ``point(settings, seed) -> {"measured": [R], "bound":
    ..., "inside": ...}`` and an optional ``check(settings)`` that refuses a point before any
    work (a ``ParameterError``)."""

    settings: Callable[[str], dict]
    point: Callable[[dict, int], dict]
    check: Callable[[dict], None] | None = None


TARGETS: dict[str, Target] = {}
"""The registered sweep targets by name (filled by :func:`register_target`)."""


@declare(name=Text(), settings=Function(), point=Function(), check=Function(none=True))
def register_target(
    name: str,
    *,
    settings: Callable[[str], dict],
    point: Callable[[dict, int], dict],
    check: Callable[[dict], None] | None = None,
) -> Target:
    """Register ``name`` as a sweep target (``validation = "name"`` in a configuration); a
    second registration under the same name replaces the first."""
    TARGETS[name] = Target(settings, point, check)
    return TARGETS[name]


def registered() -> Mapping[str, Target]:
    """The targets registered so far (the default ``targets=`` of :func:`parse_config`)."""
    return TARGETS


@dataclass(frozen=True)
class SweepConfig:
    """A parsed sweep configuration: the function, its fixed settings and the design, and
    how to summarise the table (``measured``/``bound``/``inside`` column names; ``measured``
    is ``None`` for a theorem)."""

    name: str  # the theorem's key or the validation's name
    fn: Callable[[dict, int], dict]
    fixed: dict
    design: Design
    out: Path
    measured: str | None
    bound: str
    inside: str
    labels: dict = field(default_factory=dict)
    title: str = ""


def _table(config: object, key: str) -> dict:
    value = config.get(key, {})
    if not isinstance(value, Mapping):
        raise ParameterError(
            f"The '{key}' parameter of parse_config must be a TOML table. Got {value!r} instead."
        )
    return dict(value)


def _check_settings(settings: dict, axes: dict, allowed: tuple[str, ...] | None) -> None:
    """Every setting and grid axis is one of ``allowed`` (if given), and none is both."""
    owner = "parse_config"
    if allowed is not None:
        Names(allowed).check(settings, "settings", owner, {})
        Names(allowed).check(axes, "grid", owner, {})
    if both := sorted(set(settings) & set(axes)):
        raise ParameterError(
            f"The 'grid' parameter of {owner} must not sweep a fixed setting. Got {both} in "
            "both [settings] and [grid] instead."
        )


def _check_theorem(name: str, settings: dict, design: Design) -> None:
    """Evaluate the theorem once over every point (vectorised): a wrong or missing value
    is a ParameterError naming the parameter, before any task runs."""
    import numpy as np

    from fedtheory.bounds import CATALOGUE

    values = {k: np.array([p[k] for p in design.points]) for k in design.names}
    CATALOGUE[name].evaluate(**settings, **values, strict=False)


@declare(config=MappingOf(), targets=Function())
def parse_config(
    config: Mapping, *, targets: Callable[[], Mapping[str, Target]] = registered
) -> SweepConfig:
    """A :class:`SweepConfig` from the dict of a TOML file (see the module docstring),
    after checking everything in it; ``targets()`` gives the sweepable measurements
    (called only for a ``validation`` configuration, after the grid's size is checked)."""
    owner = "parse_config"
    Names(KEYS).check(config, "config", owner, {})
    if ("validation" in config) == ("theorem" in config):
        raise ParameterError(
            "The 'config' parameter of parse_config must name exactly one of 'validation' "
            f"and 'theorem'. Got {sorted(set(config) & {'validation', 'theorem'})} instead."
        )
    settings, axes = _table(config, "settings"), _table(config, "grid")
    labels = _table(config, "labels")
    Names(tuple(axes)).check(labels, "labels", owner, {})
    for k, v in labels.items():
        Text().check(v, f"labels[{k!r}]", owner, {})
    title = Text().check(config["title"], "title", owner, {}) if "title" in config else ""
    out = Path(Text().check(config["out"], "out", owner, {}) if "out" in config else "sweep")
    replicates = Integer(low=1).check(config.get("seeds", 1), "seeds", owner, {})
    seed = Integer(0).check(config.get("seed", 0), "seed", owner, {})
    if "theorem" in config:
        from fedtheory.bounds import CATALOGUE

        name = Option(*tuple(CATALOGUE)).check(config["theorem"], "theorem", owner, {})
        _check_settings(settings, axes, CATALOGUE[name].parameters)
        design = grid(axes, replicates=replicates, seed=seed)
        _check_theorem(name, settings, design)
        return SweepConfig(name, _theorem_point, {**settings, "theorem": name}, design, out,
                           None, "total", "valid", labels, title or name)  # fmt: skip
    size = Option(*("tiny", "quick", "full")).check(config.get("size", "quick"), "size", owner, {})
    design = grid(axes, replicates=replicates, seed=seed)  # sizes refused before the imports
    available = targets()
    if not isinstance(available, Mapping):
        raise ParameterError(
            f"The 'targets' parameter of {owner} must return a mapping of names to sweep "
            f"targets. Got {type(available).__name__} instead."
        )
    name = Option(*tuple(available)).check(config["validation"], "validation", owner, {})
    target = available[name]
    fixed = {**target.settings(size), **settings}
    # names are checked by the target's check when there is one (it knows the point's names)
    _check_settings(settings, axes, None if target.check else tuple(fixed))
    if target.check is not None:
        for point in design.points:
            target.check({**fixed, **point})
    return SweepConfig(name, target.point, fixed, design, out, "measured", "bound", "inside",
                       labels, title or name)  # fmt: skip


@declare(path=Location(suffixes=(".toml",), exists=True), targets=Function())
def load_config(
    path: str | Path, *, targets: Callable[[], Mapping[str, Target]] = registered
) -> SweepConfig:
    """Read and parse a TOML sweep configuration (see the module docstring and
    :func:`parse_config` for ``targets``)."""
    try:
        config = tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ParameterError(
            f"The 'path' parameter of load_config must be a readable UTF-8 TOML file. Got "
            f"'{path}' ({type(err).__name__}: {err}) instead."
        ) from None
    return parse_config(config, targets=targets)
