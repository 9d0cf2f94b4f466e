"""Kinds of numpy arrays: finite float arrays of declared shapes (:class:`Array`, a
dimension may name another argument's), row-stochastic matrices
(:class:`StochasticMatrix`, to :data:`STOCHASTIC_ATOL`), values inside an interval
(:class:`Interval`), probability vectors (:class:`Probabilities`) and 0/1 arrays
(:class:`BoolArray`)."""

from __future__ import annotations

import math

import numpy as np

from fedtheory.constraints.kind import Constraint, _dimension, interval
from fedtheory.constraints.scalars import Real

STOCHASTIC_ATOL = 1e-9
"""Tolerance on row sums of a stochastic matrix and on the sum of simplex weights."""


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
