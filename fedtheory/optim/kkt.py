r"""Exact water-filling solution of CA-Fed's App. D program from its KKT conditions.

Rodio et al. 2023, App. D, eq. (27): at the optimum of
:math:`\min_{q\ge0,\|q\|_1=Q}\frac{\frac12q^\top Aq+B}{\pi^\top q}+C` with
:math:`A=\mathrm{diag}(a)`, :math:`a>0`,

.. math:: q_k^*=\frac{(\lambda^*\pi_k-\theta^*)_+}{a_k}=c\,\frac{(\pi_k-\tau)_+}{a_k},
          \qquad \tau=\theta^*/\lambda^*,\ c=\lambda^*,

a water-filling in :math:`\pi_k` (Guideline A: the least available clients get zero weight).
The exact form has :math:`1/a_k`; the paper's "constant :math:`a`" holds only for equal
:math:`a_k` (erratum ``cafed.appD.water_filling``). [derived] Stationarity gives :math:`c=f_0(q^*)`
where
:math:`f_0=(\frac12q^\top Aq+B)/\pi^\top q`; with the support fixed to the :math:`m` most
available clients and :math:`s_j=\sum_{k\le m}\pi_k^j/a_k`, this is the quadratic

.. math:: Q^2(s_2-\tau^2s_0)=2B(s_1-\tau s_0)^2,

whose smaller root is the unique solution on :math:`\tau<s_1/s_0` (the left side minus the
right is concave in :math:`\tau`, and
:math:`h(\tau)=\frac{Q^2(s_2-\tau^2s_0)}{2(s_1-\tau s_0)^2}-B` is increasing there
because :math:`s_1^2\le s_0s_2`). The scalar search runs over the support size :math:`m` and
keeps the root with :math:`\pi_{(m+1)}\le\tau<\pi_{(m)}`.
"""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Instance, declare
from fedtheory.errors import ParameterError, SolverError
from fedtheory.optim.instance import WeightInstance
from fedtheory.optim.program import WeightSolution, excluded_clients

__all__ = ["waterfilling_weights"]


@declare(instance=Instance(WeightInstance))
def waterfilling_weights(instance: WeightInstance) -> WeightSolution:
    r"""Optimal :math:`q^*` of the App. D program (``bias="none"``) in closed form.

    Exact (not an approximation): KKT conditions (27) of Rodio et al. 2023, App. D, solved
    by a search over the support size and a quadratic root. Clients in
    ``instance.excluded`` are left out; every other client needs :math:`a_k>0`.

    Examples
    --------
    >>> from fedtheory.optim import WeightInstance
    >>> sol = waterfilling_weights(WeightInstance([1.0, 1.0, 1.0], 0.5, 0.0, [0.9, 0.5, 0.05],
    ...                                           [1/3] * 3))
    >>> sol.q.round(4).tolist()
    [0.7026, 0.2974, 0.0]
    """
    owner = "waterfilling_weights"
    if instance.bias != "none" and instance.bias_weight > 0:
        raise ParameterError(
            f"The 'instance' parameter of {owner} must have no bias term (bias='none' or "
            f"bias_weight=0). Got bias={instance.bias!r} instead."
        )
    allowed = ~instance.excluded
    if not allowed.any():
        raise SolverError(f"{owner}: every client is excluded, so the program is infeasible.")
    if np.any(instance.a[allowed] <= 0):
        raise ParameterError(
            f"The 'a' parameter of {owner} must be in (0, inf) for every client that is not "
            f"excluded. Got {instance.a[allowed].min():g} instead."
        )
    idx = np.flatnonzero(allowed)
    order = idx[np.argsort(-instance.pi[idx], kind="stable")]  # most available first
    pi, a = instance.pi[order], instance.a[order]
    s0, s1, s2 = (np.cumsum(pi**j / a) for j in range(3))  # [m] sums over the top-m clients
    Q2, B = instance.Q**2, instance.B
    c2 = s0 * (2.0 * B * s0 + Q2)  # (2B s0^2 + Q^2 s0) tau^2 - 4B s0 s1 tau + 2B s1^2 - Q^2 s2
    c1 = -4.0 * B * s0 * s1
    c0 = 2.0 * B * s1**2 - Q2 * s2
    disc = np.sqrt(np.maximum(c1**2 - 4.0 * c2 * c0, 0.0))  # >= 0 exactly; max for rounding
    tau = (-c1 - disc) / (2.0 * c2)  # smaller root
    lower = np.append(pi[1:], -np.inf)
    valid = (tau < pi) & (tau >= lower)
    if not valid.any():  # cannot happen for a > 0 (h is continuous and increasing)
        raise SolverError(f"{owner}: no support size satisfies the KKT conditions.")
    m = int(np.argmax(valid))
    q = np.zeros(instance.num_clients)
    u = np.maximum(pi[: m + 1] - tau[m], 0.0) / a[: m + 1]
    q[order[: m + 1]] = instance.Q * u / u.sum()
    return WeightSolution(
        q, instance.objective(q), "optimal", excluded_clients(q, instance.Q), "kkt"
    )
