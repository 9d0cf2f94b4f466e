"""The base kind :class:`Constraint` (``check`` converts or refuses, ``describe`` says
what is allowed, ``hostile`` and ``example`` give the fuzz its values) and the one form of
refusal, :func:`refuse`: "The 'p' parameter of Bernoulli must be … Got … instead."."""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral
from typing import Any

import numpy as np

from fedtheory.errors import ParameterError


def interval(low: float | None, high: float | None, *, low_open: bool, high_open: bool) -> str:
    """Format an interval such as ``(0, 1]`` or ``[1, inf)``."""
    left = "(" if low_open or low is None else "["
    right = ")" if high_open or high is None else "]"
    lo = "-inf" if low is None else _end(low)
    hi = "inf" if high is None else _end(high)
    return f"{left}{lo}, {hi}{right}"


def _end(x: float) -> str:
    """An interval end: integers exactly (``2147483647``), other numbers in ``%g``."""
    return str(x) if isinstance(x, Integral) else f"{x:g}"


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
