"""The parameter kinds of the validation suite (:mod:`fedtheory.constraints` kinds that
know the suite's sizes, its registered checks and a user check's instances): a size, a
value per size, a check's settings and data and the figure it draws into (declared on
every part of a check by :func:`part`), a folder name, a measurable theorem, a user
check's instances and a key of every instance.

The kinds that name a registered check read the registry's ``CHECKS`` when they check, not
at import (a user's file registers more); the sizes and the folder-name kind the registry
declares its own parameters with live in :mod:`fedtheory.validation.machinery.registry`."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from fedtheory.constraints import Constraint, Exemplified, InstanceOf, Text, declare
from fedtheory.validation.machinery.registry import CHECKS, SIZE, SIZES, FolderName, Size  # noqa: F401 (re-exported)

FIGURE = Exemplified(InstanceOf("matplotlib.figure:Figure"), lambda args: _figure())
"""The matplotlib figure a check's ``plot`` draws into."""


AXES = Exemplified(InstanceOf("matplotlib.axes:Axes"), lambda args: _figure().add_subplot())
"""A panel of a check's figure."""


def _figure():
    from matplotlib.figure import Figure

    return Figure(layout="constrained")


def _check(name: str):
    """The registered check ``name`` (read at each check: registered at import)."""
    return CHECKS[name]


class CheckName(Text):
    """The name of a registered check (read at each check: a user's file registers more)."""

    def describe(self, args):
        return f"the name of a registered check ({', '.join(sorted(CHECKS))})"

    def convert(self, value, args):
        return value if isinstance(value, str) and value in CHECKS else None

    def hostile(self):
        return [*super().hostile(), ("unknown", "no-such-check")]

    def example(self, args):
        """The registered check of the smallest declared cost (a quick valid run)."""
        costs = {n: c.cost for n, c in CHECKS.items() if c.cost is not None}
        return min(costs, key=costs.get)


class Holding(Constraint):
    """A mapping of settings holding every one of ``names`` (what a helper shared by
    several checks reads of their settings); returned as given."""

    def __init__(self, *names: str):
        self.names, self.none = names, False

    def describe(self, args):
        return f"a mapping (dict) of settings holding {', '.join(self.names)}"

    def convert(self, value, args):
        return value if isinstance(value, Mapping) and all(k in value for k in self.names) else None

    def hostile(self):
        return [*super().hostile(), ("string", "tiny"), ("list", [1]), ("empty", {})]

    def example(self, args):
        raise LookupError("no example of a check's settings: declare it with Exemplified")


class Settings(Constraint):
    """The settings of the registered check ``name``: a mapping of string names holding
    every name its ``settings("tiny")`` holds (a size's settings, saved ones read back, a
    sweep's overrides); returned as given."""

    def __init__(self, name: str):
        self.name, self.none = name, False

    def describe(self, args):
        return f"the settings of check {self.name!r} (a mapping holding its settings' names)"

    def convert(self, value, args):
        names = _check(self.name).settings(SIZES[0])
        ok = isinstance(value, Mapping) and all(k in value for k in names)
        return value if ok else None

    def hostile(self):
        return [*super().hostile(), ("string", "tiny"), ("list", [1]), ("empty", {})]

    def example(self, args):
        return _check(self.name).settings(SIZES[0])


class Data(Constraint):
    """The data the registered check ``name`` computed: a mapping of string names to
    numeric arrays holding every bound it names (``bounds``); returned as given."""

    def __init__(self, name: str):
        self.name, self.none = name, False

    def describe(self, args):
        bounds = ", ".join(_check(self.name).bounds)
        return f"the data of check {self.name!r} (a mapping of names to arrays with {bounds})"

    def convert(self, value, args):
        if not isinstance(value, Mapping) or not all(b in value for b in _check(self.name).bounds):
            return None
        arrays = [np.asarray(v) for v in value.values()]
        return value if all(a.dtype != object for a in arrays) else None

    def hostile(self):
        return [*super().hostile(), ("list", [1.0]), ("empty", {})]

    def example(self, args):
        return _tiny_data(self.name)


@functools.cache
def _tiny_data(name: str) -> dict:
    """The data of check ``name`` at its tiny size (computed once a process)."""
    check = _check(name)
    return check.compute(check.settings(SIZES[0]))


def part(name: str, **constraints: Constraint) -> Callable:
    """Declare a part of the check registered as ``name`` (its ``settings``, ``compute``,
    ``judge``, ``plot``, ``notes``, ``setups``): the parameters it takes among ``size``,
    ``s`` or ``settings`` (:class:`Settings`), ``data`` (:class:`Data`) and ``fig``
    (:data:`FIGURE`), and its other parameters' ``constraints``."""
    kinds = {"size": SIZE, "s": Settings(name), "settings": Settings(name),
             "data": Data(name), "fig": FIGURE}  # fmt: skip

    def wrap(fn: Callable) -> Callable:
        params = inspect.signature(fn).parameters
        return declare(**{p: k for p, k in kinds.items() if p in params}, **constraints)(fn)

    return wrap


class PerSize(Constraint):
    """A value ``inner`` accepts for every size, or a mapping giving one for each size
    (``tiny``, ``quick`` and ``full``; other keys ignored); returned as ``{size: value}``."""

    def __init__(self, inner: Constraint, *, none: bool = False):
        self.inner, self.none = inner, none

    def describe(self, args):
        sizes = ", ".join(SIZES)
        return f"{self.inner.describe(args)} (or a mapping giving one for every size {sizes})"

    def convert(self, value, args):
        if not isinstance(value, Mapping):
            one = self.inner.convert(value, args)
            return None if one is None else dict.fromkeys(SIZES, one)
        if not all(s in value for s in SIZES):
            return None
        out = {s: self.inner.convert(value[s], args) for s in SIZES}
        return None if any(v is None for v in out.values()) else out

    def hostile(self):
        inner = [(k, v) for k, v in self.inner.hostile() if v is not None or not self.none]
        return [*inner, ("missing sizes", {SIZES[0]: None})]

    def edges(self, valid):
        return self.inner.edges(valid)

    def example(self, args):
        return self.inner.example(args)


class Measurable(InstanceOf):
    """A :class:`~fedtheory.bounds.Theorem` a measurement is compared with: an upper bound
    or an exact statement (not an order)."""

    def __init__(self):
        super().__init__("fedtheory.bounds.base:Theorem")

    def describe(self, args):
        return "a Theorem that is an upper bound or an exact statement (a number to compare with)"

    def convert(self, value, args):
        theorem = super().convert(value, args)
        return theorem if getattr(theorem, "kind", None) in ("upper bound", "exact") else None


class Instances(Constraint):
    """A user check's instances: a non-empty list of dicts of JSON-able values (NumPy
    scalars read as numbers), each holding every parameter of the argument ``theorem``
    unless a ``constants`` argument derives them; returned as a list of plain dicts."""

    def describe(self, args):
        what = "a non-empty list of dicts of JSON-able values (numbers, strings, lists)"
        theorem = args.get("theorem")
        if theorem is None or args.get("constants") is not None:
            return what
        return f"{what}, each giving every parameter of {theorem.title} " + (
            f"({', '.join(theorem.parameters)})"
        )

    def convert(self, value, args):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
            return None
        if not all(isinstance(inst, Mapping) for inst in value):
            return None
        out = [{k: _plain(v) for k, v in inst.items()} for inst in value]
        json.dumps(out)  # a TypeError refuses it: the settings are saved as JSON
        theorem = args.get("theorem")
        needed = set() if theorem is None or args.get("constants") else set(theorem.parameters)
        return out if all(needed <= set(inst) for inst in out) else None

    def hostile(self):
        return [*super().hostile(), ("string", "ab"), ("empty", []), ("not a dict", [1.0]),
                ("not JSON", [{"a": object()}])]  # fmt: skip

    def example(self, args):
        theorem = args["theorem"]
        return [{p: c.example({}) for p, c in theorem.constraints.items()}]


def _plain(value: object) -> object:
    """A NumPy scalar as the Python number it holds (JSON-able); anything else as given."""
    return value.item() if isinstance(value, np.generic) else value


class InstanceKey(Text):
    """A key of every instance of the argument ``instances`` (a :class:`PerSize` of
    :class:`Instances`, checked before)."""

    def describe(self, args):
        return "a key of every instance"

    def convert(self, value, args):
        per_size = args.get("instances") or {}
        every = [inst for insts in per_size.values() for inst in insts]
        return value if isinstance(value, str) and all(value in i for i in every) else None

    def hostile(self):
        return [*super().hostile(), ("unknown", "no-such-key")]

    def example(self, args):
        return next(iter(args["instances"][SIZES[0]][0]))
