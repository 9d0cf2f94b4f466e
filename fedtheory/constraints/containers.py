"""Kinds of containers: a mapping of names to values (:class:`MappingOf`, and one that
must survive JSON: :class:`JsonMapping`), a sequence of values of one kind
(:class:`SequenceOf`), free texts (:class:`Texts`), a table column (:class:`Column`) and
names from an allowed set, refused with the nearest one (:class:`Names`)."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping

import numpy as np

from fedtheory.constraints.kind import Constraint, refuse
from fedtheory.errors import ParameterError


class MappingOf(Constraint):
    """A mapping (a dict of names to values), returned as a dict; ``None`` gives ``{}``.
    With ``values`` (a :class:`Constraint`, e.g.
    :class:`~fedtheory.constraints.objects.Function`), string keys and values it accepts,
    called ``plural`` in the message."""

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
