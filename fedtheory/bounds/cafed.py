r"""CA-Fed (Rodio et al., INFOCOM 2023, arXiv 2301.04632) -- error decomposition.

Setting: :math:`F=\sum_k\alpha_kF_k`, each :math:`F_k` :math:`L`-smooth and
:math:`\mu`-strongly convex, :math:`\kappa=L/\mu`; the server's weights :math:`q` and the
availability :math:`\pi` make FedAvg minimise :math:`F_B=\sum_kp_kF_k` with
:math:`p_k=\pi_kq_k/\sum_h\pi_hq_h` (eq. (4)).

* ``cafed.theorem1`` -- upper bound (Theorem 1):
  :math:`F(w)-F^*\le 2\kappa^2(F_B(w)-F_B^*)+2\kappa^4\chi^2_{\alpha\|p}\Gamma`,
  :math:`\Gamma=\max_k\{F_k(w^*)-F_k^*\}`.
* ``cafed.theorem3`` -- upper bound (Theorem 3):
  :math:`F(w)-F^*\le 2\kappa^2(F_B(w)-F_B^*)+8\kappa^4d_{TV}^2(\alpha,p)\Gamma'`,
  :math:`\Gamma'=\max_k\{F_k(w_B^*)-F_k^*\}`.

Python names: ``kappa, gap_B, chi2, d_tv, Gamma, Gamma_prime`` denote
:math:`\kappa, F_B(w)-F_B^*, \chi^2_{\alpha\|p}, d_{TV}, \Gamma, \Gamma'`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from fedtheory.bounds.base import BoundResult, Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.divergences import chi_square, total_variation
from fedtheory.bounds.symbols import symbol
from fedtheory.params import check_simplex

kappa, gap_B = symbol("kappa"), symbol("gap_B")
chi2, d_tv = symbol("chi2"), symbol("d_tv")
Gamma, Gamma_prime = symbol("Gamma"), symbol("Gamma_prime")

_KAPPA = Condition("kappa >= 1 (kappa = L/mu)", kappa, ">=", sp.Integer(1))

theorem1 = register(
    Theorem(
        "cafed.theorem1",
        title="CA-Fed Theorem 1",
        reference="Rodio et al. 2023, Theorem 1 (error decomposition, chi-square bias)",
        kind="upper bound",
        terms={"opt": 2 * kappa**2 * gap_B, "bias": 2 * kappa**4 * chi2 * Gamma},
        conditions=[_KAPPA],
        statement="F(w) - F^* <= 2 kappa^2 (F_B(w) - F_B^*) + 2 kappa^4 chi2(alpha||p) Gamma",
    )
)
theorem3 = register(
    Theorem(
        "cafed.theorem3",
        title="CA-Fed Theorem 3",
        reference="Rodio et al. 2023, Theorem 3 (error decomposition, total-variation bias)",
        kind="upper bound",
        terms={"opt": 2 * kappa**2 * gap_B, "bias": 8 * kappa**4 * d_tv**2 * Gamma_prime},
        conditions=[_KAPPA],
        statement="F(w) - F^* <= 2 kappa^2 (F_B(w) - F_B^*) + 8 kappa^4 d_TV(alpha, p)^2 Gamma'",
    )
)


@dataclass(frozen=True)
class Decomposition:
    """Measured error of points ``w`` next to the Theorem 1 and Theorem 3 bounds."""

    measured: np.ndarray  # [...] F(w) - F^*
    theorem1: BoundResult
    theorem3: BoundResult


def decomposition(problem, w, p) -> Decomposition:
    r"""Evaluate Theorems 1 and 3 at points ``w [..., d]`` of ``problem`` (which must give
    ``L``, ``mu``, ``alpha``, ``loss``, ``optimum``, ``gamma``) for effective weights ``p``."""
    p = check_simplex(p, "p", "cafed.decomposition")
    alpha = problem.alpha
    _, f_star = problem.optimum()
    _, fb_star = problem.optimum(p)
    measured = problem.loss(w) - f_star
    gap = np.maximum(problem.loss(w, p) - fb_star, 0.0)  # >= 0 up to rounding (1e-16)
    k = problem.kappa
    t1 = theorem1.evaluate(kappa=k, gap_B=gap, chi2=chi_square(alpha, p), Gamma=problem.gamma())
    t3 = theorem3.evaluate(
        kappa=k, gap_B=gap, d_tv=total_variation(alpha, p), Gamma_prime=problem.gamma(p)
    )
    return Decomposition(np.asarray(measured), t1, t3)
