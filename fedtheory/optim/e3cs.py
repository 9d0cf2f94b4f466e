r"""Comparators of E3CS's regret (Huang et al., E3CS, Def. 1-2, eqs. (24)-(26)).

For a success matrix :math:`x\in\{0,1\}^{T\times K}` (client :math:`i` would succeed in round
:math:`t`), fairness quotas :math:`\sigma_t\in[0,k/K]` and residual budgets
:math:`b_t=k-K\sigma_t`, Definition 1's comparator allocates
:math:`p^*_{i,t}=\sigma_t+b_t\,q^*_i` with :math:`q^*` on the simplex and
:math:`p^*_{i,t}\le1`. Its expected cumulative effective participation (25) is

.. math:: \mathrm{CEP}^*_T=\sum_t\sigma_t\sum_ix_{i,t}+\max_q\sum_iq_i\,g_i,\qquad
          g_i=\sum_tb_tx_{i,t},

over :math:`q\ge0`, :math:`\sum_iq_i=1`, :math:`q_i\le u=\min_{t:b_t>0}(1-\sigma_t)/b_t`.
A **fixed** :math:`q^*` is used: Theorem 1's proof (App. B, (B-C)) only holds for a fixed
comparator (erratum ``e3cs.theorem1.static_comparator``); with constant :math:`\sigma` this is the
LP
:math:`\max\sum_t\sum_ip_ix_{i,t}` s.t. :math:`\sum_ip_i=k`, :math:`\sigma\le p_i\le1`.
The per-round oracle (a dynamic comparator, for which Exp3-type bounds do not hold) takes
the best allocation of every round separately.

Success matrices are ``[..., T, K]`` (leading replicate dimensions are kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cvxpy as cp
import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, BoolArray, Integer, declare
from fedtheory.errors import SolverError

__all__ = [
    "LP_RTOL",
    "LP_SOLVER",
    "BestFixedAllocation",
    "best_fixed_allocation",
    "best_fixed_allocation_lp",
    "comparator_allocation",
    "per_round_oracle",
]

LP_SOLVER = cp.HIGHS
"""Solver of the comparator LP (a simplex method: vertex solutions)."""
LP_RTOL = 1e-7
"""Relative accuracy to which the LP optimum is trusted (used by the cross-check tests)."""


@dataclass(frozen=True)
class BestFixedAllocation:
    """The best fixed allocation in hindsight (Def. 1 with a fixed :math:`q^*`).

    Attributes
    ----------
    q : ndarray [..., K]
        Comparator quota :math:`q^*` on the simplex.
    cep : ndarray [...]
        Its expected cumulative effective participation :math:`\\mathrm{CEP}^*_T` (25).
    status : str
        ``"closed form"`` or the cvxpy status (always ``"optimal"`` when returned).
    """

    q: np.ndarray
    cep: np.ndarray
    status: str


def _quota_cap(args: Mapping[str, Any]) -> float:
    r"""The largest quota :math:`k/K` (Def. 1: :math:`\sigma_t\in[0,k/K]`)."""
    clients = args["success"] if "success" in args else args["q"]  # [..., K]
    return args["k"] / np.shape(clients)[-1]


SUCCESS = dict(
    success=BoolArray(shape=(..., None, None)),
    k=Integer(1, "success[-1]"),
    sigma=Array(shape=("success[-2]",), low=0.0, high=_quota_cap, scalar=True),
)
"""The declared arguments of the comparators: ``success [..., T, K]`` (0/1), ``k`` in
``[1, K]`` and the quotas ``sigma`` (a number or ``[T]``) in ``[0, k/K]``."""


def _quotas(success: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """The quotas ``[T]`` of a checked ``sigma`` (a number or ``[T]``)."""
    return np.broadcast_to(sigma, success.shape[-2:-1])


def _gains_and_cap(
    x: np.ndarray, k: int, sigma: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """Column gains ``g [..., K]``, floor value ``[...]`` and the cap ``u`` on ``q``."""
    num_clients = x.shape[-1]
    budget = k - num_clients * sigma  # [T]
    gains = np.einsum("t,...ti->...i", budget, x)
    floor = np.einsum("t,...ti->...", sigma, x)
    active = budget > 0
    if not active.any():
        return gains, floor, np.inf
    # u >= 1/K in exact arithmetic ((1 - sigma) K >= k - K sigma); rounding must not break it
    cap = max(float(np.min((1 - sigma[active]) / budget[active])), 1.0 / num_clients)
    return gains, floor, cap


@declare(**SUCCESS, finite_result=True)
def best_fixed_allocation(success, k: int, sigma=0.0) -> BestFixedAllocation:
    r"""Best fixed allocation in hindsight, closed form (E3CS Def. 1, eq. (25)).

    The LP over the capped simplex is solved by filling the largest gains first:
    with :math:`g` sorted decreasingly, :math:`q_{(j)}=\min\{u,\max\{0,1-(j-1)u\}\}`. For
    :math:`\sigma=0` (:math:`u=1/k`) this is :math:`p=1` on the :math:`k` clients with the most
    successes; for a constant :math:`\sigma`, :math:`\lfloor(k-K\sigma)/(1-\sigma)\rfloor`
    clients get :math:`p=1`, the next one the remainder, the others :math:`\sigma`. Exact.
    When every :math:`\sigma_t=k/K` the comparator is uniform (any :math:`q`).

    Parameters
    ----------
    success : array [..., T, K]
        :math:`x_{i,t}\in\{0,1\}`.
    k : int
        Clients per round.
    sigma : float or array [T]
        Fairness quotas :math:`\sigma_t\in[0,k/K]`.

    Examples
    --------
    >>> x = np.array([[1, 0, 1], [1, 1, 0], [1, 0, 0]])
    >>> best_fixed_allocation(x, 1).cep
    array(3.)
    """
    x, s = success, _quotas(success, sigma)
    gains, floor, cap = _gains_and_cap(x, k, s)
    num_clients = x.shape[-1]
    if not np.isfinite(cap):
        q = np.full(gains.shape, 1.0 / num_clients)
    else:
        order = np.argsort(-gains, axis=-1, kind="stable")
        fill = np.clip(1.0 - cap * np.arange(num_clients), 0.0, cap)  # [K] in sorted order
        q = np.empty_like(gains)
        np.put_along_axis(q, order, np.broadcast_to(fill, gains.shape), axis=-1)
    return BestFixedAllocation(q, floor + np.sum(q * gains, axis=-1), "closed form")


@lru_cache(maxsize=8)
def _comparator_lp(num_clients: int) -> tuple[cp.Problem, cp.Parameter, cp.Parameter, cp.Variable]:
    """The LP :math:`\\max g^\\top q` over the capped simplex, built once per ``K`` (DPP)."""
    q = cp.Variable(num_clients)
    gains = cp.Parameter(num_clients)
    cap = cp.Parameter(nonneg=True)
    problem = cp.Problem(cp.Maximize(gains @ q), [cp.sum(q) == 1, q >= 0, q <= cap])
    return problem, gains, cap, q


@declare(**SUCCESS, finite_result=True)
def best_fixed_allocation_lp(success, k: int, sigma=0.0) -> BestFixedAllocation:
    r"""Best fixed allocation in hindsight by linear programming (cvxpy, ``LP_SOLVER``).

    Same comparator as :func:`best_fixed_allocation` (E3CS Def. 1, eq. (25)), solved as the LP
    :math:`\max_q\sum_iq_ig_i` s.t. :math:`\sum_iq_i=1`, :math:`0\le q_i\le u`; the program is
    built once per :math:`K` with ``Parameter``\ s and re-solved for every replicate.
    Raises :class:`SolverError` naming the status if the solver does not reach an optimum.
    """
    x, s = success, _quotas(success, sigma)
    gains, floor, cap = _gains_and_cap(x, k, s)
    num_clients = x.shape[-1]
    if not np.isfinite(cap):
        return best_fixed_allocation(x, k, s)
    problem, gains_par, cap_par, q_var = _comparator_lp(num_clients)
    cap_par.value = cap
    flat = gains.reshape(-1, num_clients)
    q = np.empty_like(flat)
    for r, g in enumerate(flat):
        gains_par.value = g
        problem.solve(solver=LP_SOLVER)
        if problem.status != cp.OPTIMAL:
            raise SolverError(f"The E3CS comparator LP ended with status {problem.status!r}.")
        q[r] = q_var.value
    q = q.reshape(gains.shape)
    return BestFixedAllocation(q, floor + np.sum(q * gains, axis=-1), problem.status)


@declare(
    q=Array(shape=(..., None), low=0.0, high=1.0),
    k=Integer(1, "q[-1]"),
    sigma=Array(ndim=1, low=0.0, high=_quota_cap, scalar=True),
    finite_result=True,
)
def comparator_allocation(q, k: int, sigma) -> np.ndarray:
    r"""Definition 1's allocation :math:`p^*_{i,t}=\sigma_t+(k-K\sigma_t)q^*_i` (24).

    ``q [..., K]``, ``sigma`` float or ``[T]`` -> ``[..., T, K]``.
    """
    s = np.atleast_1d(sigma)
    what = f"an allocation [..., {s.size}, {q.shape[-1]}]"
    check_bytes(8 * q.size * s.size, "comparator_allocation", what=what, fixes="fewer rounds")
    budget = k - q.shape[-1] * s  # [T]
    return s[:, None] + budget[:, None] * q[..., None, :]


@declare(**SUCCESS, finite_result=True)
def per_round_oracle(success, k: int, sigma=0.0) -> np.ndarray:
    r"""Per-round oracle (dynamic comparator): the best allocation of every round separately.

    With :math:`n_t=\sum_ix_{i,t}` successes in round :math:`t`, the largest
    :math:`\sum_ip_{i,t}x_{i,t}` over :math:`\sum_ip_{i,t}=k`, :math:`\sigma_t\le p_{i,t}\le1`
    is :math:`\sigma_tn_t+\min\{k-K\sigma_t,\ n_t(1-\sigma_t)\}` (give the residual budget to
    successful clients up to 1). Exact. E3CS's regret bound (27) does **not** hold against
    it (erratum ``e3cs.theorem1.static_comparator``).

    ``success [..., T, K]`` -> per-round optimum ``[..., T]``.
    """
    x, s = success, _quotas(success, sigma)
    n = x.sum(axis=-1)  # [..., T]
    return s * n + np.minimum(k - x.shape[-1] * s, n * (1 - s))
