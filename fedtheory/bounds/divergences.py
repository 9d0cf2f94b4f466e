r"""Divergences between the target weights :math:`\alpha` and the effective weights :math:`p`.

* :math:`\chi^2_{\alpha\|p}=\sum_k(\alpha_k-p_k)^2/p_k` (CA-Fed Theorem 1),
* :math:`d_{TV}(\alpha,p)=\tfrac12\sum_k|\alpha_k-p_k|` (CA-Fed Theorem 3),

with :math:`d_{TV}^2\le\tfrac14\chi^2` (Cauchy-Schwarz), so Theorem 3's bias term
:math:`8\kappa^4d_{TV}^2\Gamma'` never exceeds :math:`2\kappa^4\chi^2\Gamma'`.

Inequalities between them (``divergences.tv_chi_square`` in the catalogue and
:func:`chi_square_max_ratio_bound`):

* :math:`d_{TV}\le\tfrac12\sqrt{\chi^2}` (Cauchy-Schwarz:
  :math:`\sum|\alpha-p|=\sum\sqrt p\,|\alpha-p|/\sqrt p\le\sqrt{\chi^2}`), tight when
  :math:`|\alpha_k-p_k|/p_k` is constant on the support;
* :math:`d_{TV}\le1`;
* :math:`\chi^2=\sum_k\alpha_k^2/p_k-1\le\max_k\alpha_k/p_k-1`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.bounds.base import Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import symbol
from fedtheory.constraints import Array, Probabilities, declare
from fedtheory.errors import ParameterError


def _over_p(num: np.ndarray, a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``num / q`` where ``q > 0``; where ``q = 0``: ``inf`` if ``a > 0`` (the target has mass
    the effective weights lack), else 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, num / q, np.where(a > 0, np.inf, 0.0))


@declare(alpha=Probabilities(), p=Probabilities(size="alpha[0]"))
def chi_square(alpha, p) -> float:
    r""":math:`\chi^2_{\alpha\|p}=\sum_k(\alpha_k-p_k)^2/p_k` (infinite if some
    :math:`p_k=0<\alpha_k`): the bias factor of CA-Fed Theorem 1 (Rodio et al. 2023).
    Exact."""
    a, q = alpha, p
    return float(_over_p((a - q) ** 2, a, q).sum())


@declare(alpha=Probabilities(), p=Probabilities(size="alpha[0]"))
def total_variation(alpha, p) -> float:
    r""":math:`d_{TV}(\alpha,p)=\tfrac12\sum_k|\alpha_k-p_k|`: the bias factor of CA-Fed
    Theorem 3 (Rodio et al. 2023). Exact."""
    a, q = alpha, p
    return 0.5 * float(np.abs(a - q).sum())


@declare(q=Array(ndim=1, low=0.0), pi=Array(shape=("q[0]",), low=0.0, high=1.0))
def effective_weights(q, pi) -> np.ndarray:
    r"""CA-Fed (4): :math:`p_k=\pi_kq_k/\sum_h\pi_hq_h` for aggregation weights :math:`q`
    and availability :math:`\pi`."""
    mass = pi @ q
    if mass <= 0:
        raise ParameterError(
            "The 'q' parameter of effective_weights must give pi^T q in (0, inf). "
            "Got pi^T q = 0 instead."
        )
    return pi * q / mass


tv_chi_square = register(
    Theorem(
        "divergences.tv_chi_square",
        title="TV vs chi-square",
        reference="Cauchy-Schwarz; used by Rodio et al. 2023 to compare Theorems 1 and 3",
        kind="upper bound",
        terms={"bound": sp.sqrt(symbol("chi2")) / 2},
        statement="d_TV(alpha, p) <= sqrt(chi2(alpha||p)) / 2",
    )
)


@declare(alpha=Probabilities(), p=Probabilities(size="alpha[0]"))
def chi_square_max_ratio_bound(alpha, p) -> float:
    r"""Upper bound :math:`\chi^2_{\alpha\|p}\le\max_k\alpha_k/p_k-1` (from
    :math:`\chi^2=\sum_k\alpha_k\cdot\alpha_k/p_k-1`, CA-Fed App. E; a bound on CA-Fed
    Theorem 1's factor, not in the paper); tight iff :math:`\alpha_k/p_k` is constant on the
    support of :math:`\alpha`; infinite if some :math:`p_k=0<\alpha_k`."""
    a, q = alpha, p
    return float(_over_p(a, a, q).max() - 1.0)
