"""Shared tolerances (the three kinds of numerical assertion) and the hypothesis profiles."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import pytest
import torch
from hypothesis import settings
from scipy import stats

from fedtheory.errors import ParameterError
from fedtheory.testing import DEFAULT_PROFILE, register_profiles

# Derandomised by default, so the README's test command gives the same result on every
# machine; HYPOTHESIS_PROFILE=dev (random) or =thorough explores.
register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", DEFAULT_PROFILE))


def pytest_collection_modifyitems(config, items) -> None:
    """Skip the tests marked ``gpu`` where no CUDA device is available."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is False)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


TIGHT_RTOL = 1e-9  # exact statements evaluated in float64
BOUND_RTOL = 1e-9  # slack for "a <= b" (rounding only)
ZERO_ATOL = 1e-12


def assert_tight(a, b, rtol: float = TIGHT_RTOL) -> None:
    """|a - b| <= rtol * |b| (elementwise), with ZERO_ATOL for b = 0."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.all(np.abs(a - b) <= rtol * np.abs(b) + ZERO_ATOL), (a, b)


def assert_upper_bound(a, b, rtol: float = BOUND_RTOL) -> None:
    """a <= b * (1 + rtol) (elementwise)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.all(a <= b + rtol * np.abs(b)), (a, b)


def assert_near_zero(a, atol: float = ZERO_ATOL) -> None:
    assert np.all(np.abs(np.asarray(a, float)) <= atol), a


def assert_parameter_error(call: Callable[[], object], name: str, allowed: str) -> str:
    """``call()`` raises ``ParameterError`` whose message names the parameter ``name`` and
    the allowed values ``allowed``; returns the message."""
    with pytest.raises(ParameterError) as err:
        call()
    message = str(err.value)
    assert name in message and allowed in message
    return message


def binomial_interval(trials: int, p: float, family: int, level: float = 1e-3):
    """Two-sided binomial acceptance interval for counts, Bonferroni over ``family`` tests."""
    return stats.binom.interval(1 - level / family, trials, p)


def binomial_frequencies_ok(freq, p, n: int, alpha: float) -> bool:
    """Every ``|freq - p|`` within the two-sided binomial (normal) bound of ``n`` draws,
    Bonferroni over the entries at family-wise level ``alpha``."""
    freq, p = np.asarray(freq), np.asarray(p)
    z = stats.norm.ppf(1 - alpha / (2 * p.size))
    se = np.sqrt(np.maximum(p * (1 - p), 1e-12) / n)
    return bool(np.all(np.abs(freq - p) <= z * se))
