"""Exact catalogue entries are accurate in float64 at the edges of their domains.

Reference values come from exact rational arithmetic (``fractions``) for the cut-off geometric
moments and from sympy's adaptive-precision evaluation (``evalf`` to 40 significant digits, the
inputs taken as exact rationals) for every other exact entry; the float64 path of
``Theorem.evaluate`` (the stable forms of ``Theorem.numeric`` where a theorem has them) must
agree to ``EDGE_RTOL`` relative, times the problem's condition number at the point (which
is O(1) except where the inputs themselves nearly cancel, e.g. sigma_t = k/K). FedAU's
statements are imported inside its tests, so that the file runs in a copy without FedAU."""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.bounds import CATALOGUE
from fedtheory.bounds.symbols import NOTATION
from fedtheory.errors import ParameterError

EDGE_RTOL = 1e-12  # the exact entries, relative
POINTS_PER_THEOREM = 60
ZERO_REFERENCE = 1e-100  # below this the 40-digit reference is an exact 0 (e.g. K = 1)


def _cutoff_exact(p, K: int) -> tuple[Fraction, Fraction]:
    """Mean and variance of min(Geom(p), K): the statements' closed forms in exact rational
    arithmetic (the float ``p`` taken exactly)."""
    x = Fraction(p)
    q = 1 - x
    qK = q**K
    return (1 - qK) / x, q / x**2 - (2 * K - 1) * qK / x - qK * qK / x**2


@pytest.mark.parametrize("K", [1, 2, 5])
def test_cutoff_closed_forms_equal_the_law_in_rationals(K):
    for p in (Fraction(1, 3), Fraction(7, 10), Fraction(1, 1000)):
        probs = [p * (1 - p) ** (k - 1) for k in range(1, K)] + [(1 - p) ** (K - 1)]
        mean = sum(k * w for k, w in enumerate(probs, start=1))
        var = sum((k - mean) ** 2 * w for k, w in enumerate(probs, start=1))
        assert (mean, var) == _cutoff_exact(p, K)


@pytest.mark.parametrize("K", [1, 2, 3, 10, 50, 400])
def test_cutoff_geometric_moments_tight_against_exact_rationals(K):
    from fedtheory.bounds import fedau

    ps = np.concatenate([np.logspace(-12, 0, 25), [0.5 / K, 1 - 1e-9, 1 - 1e-12]])
    mean = fedau.cutoff_mean.evaluate(p=ps, K_cut=K).total
    var = fedau.cutoff_variance.evaluate(p=ps, K_cut=K).total
    for p, m, v in zip(ps, mean, var, strict=True):
        em, ev = _cutoff_exact(float(p), K)
        assert abs(Fraction(float(m)) - em) <= EDGE_RTOL * em, (p, K, m, float(em))
        assert abs(Fraction(float(v)) - ev) <= EDGE_RTOL * ev, (p, K, v, float(ev))


def test_cutoff_variance_tight_at_the_issue_point():
    from fedtheory.bounds import fedau

    # the published form gave 48.0 here; the true value is 4.042498e-4
    v = float(fedau.cutoff_variance.evaluate(p=1e-8, K_cut=50).total)
    _, exact = _cutoff_exact(1e-8, 50)
    assert abs(Fraction(v) - exact) <= EDGE_RTOL * exact
    assert abs(v - 4.042498e-4) <= 1e-6 * 4.042498e-4


def test_cutoff_published_form_cancels_where_the_stable_form_does_not():
    from fedtheory.bounds import fedau

    # metamorphic: the statement's own form, lambdified, loses the value at small p
    naive = sp.lambdify([NOTATION["p"].symbol, NOTATION["K_cut"].symbol], fedau.CUTOFF_VARIANCE)
    _, exact = _cutoff_exact(1e-8, 50)
    assert abs(naive(1e-8, 50) - float(exact)) > 1e3 * float(exact)


def _edges(name: str) -> list[float]:
    """Values at the edges (and the middle) of a notation entry's domain."""
    n = NOTATION[name]
    if n.integer:
        return [1.0, 2.0, 3.0, 50.0, 1e6] if n.low >= 1 else [0.0, 1.0, 2.0, 1e6]
    if n.high is not None:
        top = [n.high] if not n.high_open else [n.high * (1 - 1e-9)]
        low = [1e-12] if n.low_open or n.low == 0 else [n.low]
        return low + [1e-6 * n.high, 0.3 * n.high, 0.5 * n.high] + top
    if n.low is None:  # real line: signs kept apart (a difference of opposite signs is an
        return [0.0, 1e-9, 1.0, 3.0, 1e6]  # ill-conditioned input, not a float64 issue)
    return ([1e-12] if n.low_open else [0.0, 1e-12]) + [1e-3, 1.0, 7.0, 1e6]


def _points(thm, rng) -> list[dict]:
    grid = [_edges(p) for p in thm.parameters]
    combos = list(itertools.product(*grid))
    pick = rng.choice(len(combos), size=min(POINTS_PER_THEOREM, len(combos)), replace=False)
    return [dict(zip(thm.parameters, combos[i], strict=True)) for i in sorted(pick)]


EXACT = sorted(k for k, t in CATALOGUE.items() if t.kind == "exact")


def _condition(term, at: dict, want: float, step: float = 1e-9) -> float:
    """Relative condition number of ``term`` at the exact point ``at`` with respect to its
    real (non-integer) inputs: max |relative change of the value| / (relative change of one
    input). A float64 evaluation cannot beat ``eps * condition`` (the inputs are rounded), so
    the accuracy asked is relative to it; for the cut-off moments and Example 1's limits the
    condition is O(1), so 1e-12 relative stands there."""
    worst = 1.0
    for sym, value in at.items():
        if NOTATION_OF[sym].integer or value == 0:
            continue
        moved = complex(term.evalf(40, subs={**at, sym: value * (1 + sp.Rational(step))})).real
        worst = max(worst, abs(moved - want) / (abs(want) * step))
    return worst


NOTATION_OF = {n.symbol: n for n in NOTATION.values()}


@pytest.mark.parametrize("key", EXACT)
def test_every_exact_entry_tight_at_the_edges_of_its_domain(key):
    thm = CATALOGUE[key]
    checked = 0
    for values in _points(thm, np.random.default_rng(0)):
        at = {NOTATION[p].symbol: sp.Rational(v) for p, v in values.items()}
        try:
            res = thm.evaluate(strict=False, **values)
        except ParameterError as err:  # refused only where a term's exact value overflows
            assert "every term to be finite" in str(err), (key, values, err)
            exact = [abs(complex(t.evalf(40, subs=at))) for t in thm.terms.values()]
            assert max(exact) > sys.float_info.max, (key, values, exact)
            continue
        if not res.valid:  # outside the statement's hypotheses
            continue
        for name, term in thm.terms.items():
            want = complex(term.evalf(40, subs=at))  # adaptive precision, no rounding to float
            assert abs(want.imag) == 0.0
            got = float(res.terms[name])
            if abs(want.real) < ZERO_REFERENCE:  # an exact 0 that evalf leaves as rounding noise
                assert abs(got) < ZERO_REFERENCE, (key, name, values, got)
            else:
                err = abs(got - want.real)
                cond = _condition(term, at, want.real)
                assert err <= EDGE_RTOL * abs(want.real) * cond, (key, name, values, got, cond)
        checked += 1
    # zero_regret's hypothesis pins its only input to 0: one point is all there is
    assert checked >= (1 if key == "e3cs.remark.zero_regret" else 5), key
