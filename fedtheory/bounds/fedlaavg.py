r"""FedLaAvg (Yan et al., arXiv 2002.07399; journal appendix App. C) -- Example 1.

Setting: two clients with :math:`f_i(x)=(x-e_i)^2` (one exact gradient step per round,
learning rate :math:`\gamma`), global optimum :math:`x^*=(e_1+e_2)/2`. Availability
alternates periodically: client 1 for :math:`t_1` rounds, then client 2 for :math:`t_2`.
FedAvg then iterates :math:`x_{t+1}-e_i=r(x_t-e_i)` with :math:`r=1-2\gamma`.

Statements (FedLaAvg, Example 1, App. C), all *exact* (not bounds):

* ``example1.end_of_period`` -- the period-end iterate converges to :math:`X_B`
  (appendix eq. (16)-(19); journal Theorem 1 = arXiv Theorem 2).
* ``example1.after_block1`` -- the iterate after client 1's block converges to :math:`X_A`.
* ``example1.small_step_limit`` -- :math:`\lim_{\gamma\to0^+}X_A=X_B=
  (t_1e_1+t_2e_2)/(t_1+t_2)\ne x^*` when :math:`t_1\ne t_2` and :math:`e_1\ne e_2`.
* ``example1.time_average`` -- the average of one period of the limit cycle equals
  :math:`(t_1e_1+t_2e_2)/(t_1+t_2)` exactly, for every :math:`\gamma\in(0,1)` [derived].
* ``example1.equal_block_amplitude`` -- with :math:`t_1=t_2=\tau`,
  :math:`|X_A-X_B|=\frac{1-\rho}{1+\rho}|e_1-e_2|`, :math:`\rho=(1-2\gamma)^\tau` [derived].

The paper states the divergence for :math:`\gamma<1/2`; the limit cycle exists whenever
:math:`|r|<1`, i.e. :math:`0<\gamma<1`, which is the hypothesis checked here.

FedLaAvg's own guarantees (arXiv Theorems 1-3, journal appendix; journal numbering in brackets):

* ``fedlaavg.example1.fedlaavg_bound`` -- upper bound (arXiv Theorem 1 [App. G, Theorem 4]):
  with :math:`\gamma=1/(2\sqrt T)`, :math:`(\hat x-x^*)^2\le\frac{f(x_0)-f(x^*)}{\sqrt T}
  +\frac{I^2G^2}{4T}`, :math:`I=\max\{t_1,t_2\}`, :math:`G=\max\{2|x_0-x^*|,|e_1-e_2|\}`,
  :math:`\hat x=\arg\min_{x_t}f(x_t)`.
* ``fedlaavg.theorem3_order`` -- order (arXiv Theorem 3 [Theorem 2], App. F eq. (25)); its
  exact constants were not recovered.
* ``fedlaavg.round_bound`` -- upper bound (App. H eq. (41) [Theorem 3]) with staleness
  :math:`I`, for :math:`\gamma\le1/(4L)`.
* ``fedlaavg.corollary_step`` / ``fedlaavg.corollary_step_rounds`` -- the Corollary's step
  sizes (App. F eqs. (26)-(27)), with the hypothesis :math:`\gamma\le1/(4L)`;
  :func:`staleness_bound` gives :math:`I=\lceil N/K\rceil E` (``fedlaavg.lemma2.staleness``,
  upper bound: arXiv Lemma 2, appendix Lemma 5 [journal Lemma 1]).

Python names: ``x0, F_gap, R, C, N, I, G, sigma2, L, beta, E_avail, T`` denote
:math:`x_0, B=f(x^0)-f^*, R, C, N, I, G, \sigma^2, L, \beta=K/N, E, T`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import symbol
from fedtheory.constraints import Integer, declare

e1, e2, gamma = symbol("e1"), symbol("e2"), symbol("gamma")
t1, t2, tau = symbol("t1"), symbol("t2"), symbol("tau")
r = 1 - 2 * gamma

X_B = (r**t2 * (e1 - e2) + e2 - r ** (t1 + t2) * e1) / (1 - r ** (t1 + t2))
X_A = (r**t1 * (e2 - e1) + e1 - r ** (t1 + t2) * e2) / (1 - r ** (t1 + t2))
BLOCK_AVERAGE = (t1 * e1 + t2 * e2) / (t1 + t2)
_rho = r**tau
EQUAL_BLOCK_AMPLITUDE = sp.Abs((1 - _rho) / (1 + _rho)) * sp.Abs(e1 - e2)


def _log_abs_r(gamma):
    r""":math:`\log|r|` with :math:`r=1-2\gamma`, accurate near :math:`\gamma=0` and
    :math:`\gamma=1` (:math:`|r|=1-2\gamma` or :math:`1-2(1-\gamma)`), and whether
    :math:`r<0`."""
    g = np.asarray(gamma, float)
    neg = g > 0.5
    return np.where(neg, np.log1p(-2 * (1 - g)), np.log1p(-2 * g)), neg


def _powers(gamma, t):
    r"""``(r^t, 1 - r^t, 1 + r^t)`` for :math:`r=1-2\gamma`, integer ``t`` >= 1, without
    cancellation (``expm1`` where :math:`|r|^t\to1` with the sign that cancels)."""
    log_r, neg = _log_abs_r(gamma)
    t = np.asarray(t, float)
    flip = neg & (np.mod(t, 2) == 1)  # r^t < 0
    mag = np.exp(t * log_r)
    small = -np.expm1(t * log_r)  # 1 - |r|^t
    return np.where(flip, -mag, mag), np.where(flip, 1 + mag, small), np.where(flip, small, 1 + mag)


def _limit_stable(*, e1, e2, gamma, t1, t2):
    r"""Stable form of :data:`X_B`:
    :math:`\big(e_2(1-r^{t_2})+e_1r^{t_2}(1-r^{t_1})\big)/(1-r^{t_1+t_2})` (same rational
    function; no cancellation as :math:`\gamma\to0`)."""
    r2, a2, _ = _powers(gamma, t2)
    _, a1, _ = _powers(gamma, t1)
    _, a12, _ = _powers(gamma, np.asarray(t1) + np.asarray(t2))
    return (e2 * a2 + e1 * r2 * a1) / a12


def _after_block1_stable(*, e1, e2, gamma, t1, t2):
    r"""Stable form of :data:`X_A` (:data:`X_B` with the clients swapped)."""
    return _limit_stable(e1=e2, e2=e1, gamma=gamma, t1=t2, t2=t1)


def _amplitude_stable(*, e1, e2, gamma, tau):
    r"""Stable form of :data:`EQUAL_BLOCK_AMPLITUDE`: :math:`|(1-\rho)/(1+\rho)|\,|e_1-e_2|`
    with both factors of :math:`\rho=r^\tau` computed without cancellation."""
    _, minus, plus = _powers(gamma, tau)
    return np.abs(minus / plus) * np.abs(np.asarray(e1, float) - e2)


_STEP = Condition("0 < gamma < 1 (so that |1 - 2 gamma| < 1)", gamma, "<", sp.Integer(1))
_REF = "Yan et al. 2020 (FedLaAvg), Example 1; journal appendix App. C eq. (16)-(19)"

end_of_period = register(
    Theorem(
        "fedlaavg.example1.end_of_period",
        title="FedLaAvg Example 1: period-end limit X_B",
        reference=_REF,
        kind="exact",
        terms={"X_B": X_B},
        conditions=[_STEP],
        numeric={"X_B": _limit_stable},
        statement="x_{k(t1+t2)} -> X_B as k -> infinity",
    )
)
after_block1 = register(
    Theorem(
        "fedlaavg.example1.after_block1",
        title="FedLaAvg Example 1: limit X_A after block 1",
        reference=_REF + " [derived]",
        kind="exact",
        terms={"X_A": X_A},
        conditions=[_STEP],
        numeric={"X_A": _after_block1_stable},
        statement="x_{k(t1+t2)+t1} -> X_A = r^{t1}(X_B - e1) + e1",
    )
)
small_step_limit = register(
    Theorem(
        "fedlaavg.example1.small_step_limit",
        title="FedLaAvg Example 1: small-step limit",
        reference=_REF + " (L'Hopital)",
        kind="limit",
        terms={"limit": BLOCK_AVERAGE},
        statement="lim_{gamma->0+} X_A = lim X_B = (t1 e1 + t2 e2)/(t1 + t2)",
    )
)
time_average = register(
    Theorem(
        "fedlaavg.example1.time_average",
        title="FedLaAvg Example 1: limit-cycle time average",
        reference=_REF + " [derived]",
        kind="exact",
        terms={"average": BLOCK_AVERAGE},
        conditions=[_STEP],
        statement="mean of the t1+t2 iterates of one period of the limit cycle",
    )
)
equal_block_amplitude = register(
    Theorem(
        "fedlaavg.example1.equal_block_amplitude",
        title="FedLaAvg Example 1: equal-block oscillation amplitude",
        reference=_REF + " [derived]",
        kind="exact",
        terms={"amplitude": EQUAL_BLOCK_AMPLITUDE},
        conditions=[_STEP],
        numeric={"amplitude": _amplitude_stable},
        statement="t1 = t2 = tau: |X_A - X_B| = (1 - rho)/(1 + rho) |e1 - e2|",
    )
)


# --- FedLaAvg on Example 1 (arXiv Theorem 1, App. G Theorem 4) -------------------------------
x0, T = symbol("x0"), symbol("T")
x_star = (e1 + e2) / 2
STALENESS = sp.Max(t1, t2)
GRADIENT_BOUND = sp.Max(2 * sp.Abs(x0 - x_star), sp.Abs(e1 - e2))

fedlaavg_bound = register(
    Theorem(
        "fedlaavg.example1.fedlaavg_bound",
        title="FedLaAvg on Example 1",
        reference="Yan et al. 2020 (FedLaAvg), arXiv Theorem 1; journal App. G Theorem 4",
        kind="upper bound",
        terms={
            "initial": (x0 - x_star) ** 2 / sp.sqrt(T),
            "staleness": STALENESS**2 * GRADIENT_BOUND**2 / (4 * T),
        },
        statement="gamma = 1/(2 sqrt T): (xhat - x^*)^2 <= (f(x_0) - f(x^*))/sqrt(T) + "
        "I^2 G^2/(4T), I = max(t1, t2), G = max(2|x_0 - x^*|, |e1 - e2|)",
    )
)

# --- General non-convex bound, round-based (App. H eq. (41), journal Theorem 3) -------------
L, G, sigma2, B = symbol("L"), symbol("G"), symbol("sigma2"), symbol("F_gap")
R, C, N, I = symbol("R"), symbol("C"), symbol("N"), symbol("I")
beta, E_avail = symbol("beta"), symbol("E_avail")
_SMALL_STEP = Condition("gamma <= 1/(4L)", gamma, "<=", 1 / (4 * L))

round_bound = register(
    Theorem(
        "fedlaavg.round_bound",
        title="FedLaAvg round-based bound (41)",
        reference="Yan et al. 2020 (FedLaAvg), journal Theorem 3, App. H eq. (41)",
        kind="upper bound",
        terms={
            "optimisation": 4 * B / (gamma * R * C),
            "noise": 4 * gamma * sigma2 * L / N,
            "staleness": 2 * gamma * I * C * L * (G**2 + sigma2) / sp.sqrt(N),
            "drift": (2 * I**2 / (1 - 2 * gamma * L) + 4 * I**2 + 4 * I + 2)
            * gamma**2
            * C**2
            * L**2
            * G**2,
        },
        conditions=[_SMALL_STEP],
        statement="(1/R) sum_r E||grad f(x^{rC-1})||^2 <= 4B/(gamma R C) + 4 gamma sigma^2 L/N"
        " + 2 gamma I C L (G^2 + sigma^2)/sqrt(N) + (2I^2/(1 - 2 gamma L) + 4I^2 + 4I + 2)"
        " gamma^2 C^2 L^2 G^2",
    )
)

theorem3_order = register(
    Theorem(
        "fedlaavg.theorem3_order",
        title="FedLaAvg general bound (order)",
        reference="Yan et al. 2020 (FedLaAvg), arXiv Theorem 3 [journal Theorem 2], App. F "
        "eq. (25)",
        kind="order",
        terms={
            "staleness": gamma * I * L * (G**2 + sigma2) / sp.sqrt(N),
            "drift": gamma**2 * I**2 * L**2 * G**2 / (1 - 2 * gamma * L),
            "optimisation": B / (gamma * T),
        },
        conditions=[_SMALL_STEP],
        statement="(1/T) sum_t E||grad f(x^{t-1})||^2 = O(gamma I L (G^2 + sigma^2)/sqrt(N) + "
        "gamma^2 I^2 L^2 G^2/(1 - 2 gamma L) + B/(gamma T))",
    )
)

CORO_STEP = sp.sqrt(beta) * N ** sp.Rational(1, 4) / (2 * L * sp.sqrt(E_avail) * sp.sqrt(T))
CORO_STEP_ROUNDS = (
    sp.sqrt(beta) * N ** sp.Rational(1, 4) / (2 * L * C * sp.sqrt(E_avail) * sp.sqrt(R))
)
corollary_step = register(
    Theorem(
        "fedlaavg.corollary_step",
        title="FedLaAvg Corollary step size",
        reference="Yan et al. 2020 (FedLaAvg), journal Corollary 2, App. F eq. (26)",
        kind="exact",
        terms={"gamma": CORO_STEP},
        conditions=[Condition("gamma <= 1/(4L)", CORO_STEP, "<=", 1 / (4 * L))],
        statement="gamma = beta^{1/2} N^{1/4} / (2 L E^{1/2} T^{1/2}), requires gamma <= 1/(4L)",
    )
)
corollary_step_rounds = register(
    Theorem(
        "fedlaavg.corollary_step_rounds",
        title="FedLaAvg Corollary step size (rounds)",
        reference="Yan et al. 2020 (FedLaAvg), journal Corollary 2 (round-based), App. F",
        kind="exact",
        terms={"gamma": CORO_STEP_ROUNDS},
        conditions=[Condition("gamma <= 1/(4L)", CORO_STEP_ROUNDS, "<=", 1 / (4 * L))],
        statement="gamma = beta^{1/2} N^{1/4} / (2 L C E^{1/2} R^{1/2}), requires gamma <= 1/(4L)",
    )
)


k_sel = symbol("k")
staleness = register(
    Theorem(
        "fedlaavg.lemma2.staleness",
        title="FedLaAvg Lemma 2: staleness",
        reference="Yan et al. 2020 (FedLaAvg), arXiv Lemma 2 [journal Lemma 1], proof in App. "
        "B.1; value of I as in the Corollary's proof (App. F)",
        kind="upper bound",
        terms={"I": sp.ceiling(N / k_sel) * E_avail},
        conditions=[Condition("K <= N", k_sel, "<=", N)],
        statement="absent-longest selection of K of N clients, every client available at least "
        "once in every window of E iterations: t - T_i^t <= I = ceil(N/K) E",
    )
)


@declare(N=Integer(1), K=Integer(1, "N"), E=Integer(1))
def staleness_bound(N: int, K: int, E: int) -> int:
    r"""FedLaAvg Lemma 2 [arXiv numbering; Lemma 5 of the appendix, journal Lemma 1]: with
    the "absent-longest" selection of :math:`K` of :math:`N` clients and every client
    available once in each window of :math:`E` iterations, the staleness is at most
    :math:`I=\lceil N/K\rceil E` (upper bound ``fedlaavg.lemma2.staleness``; the lemma's own
    statement says :math:`\lceil N/K\rceil E-1`, the Corollary uses this one)."""
    return int(staleness.evaluate(N=N, k=K, E_avail=E).total)
