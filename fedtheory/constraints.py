r"""Parameters declared once: the check, the message and the hostile test values.

A public function states its parameters' constraints as data with :func:`declare`; the
decorator checks every declared argument before the body runs (in declaration order, so a
size may refer to a parameter checked before it), hands the body the converted value (a
float, an int, a float64 array, a tensor) and refuses a bad one with one line,

``The 'p' parameter of Bernoulli must be a finite real number in (0, 1]. Got 1.5 (float)
instead.``

naming the parameter, the constraint, the value and its type. The same declaration gives
the values a test must see refused (:meth:`Constraint.hostile`) and a valid value
(:meth:`Constraint.example`), so the suite's fuzz (``tests/test_fuzz_public_api.py``) is
generated from it.

Examples
--------
>>> @declare(p=Real(0.0, 1.0, low_open=True), rounds=Size())
... def bernoulli(p, rounds):
...     return p * rounds
>>> bernoulli(0.5, 4)
2.0
>>> try:
...     bernoulli(1.5, 4)
... except ParameterError as err:
...     print(err)
The 'p' parameter of bernoulli must be a finite real number in (0, 1]. Got 1.5 (float) instead.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from numbers import Integral
from numbers import Real as _Real
from pathlib import Path
from typing import Any

import numpy as np

from fedtheory.errors import ParameterError
from fedtheory.params import MAX_SIZE, STOCHASTIC_ATOL, interval

__all__ = [
    "Array",
    "Bool",
    "BoolArray",
    "Bytes",
    "Constraint",
    "Device",
    "Either",
    "Exemplified",
    "Fields",
    "Function",
    "Generator",
    "Having",
    "Indices",
    "Instance",
    "InstanceOf",
    "Integer",
    "Interval",
    "Location",
    "MappingOf",
    "Mask",
    "Option",
    "Probabilities",
    "Real",
    "RealUpTo",
    "SequenceOf",
    "Size",
    "StochasticMatrix",
    "VOCABULARY",
    "Tensor",
    "Text",
    "checking",
    "constraints_of",
    "declare",
    "trusted",
]

HUGE_INT = 2**70
"""An integer too large for the machine (an int64 overflows; no allocation can hold it)."""
DENORMAL = 5e-324
"""The smallest positive (subnormal) float: its reciprocal overflows."""


def shown(value: object) -> str:
    """A value and its type for a message: ``1.5 (float)``, ``'0.5' (str)``, ``None``,
    ``an array of shape (2, 3) (ndarray)``."""
    if value is None:
        return "None"
    kind = type(value).__name__
    if isinstance(value, np.ndarray) or type(value).__module__ == "torch":
        shape = tuple(getattr(value, "shape", ()))
        if int(np.prod(shape)) <= 6:
            text = np.array2string(np.asarray(value), precision=6, separator=", ")
        else:
            text = f"an array of shape {shape}"
        return f"{' '.join(text.split())} ({kind})"
    text = repr(value)
    text = text if len(text) <= 80 else f"{text[:77]}..."
    return f"{text} ({kind})"


def refuse(name: str, owner: str, constraint: str, value: object) -> ParameterError:
    """The one-line error: parameter, owner, constraint, value and its type."""
    return ParameterError(
        f"The '{name}' parameter of {owner} must be {constraint}. Got {shown(value)} instead."
    )


class Constraint:
    """What one parameter accepts. Subclasses implement :meth:`convert` (the check and the
    converted value), :meth:`describe` (the constraint as a phrase), :meth:`hostile` and
    :meth:`example`. ``none=True`` also accepts ``None`` (a default)."""

    none: bool = False

    def describe(self, args: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def convert(self, value: object, args: Mapping[str, Any]) -> object:
        """The converted value, or ``None`` when ``value`` is refused."""
        raise NotImplementedError

    def check(self, value: object, name: str, owner: str, args: Mapping[str, Any]) -> object:
        """The converted value of a valid ``value``; else a :class:`ParameterError`."""
        if value is None and self.none:
            return None
        try:
            out = None if value is None else self.convert(value, args)
        except (TypeError, ValueError, OverflowError, IndexError):
            out = None
        if out is None:
            what = self.describe(args) + (", or None" if self.none else "")
            raise refuse(name, owner, what, value)
        return out

    def hostile(self) -> list[tuple[str, object]]:
        """``(label, value)`` pairs this constraint must refuse whatever the other
        arguments are."""
        common = [("object", object())]
        return common if self.none else [*common, ("None", None)]

    def example(self, args: Mapping[str, Any]) -> object:
        """A valid value (given the arguments checked before), for generated tests."""
        raise NotImplementedError

    def edges(self, valid: object) -> list[tuple[str, object]]:
        """``(label, value)`` pairs at the edge of what this constraint accepts (``1e308``,
        a denormal, the largest size; arrays of ``valid``'s shape filled with them): a call
        must refuse them or give finite numbers."""
        return []


def _number(value: object) -> float | None:
    """A real number (not a bool, a string or a complex), as a float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, _Real):
        return None
    return float(value)


class Real(Constraint):
    """A finite real number in an interval (``low``/``high``: ``None`` for no end);
    ``nan=True`` also accepts NaN where it is documented to mean "not measured";
    ``infinite=True`` also accepts ``inf`` and ``-inf`` (a row's measured value and bound:
    NaN *violated* by the rule, ``inf`` a vacuous bound). Never a string, a bool or a complex
    number."""

    def __init__(self, low=None, high=None, *, low_open=False, high_open=False, nan=False,
                 infinite=False, none=False):  # fmt: skip
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        self.nan, self.infinite, self.none = nan, infinite, none

    def describe(self, args):
        if self.infinite and self.low is None and self.high is None:
            return "a real number (" + ("NaN, " if self.nan else "") + "inf and -inf included)"
        where = interval(self.low, self.high, low_open=self.low_open, high_open=self.high_open)
        kind = "a real number" if self.infinite else "a finite real number"
        return f"{kind} in {where}" + (" or NaN (not measured)" if self.nan else "")

    def _inside(self, x: float) -> bool:
        lo, hi = self.low, self.high
        return (lo is None or (x > lo if self.low_open else x >= lo)) and (
            hi is None or (x < hi if self.high_open else x <= hi)
        )

    def convert(self, value, args):
        x = _number(value)
        if x is not None and self.nan and math.isnan(x):
            return x
        allowed = x is not None and (math.isfinite(x) or self.infinite and not math.isnan(x))
        return x if allowed and self._inside(x) else None

    def hostile(self):
        nan = [] if self.nan else [("nan", math.nan)]
        inf = [] if self.infinite else [("inf", math.inf), ("-inf", -math.inf)]
        out = [*super().hostile(), *nan, *inf, ("string", "0.5"), ("bool", True),
               ("complex", 1 + 1j)]  # fmt: skip
        if self.low is not None:
            out.append(("below", self.low if self.low_open else self.low - 1.0))
        if self.high is not None:
            out.append(("above", self.high if self.high_open else self.high + 1.0))
        return out

    def edges(self, valid):
        if self.infinite:  # inf is accepted: an overflow to it is no error to find
            return []
        values = {"1e308": 1e308, "-1e308": -1e308, "denormal": DENORMAL, "zero": 0.0}
        return [(k, v) for k, v in values.items() if self._inside(v)]

    def example(self, args):
        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            return (lo + hi) / 2
        if lo is not None:
            return float(lo) + 1.0
        return 0.5 if hi is None or hi > 0.5 else float(hi) - 1.0


class Integer(Constraint):
    """An integer in ``[low, high]`` (never a float such as ``2.0``, never a bool); an end
    may be another parameter (``"num_clients"``), its attribute (``"self.num_clients"``) or
    an array's dimension (``"success[1]"``)."""

    def __init__(self, low=None, high=None, *, high_open=False, multiple=1, infinite=False,
                 none=False):  # fmt: skip
        self.low, self.high, self.high_open, self.none = low, high, high_open, none
        self.multiple, self.infinite = multiple, infinite

    def _ends(self, args) -> tuple[int | None, int | None]:
        return _dimension(self.low, args), _dimension(self.high, args)

    def describe(self, args):
        low, high = self._ends(args)
        where = interval(low, high, low_open=False, high_open=self.high_open)
        times = f" and a multiple of {self.multiple}" if self.multiple > 1 else ""
        return f"an integer in {where}{times}" + (" or inf (none)" if self.infinite else "")

    def convert(self, value, args):
        if self.infinite and isinstance(value, float) and value == math.inf:
            return math.inf
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
            return None
        k, (low, high) = int(value), self._ends(args)
        above = high is not None and (k >= high if self.high_open else k > high)
        return k if (low is None or k >= low) and not above and k % self.multiple == 0 else None

    def hostile(self):
        out = [*super().hostile(), ("float", 2.5), ("nan", math.nan), ("string", "2"),
               ("bool", True), ("complex", 2j)]  # fmt: skip
        if isinstance(self.low, int):
            out.append(("below", self.low - 1))
        if isinstance(self.high, int):
            out.append(("above", self.high if self.high_open else self.high + 1))
        if self.multiple > 1 and isinstance(self.low, int):
            out.append(("not a multiple", self.low + 1))
        return out

    def example(self, args):
        low = self._ends(args)[0]
        return -(-low // self.multiple) * self.multiple if low is not None else 0

    def edges(self, valid):
        ends = (("lowest", self.low), ("highest", self.high))
        return [(f"{k} {v}", v) for k, v in ends if isinstance(v, int)]


class Size(Integer):
    """A count (rounds, clients, samples, dimension): an integer in ``[low, MAX_SIZE]``."""

    def __init__(self, low: int = 1, *, multiple: int = 1, infinite=False, none=False):
        super().__init__(low, MAX_SIZE, multiple=multiple, infinite=infinite, none=none)

    def hostile(self):
        return [*super().hostile(), ("huge int", HUGE_INT)]

    def example(self, args):
        return max(super().example(args), 2)


class Bool(Constraint):
    """``True`` or ``False`` (``numpy.bool_`` included; never ``1`` or ``"yes"``)."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a bool"

    def convert(self, value, args):
        return bool(value) if isinstance(value, (bool, np.bool_)) else None

    def hostile(self):
        return [*super().hostile(), ("int", 1), ("string", "yes")]

    def example(self, args):
        return True


class Option(Constraint):
    """One of a few values (a method's or a variant's name)."""

    def __init__(self, *choices, none: bool = False):
        self.choices, self.none = choices, none

    def describe(self, args):
        return f"one of {', '.join(repr(c) for c in self.choices)}"

    def convert(self, value, args):
        hit = [c for c in self.choices if type(c) is type(value) and c == value]
        return hit[0] if hit else None

    def hostile(self):
        return [*super().hostile(), ("unknown", "no-such-option"), ("int", 1)]

    def example(self, args):
        return self.choices[0]


class Text(Constraint):
    """A non-empty string (a name, a key, a label)."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a non-empty string"

    def convert(self, value, args):
        return value if isinstance(value, str) and value else None

    def hostile(self):
        return [*super().hostile(), ("empty", ""), ("int", 1)]

    def example(self, args):
        return "name"


def _lookup(spec: str, args: Mapping[str, Any]) -> object:
    """Another argument (``"num_clients"``) or its attribute (``"self.dim"``)."""
    name, _, attribute = spec.partition(".")
    value = args.get(name)
    return getattr(value, attribute, None) if attribute and value is not None else value


def _dimension(spec: int | str | None, args: Mapping[str, Any]) -> int | None:
    """A declared dimension: a number, ``None`` (any), the value of another parameter
    (``"num_clients"``) or of its attribute (``"self.dim"``), or a dimension of another
    array parameter (``"w[1]"``)."""
    if spec is None or isinstance(spec, int):
        return spec
    name, _, index = spec.partition("[")
    other = _lookup(name, args)
    if other is None:
        return None
    if index:
        shape = tuple(np.shape(other))
        k = int(index.rstrip("]"))
        return shape[k] if k < len(shape) else None
    return int(other)


def _has_text(value: object) -> bool:
    """Whether ``value`` is, or holds (a nested list, an object array), a string."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_text(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind in "SUO"


class Array(Constraint):
    """A float64 array (a copy): ``ndim`` or ``shape`` (entries: a number, ``None`` for
    any, a parameter's name or ``"w[1]"``, a dimension of another array), at least
    ``min_size`` entries, every entry finite and in the interval; ``integer=True`` also
    requires whole numbers (returned as int64, never truncated); ``broadcast`` names a
    parameter (checked before) whose shape this one must broadcast with; ``like`` names one
    whose shape this one must have, unless it is a scalar (then broadcast to that shape:
    never a silent broadcast of a mismatched length). ``finite=False`` lets NaN and inf
    through (a simulator's inner step, whose caller reports a diverging run).
    ``scalar=True`` also accepts a single number (returned as a 0-d array: one value for
    every entry of the declared shape, e.g. a constant quota). ``high`` may also be a
    function of the arguments checked before (``lambda a: a["k"] / a["n"]``).
    ``copy=False`` returns a float64 NumPy array as given (a large result record's arrays,
    not duplicated). With a leading ``...`` in ``shape``, ``ndim`` may list the allowed
    numbers of dimensions (``(2, 3)``: ``[R, d]`` or ``[R, N, d]``)."""

    def __init__(self, *, ndim=None, shape=None, low=None, high=None, low_open=False,
                 high_open=False, min_size=1, integer=False, broadcast=None, like=None,
                 finite=True, scalar=False, copy=True, none=False):  # fmt: skip
        self.broadcast, self.like, self.finite, self.scalar = broadcast, like, finite, scalar
        self.copy = copy
        self.leading = shape is not None and shape[0] is Ellipsis  # (..., N): trailing dims
        shape = shape[1:] if self.leading else shape
        self.ndim = len(shape) if shape is not None and not self.leading else ndim
        self.shape, self.min_size, self.integer, self.none = shape, min_size, integer, none
        known = high if high is None or isinstance(high, (int, float)) else None
        self.entries = Real(low, known, low_open=low_open, high_open=high_open)
        self.high_spec = high  # a number, a parameter or its attribute, or a function

    def _entries(self, args) -> Real:
        """The entries' interval, its upper end read from the other arguments if declared so."""
        e, spec = self.entries, self.high_spec
        if spec is None or isinstance(spec, (int, float)):
            return e
        try:
            high = spec(args) if callable(spec) else _dimension(spec, args)
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
            high = None  # the arguments it reads are not known (a test's edge values)
        return Real(e.low, high, low_open=e.low_open, high_open=e.high_open)

    def _want_shape(self, args) -> tuple[int | None, ...] | None:
        if self.shape is None:
            return None
        return tuple(_dimension(s, args) for s in self.shape)

    def describe(self, args):
        what = "an array of integers" if self.integer else "an array of real numbers"
        shape = self._want_shape(args)
        if shape is not None:
            dims = ["any" if s is None else str(s) for s in shape]
            what += " of shape (" + ", ".join(["...", *dims] if self.leading else dims)
            what += ",)" if len(dims) == 1 and not self.leading else ")"
        if self.ndim is not None and (shape is None or self.leading):
            what += f" with {' or '.join(map(str, self._ndims()))} dimension(s)"
        if self.broadcast is not None:
            other = tuple(np.shape(args.get(self.broadcast)))
            what += f" broadcasting with '{self.broadcast}' {other}"
        if self.like is not None:
            like = tuple(np.shape(args.get(self.like)))
            what = f"a scalar or {what} of shape {like} like '{self.like}'"
        if self.min_size > 1:
            what += f", at least {self.min_size} entries"
        e = self._entries(args)
        where = interval(e.low, e.high, low_open=e.low_open, high_open=e.high_open)
        finite = ", finite," if self.finite else ""
        what = f"a number or {what}" if self.scalar else what
        return f"{what}{finite} with entries in {where}" + self._extra()

    def _extra(self) -> str:
        return ""

    def _array(self, value) -> np.ndarray | None:
        if _has_text(value) or isinstance(value, (bool, np.bool_)):
            return None
        if type(value).__module__ == "torch":
            value = value.detach().cpu().numpy()
        a = np.asarray(value)
        if a.dtype.kind not in "biuf":  # complex, objects, ragged lists
            return None
        return a.astype(np.float64, copy=self.copy)

    def convert(self, value, args):
        a = self._array(value)
        if a is None or a.size < self.min_size:
            return None
        if self.scalar and a.ndim == 0:
            return a if np.isfinite(a) and self._entries(args)._inside(float(a)) else None
        if self.ndim is not None and a.ndim not in self._ndims():
            return None
        want = self._want_shape(args)
        if want is not None:
            if a.ndim < len(want):
                return None
            trailing = a.shape[a.ndim - len(want) :]
            if any(s not in (None, n) for s, n in zip(want, trailing, strict=True)):
                return None
        if self.broadcast is not None:
            np.broadcast_shapes(a.shape, np.shape(args.get(self.broadcast)))  # else ValueError
        if self.like is not None:
            like = tuple(np.shape(args.get(self.like)))
            if a.ndim and a.shape != like:
                return None
            a = np.broadcast_to(a, like).copy()
        e = self._entries(args)
        kept = a[np.isfinite(a)] if not self.finite else a
        inside = kept.size == 0 or all(e._inside(x) for x in (kept.min(), kept.max()))
        if not ((not self.finite or np.isfinite(a).all()) and inside):
            return None
        if self.integer:
            if np.any(a != np.round(a)) or np.abs(a).max(initial=0.0) >= 2.0**63:
                return None
            a = a.astype(np.int64)
        return self._finish(a)

    def _finish(self, a: np.ndarray) -> np.ndarray | None:
        return a

    def hostile(self):
        lead = [[0.5], [0.5, 0.5]]
        bad = [*super().hostile(), *([("empty", [])] if self.min_size else []), ("ragged", lead),
               ("complex", np.array([0.5 + 1j, 0.5])), ("strings", ["0.5", "0.5"]),
               ("scalar string", "0.5"), ("bool", True)]  # fmt: skip
        if self.finite:
            bad += [("nan inside", [0.5, math.nan]), ("inf inside", [0.5, math.inf])]
        return bad

    def edges(self, valid):
        shape = tuple(np.shape(valid))
        e = self._entries({})  # an upper end read from another parameter: none known here
        return [(f"{k} inside", self._edge(np.full(shape, v))) for k, v in e.edges(0)]

    def _edge(self, a: np.ndarray) -> object:
        return a

    def _ndims(self) -> tuple[int, ...]:
        """The allowed numbers of dimensions (``ndim``, one or several)."""
        return tuple(self.ndim) if isinstance(self.ndim, tuple) else (self.ndim,)

    def example(self, args):
        want = self._want_shape(args)
        lead = min(self._ndims()) - len(want or ()) if self.ndim is not None else 0
        if want:
            shape = (2,) * max(lead, 0) + tuple(2 if s is None else s for s in want)
        else:
            shape = (2,) * (min(self._ndims()) if self.ndim is not None else 1)
        if self.like is not None and args.get(self.like) is not None:
            shape = tuple(np.shape(args[self.like]))
        value = self._entries(args).example(args)
        return np.full(shape, math.ceil(value) if self.integer else value)


class StochasticMatrix(Array):
    """A square matrix with entries in [0, 1] and rows summing to one (a Markov chain's
    transition matrix); ``square=False``: any number of columns (rows of proportions)."""

    def __init__(self, *, square: bool = True, none: bool = False):
        super().__init__(ndim=2, low=0.0, high=1.0, none=none)
        self.square = square

    def _extra(self):
        return (", square," if self.square else "") + " with row sums equal to 1"

    def _finish(self, a):
        square = a.shape[0] == a.shape[1] or not self.square
        rows = np.abs(a.sum(axis=1) - 1.0) <= STOCHASTIC_ATOL * a.shape[1]
        return a if square and rows.all() else None

    def hostile(self):
        square = [("not square", [[0.5, 0.5]])] if self.square else []
        return [*super().hostile(), *square, ("rows not summing to 1", [[0.5, 0.6], [0.5, 0.5]])]

    def edges(self, valid):
        return [("identity", np.eye(2))]

    def example(self, args):
        return np.array([[0.9, 0.1], [0.3, 0.7]])


class Interval(Array):
    """A pair ``(low, high)`` of finite real numbers with ``low <= high``, both in the
    declared interval (a confidence interval, a range of weights); returned as a tuple of
    floats."""

    def __init__(self, low=None, high=None, *, low_open=False, high_open=False, none=False):
        super().__init__(shape=(2,), low=low, high=high, low_open=low_open,
                         high_open=high_open, none=none)  # fmt: skip

    def _extra(self):
        return ", low <= high"

    def _finish(self, a):
        return (float(a[0]), float(a[1])) if a[0] <= a[1] else None

    def hostile(self):
        return [*super().hostile(), ("reversed", (1.0, 0.5)), ("three", (0.1, 0.2, 0.3))]

    def example(self, args):
        return tuple(float(x) for x in super().example(args))

    def edges(self, valid):
        return [(label, tuple(v)) for label, v in super().edges(np.zeros(2))]


class Probabilities(Array):
    """Non-negative (``positive=True``: positive) weights summing to one, ``size`` of them
    (a number or a parameter's name)."""

    def __init__(self, *, size=None, positive=False, none=False):
        super().__init__(shape=(size,), low=0.0, high=1.0, low_open=positive, none=none)

    def _extra(self):
        return ", summing to 1"

    def _finish(self, a):
        return a if abs(a.sum() - 1.0) <= STOCHASTIC_ATOL * max(1, a.size) else None

    def hostile(self):
        return [*super().hostile(), ("not summing to 1", [0.5, 0.6]), ("negative", [1.5, -0.5])]

    def edges(self, valid):
        if self.entries.low_open or np.size(valid) < 2:
            return []
        return [("one-hot", np.eye(np.size(valid))[0])]

    def example(self, args):
        n = _dimension(self.shape[0], args) or 2
        return np.full(n, 1.0 / n)


class Tensor(Array):
    """A torch tensor of ``dtype`` (float64 by default; ``"int64"`` for indices) with the
    declared shape, every entry finite and in the interval; returned as given (no copy).
    The entries are read on the CPU only: on an accelerator reading them would synchronise
    the host with the device (and break graph capture), so there only the type, dtype and
    shape are checked and the simulator's finiteness check after each round reports a
    non-finite value."""

    def __init__(self, *, dtype: str = "float64", **kwargs):
        super().__init__(**kwargs)
        self.dtype = dtype

    def describe(self, args):
        return super().describe(args).replace("an array", f"a {self.dtype} tensor", 1)

    def _dtype_ok(self, value) -> bool:
        if self.dtype == "floating":
            return value.is_floating_point()
        import torch

        return value.dtype == getattr(torch, self.dtype)

    def convert(self, value, args):
        import torch

        if not isinstance(value, torch.Tensor) or not self._dtype_ok(value):
            return None
        if value.device.type != "cpu" or self._shape_only():
            want = self._want_shape(args)
            if self.ndim is not None and value.dim() not in self._ndims():
                return None
            if want is not None and value.dim() < len(want) or value.numel() < self.min_size:
                return None
            pairs = zip(want or (), value.shape[value.dim() - len(want or ()) :], strict=True)
            return value if all(s in (None, n) for s, n in pairs) else None
        return value if super().convert(value, args) is not None else None

    def _shape_only(self) -> bool:
        """Whether nothing about the entries is declared (``finite=False``, no interval):
        then the entries are not read at all, on any device (a per-round argument of the
        simulator costs no copy)."""
        e = self.entries
        return not self.finite and e.low is None and e.high is None and type(self) is Tensor

    def hostile(self):
        import torch

        nan = [("nan tensor", torch.tensor([0.5, math.nan], dtype=torch.float64))]
        return [*super().hostile(), ("array", np.zeros(2)), *(nan if self.finite else [])]

    def example(self, args):
        import torch

        return torch.as_tensor(super().example(args)).to(self._torch_dtype())

    def _torch_dtype(self):
        import torch

        return torch.float64 if self.dtype == "floating" else getattr(torch, self.dtype)

    def _edge(self, a):
        import torch

        return torch.as_tensor(a).to(self._torch_dtype())


class Indices(Tensor):
    """An int64 tensor of indices in ``[0, count)`` (``count``: a number, a parameter or an
    attribute such as ``"self.num_clients"``) with the declared shape."""

    def __init__(self, count: int | str, *, shape=None, none: bool = False, min_size: int = 1):
        super().__init__(dtype="int64", shape=shape, low=0, none=none, min_size=min_size)
        self.count = count

    def describe(self, args):
        n = _dimension(self.count, args)
        return super().describe(args).replace(", finite, with entries in [0, inf)",
                                              f" with entries in [0, {n})", 1)  # fmt: skip

    def convert(self, value, args):
        out = super().convert(value, args)
        n = _dimension(self.count, args)
        if out is None or n is None or out.device.type != "cpu" or out.numel() == 0:
            return out
        return out if int(out.max()) < n else None

    def hostile(self):
        import torch

        return [*super().hostile(), ("float tensor", torch.zeros(2, dtype=torch.float64)),
                ("out of range", torch.tensor([HUGE_INT // 2**8]))]  # fmt: skip

    def edges(self, valid):
        return []

    def example(self, args):
        import torch

        want = self._want_shape(args)
        return torch.zeros(tuple(2 if s is None else s for s in want or (2,)), dtype=torch.int64)


class MappingOf(Constraint):
    """A mapping (a dict of names to values), returned as a dict; ``None`` gives ``{}``.
    With ``values`` (a :class:`Constraint`, e.g. :class:`Function`), string keys and values
    it accepts, called ``plural`` in the message."""

    def __init__(self, values: Constraint | None = None, plural: str = "values"):
        self.none, self.values, self.plural = True, values, plural

    def check(self, value, name, owner, args):
        return {} if value is None else super().check(value, name, owner, args)

    def describe(self, args):
        return f"a mapping (dict) of names to {self.plural}"

    def convert(self, value, args):
        if not isinstance(value, Mapping):
            return None
        if self.values is None:
            return dict(value)
        items = {k: self.values.convert(v, args) for k, v in value.items()}
        ok = all(isinstance(k, str) and v is not None for k, v in items.items())
        return items if ok else None

    def hostile(self):
        bad = [("object", object()), ("list", [1, 2]), ("string", "a=1")]
        return bad + ([("bad value", {"a": object()})] if self.values is not None else [])

    def example(self, args):
        return {}


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


class Generator(Constraint):
    """A ``torch.Generator`` (``numpy=True``: a ``numpy.random.Generator``, e.g.
    :func:`fedtheory.rng.numpy_rng`); never the global random state."""

    def __init__(self, *, numpy: bool = False, none: bool = False):
        self.numpy, self.none = numpy, none

    def describe(self, args):
        return "a numpy.random.Generator" if self.numpy else "a torch.Generator"

    def _kind(self) -> type:
        import torch

        return np.random.Generator if self.numpy else torch.Generator

    def convert(self, value, args):
        return value if isinstance(value, self._kind()) else None

    def hostile(self):
        import torch

        other = ("torch generator", torch.Generator()) if self.numpy else (
            "numpy generator", np.random.default_rng(0))  # fmt: skip
        return [*super().hostile(), ("seed", 0), other]

    def example(self, args):
        import torch

        return np.random.default_rng(0) if self.numpy else torch.Generator().manual_seed(0)


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


class Mask(Constraint):
    """A boolean mask (availability, participation) of ``ndim`` dimensions or ``shape``
    (entries as for :class:`Array`): a NumPy array (``True``/``False`` or 0/1 numbers,
    returned as a bool array) or, with ``tensor=True``, a ``torch.bool`` tensor (returned
    as given, its entries never read: a mask's every value is valid); ``copy=False``
    returns a bool NumPy array as given (a run record's masks, not duplicated)."""

    def __init__(self, *, ndim=None, shape=None, tensor=False, min_size=0, copy=True,
                 none=False):  # fmt: skip
        self.leading = shape is not None and shape[0] is Ellipsis  # (..., N): trailing dims
        shape = shape[1:] if self.leading else shape
        self.ndim = len(shape) if shape is not None and not self.leading else ndim
        self.shape, self.tensor, self.min_size, self.none = shape, tensor, min_size, none
        self.copy = copy

    def describe(self, args):
        what = "a torch.bool tensor" if self.tensor else "a boolean (0/1) array"
        want = None if self.shape is None else tuple(_dimension(s, args) for s in self.shape)
        if want is not None:
            dims = ["..."] * self.leading + ["any" if s is None else str(s) for s in want]
            return what + " of shape (" + ", ".join(dims) + ")"
        return what + ("" if self.ndim is None else f" with {self.ndim} dimension(s)")

    def _shape_ok(self, shape, args) -> bool:
        if self.ndim is not None and len(shape) != self.ndim:
            return False
        want = None if self.shape is None else [_dimension(s, args) for s in self.shape]
        if want is not None and len(shape) < len(want):
            return False
        trailing = shape[len(shape) - len(want or ()) :] if self.leading else shape
        return all(w in (None, n) for w, n in zip(want or (), trailing, strict=False))

    def convert(self, value, args):
        if self.tensor:
            import torch

            ok = isinstance(value, torch.Tensor) and value.dtype == torch.bool
            return value if ok and self._shape_ok(value.shape, args) else None
        if _has_text(value):
            return None
        if type(value).__module__ == "torch":
            value = value.detach().cpu().numpy()
        a = np.asarray(value)
        if a.dtype.kind not in "biuf" or not self._shape_ok(a.shape, args):
            return None
        if a.size < self.min_size or not (a.dtype == bool or np.isin(a, (0, 1)).all()):
            return None
        return a.astype(bool, copy=self.copy)

    def hostile(self):
        bad = [*super().hostile(), ("string", "1"), ("ragged", [[True], [True, False]])]
        if self.ndim is not None:
            bad.append(("wrong dimensions", np.ones((2,) * (self.ndim + 1), dtype=bool)))
        return bad if self.tensor else [*bad, ("two", np.full((2,) * (self.ndim or 1), 2))]

    def example(self, args):
        shape = tuple(
            2 if s is None else s
            for s in (self.shape or (None,) * (self.ndim or 1))
            for s in [_dimension(s, args)]
        )
        mask = np.ones(shape, dtype=bool)
        if self.tensor:
            import torch

            return torch.from_numpy(mask)
        return mask


class Bytes(Constraint):
    """A number of bytes: a positive integer or a string with a suffix ``K``, ``M``, ``G``
    or ``T`` (``"8G"``); returned as an int."""

    _SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a positive number of bytes, optionally with a suffix K, M, G or T (e.g. '8G')"

    def convert(self, value, args):
        if not isinstance(value, str):
            return Integer(1).convert(value, args)
        text = value.strip().upper().removesuffix("B")
        unit = text[-1:] if text[-1:] in self._SUFFIX else ""
        amount = float(text[: len(text) - len(unit)].strip())  # ValueError: refused
        ok = amount > 0 and amount * self._SUFFIX[unit] <= 2**62
        return int(amount * self._SUFFIX[unit]) if ok else None

    def hostile(self):
        return [*super().hostile(), ("zero", 0), ("negative", "-1G"), ("unit", "8X"),
                ("float", 1.5), ("nan", "nan")]  # fmt: skip

    def example(self, args):
        return "1G"


class Location(Constraint):
    """A file or folder path: a non-empty string or an ``os.PathLike``, returned as a
    :class:`pathlib.Path`; ``suffixes``: its allowed endings (``".json"``); ``exists``: a
    file that exists."""

    def __init__(self, *, suffixes: tuple[str, ...] = (), exists=False, none=False):
        self.suffixes, self.exists, self.none = suffixes, exists, none

    def describe(self, args):
        what = "an existing file" if self.exists else "a path"
        ends = f" ending in {' or '.join(self.suffixes)}" if self.suffixes else ""
        return f"{what}{ends} (a non-empty string or an os.PathLike)"

    def convert(self, value, args):
        if isinstance(value, str) and value and "\x00" not in value:
            path = Path(value)
        elif isinstance(value, os.PathLike):
            path = Path(value)
        else:
            return None
        if self.suffixes and path.suffix not in self.suffixes:
            return None
        return path if not self.exists or path.is_file() else None

    def hostile(self):
        bad = [*super().hostile(), ("empty", ""), ("int", 1), ("bytes", b"x")]
        if self.suffixes:
            bad.append(("other suffix", f"x{self.suffixes[0]}.txt"))
        if self.exists:
            bad.append(
                ("missing", str(Path(tempfile.mkdtemp()) / f"x{''.join(self.suffixes[:1])}"))
            )
        return bad

    def example(self, args):
        return Path(tempfile.mkdtemp()) / f"example{''.join(self.suffixes[:1])}"


class Device(Constraint):
    """A torch device this machine has: ``None`` (the CPU), a name (``"cpu"``, ``"cuda"``,
    ``"cuda:1"``) or a ``torch.device``; returned as a ``torch.device``."""

    none = True

    def describe(self, args):
        return "None, a torch.device or a device name such as 'cpu' or 'cuda' that this machine has"

    def check(self, value, name, owner, args):
        from fedtheory.device import check_device

        return check_device(value, name, owner)

    def hostile(self):
        return [("object", object()), ("unknown", "no-such-device"), ("number", 1.5)]

    def example(self, args):
        return None


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


def _owner(fn: Callable) -> str:
    """``Bernoulli`` for ``Bernoulli.__init__``, ``QuadraticProblem.grad``, ``local_sgd``."""
    return fn.__qualname__.rpartition("<locals>.")[2].removesuffix(".__init__")


VOCABULARY: dict[str, Constraint] = {
    "rounds": Size(),
    "replicates": Size(),
    "num_clients": Size(),
    "dim": Size(),
    "steps": Size(),
    "local_steps": Size(),
    "seed": Integer(0),
    "start": Integer(0),
    "t": Integer(0),
    "lr": Real(0.0, low_open=True),
    "server_lr": Real(0.0, low_open=True),
    "prox": Real(0.0),
    "generator": Generator(none=True),
    "device": Device(),
    "max_seconds": Real(0.0, low_open=True, none=True),
}
"""Parameters that mean the same everywhere, declared by name: ``@declare("rounds",
"seed", lr=...)``. ``rounds``, ``replicates``, clients, dimensions and local steps are
sizes (integers in ``[1, MAX_SIZE]``); a seed, a first round ``start`` and a round index
``t`` are integers ``>= 0``; step sizes are positive and FedProx's coefficient ``prox`` is
``>= 0`` (CA-Fed §3.1); ``max_seconds`` is the time budget of a call
(:mod:`fedtheory.budget`)."""


def _non_finite(result: object, depth: int = 0) -> bool:
    """Whether a result (a number, an array, a CPU tensor, a tuple, a NamedTuple, a mapping
    or a dataclass record of them) holds NaN or inf. A tensor on an accelerator is not
    read (no host sync)."""
    if isinstance(result, (bool, np.bool_)):
        return False
    if isinstance(result, (float, np.floating)):
        return not math.isfinite(result)
    if isinstance(result, np.ndarray):
        return result.dtype.kind in "fc" and not bool(np.isfinite(result).all())
    if type(result).__module__ == "torch" and hasattr(result, "is_floating_point"):
        if result.device.type != "cpu" or not result.is_floating_point():
            return False
        return not bool(result.isfinite().all())
    if depth < 3 and isinstance(result, (tuple, list)):
        return any(_non_finite(v, depth + 1) for v in result)
    if depth < 3 and isinstance(result, Mapping):
        return any(_non_finite(v, depth + 1) for v in result.values())
    if depth < 3 and hasattr(result, "__dataclass_fields__") and not isinstance(result, type):
        return any(_non_finite(getattr(result, f), depth + 1) for f in result.__dataclass_fields__)
    return False


def _magnitude(value: object) -> float:
    """The largest absolute entry of a number, an array or a tensor (0 for anything else)."""
    if type(value).__module__ == "torch" and hasattr(value, "is_floating_point"):
        value = value.detach().cpu().double().numpy() if value.numel() else 0.0
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (_Real, np.ndarray)):
        return 0.0
    a = np.abs(np.asarray(value, dtype=np.float64))
    return float(a.max(initial=0.0))


def overflow(owner: str, values: Mapping[str, Any]) -> ParameterError:
    """The error of a non-finite result from accepted (finite) input: it names the numeric
    argument of largest magnitude, which is too large for the result to be finite."""
    sizes = {k: _magnitude(v) for k, v in values.items() if k != "self"}
    name = max(sizes, key=sizes.get)
    return ParameterError(
        f"The '{name}' parameter of {owner} must keep the result finite (it is NaN or inf: an "
        f"overflow, or a zero denominator). Got the largest magnitude, {sizes[name]:g}, there."
    )


_FACTORY = (
    inspect.signature(
        dataclasses.make_dataclass("_D", [("x", dict, dataclasses.field(default_factory=dict))])
    )
    .parameters["x"]
    .default
)
"""The default a dataclass's ``__init__`` receives for a field with a ``default_factory``
(the field is then built by the factory: nothing to check)."""

_TRUSTED = contextvars.ContextVar("fedtheory_trusted_arguments", default=False)


@contextlib.contextmanager
def trusted() -> Iterator[None]:
    """Within this context declared functions run without their checks: the simulator's
    rounds (:func:`fedtheory.sim.simulate`) call the algorithms' ``step``, the aggregators'
    ``weights`` and the problems' ``grad`` with arguments it built itself, every round, and
    checked them once at the entry (a check per call would cost more than the round)."""
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def checking() -> bool:
    """Whether declared checks run here (``False`` inside :func:`trusted`): a body's own
    check of a relation between its arguments is skipped where the caller built them."""
    return not _TRUSTED.get()


def declare(*names: str, finite_result: bool = False, **constraints: Constraint) -> Callable:
    """Declare a function's parameters (module docstring): each argument named is checked
    by its :class:`Constraint` before the body runs and replaced by its converted value.
    On a class (a dataclass record), its ``__init__`` is declared. ``names`` take their
    constraint from :data:`VOCABULARY`; ``finite_result=True`` also
    refuses a result holding NaN or inf (an overflow from finite input), naming the input
    of largest magnitude. A name the function takes through its ``**options`` (passed on to
    a parent's constructor) is checked when it is given."""
    constraints = {**{n: VOCABULARY[n] for n in names}, **constraints}

    def wrap(fn: Callable) -> Callable:
        if inspect.isclass(fn):  # a record (a dataclass): its generated __init__
            fn.__init__ = wrap(fn.__init__)
            return fn
        signature = inspect.signature(fn)
        options = next(  # a **options parameter: declared names it passes on are checked
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None
        )
        unknown = set(constraints) - set(signature.parameters)
        if unknown and options is None:  # a typo in a declaration fails at import
            raise TypeError(f"{fn.__qualname__} has no parameter {sorted(unknown)}")
        owner = _owner(fn)
        method = next(iter(signature.parameters), None) in ("self", "cls")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            if _TRUSTED.get():
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = bound.arguments
            where = owner
            if method and "self" in values:  # the instance's own class: Bernoulli.sample
                cls = type(values["self"]).__name__
                where = cls if fn.__name__ == "__init__" else f"{cls}.{fn.__name__}"
            passed_on = values.get(options, {}) if options is not None else {}
            for name, constraint in constraints.items():
                if name in unknown:  # passed on through **options, checked where given
                    if name in passed_on:
                        passed_on[name] = constraint.check(passed_on[name], name, where, values)
                    continue
                if values[name] is _FACTORY:  # a dataclass field's default_factory, not given
                    continue
                values[name] = constraint.check(values[name], name, where, values)
            if not finite_result:
                return fn(*bound.args, **bound.kwargs)
            with np.errstate(over="ignore", invalid="ignore"):  # refused just below
                out = fn(*bound.args, **bound.kwargs)
            if _non_finite(out):
                raise overflow(where, values)
            return out

        checked.__constraints__ = dict(constraints)
        return checked

    return wrap


def constraints_of(obj: object) -> dict[str, Constraint] | None:
    """The declared constraints of a function, a method or a class (its ``__init__``), or
    ``None`` where nothing is declared."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    target = getattr(target, "__func__", target)
    return getattr(target, "__constraints__", None)


# kinds added for bounds/pep/problems ------------------------------------------------------
class BoolArray(Array):
    """A boolean (0/1) array with every option of :class:`Array` (``like=``, ``shape=``):
    ``True``/``False`` or the integers 0 and 1, returned as a bool array (:class:`Mask`
    is the simulator's mask, a NumPy array or a ``torch.bool`` tensor)."""

    def __init__(self, **kwargs):
        super().__init__(low=0.0, high=1.0, integer=True, **kwargs)

    def describe(self, args):
        what = super().describe(args).replace("an array of integers", "a boolean (0/1) array", 1)
        return what.replace(", finite, with entries in [0, 1]", "")

    def _array(self, value):
        if isinstance(value, (bool, np.bool_)):
            return np.asarray(value, dtype=np.float64)
        return super()._array(value)

    def _finish(self, a):
        return a.astype(bool)

    def hostile(self):
        bad = [h for h in super().hostile() if h[0] != "bool"]
        return [*bad, ("not 0/1", [0.5, 1.0]), ("two", [2, 0])]

    def edges(self, valid):
        return [("all False", np.zeros(np.shape(valid), dtype=bool))]

    def example(self, args):
        return np.ones(np.shape(super().example(args)), dtype=bool)


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


def record(**constraints: Constraint) -> Callable:
    """Declare a (data)class's constructor parameters: ``@record(...)`` above ``@dataclass``
    is :func:`declare` on the class (kept for the records that use this name)."""
    return declare(**constraints)


class Label(Text):
    """A string, possibly empty (a claim's or a row's label, ``""`` for none)."""

    def describe(self, args):
        return "a string"

    def convert(self, value, args):
        return value if isinstance(value, str) else None

    def hostile(self):
        return [*Constraint.hostile(self), ("int", 1), ("bytes", b"x")]


# kinds added for pep/bounds ---------------------------------------------------------------
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


class RealUpTo(Real):
    """A finite real number in an interval whose ends may be other parameters (``"L"``,
    checked before this one): a strong-convexity modulus ``mu`` in ``[0, L)``."""

    def __init__(self, low=None, high=None, **kwargs):
        super().__init__(low, high, **kwargs)
        self.low_spec, self.high_spec = low, high

    def _at(self, args) -> Real:
        def end(spec):
            if not isinstance(spec, str):
                return spec
            other = _lookup(spec, args)
            return None if other is None else float(other)

        return Real(end(self.low_spec), end(self.high_spec), low_open=self.low_open,
                    high_open=self.high_open)  # fmt: skip

    def describe(self, args):
        return self._at(args).describe(args)

    def convert(self, value, args):
        return self._at(args).convert(value, args)

    def hostile(self):
        fixed = Real(*(None if isinstance(s, str) else s for s in (self.low_spec, self.high_spec)),
                     low_open=self.low_open, high_open=self.high_open)  # fmt: skip
        return fixed.hostile()

    def edges(self, valid):
        return [("zero", 0.0), ("denormal", DENORMAL)]

    def example(self, args):
        """Inside the interval; below 1 (the other parameter's own example, see
        :meth:`Real.example`) where that parameter is not known yet."""
        at = self._at(args)
        if at.high is None and isinstance(self.high_spec, str) and at.low is not None:
            return at.low + 0.5
        return at.example(args)


# kinds added for sweep/verdict/tightness --------------------------------------------------
class Support(Constraint):
    """The support of a quantity: a pair ``(low, high)`` of real numbers with ``low <=
    high``, either end possibly infinite (``(0, inf)`` for a squared error), never NaN;
    returned as a tuple of floats (:class:`Interval` is a finite pair)."""

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a pair (low, high) of real numbers (either may be infinite) with low <= high"

    def convert(self, value, args):
        if isinstance(value, (str, bytes, Mapping)) or len(value) != 2:  # TypeError: refused
            return None
        pair = tuple(_number(v) for v in value)
        if any(v is None or math.isnan(v) for v in pair):
            return None
        return pair if pair[0] <= pair[1] else None

    def hostile(self):
        return [*super().hostile(), ("one number", 0.5), ("three", (0.0, 0.5, 1.0)),
                ("reversed", (1.0, 0.0)), ("nan end", (0.0, math.nan)),
                ("strings", ("0", "1")), ("string", "01")]  # fmt: skip

    def example(self, args):
        return (0.0, 1.0)


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
