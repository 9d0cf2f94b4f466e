"""Kinds of scalars: reals in an interval (:class:`Real`, :class:`RealUpTo`), integers
(:class:`Integer`, capped at :data:`MAX_INTEGER` where no upper end is declared; sizes
:class:`Size` up to :data:`MAX_SIZE`), booleans (:class:`Bool`), one of given options
(:class:`Option`), texts and labels (:class:`Text`, :class:`Label`) and a distribution's
support (:class:`Support`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral
from numbers import Real as _Real

import numpy as np

from fedtheory.constraints.hostile import DENORMAL, HUGE_DIGITS, HUGE_INT
from fedtheory.constraints.kind import Constraint, _dimension, _lookup, interval

MAX_SIZE = 2**31 - 1
"""Largest count (rounds, clients, samples, dimension, steps) a public function accepts:
more cannot be allocated (NumPy fails with a raw error near :math:`2^{63}` elements, and
memory runs out long before)."""

MAX_INTEGER = 2**63 - 1
"""Largest integer any integer parameter accepts where no other upper end is declared (a
round, a seed, a horizon): what an int64 holds, so no conversion downstream (NumPy, torch,
a float in a message) overflows."""


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
               ("complex", 1 + 1j), ("10**400", HUGE_DIGITS)]  # fmt: skip
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
    an array's dimension (``"success[1]"``). Without an end, what an int64 holds is the end
    (:data:`MAX_INTEGER`; ``10**400`` is refused, never overflowing later)."""

    def __init__(self, low=None, high=None, *, high_open=False, multiple=1, infinite=False,
                 none=False):  # fmt: skip
        self.low, self.high, self.high_open, self.none = low, high, high_open, none
        self.multiple, self.infinite = multiple, infinite

    def _ends(self, args) -> tuple[int | None, int]:
        low, high = _dimension(self.low, args), _dimension(self.high, args)
        return -MAX_INTEGER - 1 if low is None else low, MAX_INTEGER if high is None else high

    def describe(self, args):
        low, high = _dimension(self.low, args), _dimension(self.high, args)
        where = interval(low, high, low_open=low is None, high_open=self.high_open)
        capped = " (at most 2**63 - 1, an int64)" if high is None else ""
        times = f" and a multiple of {self.multiple}" if self.multiple > 1 else ""
        return f"an integer in {where}{capped}{times}" + (" or inf (none)" if self.infinite else "")

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
               ("bool", True), ("complex", 2j), ("10**400", HUGE_DIGITS),
               ("-10**400", -HUGE_DIGITS)]  # fmt: skip
        if isinstance(self.low, int):
            out.append(("below", self.low - 1))
        if isinstance(self.high, int):
            out.append(("above", self.high if self.high_open else self.high + 1))
        if self.multiple > 1 and isinstance(self.low, int):
            out.append(("not a multiple", self.low + 1))
        return out

    def example(self, args):
        low = _dimension(self.low, args)
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
        if not self.choices:  # a registry with nothing registered (a copy without a paper)
            return "a registered name, and none is registered"
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


class Label(Text):
    """A string, possibly empty (a claim's or a row's label, ``""`` for none)."""

    def describe(self, args):
        return "a string"

    def convert(self, value, args):
        return value if isinstance(value, str) else None

    def hostile(self):
        return [*Constraint.hostile(self), ("int", 1), ("bytes", b"x")]


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
