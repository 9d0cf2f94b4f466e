"""Kinds of objects and callables: a finite value (:class:`Finite`), a callable
(:class:`Function`, :class:`DefinedFunction`), an instance of given classes
(:class:`Instance`, :class:`InstanceOf`), an object with given attributes or fields
(:class:`Having`, :class:`Fields`), one of several kinds (:class:`Either`) and a kind with a
valid example built from the other arguments (:class:`Exemplified`)."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fedtheory.constraints.kind import Constraint


class Finite(Constraint):
    """Any value that holds no NaN or inf: a number, an array, a tensor (on the CPU), or a
    tuple, a list or a mapping of them, or a non-numeric value (a name, a flag); returned as
    given. The values of a mapping of settings or constants (``MappingOf(Finite())``,
    :mod:`~fedtheory.constraints.containers`): a NaN there is refused like a NaN scalar
    argument."""

    none = True  # None (an unset setting) holds no NaN

    def describe(self, args):
        return "a value without NaN or inf"

    def convert(self, value, args):
        from fedtheory.constraints.results import _non_finite

        with np.errstate(invalid="ignore"):
            return None if _non_finite(value) else value

    def hostile(self):
        return [("nan", math.nan), ("inf", math.inf), ("nan array", np.array([0.5, math.nan]))]

    def example(self, args):
        return 0.5


class Function(Constraint):
    """A callable (a measurement, a step-size schedule)."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a callable"

    def convert(self, value, args):
        return value if callable(value) else None

    def hostile(self):
        return [*super().hostile(), ("number", 1.0), ("string", "f")]

    def example(self, args):
        return lambda *a, **k: 0.0


class Instance(Constraint):
    """An instance of a class or ``runtime_checkable`` protocol; with ``among`` (a
    registry: a collection of classes, read at each call), of one of those classes."""

    among = None

    def __init__(self, kind: type, *, among=None, none: bool = False):
        self.kind, self.among, self.none = kind, among, none

    def describe(self, args):
        if self.among is not None:
            return "an instance of one of " + ", ".join(c.__name__ for c in self.among)
        return f"a {self.kind.__name__}"

    def convert(self, value, args):
        ok = isinstance(value, self.kind) and (self.among is None or type(value) in self.among)
        return value if ok else None

    def hostile(self):
        others = [("number", 1.0), ("string", "x"), ("bytes", b"x")]
        return [*super().hostile(), *[(k, v) for k, v in others if not isinstance(v, self.kind)]]

    def example(self, args):
        if self.kind in (str, bytes, tuple, dict):
            return self.kind()
        raise LookupError(f"no example of {self.kind.__name__}: draw one from valid objects")


class Having(Constraint):
    """An object with these attributes (an algorithm: ``init`` and ``step``; a state record:
    ``_fields``), whatever its class."""

    def __init__(self, *attributes: str, none: bool = False):
        self.attributes, self.none = attributes, none

    def describe(self, args):
        return "an object with " + ", ".join(self.attributes)

    def convert(self, value, args):
        return value if all(hasattr(value, a) for a in self.attributes) else None

    def example(self, args):
        raise LookupError(f"no example of an object with {self.attributes}: draw a valid one")

    def hostile(self):
        return [*super().hostile(), ("number", 1.0), ("string", "x")]


class Fields(Instance):
    """An instance of ``kind`` (a state record: a NamedTuple or a dataclass) whose fields
    meet their own constraints (``buffer=Tensor(like="w")``: read against the other
    arguments), so a NaN inside a record's tensor is refused at the entry like one passed
    on its own. The fields are checked, never converted: the record is returned as given."""

    def __init__(self, kind: type, *, none: bool = False, **fields: Constraint):
        super().__init__(kind, none=none)
        self.fields = fields

    def describe(self, args):
        inner = ", ".join(f"{k} {c.describe(args)}" for k, c in self.fields.items())
        return f"a {self.kind.__name__} with {inner}"

    def convert(self, value, args):
        if super().convert(value, args) is None:
            return None
        for name, c in self.fields.items():
            field = getattr(value, name, None)
            if not (field is None and c.none) and c.convert(field, args) is None:
                return None
        return value

    def example(self, args):
        return self.kind(**{k: c.example(args) for k, c in self.fields.items()})

    def hostile(self):
        bad = super().hostile()
        try:
            valid = self.example({})
        except (LookupError, TypeError, ValueError):
            return bad
        if valid is None:  # no valid record without the other arguments
            return bad
        for name, c in self.fields.items():  # one field hostile, the others valid
            inside = [h for h in c.hostile() if h[0] in ("nan inside", "nan tensor", "None")]
            bad += [(f"{name} {label}", _replaced(valid, name, v)) for label, v in inside]
        return bad


def _replaced(record: object, name: str, value: object) -> object:
    """``record`` with field ``name`` set to ``value`` (a NamedTuple or a dataclass)."""
    if hasattr(record, "_replace"):
        return record._replace(**{name: value})
    return dataclasses.replace(record, **{name: value})


class InstanceOf(Instance):
    """An instance of a class named by its import path (``"fedtheory.problems.base:
    FederatedProblem"``), imported at the first check: a layer that must not import the
    class's module at import time (``fedtheory.bounds`` stays torch-free) declares it so."""

    def __init__(self, path: str, *, none: bool = False):
        self.path, self.none, self.among = path, none, None

    @property
    def kind(self) -> type:
        import importlib

        module, _, name = self.path.partition(":")
        return getattr(importlib.import_module(module), name)


class Exemplified(Constraint):
    """``constraint`` (any kind) with a valid example made by ``make(args)`` (``args``: the
    arguments checked before, ``self`` for a method): an object no generic example exists
    for (a PEPit point, a solved PEP, a theorem's values), for the generated tests."""

    def __init__(self, constraint: Constraint, make: Callable[[Mapping[str, Any]], object]):
        self.constraint, self.make, self.none = constraint, make, constraint.none

    def describe(self, args):
        return self.constraint.describe(args)

    def check(self, value, name, owner, args):
        return self.constraint.check(value, name, owner, args)

    def convert(self, value, args):
        return self.constraint.convert(value, args)

    def hostile(self):
        return self.constraint.hostile()

    def edges(self, valid):
        return self.constraint.edges(valid)

    def example(self, args):
        return self.make(args)


class Either(Constraint):
    """A value accepted by one of ``constraints`` (the first that accepts it converts it):
    a number or a :class:`fedtheory.verdict.Measured`, say."""

    def __init__(self, *constraints: Constraint, none: bool = False):
        self.constraints, self.none = constraints, none

    def describe(self, args):
        return " or ".join(c.describe(args) for c in self.constraints)

    def convert(self, value, args):
        for c in self.constraints:
            with contextlib.suppress(TypeError, ValueError, OverflowError, IndexError):
                out = c.convert(value, args)
                if out is not None:
                    return out
        return None

    def hostile(self):
        """What every alternative refuses (a value one of them accepts is not hostile)."""
        found = dict(h for c in self.constraints for h in c.hostile())
        refused = [(k, v) for k, v in found.items() if v is not None and not self.accepts(v)]
        return refused if self.none else [("None", None), *refused]

    def accepts(self, value) -> bool:
        return self.convert(value, {}) is not None

    def edges(self, valid):
        return self.constraints[0].edges(valid)

    def example(self, args):
        """The example of the first alternative that has one."""
        for c in self.constraints[:-1]:
            with contextlib.suppress(LookupError):
                return c.example(args)
        return self.constraints[-1].example(args)


class DefinedFunction(Function):
    """A function defined with ``def`` or ``lambda`` (not a ``functools.partial``, a builtin
    or a class): what a sweep hashes by its source to know when its results are stale."""

    def describe(self, args):
        return "a function defined with def or lambda (pass constants as settings)"

    def convert(self, value, args):
        import types

        return value if isinstance(value, types.FunctionType) else None

    def hostile(self):
        import functools

        return [*super().hostile(), ("builtin", abs), ("partial", functools.partial(max, 0))]
