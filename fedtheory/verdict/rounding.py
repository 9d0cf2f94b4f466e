r"""The rounding floor of a deterministic comparison: how far a measured value may exceed
a bound by floating-point rounding alone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.constraints import Array, Real, declare

BOUND_RTOL = 1e-9
"""Relative slack for ``measured <= bound`` (floating-point rounding only)."""

ROUNDING_ULPS = 64.0
"""Machine epsilons per unit of scale in :func:`rounding_floor`."""


MAGNITUDE = Array(finite=False, min_size=0)
"""A magnitude entering a computation: a number or an array (NaN and inf ignored)."""


@declare(ulps=Real(0.0))
def rounding_floor(*magnitudes, ulps: float = ROUNDING_ULPS) -> float:
    r"""The rounding floor of a deterministic comparison: ``ulps`` machine epsilons times
    the largest magnitude that enters the computation,
    :math:`\text{floor}=u\,\varepsilon\,\max_j |m_j|`.

    Pass the magnitudes in the units of the compared quantity (for a squared distance
    :math:`\|x_T-x^*\|^2`: :math:`\|x_0\|^2`, :math:`\|x^*\|^2`, the bound's terms...).
    ``measured <= bound + floor`` then separates rounding from a real excess: a bound of
    exactly 0 met by 7.7e-34 holds within rounding when the floor is larger.
    Arrays are accepted; NaN and infinite magnitudes are ignored."""
    scale = 0.0
    for i, m in enumerate(magnitudes):  # positional: checked here, each by MAGNITUDE
        a = np.abs(MAGNITUDE.check(m, f"magnitudes[{i}]", "rounding_floor", {}))
        a = a[np.isfinite(a)]
        if a.size:
            scale = max(scale, float(a.max()))
    return ulps * float(np.finfo(float).eps) * scale


@declare(value=Array(finite=False, min_size=0), scale=Real(0.0))
@dataclass(frozen=True)
class Measured:
    r"""A deterministic measured value and the largest magnitude in the computation that
    produced it, in the value's units (for :math:`\|x_T-x^*\|^2`: the largest of
    :math:`\|x_0\|^2`, :math:`\|x^*\|^2`, the iterates' squared norms), so that a check
    can add its rounding floor :func:`rounding_floor` ``(scale)``. A measurement returns
    it instead of a bare number where the value can be rounding away from 0.

    Examples
    --------
    >>> rounding_floor(Measured(7.7e-34, 1.0).scale) > 7.7e-34
    True
    """

    value: float | np.ndarray
    scale: float
