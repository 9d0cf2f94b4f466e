"""Divergences: the inequalities between chi-square and total variation, limits, tightness."""

from __future__ import annotations

import numpy as np
from hypothesis import given, target
from hypothesis import strategies as st

from fedtheory.bounds import divergences as dv
from fedtheory.testing.strategies import simplex
from tests.conftest import assert_near_zero, assert_tight, assert_upper_bound


@given(st.integers(2, 8).flatmap(lambda n: st.tuples(simplex(n), simplex(n))))
def test_tv_at_most_half_root_chi_square_and_chi_square_at_most_max_ratio(pair):
    a, p = pair
    chi2, tv = dv.chi_square(a, p), dv.total_variation(a, p)
    bound = dv.tv_chi_square.evaluate(chi2=chi2).total
    target(float(tv / bound) if bound > 0 else 0.0, label="tv / (sqrt(chi2)/2)")
    assert_upper_bound(tv, bound)
    assert_upper_bound(tv, 1.0)
    # the bound is max_k a_k/p_k - 1: its rounding is relative to max_k a_k/p_k, not to itself
    # (a and p one ulp apart give chi2 = 2.5e-32 against a bound rounded to exactly 0)
    ratio_bound = dv.chi_square_max_ratio_bound(a, p)
    assert chi2 <= ratio_bound + 4 * np.finfo(float).eps * (ratio_bound + 1.0), (chi2, ratio_bound)
    assert_near_zero(dv.chi_square(a, a))
    assert_near_zero(dv.total_variation(a, a))


@given(st.floats(0.0, 0.49))
def test_tv_chi_square_tight_when_relative_deviation_is_constant(eps):
    a, p = np.array([0.5 + eps, 0.5 - eps]), np.array([0.5, 0.5])
    assert_tight(
        dv.total_variation(a, p), dv.tv_chi_square.evaluate(chi2=dv.chi_square(a, p)).total
    )


def test_missing_support_gives_infinite_chi_square():
    assert dv.chi_square([0.5, 0.5], [1.0, 0.0]) == np.inf
    assert dv.chi_square_max_ratio_bound([0.5, 0.5], [1.0, 0.0]) == np.inf
