"""DOC"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fedtheory.constraints.kind import Constraint, refuse
from fedtheory.errors import ParameterError


class MappingOf(Constraint):
    """A mapping (a dict of names to values), returned as a dict; ``None`` gives ``{}``.
    With ``values`` (a :class:`Constraint`, e.g. :class:`Function`), string keys and values
    it accepts, called ``plural`` in the message."""

    def __init__(self, values: Constraint | None = None, plural: str = "values", *,
                 names: bool = False):  # fmt: skip
        self.none, self.values, self.plural, self.names = True, values, plural, names

    def check(self, value, name, owner, args):
        return {} if value is None else super().check(value, name, owner, args)

    def describe(self, args):
        keys = "names (non-empty strings)" if self.names else "names"
        return f"a mapping (dict) of {keys} to {self.plural}"

    def convert(self, value, args):
        if not isinstance(value, Mapping):
            return None
        if self.names and not all(isinstance(k, str) and k for k in value):
            return None
        if self.values is None:
            return dict(value)
        items = {k: self.values.convert(v, args) for k, v in value.items()}
        ok = all(  # a None value is kept where the value kind allows one (an unset setting)
            isinstance(k, str) and (v is not None or (value[k] is None and self.values.none))
            for k, v in items.items()
        )
        return items if ok else None

    def hostile(self):
        bad = [("object", object()), ("list", [1, 2]), ("string", "a=1")]
        bad += [("int key", {7: 0.5})] if self.names else []
        if self.values is None:
            return bad
        inner = next((v for _, v in self.values.hostile() if v is not None), object())
        return [*bad, ("bad value", {"a": inner})]

    def example(self, args):
        return {}


class Finite(Constraint):
    """Any value that holds no NaN or inf: a number, an array, a tensor (on the CPU), or a
    tuple, a list or a mapping of them, or a non-numeric value (a name, a flag); returned as
    given. The values of a mapping of settings or constants (``MappingOf(Finite())``): a NaN
    there is refused like a NaN scalar argument."""

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


class SequenceOf(Constraint):
    """A list or tuple (never a string, a mapping or a one-shot iterator; a set or an array
    is read as the list of its entries, along the first axis) whose every entry ``entries``
    (a :class:`Constraint`, or ``None`` for any value) accepts, at least ``min_size`` of them
    (called ``plural`` in the message); returned as a list (a tuple if given one) of the
    converted entries."""

    def __init__(self, entries: Constraint | None = None, *, min_size: int = 0, none=False,
                 plural: str = "entries"):  # fmt: skip
        self.entries, self.min_size, self.none, self.plural = entries, min_size, none, plural

    def describe(self, args):
        what = "a list" + (f" of at least {self.min_size} {self.plural}" if self.min_size else "")
        return what if self.entries is None else f"{what}, each {self.entries.describe(args)}"

    def convert(self, value, args):
        if isinstance(value, (set, frozenset, np.ndarray)):  # a set of flags, stacked matrices
            value = list(value)
        if not isinstance(value, (list, tuple)) or len(value) < self.min_size:
            return None
        out = (
            list(value)
            if self.entries is None
            else [self.entries.convert(v, args) if v is not None else None for v in value]
        )
        if self.entries is not None and any(v is None for v in out):
            return None
        return tuple(out) if isinstance(value, tuple) else out

    def hostile(self):
        bad = [*super().hostile(), ("string", "ab"), ("mapping", {"a": 1}), ("number", 1.0)]
        bad += [("empty", [])] if self.min_size else []
        return bad + ([("bad entry", [object()])] if self.entries is not None else [])

    def example(self, args):
        if self.entries is None:
            return [1.0] * max(self.min_size, 2)
        return [self.entries.example(args)] * max(self.min_size, 1)


class Texts(Constraint):
    """A sequence of non-empty strings (never a bare string), returned as a tuple; empty
    allowed (``()``: none)."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a sequence (list or tuple) of non-empty strings"

    def convert(self, value, args):
        if not isinstance(value, (list, tuple)):
            return None
        return tuple(value) if all(isinstance(v, str) and v for v in value) else None

    def hostile(self):
        return [*super().hostile(), ("string", "a: b"), ("empty entry", ("",)), ("int", (1,))]

    def example(self, args):
        return ()


class JsonMapping(MappingOf):
    """A mapping of string names to JSON values (finite numbers, strings, bools, ``None``
    and lists or mappings of them): settings passed to every task of a sweep and hashed in
    its resume key. ``None`` gives ``{}``."""

    def describe(self, args):
        return "a mapping (dict) of string names to JSON values (finite numbers, strings, bools)"

    def convert(self, value, args):
        import json

        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            return None
        json.dumps(dict(value), allow_nan=False)  # TypeError or ValueError: refused
        return dict(value)

    def hostile(self):
        return [*super().hostile(), ("nan value", {"a": math.nan}), ("int key", {1: 2})]


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


class Column(Constraint):
    """The name of a column of the table given as parameter ``table`` (a pandas
    DataFrame, checked before); ``many=True`` also a list of names, returned as a list."""

    def __init__(self, table: str, *, many: bool = False, none: bool = False):
        self.table, self.many, self.none = table, many, none

    def describe(self, args):
        columns = list(getattr(args.get(self.table), "columns", []))
        what = "a column name" + (" or a list of them" if self.many else "")
        return f"{what} of '{self.table}' {columns}"

    def convert(self, value, args):
        columns = set(getattr(args.get(self.table), "columns", []))
        names = value if self.many and isinstance(value, (list, tuple)) else [value]
        if not names or not all(isinstance(n, str) and n in columns for n in names):
            return None
        return list(names) if self.many else value

    def hostile(self):
        bad = [*super().hostile(), ("unknown", "no-such-column"), ("int", 1)]
        return [*bad, ("empty list", [])] if self.many else bad

    def example(self, args):
        columns = list(getattr(args.get(self.table), "columns", []))
        if not columns:
            raise LookupError(f"no column of '{self.table}' to name")
        return [columns[0]] if self.many else columns[0]


class Names(Constraint):
    """Names (a mapping's keys, such as settings) among ``allowed``; an unknown one is
    refused with the nearest allowed name (``difflib``): a typo never falls back to a
    default. Returned as a tuple."""

    def __init__(self, allowed, *, none: bool = False):
        self.allowed, self.none = tuple(allowed), none

    def describe(self, args):
        return f"only have the names {', '.join(map(str, self.allowed))}"

    def check(self, value, name, owner, args):
        if value is None and self.none:
            return None
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise refuse(name, owner, "names (a mapping or a sequence of names)", value)
        names = tuple(value)
        unknown = [k for k in names if k not in self.allowed]
        if not unknown:
            return names
        hints = []
        for k in unknown:
            near = difflib.get_close_matches(str(k), list(map(str, self.allowed)), n=1, cutoff=0.0)
            hints.append(f"{k!r} (nearest valid name: {near[0]!r})" if near else repr(k))
        raise ParameterError(
            f"The '{name}' parameter of {owner} must {self.describe(args)}. "
            f"Got unknown {', '.join(hints)} instead."
        )

    def hostile(self):
        return [*super().hostile(), ("unknown", ("no-such-name",)), ("string", "x")]

    def example(self, args):
        return self.allowed[:1]
