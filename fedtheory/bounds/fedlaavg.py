r"""FedLaAvg (Yan et al., arXiv 2002.07399; journal appendix App. C) -- Example 1.

Setting: two clients with :math:`f_i(x)=(x-e_i)^2` (one exact gradient step per round,
learning rate :math:`\gamma`), global optimum :math:`x^*=(e_1+e_2)/2`. Availability
alternates periodically: client 1 for :math:`t_1` rounds, then client 2 for :math:`t_2`.
FedAvg then iterates :math:`x_{t+1}-e_i=r(x_t-e_i)` with :math:`r=1-2\gamma`.

Statements (SPEC §2.2), all *exact* (not bounds):

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
"""

from __future__ import annotations

import sympy as sp

from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import symbol

e1, e2, gamma = symbol("e1"), symbol("e2"), symbol("gamma")
t1, t2, tau = symbol("t1"), symbol("t2"), symbol("tau")
r = 1 - 2 * gamma

X_B = (r**t2 * (e1 - e2) + e2 - r ** (t1 + t2) * e1) / (1 - r ** (t1 + t2))
X_A = (r**t1 * (e2 - e1) + e1 - r ** (t1 + t2) * e2) / (1 - r ** (t1 + t2))
BLOCK_AVERAGE = (t1 * e1 + t2 * e2) / (t1 + t2)
_rho = r**tau
EQUAL_BLOCK_AMPLITUDE = sp.Abs((1 - _rho) / (1 + _rho)) * sp.Abs(e1 - e2)

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
        reference=_REF + " [derived, SPEC §2.2]",
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
        reference=_REF + " [derived, SPEC §2.2]",
        kind="exact",
        terms={"amplitude": EQUAL_BLOCK_AMPLITUDE},
        conditions=[_STEP],
        statement="t1 = t2 = tau: |X_A - X_B| = (1 - rho)/(1 + rho) |e1 - e2|",
    )
)
