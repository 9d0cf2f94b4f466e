r"""Numerical assertions with named tolerances (STYLE.md habit 14).

Three kinds, each named after what it claims:

* :func:`assert_equal` -- an exact statement: :math:`|a-b|\le\mathrm{rtol}\,|b|+\mathrm{atol}`;
* :func:`assert_upper_bound` -- an upper bound:
  :math:`a\le b+\mathrm{rtol}\,|b|+\mathrm{atol}`, ``atol`` the rounding floor of the
  computation (:func:`fedtheory.verdict.rounding_floor`; 0 by default), the rule of the
  verdicts (:func:`fedtheory.verdict.upper_bound_outcome`);
* :func:`assert_near_zero` -- :math:`|a|\le\mathrm{atol}`.

All compare elementwise (arrays broadcast). On failure the message shows, at the worst
point, the measured value, the bound (or expected value), their ratio, the tolerance by
name, and how many points fail, e.g.::

    upper bound violated at 1 of 3 point(s); worst at index (2,): measured 2.1,
    bound 2, ratio 1.05 (tolerance BOUND_RTOL = 1e-09)
"""

from __future__ import annotations

import numpy as np

from fedtheory.errors import ParameterError
from fedtheory.params import check_array, check_real
from fedtheory.verdict import BOUND_RTOL as _VERDICT_BOUND_RTOL
from fedtheory.verdict import format_ratio, within_bound

TIGHT_RTOL = 1e-9
"""Relative tolerance of an exact statement evaluated in float64."""
BOUND_RTOL = _VERDICT_BOUND_RTOL
"""Relative slack of ``measured <= bound`` (rounding only; the verdicts use the same)."""
ZERO_ATOL = 1e-12
"""Absolute tolerance of a quantity that must vanish (and of ``assert_equal`` at 0)."""

__all__ = [
    "BOUND_RTOL",
    "TIGHT_RTOL",
    "ZERO_ATOL",
    "assert_equal",
    "assert_near_zero",
    "assert_upper_bound",
]


def _pair(measured, reference, owner: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``measured`` and ``reference`` (called ``name``) as broadcast float arrays, else
    ParameterError (NaN passes through: the assertion then fails)."""
    arrays = []
    for label, value in (("measured", measured), (name, reference)):
        try:
            raw = np.asarray(value)
            if raw.dtype.kind in "SU":  # text: NumPy would parse "0.5"
                raise TypeError
            arrays.append(raw.astype(float))
        except (TypeError, ValueError):
            raise ParameterError(
                f"The '{label}' parameter of {owner} must be an array of numbers. "
                f"Got {type(value).__name__} instead."
            ) from None
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must broadcast with 'measured'. Got shapes "
            f"{arrays[0].shape} and {arrays[1].shape} instead."
        ) from None


def _ratio(a: float, b: float) -> str:
    """a/b to 6 digits; "bound is 0", "exact" or "1 + excess" as in the verdict rows."""
    if b == 0 or (a != b and abs(a / b - 1) < 1e-3):
        return format_ratio(a, b)
    return f"{a / b:.6g}"


def _message(what: str, ok: np.ndarray, score: np.ndarray, a, b, label: str, tol: str) -> str:
    i = np.unravel_index(int(np.nanargmax(np.where(ok, -np.inf, score))), ok.shape)
    where = f" at index {tuple(int(j) for j in i)}" if ok.ndim else ""
    return (
        f"{what} at {int(ok.size - ok.sum())} of {ok.size} point(s); worst{where}: "
        f"measured {float(a[i]):.10g}, {label} {float(b[i]):.10g}, "
        f"ratio {_ratio(float(a[i]), float(b[i]))} ({tol})"
    )


def _tolerance(value: float, default: float, name: str) -> str:
    suffix = "" if value == default else " (custom)"
    return f"{name} = {value:g}{suffix}"


def assert_upper_bound(measured, bound, *, rtol: float = BOUND_RTOL, atol=0.0) -> None:
    r"""Assert ``measured <= bound + rtol * |bound| + atol`` at every point (upper-bound
    statements).

    Parameters
    ----------
    measured, bound : array_like
        Broadcastable arrays (NaN anywhere fails).
    rtol : float
        Relative slack, :data:`BOUND_RTOL` (rounding only) by default.
    atol : float or array_like
        The rounding floor (broadcast with ``measured``), from the magnitudes of the
        computation: :func:`fedtheory.verdict.rounding_floor`. A bound of exactly 0 met
        by 7.7e-34 passes when the floor is larger.

    Raises
    ------
    AssertionError
        With measured, bound and ratio at the point of largest ratio among the failures.

    Examples
    --------
    >>> assert_upper_bound([0.5, 1.0], 1.0)
    >>> from fedtheory.verdict import rounding_floor
    >>> assert_upper_bound(7.7e-34, 0.0, atol=rounding_floor(1.0))  # rounding of x* = 1
    """
    rtol = check_real(rtol, "rtol", "assert_upper_bound", low=0.0, high=1.0)
    a, b = _pair(measured, bound, "assert_upper_bound", "bound")
    floor = check_array(atol, "atol", "assert_upper_bound", low=0.0)
    floor = np.broadcast_to(floor, a.shape)
    ok = within_bound(a, b, floor=floor, rtol=rtol)
    if not np.all(ok):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            score = np.nan_to_num((a - b) / np.abs(b), nan=np.inf)
        tol = _tolerance(rtol, BOUND_RTOL, "BOUND_RTOL")
        if np.any(floor > 0):
            tol += f", rounding floor up to {float(floor.max()):.3g}"
        raise AssertionError(_message("upper bound violated", ok, score, a, b, "bound", tol))


def assert_equal(measured, expected, *, rtol: float = TIGHT_RTOL, atol: float = ZERO_ATOL) -> None:
    r"""Assert ``|measured - expected| <= rtol * |expected| + atol`` at every point (exact
    statements).

    Examples
    --------
    >>> assert_equal(0.1 + 0.2, 0.3)
    """
    rtol = check_real(rtol, "rtol", "assert_equal", low=0.0, high=1.0)
    atol = check_real(atol, "atol", "assert_equal", low=0.0)
    a, b = _pair(measured, expected, "assert_equal", "expected")
    dev = np.abs(a - b)
    ok = dev <= rtol * np.abs(b) + atol
    if not np.all(ok):
        score = np.nan_to_num(dev, nan=np.inf)  # a NaN side fails with an infinite deviation
        tol = (
            f"{_tolerance(rtol, TIGHT_RTOL, 'TIGHT_RTOL')}, "
            f"{_tolerance(atol, ZERO_ATOL, 'ZERO_ATOL')}; "
            f"largest |measured - expected| {float(np.max(np.where(ok, 0, score))):.3g}"
        )
        raise AssertionError(_message("equality fails", ok, score, a, b, "expected", tol))


def assert_near_zero(measured, *, atol: float = ZERO_ATOL) -> None:
    r"""Assert ``|measured| <= atol`` at every point.

    Examples
    --------
    >>> assert_near_zero([1e-15, -1e-14])
    """
    atol = check_real(atol, "atol", "assert_near_zero", low=0.0)
    a, _ = _pair(measured, 0.0, "assert_near_zero", "atol")
    ok = np.abs(a) <= atol
    if not np.all(ok):
        score = np.nan_to_num(np.abs(a), nan=np.inf)
        tol = _tolerance(atol, ZERO_ATOL, "ZERO_ATOL")
        bound = np.full(a.shape, atol)
        raise AssertionError(_message("not near zero", ok, score, a, bound, "bound", tol))
