r"""Property testing of theorem statements: the kit the project's own tests use.

- :mod:`~fedtheory.testing.strategies` -- hypothesis strategies for instances with exact
  constants (quadratics with a kappa range, least squares, ridge logistic, simplex weights,
  Bernoulli probabilities, two-state chains, stochastic matrices, cyclic and block
  patterns, step-size and E3CS quota schedules);
- :func:`theorem_values` -- values inside a theorem's hypotheses, for any ``Theorem``;
- :mod:`~fedtheory.testing.assertions` -- ``assert_upper_bound``, ``assert_equal``,
  ``assert_near_zero`` with named tolerances (``BOUND_RTOL``, ``TIGHT_RTOL``,
  ``ZERO_ATOL``; ``assert_upper_bound(..., atol=floor)`` takes the rounding floor of
  :func:`fedtheory.verdict.rounding_floor`); a failure prints measured, bound and ratio;
- :func:`check_theorem` -- a property test of a theorem against what it bounds (a
  measurement may return :class:`fedtheory.verdict.Measured` with the magnitude of its
  computation: a bound of 0 met by rounding then holds);
- :func:`exit_status` -- the exit status of a check for a CI job (0 holds, 1 violated, 2
  bad input, 3 the user's function failed);
- :mod:`~fedtheory.testing.profiles` -- hypothesis profiles ``ci`` (derandomised),
  ``dev`` and ``thorough``.

Example (a property test of a theorem statement)::

    from fedtheory.bounds import fedau
    from fedtheory.testing import check_theorem

    def weight_error(p, K, t):  # exact E[(p w_t - 1)^2] of FedAU's Algorithm 2
        return fedau.weight_error_exact(p, K, t + 1)[t]

    check_theorem(fedau.theorem3_per_round, weight_error, ranges={"t": (1, 60)})
"""

from fedtheory.testing import strategies
from fedtheory.testing.assertions import (
    BOUND_RTOL,
    TIGHT_RTOL,
    ZERO_ATOL,
    assert_equal,
    assert_near_zero,
    assert_upper_bound,
)
from fedtheory.testing.gate import exit_status
from fedtheory.testing.profiles import DEFAULT_PROFILE, PROFILES, register_profiles
from fedtheory.testing.theorems import TheoremCheck, check_theorem, theorem_values

__all__ = [
    "BOUND_RTOL",
    "DEFAULT_PROFILE",
    "PROFILES",
    "TIGHT_RTOL",
    "ZERO_ATOL",
    "TheoremCheck",
    "assert_equal",
    "assert_near_zero",
    "assert_upper_bound",
    "check_theorem",
    "exit_status",
    "register_profiles",
    "strategies",
    "theorem_values",
]
