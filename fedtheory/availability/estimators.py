r"""Online Beta-prior estimators of availability :math:`\pi_k`, the two-state transition
probabilities and :math:`\lambda_k` (CA-Fed, Rodio et al., §IV "Estimators", SPEC §3.4).

The state is a small immutable record of counts per (replicate, client) ``[R, N]``; the
pure function :func:`update` adds one round's mask. Two read-outs share these counts:

* :func:`estimate` -- the Beta posterior means (SPEC §3.4, derived). With counts
  :math:`n_{11},n_{10},n_{00},n_{01}` of transitions (from, to) and priors
  :math:`(a_1,b_1)`, :math:`(a_0,b_0)`:

  .. math:: \hat\pi=\frac{\sum_{s\le t}\mathbb 1_{k\in A_s}+n}{t+n+m},\quad
            \hat a=\frac{n_{11}+a_1}{n_{11}+n_{10}+a_1+b_1},\quad
            \hat b=\frac{n_{00}+a_0}{n_{00}+n_{01}+a_0+b_0},\quad
            \hat\lambda=\hat a+\hat b-1,

  consistent: :math:`\hat\lambda\to\lambda` and :math:`\hat\pi\to\pi`.
* :func:`cafed_code_estimate` -- CA-Fed's published code (``activity_estimator.py``,
  ``BayesianActivityEstimator``), kept to show its bias: prior horizon :math:`H`, pseudo
  counts :math:`\pi_0H,a_0H,b_0H`, and the **joint** counts divided by :math:`n+H` (``n``
  transitions seen) instead of by the visits to the origin state. Hence
  :math:`\hat a\to\pi a`, :math:`\hat b\to(1-\pi)b` and

  .. math:: \hat\lambda\to\pi a+(1-\pi)b-1=-2\pi(1-\pi)(1-\lambda)

  (:func:`cafed_code_lambda_limit`), not :math:`\lambda`. The paper's experiments use an
  oracle, so this does not affect its reported results.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.errors import ParameterError
from fedtheory.params import (
    check_array,
    check_bool_array,
    check_instance,
    check_int,
    check_real,
)

__all__ = [
    "AvailabilityCounts",
    "AvailabilityEstimate",
    "BetaPrior",
    "cafed_code_estimate",
    "cafed_code_lambda_limit",
    "estimate",
    "init",
    "update",
]


@dataclass(frozen=True)
class AvailabilityCounts:
    """Sufficient statistics of the availability seen so far (all arrays ``[R, N]``).

    Attributes
    ----------
    rounds : int
        Number of rounds observed, :math:`t`.
    on : float array [R, N]
        Rounds in which the client was available.
    n11, n10, n00, n01 : float arrays [R, N]
        Transitions on->on, on->off, off->off, off->on between consecutive rounds.
    last : bool array [R, N]
        Availability in the last observed round (all False before the first round).
    """

    rounds: int
    on: np.ndarray
    n11: np.ndarray
    n10: np.ndarray
    n00: np.ndarray
    n01: np.ndarray
    last: np.ndarray

    @property
    def transitions(self) -> int:
        """Number of observed transitions, :math:`\\max(t-1,0)`."""
        return max(self.rounds - 1, 0)


@dataclass(frozen=True)
class BetaPrior:
    r"""Beta pseudo-counts: ``on``/``off`` (:math:`n,m`) for :math:`\pi`; ``stay_on``/
    ``leave_on`` (:math:`a_1,b_1`) for :math:`a`; ``stay_off``/``leave_off``
    (:math:`a_0,b_0`) for :math:`b`. All must be positive; default uniform priors."""

    on: float = 1.0
    off: float = 1.0
    stay_on: float = 1.0
    leave_on: float = 1.0
    stay_off: float = 1.0
    leave_off: float = 1.0

    def __post_init__(self) -> None:
        for name in ("on", "off", "stay_on", "leave_on", "stay_off", "leave_off"):
            check_real(getattr(self, name), name, "BetaPrior", low=0.0, low_open=True)


@dataclass(frozen=True)
class AvailabilityEstimate:
    r"""Estimates ``[R, N]``: ``pi`` (:math:`\hat\pi`), ``p_on_on`` (:math:`\hat a`),
    ``p_off_off`` (:math:`\hat b`), ``lam`` (:math:`\hat\lambda=\hat a+\hat b-1`)."""

    pi: np.ndarray
    p_on_on: np.ndarray
    p_off_off: np.ndarray
    lam: np.ndarray

    @property
    def pi_chain(self) -> np.ndarray:
        r"""Stationary law of the estimated chain, :math:`(1-\hat b)/(2-\hat a-\hat b)`."""
        return (1.0 - self.p_off_off) / (2.0 - self.p_on_on - self.p_off_off)


def init(shape: tuple[int, int]) -> AvailabilityCounts:
    """Empty counts for ``shape = (R, N)``."""
    if not isinstance(shape, tuple) or len(shape) != 2:
        raise ParameterError(
            f"The 'shape' parameter of init must be a pair (R, N). Got {shape!r} instead."
        )
    r = check_int(shape[0], "shape[0]", "init", low=1)
    n = check_int(shape[1], "shape[1]", "init", low=1)
    zeros = np.zeros((r, n))
    return AvailabilityCounts(0, zeros, zeros, zeros, zeros, zeros, np.zeros((r, n), bool))


def update(state: AvailabilityCounts, mask_t) -> AvailabilityCounts:
    """Counts after observing one round's availability ``mask_t`` (bool ``[R, N]``); pure."""
    check_instance(state, AvailabilityCounts, "state", "update")
    on = check_bool_array(np.asarray(mask_t), "mask_t", "update", ndim=2)
    if on.shape != state.on.shape:
        check_array(on, "mask_t", "update", shape=state.on.shape)
    if state.rounds == 0:
        return AvailabilityCounts(1, state.on + on, state.n11, state.n10, state.n00, state.n01, on)
    prev = state.last
    return AvailabilityCounts(
        state.rounds + 1,
        state.on + on,
        state.n11 + (prev & on),
        state.n10 + (prev & ~on),
        state.n00 + (~prev & ~on),
        state.n01 + (~prev & on),
        on,
    )


def estimate(state: AvailabilityCounts, prior: BetaPrior | None = None) -> AvailabilityEstimate:
    r"""Beta posterior means of :math:`\pi`, :math:`a`, :math:`b` and
    :math:`\hat\lambda=\hat a+\hat b-1` (CA-Fed §IV with the correct conditional counts,
    SPEC §3.4; consistent estimators)."""
    check_instance(state, AvailabilityCounts, "state", "estimate")
    p = BetaPrior() if prior is None else check_instance(prior, BetaPrior, "prior", "estimate")
    pi = (state.on + p.on) / (state.rounds + p.on + p.off)
    a = (state.n11 + p.stay_on) / (state.n11 + state.n10 + p.stay_on + p.leave_on)
    b = (state.n00 + p.stay_off) / (state.n00 + state.n01 + p.stay_off + p.leave_off)
    return AvailabilityEstimate(pi, a, b, a + b - 1.0)


def cafed_code_estimate(
    state: AvailabilityCounts,
    *,
    horizon: float = 100.0,
    pi0: float = 0.5,
    a0: float = 0.5,
    b0: float = 0.5,
) -> AvailabilityEstimate:
    r"""CA-Fed's published-code estimator (biased; kept to show the bias, SPEC §3.4 ⚠).

    :math:`\hat\pi=(\sum\mathbb 1+\pi_0H)/(t+H)`, :math:`\hat a=(n_{11}+a_0H)/(n+H)`,
    :math:`\hat b=(n_{00}+b_0H)/(n+H)` with :math:`n` the number of transitions; its
    :math:`\hat\lambda` tends to :func:`cafed_code_lambda_limit`, not to :math:`\lambda`.
    """
    owner = "cafed_code_estimate"
    check_instance(state, AvailabilityCounts, "state", owner)
    h = check_real(horizon, "horizon", owner, low=0.0, low_open=True)
    pi0 = check_real(pi0, "pi0", owner, low=0.0, high=1.0)
    a0 = check_real(a0, "a0", owner, low=0.0, high=1.0)
    b0 = check_real(b0, "b0", owner, low=0.0, high=1.0)
    pi = (state.on + pi0 * h) / (state.rounds + h)
    a = (state.n11 + a0 * h) / (state.transitions + h)
    b = (state.n00 + b0 * h) / (state.transitions + h)
    return AvailabilityEstimate(pi, a, b, a + b - 1.0)


def cafed_code_lambda_limit(pi, lam) -> np.ndarray:
    r"""Limit of CA-Fed's published-code :math:`\hat\lambda` on a stationary two-state chain:
    :math:`\pi a+(1-\pi)b-1=-2\pi(1-\pi)(1-\lambda)` (SPEC §3.4, derived; exact limit)."""
    pi = check_array(pi, "pi", "cafed_code_lambda_limit", low=0.0, high=1.0)
    lam = check_array(lam, "lam", "cafed_code_lambda_limit", low=-1.0, high=1.0)
    return -2.0 * pi * (1.0 - pi) * (1.0 - lam)
