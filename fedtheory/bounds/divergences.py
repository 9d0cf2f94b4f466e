r"""Divergences between the target weights :math:`\alpha` and the effective weights :math:`p`.

* :math:`\chi^2_{\alpha\|p}=\sum_k(\alpha_k-p_k)^2/p_k` (CA-Fed Theorem 1),
* :math:`d_{TV}(\alpha,p)=\tfrac12\sum_k|\alpha_k-p_k|` (CA-Fed Theorem 3),

with :math:`d_{TV}^2\le\tfrac14\chi^2` (Cauchy-Schwarz), so Theorem 3's bias term
:math:`8\kappa^4d_{TV}^2\Gamma'` never exceeds :math:`2\kappa^4\chi^2\Gamma'`.
"""

from __future__ import annotations

import numpy as np

from fedtheory.errors import ParameterError
from fedtheory.params import check_array, check_simplex


def chi_square(alpha, p) -> float:
    r""":math:`\chi^2_{\alpha\|p}=\sum_k(\alpha_k-p_k)^2/p_k` (infinite if some
    :math:`p_k=0<\alpha_k`)."""
    a = check_simplex(alpha, "alpha", "chi_square")
    q = check_simplex(p, "p", "chi_square")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(q > 0, (a - q) ** 2 / q, np.where(a > 0, np.inf, 0.0))
    return float(terms.sum())


def total_variation(alpha, p) -> float:
    r""":math:`d_{TV}(\alpha,p)=\tfrac12\sum_k|\alpha_k-p_k|`."""
    a = check_simplex(alpha, "alpha", "total_variation")
    q = check_simplex(p, "p", "total_variation")
    return 0.5 * float(np.abs(a - q).sum())


def effective_weights(q, pi) -> np.ndarray:
    r"""CA-Fed (4): :math:`p_k=\pi_kq_k/\sum_h\pi_hq_h` for aggregation weights :math:`q`
    and availability :math:`\pi`."""
    q = check_array(q, "q", "effective_weights", ndim=1, low=0.0)
    pi = check_array(pi, "pi", "effective_weights", shape=q.shape, low=0.0, high=1.0)
    mass = pi @ q
    if mass <= 0:
        raise ParameterError(
            "The 'q' parameter of effective_weights must give pi^T q in (0, inf). "
            "Got pi^T q = 0 instead."
        )
    return pi * q / mass
