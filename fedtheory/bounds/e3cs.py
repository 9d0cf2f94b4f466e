r"""E3CS (Huang et al., "Stochastic client selection for FL with volatile clients") -- regret.

Setting: :math:`K` clients, :math:`k` selected per round with probabilities
:math:`\sigma_t\le p_{i,t}\le1`, :math:`\sum_ip_{i,t}=k`; the fairness quota
:math:`\sigma_t\in[0,k/K]` may change with :math:`t`. The regret against a comparator
:math:`p^*_{i,t}=q^*_{i,t}(k-K\sigma_t)+\sigma_t` is bounded in Theorem 1 through
:math:`S_\sigma=\sum_{t=1}^T(k-K\sigma_t)` (:func:`quota_sum`):

* ``e3cs.regret`` -- upper bound (27): :math:`R_T\le\eta S_\sigma+\frac K\eta\ln K`;
* ``e3cs.optimal_eta`` -- exact: :math:`\eta^*=\sqrt{K\ln K/S_\sigma}` minimises (27);
* ``e3cs.regret_optimal`` -- upper bound (28): :math:`R_T\le2\sqrt{S_\sigma K\ln K}`
  (:math:`2\sqrt{TKk\ln K}` for :math:`\sigma\equiv0`).
* ``e3cs.claim1`` (exact, with :func:`claim1_allocation`), ``e3cs.fact9`` (upper bound on
  the comparator's quota), ``e3cs.eq9`` (exact: expected CEP, under exact-marginal
  sampling, a hypothesis fedtheory adds) and
  ``e3cs.remark.zero_regret`` (exact: regret 0 when :math:`\sigma_t=k/K`).

The proof (App. B) needs :math:`(k-K\sigma_t)\eta\hat x_{i,t}/K\le1` (Fact 8), which is not
guaranteed, and a time-constant comparator; see :mod:`fedtheory.validation.errata`.

Python names: ``K, k, eta, sum_quota`` denote :math:`K,k,\eta,S_\sigma`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import symbol
from fedtheory.constraints import Array, Integer, Real, declare
from fedtheory.errors import ParameterError

K, k, eta, S = symbol("K"), symbol("k"), symbol("eta"), symbol("sum_quota")
_REF = "Huang et al. 2022 (E3CS), Theorem 1"
_K_AT_LEAST_K = Condition("k <= K", k, "<=", K)

regret = register(
    Theorem(
        "e3cs.regret",
        title="E3CS regret (27)",
        reference=_REF + ", eq. (27)",
        kind="upper bound",
        terms={"exploration": eta * S, "weights": K * sp.log(K) / eta},
        conditions=[_K_AT_LEAST_K],
        statement="R_T <= eta sum_t (k - K sigma_t) + (K/eta) ln K",
    )
)
optimal_eta = register(
    Theorem(
        "e3cs.optimal_eta",
        title="E3CS optimal eta",
        reference=_REF + ", eta before eq. (28)",
        kind="exact",
        terms={"eta": sp.sqrt(K * sp.log(K) / S)},
        conditions=[
            _K_AT_LEAST_K,
            Condition("sum_t (k - K sigma_t) > 0 (sigma_t = k/K needs no eta)", S, ">", 0),
        ],
        statement="eta^* = sqrt(K ln K / sum_t (k - K sigma_t)) minimises (27)",
    )
)
regret_optimal = register(
    Theorem(
        "e3cs.regret_optimal",
        title="E3CS regret (28)",
        reference=_REF + ", eq. (28)",
        kind="upper bound",
        terms={"regret": 2 * sp.sqrt(S * K * sp.log(K))},
        conditions=[_K_AT_LEAST_K],
        statement="R_T <= 2 sqrt(sum_t K (k - K sigma_t) ln K)",
    )
)


sigma_t, q_star, S_px = symbol("sigma_t"), symbol("q_star"), symbol("sum_px")
_QUOTA = Condition("sigma_t <= k/K", sigma_t, "<=", k / K)

claim1 = register(
    Theorem(
        "e3cs.claim1",
        title="E3CS Claim 1",
        reference="Huang et al. 2022 (E3CS), Sec. V-B, Claim 1 and its proof (eq. (19))",
        kind="exact",
        terms={"fairness": sigma_t, "residual": (k - K * sigma_t) / K},
        conditions=[_K_AT_LEAST_K, _QUOTA],
        statement="alpha_t = min_i w_i/(1 - sigma_t) in (18) gives p_i = sigma_t + "
        "(k - K sigma_t)/K = k/K <= 1 for every i: an alpha_t with p <= 1 exists",
    )
)
fact9 = register(
    Theorem(
        "e3cs.fact9",
        title="E3CS Fact 9",
        reference="Huang et al. 2022 (E3CS), App. B, Fact 9 (eq. (37))",
        kind="upper bound",
        terms={"cap": 1 - sigma_t},
        conditions=[_K_AT_LEAST_K, _QUOTA],
        statement="p*_{i,t} <= 1 gives q*_{i,t} (k - K sigma_t) <= 1 - sigma_t",
    )
)
expected_cep = register(
    Theorem(
        "e3cs.eq9",
        title="E3CS (9)",
        reference="Huang et al. 2022 (E3CS), Sec. IV-D, eq. (9)",
        kind="exact",
        terms={"expected_cep": S_px},
        statement="E[sum_t sum_i 1{i in A_t} x_{i,t}] = sum_t sum_i p_{i,t} x_{i,t} when "
        "E[1{i in A_t}] = p_{i,t} (exact-marginal sampling: a hypothesis fedtheory adds; the "
        "paper derives (9) from 'the fact that E[1{i in A_t}] = p_{i,t}', which it says its "
        "multinomialNR sampler ensures, and that sampler does not: errata e3cs.sampler)",
    )
)
zero_regret = register(
    Theorem(
        "e3cs.remark.zero_regret",
        title="E3CS Remark: zero regret at sigma = k/K",
        reference="Huang et al. 2022 (E3CS), Remark after Theorem 1",
        kind="exact",
        terms={"regret": sp.Integer(0) * S},
        conditions=[Condition("sigma_t = k/K for all t (sum_t (k - K sigma_t) = 0)", S, "<=", 0)],
        statement="if sigma_t = k/K, 'both E3CS and the optimal solution yield the same "
        "solution ... so the regret would be exactly 0'",
    )
)


@declare(w=Array(shape=(..., None), low=0.0, low_open=True), k=Integer(1, "w[-1]"), sigma=Real(0.0))
def claim1_allocation(w, k: int, sigma: float) -> np.ndarray:
    r"""E3CS eq. (18) with Claim 1's :math:`\alpha_t=\min_iw_i/(1-\sigma_t)`:
    :math:`w'_i=\min\{w_i,(1-\sigma_t)\alpha_t\}` and
    :math:`p_i=\sigma_t+(k-K\sigma_t)w'_i/\sum_jw'_j` for weights ``w [..., K]`` (exact;
    Claim 1 says every :math:`p_i=k/K`). Needs :math:`\sigma_t<1`."""
    K_ = w.shape[-1]
    sigma = Real(low=0.0, high=min(k / K_, 1 - 1e-12)).check(
        sigma, "sigma", "claim1_allocation", {}
    )
    # (18) is scale-free: in units of the smallest weight no entry underflows to 0 (a
    # denormal weight over the largest did: 0/0), the cap is about 1 and the sum is at most
    # about K (a ratio that overflows to inf is capped all the same)
    with np.errstate(over="ignore"):
        w = w / w.min(axis=-1, keepdims=True)
    alpha = w.min(axis=-1, keepdims=True) / (1 - sigma)
    capped = np.minimum(w, (1 - sigma) * alpha)
    return sigma + (k - K_ * sigma) * capped / capped.sum(axis=-1, keepdims=True)


@declare(K=Integer(1), k=Integer(1, "K"), sigma=Array(low=0.0))
def quota_sum(sigma, *, k: int, K: int) -> np.ndarray:
    r""":math:`S_\sigma=\sum_{t=1}^T(k-K\sigma_t)` for the fairness-quota schedule
    ``sigma [..., T]`` with :math:`0\le\sigma_t\le k/K` (Huang et al. 2022, Theorem 1,
    the sum in eq. (27)); returns ``[...]``. Exact."""
    s = sigma
    if s.max() > k / K:
        raise ParameterError(
            f"The 'sigma' parameter of quota_sum must have entries in [0, k/K] = [0, {k / K:g}]. "
            f"Got a maximum of {s.max():g} instead."
        )
    if s.ndim < 1:
        s = s[None]
    return (k - K * s).sum(-1)
