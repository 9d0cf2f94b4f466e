"""Markov-chain tools: stationary law, lambda_2, C_P/T_P (closed forms and numerical)."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest
from hypothesis import given, target
from hypothesis import strategies as st

from fedtheory.errors import ParameterError
from fedtheory.markov import (
    check_primitive_chain,
    fedau_two_state,
    kron_chain,
    lambda_feasible_range,
    mixing_constants,
    mixing_rate,
    product_mixing_constants,
    second_eigenvalue_modulus,
    stationary_distribution,
    two_state_matrix,
    two_state_mixing_constants,
    two_state_parameters,
    two_state_transitions,
)
from fedtheory.testing.strategies import probabilities, stochastic_matrices, two_state_chains
from tests.conftest import assert_parameter_error, assert_tight, assert_upper_bound


def max_deviation(P: np.ndarray, t: int) -> float:
    """max_ij |P^t_ij - pi_j| from a matrix power (independent of the library's recursion)."""
    return float(np.abs(np.linalg.matrix_power(P, t) - stationary_distribution(P)).max())


def visible_steps(c_p: float, rate: float, start: int, count: int) -> list[int]:
    """Rounds t >= start where C_P rate^t >= 1e-4, so float rounding cannot decide the test."""
    return [t for t in range(start, start + count) if c_p * rate**t >= 1e-4]


@given(stochastic_matrices())
def test_stationary_law_is_invariant_and_normalised(P):
    pi = stationary_distribution(P)
    assert_tight(pi @ P, pi)
    assert_tight(pi.sum(), 1.0)


@given(stochastic_matrices(), st.integers(0, 3))
def test_mixing_inequality_holds_from_T_P_on_random_chains(P, T_P):
    m = mixing_constants(P, T_P=T_P)
    assert 0 <= m.lambda2 < m.rate < 1 and m.horizon >= 1
    steps = visible_steps(m.C_P, m.rate, T_P, 5 * m.horizon + 60)
    ratios = [max_deviation(P, t) / (m.C_P * m.rate**t) for t in steps]
    target(max(ratios[m.horizon :], default=0.0))  # push towards a tail violation
    for t in steps:
        assert_upper_bound(max_deviation(P, t), m.C_P * m.rate**t)


@given(stochastic_matrices(max_states=4))
def test_numerical_C_P_is_attained_so_it_is_the_smallest_constant(P):
    m = mixing_constants(P)
    ratios = [max_deviation(P, t) / m.rate**t for t in range(m.horizon)]
    assert_tight(max(ratios), m.C_P)


@given(stochastic_matrices(max_states=5))
def test_lambda2_is_the_second_largest_eigenvalue_modulus(P):
    moduli = np.sort(np.abs(np.linalg.eigvals(P)))[::-1]
    assert_tight(moduli[0], 1.0)
    assert abs(second_eigenvalue_modulus(P) - moduli[1]) <= 1e-7
    assert_tight(mixing_rate(P), (1 + second_eigenvalue_modulus(P)) / 2)


@given(stochastic_matrices(max_states=5), st.randoms(use_true_random=False))
def test_relabelling_states_changes_nothing_but_the_order_of_pi(P, random):
    perm = np.array(random.sample(range(len(P)), len(P)))
    Q = P[np.ix_(perm, perm)]
    assert_tight(stationary_distribution(Q), stationary_distribution(P)[perm])
    a, b = mixing_constants(P), mixing_constants(Q)
    assert_tight([b.lambda2, b.C_P], [a.lambda2, a.C_P], rtol=1e-7)


@given(two_state_chains())
def test_two_state_closed_form_matches_matrix_powers(pair):
    pi, lam = pair
    P = two_state_matrix(pi, lam)
    closed = two_state_mixing_constants(pi, lam)
    assert_tight(stationary_distribution(P), [1 - pi, pi])
    for t in visible_steps(1.0, abs(lam), 0, 40):
        assert_tight(max_deviation(P, t), abs(lam) ** t * max(pi, 1 - pi), rtol=1e-7)
    numerical = mixing_constants(P)
    assert_tight([numerical.C_P, numerical.rate], [closed.C_P, closed.rate], rtol=1e-7)
    assert closed.T_P == 0 and closed.tight


@given(two_state_chains())
def test_two_state_map_round_trips(pair):
    pi, lam = pair
    a, c = two_state_transitions(pi, lam)
    pi2, lam2 = two_state_parameters(a, c)
    assert_tight([pi2, lam2], [pi, lam], rtol=1e-7)
    low, high = lambda_feasible_range(pi)
    assert low <= lam <= high


@given(st.lists(two_state_chains(), min_size=1, max_size=4))
def test_product_closed_form_bounds_matrix_powers_of_the_kronecker_chain(pairs):
    pi, lam = np.array(pairs).T
    P = kron_chain(two_state_matrix(pi, lam))
    closed = product_mixing_constants(pi, lam)
    assert_tight(second_eigenvalue_modulus(P), np.abs(lam).max(), rtol=1e-6)
    assert_tight(closed.rate, max((1 + abs(x)) / 2 for x in lam))
    pis = [np.array([1 - p, p]) for p in pi]
    assert_tight(stationary_distribution(P), reduce(np.kron, pis), rtol=1e-7)
    assert closed.C_P <= np.maximum(pi, 1 - pi).sum() * (1 + 1e-12) <= len(pi)
    for t in visible_steps(closed.C_P, closed.rate, 0, 80):
        assert_upper_bound(max_deviation(P, t), closed.C_P * closed.rate**t)
    assert_upper_bound(mixing_constants(P).C_P, closed.C_P)


@given(st.lists(probabilities, min_size=1, max_size=5), st.floats(0.01, 1.0))
def test_fedau_chain_has_stationary_p_and_lambda2_one_minus_a_minus_b(p, off_on):
    p = np.array(p)
    a_on_on, a_off_on = fedau_two_state(p, off_on)
    on_off = 1 - a_on_on
    assert np.all(on_off <= 1.0) and np.all(a_off_on <= off_on + 1e-15)
    pi, lam = two_state_parameters(a_on_on, a_off_on)
    assert_tight(pi, p)
    assert_tight(lam, 1 - a_off_on - on_off, rtol=1e-7)


def test_fedau_rule_when_b_exceeds_one():
    # p = 0.01, a = 0.05: b = 0.05 * 99 = 4.95 > 1, so a <- 0.05 / 4.95 and b <- 1.
    a_on_on, a_off_on = fedau_two_state([0.01], 0.05)
    assert_tight([a_on_on[0], a_off_on[0]], [0.0, 0.05 / 4.95])


def test_kron_order_puts_client_zero_in_the_most_significant_digit():
    P0 = np.array([[1.0, 0.0], [0.5, 0.5]])
    P1 = np.array([[0.2, 0.8], [0.0, 1.0]])
    P = kron_chain([P0, P1])
    # from state (client0=on, client1=off) = index 2 to (off, on) = index 1
    assert_tight(P[2, 1], P0[1, 0] * P1[0, 1])


@pytest.mark.parametrize(
    "P", [[[0.0, 1.0], [1.0, 0.0]], np.eye(3), [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0, 0, 1.0]]]
)
def test_periodic_or_reducible_chains_are_rejected(P):
    with pytest.raises(ParameterError, match="irreducible aperiodic"):
        check_primitive_chain(P)


BAD_CALLS = [
    (lambda: stationary_distribution([[0.5, 0.4], [0.5, 0.5]]), "'P'", "row sums"),
    (lambda: stationary_distribution([[0.5, 0.5, 0.0]]), "'P'", "square"),
    (lambda: mixing_constants([[1.2, -0.2], [0.5, 0.5]]), "'P'", "[0, 1]"),
    (lambda: mixing_constants([[0.9, 0.1], [0.3, 0.7]], rate=0.5), "'rate'", "(0.6, 1)"),
    (
        lambda: mixing_constants([[0.9, 0.1], [0.3, 0.7]], T_P=-1),
        "'T_P'",
        "[0, inf)",
    ),
    (lambda: mixing_constants([[0.9, 0.1], [0.3, 0.7]], max_horizon=1), "'max_horizon'", "h <="),
    (lambda: two_state_transitions(0.9, -0.5), "'lam'", "1 - 1/max(pi, 1-pi)"),
    (lambda: two_state_matrix(1.0, 0.0), "'pi'", "(0, 1)"),
    (lambda: two_state_parameters(1.0, 0.5), "'p_on_on'", "[0, 1)"),
    (lambda: two_state_parameters(0.5, 0.0), "'p_off_on'", "(0, 1]"),
    (lambda: two_state_mixing_constants(0.5, -1.0), "'lam'", "(-1, 1)"),
    (lambda: product_mixing_constants([0.5, 0.2], 1.0), "'lam'", "(-1, 1)"),
    (lambda: product_mixing_constants([[0.5]], 0.0), "'pi'", "1 dimension"),
    (lambda: fedau_two_state([0.5, 1.5]), "'p'", "(0, 1)"),
    (lambda: fedau_two_state([0.5], 0.0), "'off_on'", "(0, 1]"),
    (lambda: kron_chain([]), "'matrices'", "at least 1"),
    (lambda: kron_chain([np.eye(2), [[0.5, 0.6], [0.5, 0.5]]]), "'matrices'", "row sums"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
