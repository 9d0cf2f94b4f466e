r"""Deprecated (removed in 0.3.0): hand-called checks of inputs.

Every check is a declaration or a kind of :mod:`fedtheory.constraints` now: a parameter
with ``@declare``, a relation between arguments with a kind's ``check(value, name, owner,
{})`` (``Real(low=a).check(b, "b", owner, {})``), a configuration's keys with
:class:`~fedtheory.constraints.Names`, an overflowing result with
:func:`~fedtheory.constraints.refuse_non_finite`. Importing this module warns.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np

from fedtheory.constraints import MAX_SIZE, STOCHASTIC_ATOL, interval
from fedtheory.errors import ParameterError

warnings.warn(
    "fedtheory.params is deprecated and will be removed in 0.3.0: declare parameters with "
    "fedtheory.constraints (a kind's check for a relation between arguments, Names for "
    "a configuration's keys, refuse_non_finite for an overflowing result)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "check_array",
    "check_bool",
    "check_bool_array",
    "check_finite_result",
    "check_choice",
    "check_instance",
    "check_int_array",
    "check_int",
    "check_keys",
    "check_mapping",
    "check_like",
    "check_real",
    "check_seed",
    "check_simplex",
    "check_size",
    "check_stochastic_matrix",
    "check_str",
    "interval",
]


def _fail(name: str, owner: str, constraint: str, got: object) -> ParameterError:
    shown = got if not isinstance(got, np.ndarray) else _summarise(got)
    return ParameterError(
        f"The '{name}' parameter of {owner} must be {constraint}. Got {shown} instead."
    )


def _summarise(a: np.ndarray) -> str:
    if a.size <= 6:
        return np.array2string(a, precision=6)
    return f"an array of shape {a.shape} with values in [{np.nanmin(a):g}, {np.nanmax(a):g}]"


def _in_range(x, low, high, low_open, high_open):
    ok = np.ones(np.shape(x), dtype=bool)
    if low is not None:
        ok &= (x > low) if low_open else (x >= low)
    if high is not None:
        ok &= (x < high) if high_open else (x <= high)
    return ok


def _scalar_in_range(x, low, high, low_open, high_open) -> bool:
    """:func:`_in_range` of one number (the checks run every round: no array built)."""
    above = low is None or (x > low if low_open else x >= low)
    return bool(above and (high is None or (x < high if high_open else x <= high)))


def check_real(
    value: object,
    name: str,
    owner: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float after checking it is a finite real in the interval."""
    if isinstance(value, bool) or not isinstance(value, Real):
        where = interval(low, high, low_open=low_open, high_open=high_open)
        raise _fail(name, owner, f"a real number in {where}", repr(value))
    x = float(value)
    if not (math.isfinite(x) and _scalar_in_range(x, low, high, low_open, high_open)):
        where = interval(low, high, low_open=low_open, high_open=high_open)
        raise _fail(name, owner, f"a finite real number in {where}", x)
    return x


def check_int(
    value: object,
    name: str,
    owner: str,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """Return ``value`` as an int after checking it is an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        where = interval(low, high, low_open=False, high_open=False)
        raise _fail(name, owner, f"an integer in {where}", repr(value))
    if not _scalar_in_range(int(value), low, high, False, False):
        where = interval(low, high, low_open=False, high_open=False)
        raise _fail(name, owner, f"an integer in {where}", int(value))
    return int(value)


def check_size(value: object, name: str, owner: str, *, low: int = 1) -> int:
    """A count (rounds, clients, samples, dimension): an integer in ``[low, MAX_SIZE]``."""
    return check_int(value, name, owner, low=low, high=MAX_SIZE)


def check_str(value: object, name: str, owner: str) -> str:
    """Return ``value`` after checking it is a non-empty string (a name, key or label)."""
    if not isinstance(value, str) or not value:
        raise _fail(name, owner, "a non-empty string", repr(value))
    return value


def check_bool(value: object, name: str, owner: str) -> bool:
    """Return ``value`` after checking it is a bool (``numpy.bool_`` included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise _fail(name, owner, "a bool", repr(value))
    return bool(value)


def check_choice(value: object, choices: tuple, name: str, owner: str) -> object:
    """Return ``value`` after checking it is one of ``choices`` (such as a method's name)."""
    if value not in choices:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be one of {choices}. Got {value!r} instead."
        )
    return value


def check_keys(keys: object, allowed: tuple[str, ...], name: str, owner: str) -> None:
    """Refuse names (of a dict's keys, such as settings) outside ``allowed``, naming the
    nearest allowed one (``difflib``) for each: a typo never falls back to a default."""
    unknown = [k for k in keys if k not in allowed]
    if not unknown:
        return
    hints = []
    for k in unknown:
        near = difflib.get_close_matches(str(k), [str(a) for a in allowed], n=1, cutoff=0.0)
        hints.append(f"{k!r} (nearest valid name: {near[0]!r})" if near else repr(k))
    raise ParameterError(
        f"The '{name}' parameter of {owner} must only have the names {', '.join(allowed)}. "
        f"Got unknown {', '.join(hints)} instead."
    )


def check_mapping(value: object, name: str, owner: str) -> dict:
    """Return ``value`` as a dict after checking it is a mapping; ``None`` gives ``{}``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(name, owner, "a mapping (dict) of names to values, or None", repr(value))
    return dict(value)


def check_instance(value: object, kind: type, name: str, owner: str) -> object:
    """Return ``value`` after checking ``isinstance(value, kind)`` (classes and
    ``runtime_checkable`` protocols)."""
    if not isinstance(value, kind):
        raise _fail(name, owner, f"a {kind.__name__}", type(value).__name__)
    return value


def check_seed(value: object, owner: str) -> int:
    """A seed is a non-negative integer (no global random state is ever used)."""
    return check_int(value, "seed", owner, low=0)


def check_array(
    value: object,
    name: str,
    owner: str,
    *,
    ndim: int | None = None,
    shape: tuple[int | None, ...] | None = None,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    min_size: int = 0,
) -> np.ndarray:
    """Return a float64 copy of ``value`` after checking shape, size (at least
    ``min_size`` entries), finiteness and range."""
    try:
        if _has_text(value):  # NumPy would parse "0.5" as 0.5
            raise TypeError
        a = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise _fail(name, owner, "an array of real numbers", _shown(value)) from None
    if a.size < min_size:
        raise _fail(name, owner, f"an array with at least {min_size} entries", f"shape {a.shape}")
    if ndim is not None and a.ndim != ndim:
        raise _fail(name, owner, f"an array with {ndim} dimension(s)", f"shape {a.shape}")
    if shape is not None:
        wrong = a.ndim != len(shape) or any(
            s is not None and s != n for s, n in zip(shape, a.shape, strict=True)
        )
        if wrong:
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise _fail(name, owner, f"an array of shape {want}", f"shape {a.shape}")
    where = interval(low, high, low_open=low_open, high_open=high_open)
    if not np.all(np.isfinite(a)):
        raise _fail(name, owner, f"finite, with entries in {where}", a)
    if not np.all(_in_range(a, low, high, low_open, high_open)):
        raise _fail(name, owner, f"an array with entries in {where}", a)
    return a


def _has_text(value: object) -> bool:
    """Whether ``value`` is, or (as a nested list) holds, a string or bytes."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_text(v) for v in value)
    return (
        isinstance(value, np.ndarray)
        and value.dtype.kind in "SUO"
        and any(isinstance(v, (str, bytes)) for v in value.ravel())
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def check_finite_result(result: object, owner: str, inputs: dict[str, object]) -> None:
    """Finite inputs must give a finite result (a float, an array or a record of them): an
    overflow is reported as a ParameterError naming the input of largest magnitude, never
    returned as inf or NaN."""
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        values = tuple(getattr(result, f.name) for f in dataclasses.fields(result))
    else:
        values = result if isinstance(result, tuple) else (result,)
    finite = all(
        np.all(np.isfinite(np.asarray(v, dtype=np.float64)))
        for v in values
        if isinstance(v, (Real, np.ndarray)) and not isinstance(v, bool)
    )
    if finite:
        return
    sizes = {k: float(np.max(np.abs(np.asarray(v, dtype=np.float64)), initial=0.0))
             for k, v in inputs.items()}  # fmt: skip
    name = max(sizes, key=sizes.get)
    raise ParameterError(
        f"The '{name}' parameter of {owner} must be small enough for the result to be finite "
        f"(it overflows). Got a value of magnitude {sizes[name]:g} instead."
    )


def check_like(
    value: np.ndarray, shape: tuple[int, ...], name: str, owner: str, *, like: str
) -> np.ndarray:
    """``value`` (already checked) broadcast to ``shape``: it must be a scalar or have
    exactly that shape (the shape of the parameter ``like``); never a silent broadcast of a
    mismatched length."""
    if value.ndim != 0 and value.shape != tuple(shape):
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be a scalar or an array of shape "
            f"{tuple(shape)} like '{like}'. Got shape {value.shape} instead."
        )
    return np.broadcast_to(value, shape).copy()


def check_int_array(
    value: object,
    name: str,
    owner: str,
    *,
    ndim: int | None = None,
    low: float | None = None,
    high: float | None = None,
) -> np.ndarray:
    """Return an int64 copy of ``value`` after checking it holds integers in ``[low, high]``
    (a non-integer is refused, never truncated)."""
    a = check_array(value, name, owner, ndim=ndim, low=low, high=high)
    if np.any(a != np.round(a)):
        raise _fail(
            name,
            owner,
            f"an array of integers in {interval(low, high, low_open=False, high_open=False)}",
            a,
        )
    return a.astype(np.int64)


def check_bool_array(value: object, name: str, owner: str, *, ndim: int) -> np.ndarray:
    """Return a boolean array of ``ndim`` dimensions (0/1 integers are accepted)."""
    try:
        a = np.asarray(value)
    except ValueError:  # ragged nested lists
        raise _fail(name, owner, f"a boolean (0/1) array with {ndim} dimension(s)",
                    _shown(value)) from None  # fmt: skip
    if a.dtype.kind in "SUO":  # strings or objects: "1" is not a bool
        raise _fail(name, owner, f"a boolean (0/1) array with {ndim} dimension(s)", _shown(value))
    if a.ndim != ndim or not (a.dtype == bool or np.isin(a, (0, 1)).all()):
        raise _fail(name, owner, f"a boolean (0/1) array with {ndim} dimension(s)", a)
    return a.astype(bool)


def check_simplex(
    value: object, name: str, owner: str, *, positive: bool = False, size: int | None = None
) -> np.ndarray:
    """Weights that are non-negative (or positive) and sum to one (``size`` of them, if
    given: one per client)."""
    a = check_array(value, name, owner, ndim=1, low=0.0, low_open=positive)
    if abs(a.sum() - 1.0) > STOCHASTIC_ATOL * max(1, a.size):
        raise _fail(name, owner, "a weight vector summing to 1", a)
    if size is not None and a.size != size:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must have length N={size}. "
            f"Got length {a.size} instead."
        )
    return a


def check_stochastic_matrix(value: object, name: str, owner: str) -> np.ndarray:
    """A square matrix with entries in [0, 1] and rows summing to one."""
    a = check_array(value, name, owner, ndim=2, low=0.0, high=1.0)
    if a.shape[0] != a.shape[1]:
        raise _fail(name, owner, "a square stochastic matrix", f"shape {a.shape}")
    rows = a.sum(axis=1)
    if np.any(np.abs(rows - 1.0) > STOCHASTIC_ATOL * a.shape[0]):
        raise _fail(name, owner, "a stochastic matrix (every row sums to 1)", f"row sums {rows}")
    return a
