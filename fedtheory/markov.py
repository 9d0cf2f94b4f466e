r"""Markov-chain tools used by availability processes and by the bounds.

Chains are finite, time homogeneous, with row-stochastic transition matrices
``P[i, j] = P(i -> j)``. CA-Fed (Rodio et al., Assumption 1, eq. (5)) needs

.. math:: \max_{i,j}|[P^t]_{ij}-\pi_j|\le C_P\,\lambda(P)^t\quad (t\ge T_P),\qquad
          \lambda(P)=\frac{1+\lambda_2(P)}2,

with :math:`\lambda_2` the second largest eigenvalue modulus.

Two-state chains have states ``0 = off`` and ``1 = on`` (the state index is the availability
indicator) and follow CA-Fed's parametrisation (Sec. III-A, Assumption 1): with stationary
availability
:math:`\pi` and second eigenvalue :math:`\lambda`,

.. math:: a=P(\text{on}\to\text{on})=\lambda+(1-\lambda)\pi,\qquad
          P(\text{off}\to\text{on})=(1-\lambda)\pi,

feasible iff :math:`1-1/\max(\pi,1-\pi)\le\lambda\le1`; the inverse map is
:math:`\lambda=a+b-1`, :math:`\pi=(1-b)/(2-a-b)` with :math:`b=P(\text{off}\to\text{off})`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce

import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import (
    Array,
    Integer,
    Real,
    SequenceOf,
    Size,
    StochasticMatrix,
    Text,
    declare,
)
from fedtheory.errors import ParameterError

__all__ = [
    "MixingConstants",
    "check_primitive_chain",
    "fedau_two_state",
    "kron_chain",
    "lambda_feasible_range",
    "mixing_constants",
    "mixing_rate",
    "product_mixing_constants",
    "second_eigenvalue_modulus",
    "stationary_distribution",
    "two_state_matrix",
    "two_state_mixing_constants",
    "two_state_parameters",
    "two_state_transitions",
]

MAX_HORIZON = 100_000
"""Default cap on the number of matrix powers :func:`mixing_constants` may compute."""


@dataclass(frozen=True)
class MixingConstants:
    r"""Constants of the mixing inequality :math:`\max_{ij}|P^t_{ij}-\pi_j|\le C_P\lambda^t`,
    :math:`t\ge T_P` (CA-Fed eq. (5)).

    Attributes
    ----------
    lambda2 : float
        Second largest eigenvalue modulus :math:`\lambda_2(P)`.
    rate : float
        The rate :math:`\lambda` used (by default :math:`\lambda(P)=(1+\lambda_2)/2`).
    C_P : float
        The constant :math:`C_P`.
    T_P : int
        The first round from which the inequality is claimed.
    tight : bool
        True if :math:`C_P` is the smallest constant valid for this ``rate`` and ``T_P``.
    method : str
        ``"two-state closed form"``, ``"product closed form"`` or ``"numerical"``.
    horizon : int
        Numerical method only: the certified period ``h`` with
        :math:`\|P^h-\mathbf 1\pi^\top\|_\infty\le\lambda^h` (0 for closed forms).
    """

    lambda2: float
    rate: float
    C_P: float
    T_P: int
    tight: bool
    method: str
    horizon: int = 0

    def __repr__(self) -> str:
        return (
            f"MixingConstants(C_P={self.C_P:.6g}, T_P={self.T_P}, lambda={self.rate:.6g}, "
            f"lambda2={self.lambda2:.6g}, {self.method})"
        )


@declare(pi=Array(low=0.0, high=1.0, low_open=True, high_open=True))
def lambda_feasible_range(pi) -> tuple[np.ndarray, np.ndarray]:
    r"""Feasible :math:`[\lambda_{\min},1]` for stationary probability ``pi`` in (0, 1)."""
    return 1.0 - 1.0 / np.maximum(pi, 1.0 - pi), np.ones_like(pi)


@declare(
    pi=Array(low=0.0, high=1.0, low_open=True, high_open=True),
    lam=Array(low=-1.0, high=1.0, broadcast="pi"),
    owner=Text(),
)
def two_state_transitions(pi, lam, owner: str = "two_state_transitions"):
    r"""Return ``(p_on_on, p_off_on)`` of two-state chains with stationary ``pi`` and second
    eigenvalue ``lam`` (arrays broadcast together). Infeasible pairs raise, never clip."""
    pi, lam = np.broadcast_arrays(pi, lam)
    low, _ = lambda_feasible_range(pi)
    bad = lam < low - 1e-12
    if np.any(bad):
        i = np.flatnonzero(bad.ravel())[0]
        raise ParameterError(
            f"The 'lam' parameter of {owner} must be in [1 - 1/max(pi, 1-pi), 1] = "
            f"[{low.ravel()[i]:.6g}, 1] for pi={pi.ravel()[i]:.6g}. "
            f"Got {lam.ravel()[i]:.6g} instead."
        )
    p_off_on = (1.0 - lam) * pi
    p_on_on = lam + p_off_on
    return np.clip(p_on_on, 0.0, 1.0), np.clip(p_off_on, 0.0, 1.0)  # rounding only (1e-16)


@declare(
    p_on_on=Array(low=0.0, high=1.0, high_open=True),
    p_off_on=Array(low=0.0, high=1.0, low_open=True, broadcast="p_on_on"),
)
def two_state_parameters(p_on_on, p_off_on) -> tuple[np.ndarray, np.ndarray]:
    r"""Inverse of :func:`two_state_transitions`: ``(pi, lam)`` from the transition
    probabilities, :math:`\lambda=a+b-1`, :math:`\pi=(1-b)/(2-a-b)` (exact), where
    the stay probabilities are :math:`a=` ``p_on_on`` and :math:`b=1-` ``p_off_on``.

    The chain must be irreducible: ``p_off_on > 0`` and ``p_on_on < 1``.
    """
    a, c = np.broadcast_arrays(p_on_on, p_off_on)
    return c / (1.0 - a + c), a - c


@declare(
    p=Array(low=0.0, high=1.0, low_open=True, high_open=True), off_on=Real(0.0, 1.0, low_open=True)
)
def fedau_two_state(p, off_on: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""``(p_on_on, p_off_on)`` of FedAU's Markov participation (the FedAU authors' code,
    ``markov-a``).

    FedAU's code sets :math:`P(\text{off}\to\text{on})=a` and
    :math:`P(\text{on}\to\text{off})=b=a(1/p-1)`; if :math:`b>1` it uses
    :math:`a\leftarrow a/b,\ b\leftarrow1`. Either way the stationary law is
    :math:`a/(a+b)=p` and :math:`\lambda_2=1-a-b` (exact).

    Parameters
    ----------
    p : array [N]
        Stationary participation probabilities in (0, 1).
    off_on : float
        The off-to-on probability :math:`a` in (0, 1].
    """
    a = off_on
    capped = a * (1.0 - p) > p  # b > 1, tested without forming 1/p (a denormal p)
    a_eff = np.where(capped, p / (1.0 - p), a)  # a / b
    b_eff = np.where(capped, 1.0, a * (1.0 - p) / np.where(capped, 1.0, p))
    return 1.0 - b_eff, a_eff


@declare(
    pi=Array(low=0.0, high=1.0, low_open=True, high_open=True),
    lam=Array(low=-1.0, high=1.0, broadcast="pi"),
)
def two_state_matrix(pi, lam) -> np.ndarray:
    r"""Transition matrices ``[..., 2, 2]`` (states off, on) of two-state chains in CA-Fed's
    :math:`(\pi,\lambda)` form: ``[[b, 1-b], [1-a, a]]``."""
    a, c = two_state_transitions(pi, lam, "two_state_matrix")
    return np.stack([np.stack([1.0 - c, c], -1), np.stack([1.0 - a, a], -1)], -2)


@declare(matrices=SequenceOf(StochasticMatrix(), min_size=1, plural="transition matrices"))
def kron_chain(matrices) -> np.ndarray:
    r"""Transition matrix of independent chains run side by side, :math:`P=\bigotimes_kP_k`.

    State ``i`` of the product is the mixed-radix number whose most significant digit is
    the state of chain 0 (numpy's ``kron`` order); for two-state chains bit ``N-1-k`` of
    ``i`` is client ``k``'s availability.

    Parameters
    ----------
    matrices : sequence of square stochastic matrices, or an array [N, m, m]
    """
    states = math.prod(len(m) for m in matrices)
    check_bytes(8 * states**2, "kron_chain", what=f"a transition matrix [{states}, {states}]",
                fixes="fewer or smaller chains")  # fmt: skip
    return reduce(np.kron, matrices)


@declare(P=StochasticMatrix(), name=Text(), owner=Text())
def check_primitive_chain(P, name: str = "P", owner: str = "check_primitive_chain") -> np.ndarray:
    r"""Return ``P`` after checking it is stochastic, irreducible and aperiodic.

    Uses Wielandt's theorem: a non-negative :math:`n\times n` matrix is primitive iff
    :math:`A^{(n-1)^2+1}>0` entrywise, checked on the zero pattern by repeated squaring.
    """
    pattern = P > 0
    n, power = P.shape[0], 1
    while power < (n - 1) ** 2 + 1 and not pattern.all():  # a positive power stays positive
        pattern = (pattern.astype(np.float64) @ pattern.astype(np.float64)) > 0
        power *= 2
    if not pattern.all():
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be an irreducible aperiodic stochastic "
            f"matrix (some power entrywise positive). Got a reducible or periodic chain "
            f"with {n} states instead."
        )
    return P


@declare(P=StochasticMatrix())
def stationary_distribution(P) -> np.ndarray:
    r"""Stationary law :math:`\pi` (``[n]``) of an irreducible aperiodic chain:
    the solution of :math:`\pi^\top P=\pi^\top`, :math:`\mathbf 1^\top\pi=1` (exact up to
    floating point)."""
    P = check_primitive_chain(P, "P", "stationary_distribution")
    return _stationary(P)


def _stationary(P: np.ndarray) -> np.ndarray:
    n = P.shape[0]
    system = np.vstack([P.T - np.eye(n), np.ones((1, n))])
    rhs = np.concatenate([np.zeros(n), [1.0]])
    pi = np.linalg.lstsq(system, rhs, rcond=None)[0]
    return np.clip(pi, 0.0, None) / np.clip(pi, 0.0, None).sum()  # rounding only


@declare(P=StochasticMatrix())
def second_eigenvalue_modulus(P) -> float:
    r""":math:`\lambda_2(P)`, the second largest eigenvalue modulus: the spectral radius of
    :math:`P-\mathbf 1\pi^\top` (whose spectrum is that of :math:`P` with one eigenvalue 1
    replaced by 0). CA-Fed §III, Assumption 1."""
    P = check_primitive_chain(P, "P", "second_eigenvalue_modulus")
    return _lambda2(P, _stationary(P))


def _lambda2(P: np.ndarray, pi: np.ndarray) -> float:
    return float(np.max(np.abs(np.linalg.eigvals(P - np.outer(np.ones(len(pi)), pi)))))


@declare(P=StochasticMatrix())
def mixing_rate(P) -> float:
    r""":math:`\lambda(P)=(1+\lambda_2(P))/2` of CA-Fed (§III, below eq. (5))."""
    P = check_primitive_chain(P, "P", "mixing_rate")
    return (1.0 + _lambda2(P, _stationary(P))) / 2.0


@declare(
    P=StochasticMatrix(),
    rate=Real(0.0, 1.0, high_open=True, none=True),
    T_P=Integer(0),
    max_horizon=Size(),
)
def mixing_constants(
    P, *, rate: float | None = None, T_P: int = 0, max_horizon: int = MAX_HORIZON
) -> MixingConstants:
    r"""Smallest :math:`C_P` with :math:`d(t)=\max_{ij}|P^t_{ij}-\pi_j|\le C_P\lambda^t` for all
    :math:`t\ge T_P`, computed numerically for a general irreducible aperiodic chain.

    CA-Fed (Rodio et al.) eq. (5), after Sun, Sun & Yin (2018), Lemma 1; the value returned is
    exact (tight), not a bound.

    Method. With :math:`\Delta_t=P^t-\mathbf 1\pi^\top` one has :math:`\Delta_{s+t}=\Delta_s
    \Delta_t`. Let :math:`h\ge1` be the first power with :math:`\|\Delta_h\|_\infty\le
    \lambda^h` (induced max-row-sum norm; it exists since :math:`\lambda>\lambda_2`). Every
    :math:`t\ge T_P` is :math:`T_P+qh+r` with :math:`0\le r<h`, and
    :math:`d(t)\le\|\Delta_h\|_\infty^q\,d(T_P+r)\le\lambda^{qh}d(T_P+r)`, so

    .. math:: C_P=\max_{T_P\le t<T_P+h} d(t)/\lambda^t

    certifies the whole tail.

    Parameters
    ----------
    P : array [n, n]
        Irreducible aperiodic stochastic matrix.
    rate : float, optional
        :math:`\lambda\in(\lambda_2,1)`; default :math:`\lambda(P)=(1+\lambda_2)/2`.
    T_P : int
        First round of the inequality (>= 0).
    max_horizon : int
        Give up (ParameterError) if no certifying ``h`` is found below this power.

    Examples
    --------
    >>> m = mixing_constants([[0.9, 0.1], [0.3, 0.7]])
    >>> round(m.C_P, 12), m.T_P
    (0.75, 0)
    """
    owner = "mixing_constants"
    P = check_primitive_chain(P, "P", owner)
    if T_P > max_horizon:  # the rounds before T_P are looped over
        raise ParameterError(
            f"The 'T_P' parameter of {owner} must be at most max_horizon = {max_horizon}. "
            f"Got {T_P} instead."
        )
    pi = _stationary(P)
    lambda2 = _lambda2(P, pi)
    lam = _check_rate(rate, lambda2, owner)
    n = P.shape[0]
    delta = np.eye(n) - np.outer(np.ones(n), pi)  # Delta_0
    step = P - np.outer(np.ones(n), pi)
    horizon, best, t = 0, 0.0, 0
    while horizon == 0 or t < T_P + horizon:
        if t >= T_P:
            best = max(best, float(np.abs(delta).max()) / lam**t)
        if horizon == 0 and t >= 1 and np.abs(delta).sum(axis=1).max() <= lam**t:
            horizon = t
        if t >= max_horizon + T_P:
            raise ParameterError(
                f"The 'max_horizon' parameter of {owner} must be large enough to certify the "
                f"tail (no h <= {max_horizon} with ||P^h - 1 pi^T||_inf <= lambda^h for "
                f"lambda={lam:.6g}). Got {max_horizon} instead."
            )
        delta = delta @ step
        t += 1
    return MixingConstants(lambda2, lam, best, T_P, True, "numerical", horizon)


def _check_rate(rate: float | None, lambda2: float, owner: str) -> float:
    if rate is None:
        return (1.0 + lambda2) / 2.0
    lam = rate
    if lam <= lambda2:
        raise ParameterError(
            f"The 'rate' parameter of {owner} must be in (lambda2, 1) = ({lambda2:.6g}, 1). "
            f"Got {lam:.6g} instead."
        )
    return lam


@declare(
    pi=Real(0.0, 1.0, low_open=True, high_open=True),
    lam=Real(-1.0, 1.0, low_open=True, high_open=True),
    rate=Real(0.0, 1.0, high_open=True, none=True),
)
def two_state_mixing_constants(pi: float, lam: float, *, rate: float | None = None):
    r"""Closed-form :math:`C_P,T_P` of a two-state chain with stationary ``pi`` and second
    eigenvalue ``lam`` (derived; tight).

    :math:`P^t=\mathbf 1\pi^\top+\lambda_2^t(I-\mathbf 1\pi^\top)`, so
    :math:`\max_{ij}|P^t_{ij}-\pi_j|=|\lambda_2|^t\max(\pi,1-\pi)`; for any rate
    :math:`\lambda\ge|\lambda_2|` the smallest constant is :math:`C_P=\max(\pi,1-\pi)`
    (attained at :math:`t=0`) with :math:`T_P=0`.
    """
    owner = "two_state_mixing_constants"
    two_state_transitions(pi, lam, owner)  # feasibility of (pi, lam)
    lambda2 = abs(lam)
    lam_rate = _check_rate(rate, lambda2, owner)
    return MixingConstants(lambda2, lam_rate, max(pi, 1.0 - pi), 0, True, "two-state closed form")


@declare(
    pi=Array(ndim=1, low=0.0, high=1.0, low_open=True, high_open=True),
    lam=Array(low=-1.0, high=1.0, low_open=True, high_open=True, like="pi"),
    rate=Real(0.0, 1.0, high_open=True, none=True),
)
def product_mixing_constants(pi, lam, *, rate: float | None = None) -> MixingConstants:
    r"""Closed-form :math:`C_P,T_P` for independent two-state chains
    :math:`P=\bigotimes_kP_k` (derived; an upper bound on the smallest
    :math:`C_P`, tight for one chain).

    Telescoping a product of entries in [0, 1], and since every entry of
    :math:`P^t-\mathbf 1\pi^\top` lies in [-1, 1],

    .. math:: d(t)=\max_{ij}|P^t_{ij}-\pi_j|\le\min\Big(1,\ \sum_kc_k|\lambda_{2,k}|^t\Big),
              \qquad c_k=\max(\pi_k,1-\pi_k).

    With :math:`\lambda\ge\lambda_2=\max_k|\lambda_{2,k}|` (default
    :math:`\lambda(P)=\max_k(1+|\lambda_{2,k}|)/2`) and :math:`T_P=0`,
    :math:`C_P=\max_t\min(\lambda^{-t},S(t))` with the decreasing
    :math:`S(t)=\sum_kc_k(|\lambda_{2,k}|/\lambda)^t`; the maximum sits where the increasing
    :math:`\lambda^{-t}` crosses :math:`S`. So :math:`C_P\le\sum_kc_k\le N` (a simpler bound).
    """
    owner = "product_mixing_constants"
    two_state_transitions(pi, lam, owner)
    lambda2 = float(np.abs(lam).max())
    lam_rate = _check_rate(rate, lambda2, owner)
    weights, ratios = np.maximum(pi, 1.0 - pi), np.abs(lam) / lam_rate  # [N], [N]

    def tail_sum(t: int) -> float:
        return float(np.sum(weights * ratios**t))

    t = 0
    if tail_sum(0) < 1.0:
        c_p = tail_sum(0)
    else:
        while lam_rate ** -(t + 1) <= tail_sum(t + 1):
            t += 1
        c_p = max(lam_rate**-t, tail_sum(t + 1))
    return MixingConstants(lambda2, lam_rate, c_p, 0, pi.size == 1, "product closed form")
