r"""Tightness family of FedLaAvg's bound on Example 1 (Yan et al. 2020, arXiv Theorem 1):
FedLaAvg on Example 1 with :math:`\gamma=1/(2\sqrt T)`; measured the exact
:math:`\min_{0\le t\le T}(x_t-x^*)^2` (:func:`fedlaavg_example1_error`). Its ``FAMILIES``
join ``fedtheory.tightness.FAMILIES`` through FedLaAvg's record.
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory.bounds import fedlaavg
from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import Real as RealIn
from fedtheory.constraints import Size, declare, refuse_non_finite
from fedtheory.tightness.family import Family, Integer, Measurement, Real


# --- FedLaAvg on Example 1 -------------------------------------------------------------------
@declare(x0=RealIn(), t1=Size(), t2=Size(), T=Size(), e1=RealIn(), e2=RealIn())
def fedlaavg_example1_error(x0: float, t1: int, t2: int, T: int, *, e1=0.0, e2=1.0) -> float:
    r"""Exact :math:`\min_{0\le t\le T}(x_t-x^*)^2` of FedLaAvg (Yan et al. 2020, Algorithm 1,
    one available client per iteration, exact gradients) on Example 1 with
    :math:`\gamma=1/(2\sqrt T)`: :math:`x_{t+1}=x_t-\frac\gamma2(g_1+g_2)`, where client
    :math:`i(t)` (1 for the first :math:`t_1` iterations of each period, then 2) refreshes
    its cached gradient :math:`g_i=2(x_t-e_i)`; both caches start at 0 (FedLaAvg, Algorithms 1-2, as
    ``fedtheory.sim.FedLaAvg``). :math:`\hat x=\arg\min_{x_t}f(x_t)` includes :math:`x_0`,
    as the validation ``example1-algorithms`` does."""
    owner = "fedlaavg_example1_error"
    check_seconds(seconds(rounds=T), owner, what=f"{T} iterations of a Python loop",
                  fixes="a smaller T")  # fmt: skip
    x0, e1, e2 = np.float64(x0), np.float64(e1), np.float64(e2)
    reals = {"x0": x0, "e1": e1, "e2": e2}
    gamma, centre, e = 1 / (2 * math.sqrt(T)), (e1 + e2) / 2, (e1, e2)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: refuse_non_finite below
        x, cached, best = x0, [0.0, 0.0], (x0 - centre) ** 2
        for t in range(T):
            i = 0 if t % (t1 + t2) < t1 else 1
            cached[i] = 2 * (x - e[i])
            x = x - gamma * (cached[0] + cached[1]) / 2
            best = min(best, (x - centre) ** 2)
    refuse_non_finite(best, owner, reals)
    return float(best)


def _fedlaavg(ints, x, seed) -> Measurement:
    t1, t2, T, x0 = ints["t1"], ints["t2"], ints["T"], float(x[0])
    measured = fedlaavg_example1_error(x0, t1, t2, T)
    constants = {"x0": x0, "e1": 0.0, "e2": 1.0, "t1": t1, "t2": t2, "T": T}
    return Measurement(measured, constants, magnitude=max(1.0, x0**2))


FEDLAAVG_EXAMPLE1 = Family(
    fedlaavg.fedlaavg_bound,
    "Example 1 with e1 = 0, e2 = 1 (the ratio is invariant under x -> a x + b), blocks "
    "t1, t2 <= 20, horizon T <= 1000, x0 in [-20, 20]; measured: exact min_t (x_t - x^*)^2",
    (Integer("t1", 1, 20, "block 1"), Integer("t2", 1, 20, "block 2"), Integer("T", 1, 1000, "T")),
    lambda ints: (Real("x0", -20.0, 20.0),),
    _fedlaavg,
    tightness="at T = 1 the ratio is at most 1/2, attained at x0 = e1 (x_1 = (x0 + e1)/2; with "
    "a = |x0 - x^*|, the bound is 2a^2 >= 2 measured if 2a >= |e1 - e2|, else a^2 + (e1 - e2)^2/4 "
    "> 2a^2); no closed form for T > 1",
)

FAMILIES = (FEDLAAVG_EXAMPLE1,)
"""The paper's tightness families (joining ``fedtheory.tightness.FAMILIES`` through its record,
:mod:`fedtheory.papers`)."""
