r"""Tightness family of :math:`d_{TV}(\alpha,p)\le\sqrt{\chi^2_{\alpha\|p}}/2`
(``divergences.tv_chi_square``): measured :math:`d_{TV}(\alpha,p)` over the open simplex.
Its ``FAMILIES`` join ``fedtheory.tightness.FAMILIES`` through the divergences' record.
"""

from __future__ import annotations

from collections.abc import Mapping

from fedtheory.bounds import divergences
from fedtheory.tightness.family import Family, Integer, Measurement, Real

WEIGHT_FLOOR = 0.01
"""Raw simplex coordinates lie in ``[WEIGHT_FLOOR, 1]`` (so every weight is positive)."""


# --- d_TV <= sqrt(chi^2)/2 -------------------------------------------------------------------
def _simplex_reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    n = ints["N"]
    return tuple(Real(f"{s}[{k}]", WEIGHT_FLOOR, 1.0) for s in "ab" for k in range(n))


def _tv_chi_square(ints, x, seed) -> Measurement:
    n = ints["N"]
    alpha, p = x[:n] / x[:n].sum(), x[n:] / x[n:].sum()
    chi2 = divergences.chi_square(alpha, p)
    tv = divergences.total_variation(alpha, p)
    return Measurement(tv, {"N": n, "chi2": chi2, "d_tv": tv}, magnitude=1.0)


def _tv_describe(ints, x) -> dict:
    n = ints["N"]
    return {"N": n, "alpha": (x[:n] / x[:n].sum()).tolist(), "p": (x[n:] / x[n:].sum()).tolist()}


TV_CHI_SQUARE = Family(
    divergences.tv_chi_square,
    "alpha, p in the open simplex (N <= 8 clients); measured: d_TV(alpha, p)",
    (Integer("N", 2, 8, "clients"),),
    _simplex_reals,
    _tv_chi_square,
    tightness="attained: ratio exactly 1 when |alpha_k - p_k|/p_k is constant (Cauchy-Schwarz "
    "equality), e.g. p = (1/2, 1/2), alpha = (1/2 + delta, 1/2 - delta)",
    supremum=1.0,
    instance=_tv_describe,
)

FAMILIES = (TV_CHI_SQUARE,)
"""The paper's tightness families (joining ``fedtheory.tightness.FAMILIES`` through its record,
:mod:`fedtheory.papers`)."""
