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

from fedtheory.constraints import Array, Real, declare
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


@declare(
    measured=Array(min_size=0),  # no points: nothing to assert, as np.all([])
    bound=Array(broadcast="measured", min_size=0),
    rtol=Real(0.0, 1.0),
    atol=Array(low=0.0, broadcast="measured"),
)
def assert_upper_bound(measured, bound, *, rtol: float = BOUND_RTOL, atol=0.0) -> None:
    r"""Assert ``measured <= bound + rtol * |bound| + atol`` at every point (upper-bound
    statements).

    Parameters
    ----------
    measured, bound : array_like
        Broadcastable arrays of finite numbers (NaN, inf, text or complex numbers are
        refused with a ParameterError).
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
    a, b, floor = np.broadcast_arrays(measured, bound, atol)
    ok = within_bound(a, b, floor=floor, rtol=rtol)
    if not np.all(ok):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            score = np.nan_to_num((a - b) / np.abs(b), nan=np.inf)
        tol = _tolerance(rtol, BOUND_RTOL, "BOUND_RTOL")
        if np.any(floor > 0):
            tol += f", rounding floor up to {float(floor.max()):.3g}"
        raise AssertionError(_message("upper bound violated", ok, score, a, b, "bound", tol))


@declare(
    measured=Array(min_size=0),
    expected=Array(broadcast="measured", min_size=0),
    rtol=Real(0.0, 1.0),
    atol=Real(0.0),
)
def assert_equal(measured, expected, *, rtol: float = TIGHT_RTOL, atol: float = ZERO_ATOL) -> None:
    r"""Assert ``|measured - expected| <= rtol * |expected| + atol`` at every point (exact
    statements).

    Examples
    --------
    >>> assert_equal(0.1 + 0.2, 0.3)
    """
    a, b = np.broadcast_arrays(measured, expected)
    dev = np.abs(a - b)
    ok = dev <= rtol * np.abs(b) + atol
    if not np.all(ok):
        score = dev
        tol = (
            f"{_tolerance(rtol, TIGHT_RTOL, 'TIGHT_RTOL')}, "
            f"{_tolerance(atol, ZERO_ATOL, 'ZERO_ATOL')}; "
            f"largest |measured - expected| {float(np.max(np.where(ok, 0, score))):.3g}"
        )
        raise AssertionError(_message("equality fails", ok, score, a, b, "expected", tol))


@declare(measured=Array(min_size=0), atol=Real(0.0))
def assert_near_zero(measured, *, atol: float = ZERO_ATOL) -> None:
    r"""Assert ``|measured| <= atol`` at every point.

    Examples
    --------
    >>> assert_near_zero([1e-15, -1e-14])
    """
    a = measured
    ok = np.abs(a) <= atol
    if not np.all(ok):
        score = np.abs(a)
        tol = _tolerance(atol, ZERO_ATOL, "ZERO_ATOL")
        bound = np.full(a.shape, atol)
        raise AssertionError(_message("not near zero", ok, score, a, bound, "bound", tol))
