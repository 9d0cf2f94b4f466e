r"""Online Beta-prior estimators of availability :math:`\pi_k`, the two-state transition
probabilities and :math:`\lambda_k` (CA-Fed, Rodio et al., Sec. IV-B "Estimators").

The state is a small immutable record of counts per (replicate, client) ``[R, N]``; the
pure function :func:`update` adds one round's mask. Two read-outs share these counts:

* :func:`estimate` -- the Beta posterior means (derived). With counts
  :math:`n_{11},n_{10},n_{00},n_{01}` of transitions (from, to) and priors
  :math:`(a_1,b_1)`, :math:`(a_0,b_0)`:

  .. math:: \hat\pi=\frac{\sum_{s\le t}\mathbb 1_{k\in A_s}+n}{t+n+m},\quad
            \hat a=\frac{n_{11}+a_1}{n_{11}+n_{10}+a_1+b_1},\quad
            \hat b=\frac{n_{00}+a_0}{n_{00}+n_{01}+a_0+b_0},\quad
            \hat\lambda=\hat a+\hat b-1,

  consistent: :math:`\hat\lambda\to\lambda` and :math:`\hat\pi\to\pi`.
* :func:`cafed_code_estimate` -- CA-Fed's published code (``activity_estimator.py``,
  ``BayesianActivityEstimator``, used with ``--estimator_type bayesian``; the paper's runs
  use the oracle), reproduced exactly. Prior horizon :math:`H=100` and pseudo counts
  :math:`\pi_kH,a_kH,b_kH` from each client's **true** :math:`\pi_k,\lambda_k`
  (:math:`a=\lambda+(1-\lambda)\pi`, :math:`b=1-(1-\lambda)\pi`); the round-:math:`t`
  counts include one transition from an all-off state before round 1; and the **joint**
  counts are divided by :math:`t+H` instead of by the visits to the origin state. Hence
  :math:`\hat a\to\pi a`, :math:`\hat b\to(1-\pi)b` and

  .. math:: \hat\lambda\to\pi a+(1-\pi)b-1=-2\pi(1-\pi)(1-\lambda)

  (:func:`cafed_code_lambda_limit`), not :math:`\lambda`; at :math:`t=0` it returns the
  truth :math:`\lambda_k`, and the prior's weight :math:`H/(t+H)` decays from there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import MAX_SIZE, Array, Instance, Mask, Real, declare
from fedtheory.errors import ParameterError
from fedtheory.markov import two_state_transitions

__all__ = [
    "AvailabilityCounts",
    "AvailabilityEstimate",
    "BetaPrior",
    "CodePrior",
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


PSEUDO_COUNTS = ("on", "off", "stay_on", "leave_on", "stay_off", "leave_off")
"""The fields of a :class:`BetaPrior`."""


@declare(**{name: Real(0.0, low_open=True) for name in PSEUDO_COUNTS})
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


@declare(horizon=Real(0.0, low_open=True))
@dataclass(frozen=True)
class CodePrior:
    r"""The prior of CA-Fed's published ``BayesianActivityEstimator``
    (:func:`cafed_code_estimate`): horizon :math:`H` (code: 100); the pseudo-counts
    :math:`\pi_kH,a_kH,b_kH` come from each client's true :math:`\pi_k,\lambda_k`, which
    the user of this prior supplies separately."""

    horizon: float = 100.0


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


@declare(shape=Array(shape=(2,), integer=True, low=1, high=MAX_SIZE))
def init(shape: tuple[int, int]) -> AvailabilityCounts:
    """Empty counts for ``shape = (R, N)`` (five float arrays and a mask, checked against
    the memory budget)."""
    r, n = (int(k) for k in shape)
    check_bytes(41 * r * n, "init", what=f"counts [{r}, {n}]", fixes="fewer replicates or clients")
    zeros = np.zeros((r, n))
    return AvailabilityCounts(0, zeros, zeros, zeros, zeros, zeros, np.zeros((r, n), bool))


@declare(state=Instance(AvailabilityCounts), mask_t=Mask(shape=("state.on[0]", "state.on[1]")))
def update(state: AvailabilityCounts, mask_t) -> AvailabilityCounts:
    """Counts after observing one round's availability ``mask_t`` (bool ``[R, N]``); pure."""
    on = mask_t
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


@declare(state=Instance(AvailabilityCounts), prior=Instance(BetaPrior, none=True))
def estimate(state: AvailabilityCounts, prior: BetaPrior | None = None) -> AvailabilityEstimate:
    r"""Beta posterior means of :math:`\pi`, :math:`a`, :math:`b` and
    :math:`\hat\lambda=\hat a+\hat b-1` (CA-Fed §IV with the correct conditional counts,
    consistent estimators)."""
    p = BetaPrior() if prior is None else prior
    pi = (state.on + p.on) / (state.rounds + p.on + p.off)
    a = (state.n11 + p.stay_on) / (state.n11 + state.n10 + p.stay_on + p.leave_on)
    b = (state.n00 + p.stay_off) / (state.n00 + state.n01 + p.stay_off + p.leave_off)
    return AvailabilityEstimate(pi, a, b, a + b - 1.0)


@declare(
    state=Instance(AvailabilityCounts),
    pi=Array(low=0.0, high=1.0, low_open=True, high_open=True),
    lam=Array(low=-1.0, high=1.0),
    horizon=Real(0.0, low_open=True),
)
def cafed_code_estimate(
    state: AvailabilityCounts, pi, lam, *, horizon: float = 100.0
) -> AvailabilityEstimate:
    r"""CA-Fed's published-code estimator (``BayesianActivityEstimator``), exactly.

    With :math:`t` rounds observed, :math:`H` = ``horizon`` and the client's true
    :math:`\pi_k,\lambda_k` (``pi``, ``lam`` ``[N]``, broadcast against the counts), so
    :math:`a_k=\lambda_k+(1-\lambda_k)\pi_k`, :math:`b_k=1-(1-\lambda_k)\pi_k`:

    .. math:: \hat\pi=\frac{\sum_{s\le t}\mathbb 1_{k\in A_s}+\pi_kH}{t+H},\quad
              \hat a=\frac{n_{11}+a_kH}{t+H},\quad
              \hat b=\frac{n_{00}+\mathbb 1_{k\notin A_1}+b_kH}{t+H},\quad
              \hat\lambda=\hat a+\hat b-1,

    where :math:`\mathbb 1_{k\notin A_1}` is the code's transition from its initial empty
    active set (for :math:`t\ge1`; the first state is recovered from the counts as
    :math:`\mathbb 1_{k\in A_1}=\sum_s\mathbb 1_{k\in A_s}-n_{11}-n_{01}`). The code's
    ``_time_step`` starts at 1 and is incremented after each round, hence :math:`t+H`.
    :math:`\hat\lambda` tends to :func:`cafed_code_lambda_limit`, not to :math:`\lambda`.
    The code stores :math:`\pi_k,\lambda_k` in float32; here they are float64 (a relative
    difference of about 1e-7 in the prior).

    Examples
    --------
    >>> import numpy as np
    >>> s = init((1, 1))
    >>> for on in (False, True, True):
    ...     s = update(s, np.array([[on]]))
    >>> est = cafed_code_estimate(s, [0.5], [0.5], horizon=100.0)
    >>> float(est.pi[0, 0]), float(est.p_off_off[0, 0])  # (2 + 50)/103, (0 + 1 + 75)/103
    (0.5048543689320388, 0.7378640776699029)
    """
    owner = "cafed_code_estimate"
    h = horizon
    a_true, c_true = two_state_transitions(pi, lam, owner)  # P(on->on), P(off->on)
    pi_true = pi
    shape = state.on.shape
    for name, value in (("pi", pi_true), ("lam", a_true)):
        try:
            fits = np.broadcast_shapes(value.shape, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ParameterError(
                f"The '{name}' parameter of {owner} must have shape ({shape[-1]},) (one value "
                f"per client of the counts {shape}). Got shape {value.shape} instead."
            )
    t = state.rounds
    first_off = 1.0 - (state.on - state.n11 - state.n01) if t >= 1 else np.zeros(shape)
    pi_hat = (state.on + pi_true * h) / (t + h)
    a = (state.n11 + a_true * h) / (t + h)
    b = (state.n00 + first_off + (1.0 - c_true) * h) / (t + h)
    return AvailabilityEstimate(pi_hat, a, b, a + b - 1.0)


@declare(pi=Array(low=0.0, high=1.0), lam=Array(low=-1.0, high=1.0, broadcast="pi"))
def cafed_code_lambda_limit(pi, lam) -> np.ndarray:
    r"""Limit of CA-Fed's published-code :math:`\hat\lambda` on a stationary two-state chain:
    :math:`\pi a+(1-\pi)b-1=-2\pi(1-\pi)(1-\lambda)` (derived; exact limit)."""
    return -2.0 * pi * (1.0 - pi) * (1.0 - lam)
