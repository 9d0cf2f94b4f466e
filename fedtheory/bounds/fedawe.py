r"""FedAWE (Xiang, Ioannidis, Yeh, Joe-Wong, Su; NeurIPS 2024) -- "Efficient Federated Learning
against Heterogeneous and Non-stationary Client Unavailability".

Setting: :math:`m` clients minimise :math:`F=\frac1m\sum_iF_i` (1); client :math:`i` is
active in round :math:`t` with probability :math:`p_i^t\ge\delta` (Assumption 1: independent
across clients and rounds). :math:`\tau_i(t)` is the last round before :math:`t` in which
:math:`i` was active (:math:`\tau_i(0)=-1`). FedAWE (Algorithm 1) multiplies an active
client's local innovation by :math:`t-\tau_i(t)` (adaptive innovation echoing) and sends the
new model to the active clients only (implicit gossiping, mixing matrix (4)):

.. math:: W^{(t)}_{ij}=1/|A_t|\ (i,j\in A_t),\quad W^{(t)}_{ii}=1\ (i\notin A_t),\quad 0
          \text{ otherwise};\qquad \rho=\max_t\lambda_2\big(\mathbb E[(W^{(t)})^2]\big).

Symbols (the paper's own added to the notation table :mod:`fedtheory.bounds.symbols` here,
with ``add_notation``): ``delta``, ``delta_max``,
``rho``, ``m``, ``s``, ``eta_l``, ``eta_g``, ``L``, ``sigma2``, ``beta2``, ``zeta2``,
``F_gap`` :math:`=F(\bar x^0)-F^\star` denote :math:`\delta,\delta_{\max},\rho,m,s,
\eta_l,\eta_g,L,\sigma^2,\beta^2,\zeta^2`.

Readings of the extracted text (its formulas are garbled; the choices are ours):

* (11): :math:`\eta_l\eta_g\le(1-\sqrt\rho)\delta/\big(80s(L+1)(\sqrt\rho+1)
  \sqrt{(\beta^2+1)(1+L^2)}\big)` and :math:`\eta_l\le\delta/\big(200sL
  \sqrt{(\beta^2+1)(1+L^2)}\big)` (consistent with Lemma 6's conditions, which (11) implies).
* Lemma 5's left side is :math:`\mathbb E\|\sum_{r<s}(\nabla F_i(x_i^{(t,r)})-\nabla F_i
  (x_i^t))\|^2` (the sum of the differences).
* Lemma 6's left side is :math:`\frac1{mT}\sum_t\sum_i\mathbb E\|z_i^t-\bar z^t\|^2`
  (the normalisation of Proposition 2).
* Theorem 1 and Corollaries 2, 3: the explicit constants at the end of their proofs
  (App. G, H.1, I.1), which use the "convention" :math:`\eta_g\ge1` (and :math:`L\ge1` for
  Corollary 3); fedtheory makes these conventions hypotheses. The main-text forms with
  :math:`\lesssim` have no constants (:data:`NOT_CHECKABLE`).
* Corollary 1: no explicit constant is printed; :data:`corollary1` is its order (kind
  ``"order"``). With constants it is Corollary 2 at Corollary 1's step sizes
  (:data:`COROLLARY1_RATES`), which meet (11) only for :math:`T` above both horizons of
  :data:`COROLLARY1_HORIZONS`: :math:`T\ge6400sm(L+1)^2(1+\sqrt\rho)^2(\beta^2+1)(1+L^2)
  /(\delta L^2(1-\sqrt\rho)^2)` (the :math:`\eta_l\eta_g` half, usually the binding one) and
  :math:`T\ge(200\sqrt{(\beta^2+1)(1+L^2)}/\delta)^2` (the :math:`\eta_l` half);
  :func:`corollary1_binding` names the binding one.
* Example 1 gives no formula (only Fig. 2); the limits are our derivation
  (:data:`example1`).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from numpy.polynomial.legendre import leggauss

from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import (
    Notation,
    _count,
    _nonneg,
    _pos,
    _prob,
    _real,
    add_notation,
    symbol,
)
from fedtheory.constraints import Array, BoolArray, Integer, Real, declare, refuse_non_finite
from fedtheory.errors import ParameterError

PAPER = "Xiang et al. 2024 (FedAWE)"

add_notation(
    {
        "delta": _prob("delta", "lower bound on every availability probability p_i^t (FedAWE)"),
        "delta_max": _prob("delta_max", "largest availability probability max_{i,t} p_i^t"),
        "rho": Notation(
            sp.Symbol("rho", nonnegative=True),
            "max_t lambda_2(E[W^(t) W^(t)]), mixing of the gossip matrices (FedAWE (4))",
            low=0.0,
            high=1.0,
        ),
        "m": _count("m", "number of clients (FedAWE)"),
        "s": _count("s", "local steps per round (FedAWE)"),
        "eta_l": _pos("eta_l", "local (client) learning rate"),
        "eta_g": _pos("eta_g", "global (server) learning rate"),
        "beta2": _nonneg("beta^2", "multiplicative gradient dissimilarity (FedAWE Assumption 4)"),
        "zeta2": _nonneg("zeta^2", "additive gradient dissimilarity (FedAWE Assumption 4)"),
        "B_sq": _nonneg("||B||_F^2", "squared Frobenius norm of the matrix B (FedAWE Lemma 1)"),
        "grad_i_sq": _nonneg("||grad F_i(x_i^t)||^2", "squared local gradient norm at x_i^t"),
        "consensus_z": _nonneg("Xi_z", "(1/m) sum_i ||z_i^t - zbar^t||^2 (FedAWE Prop. 3)"),
        "grad_z_sq": _nonneg("||grad F(zbar^t)||^2", "squared gradient norm at zbar^t"),
        "grad_z_avg": _nonneg(
            "G_z", "(1/T) sum_t E||grad F(zbar^t)||^2 (FedAWE Lemma 6, Theorem 1)"
        ),
        "consensus_z_avg": _nonneg(
            r"\bar\Xi_z", "(1/m) sum_i (1/T) sum_t E||z_i^t - zbar^t||^2 (FedAWE Proposition 2)"
        ),
        "z_prev": _real(
            "z_i^{t-1}", "a coordinate of client i's auxiliary model z_i^{t-1} (FedAWE)"
        ),
        "grad_prev": _real(
            r"\nabla F_i(x_i^{t-1})", "a coordinate of grad F_i(x_i^{tau_i(t-1)+1}) (FedAWE (8))"
        ),
        "zbar_active": _real(
            r"\bar z_{A}^{t-1}", "a coordinate of the mean of z_j^{t-1} over j in A_{t-1} (FedAWE)"
        ),
        "innovation_active": _real(
            r"\bar{\tilde G}_{A}^{t-1}",
            "a coordinate of the mean of the innovations (19) over j in A_{t-1} (FedAWE)",
        ),
        "p1": _prob("p_1", "availability probability of client 1 (two-client example)"),
        "p2": _prob("p_2", "availability probability of client 2 (two-client example)"),
        "u1": _real("u_1", "minimiser of client 1's quadratic (FedAWE Example 1)"),
        "u2": _real("u_2", "minimiser of client 2's quadratic (FedAWE Example 1)"),
    }
)

delta, delta_max, rho, m, s = (symbol(k) for k in ("delta", "delta_max", "rho", "m", "s"))
eta_l, eta_g, L, sigma2 = (symbol(k) for k in ("eta_l", "eta_g", "L", "sigma2"))
beta2, zeta2, F_gap, T, R = (symbol(k) for k in ("beta2", "zeta2", "F_gap", "T", "R"))
_sqrt_rho = sp.sqrt(rho)
_hetero = sp.sqrt((beta2 + 1) * (1 + L**2))

NOT_CHECKABLE: tuple[tuple[str, str], ...] = (
    (
        "FedAWE Theorem 1, main text (13)",
        "a '≲' statement without constants; fedawe.theorem1 checks the explicit bound at the "
        "end of its proof (App. G)",
    ),
    (
        "FedAWE Corollary 1, main text (17)",
        "a '≲' rate without constants: fedawe.corollary1 holds its order only; with constants "
        "it is fedawe.corollary2 (App. H.1) at Corollary 1's step sizes",
    ),
    (
        "FedAWE Corollaries 2-3, '≲' forms (App. H.1, I.1)",
        "no constants; fedawe.corollary2 and fedawe.corollary3 check the explicit bounds "
        "printed just before them",
    ),
    (
        "FedAWE (12), (14)-(16) and App. I.2",
        "'≍' relations between averaged errors: orders without constants",
    ),
    (
        "FedAWE Lemma 3 (descent lemma)",
        "its constants are printed (eta_l eta_g <= 9/(100 s L); 1/4, 2, 4.5, 35, 2.2, 1/2) but "
        "the extracted text does not say which factors the sum (1/m^2) sum_i (t - tau_i(t))^2 "
        "multiplies in the sigma^2 term, and the statement is conditional on F_t (an "
        "expectation over A_t given the history, not a quantity of one run); Theorem 1, which "
        "telescopes it, is checked instead",
    ),
)
"""FedAWE statements not in the catalogue (``fedtheory list --paper fedawe``), with why."""


RANGES = {
    "s": (1, 2),
    "L": (0.5, 2.0),
    "beta2": (0.0, 1.0),
    "delta": (0.2, 1.0),
    "delta_max": (0.2, 1.0),
    "rho": (0.0, 0.8),
    "eta_g": (1.0, 2.0),
}
"""Boxes where the property tests draw the step-size statements (their hypotheses (11) fill
a tiny part of the default boxes): ``Theorem(ranges=...)``."""


def _cond(text: str, lhs, rel: str, rhs) -> Condition:
    return Condition(text, sp.sympify(lhs), rel, sp.sympify(rhs))


# --- Step-size conditions (11) -------------------------------------------------------------
_ETA_PRODUCT_MAX = (1 - _sqrt_rho) * delta / (80 * s * (L + 1) * (_sqrt_rho + 1) * _hetero)
_ETA_L_MAX = delta / (200 * s * L * _hetero)
CONDITIONS_11 = (
    _cond(
        "(11): eta_l eta_g <= (1 - sqrt(rho)) delta / (80 s (L+1) (sqrt(rho)+1) "
        "sqrt((beta^2+1)(1+L^2)))",
        eta_l * eta_g,
        "<=",
        _ETA_PRODUCT_MAX,
    ),
    _cond("(11): eta_l <= delta / (200 s L sqrt((beta^2+1)(1+L^2)))", eta_l, "<=", _ETA_L_MAX),
)
"""The two step-size conditions (11), as hypotheses of Theorem 1 and Corollaries 2-3."""

conditions11_eta_product = register(
    Theorem(
        "fedawe.conditions11.eta_product",
        title="FedAWE (11), largest eta_l eta_g",
        reference=f"{PAPER}, §6.3, (11) (first condition)",
        kind="upper bound",
        terms={"eta_product_max": _ETA_PRODUCT_MAX},
        statement="eta_l eta_g <= (1 - sqrt(rho)) delta / (80 s (L+1)(sqrt(rho)+1) "
        "sqrt((beta^2+1)(1+L^2)))",
    )
)
conditions11_eta_l = register(
    Theorem(
        "fedawe.conditions11.eta_l",
        title="FedAWE (11), largest eta_l",
        reference=f"{PAPER}, §6.3, (11) (second condition)",
        kind="upper bound",
        terms={"eta_l_max": _ETA_L_MAX},
        statement="eta_l <= delta / (200 s L sqrt((beta^2+1)(1+L^2)))",
    )
)

# --- Proposition 1, Lemma 2, Lemma 4, Lemma 1 ----------------------------------------------
proposition1 = register(
    Theorem(
        "fedawe.proposition1",
        title="FedAWE Proposition 1 (echo identity)",
        reference=f"{PAPER}, §5, Proposition 1 (proof App. F.2)",
        kind="exact",
        terms={"echoes": R},
        statement="if client i is active in round R-1: "
        "sum_{t=0}^{R-1} 1{i in A_t} (t - tau_i(t)) = R, for every R >= 1",
    )
)
lemma2_first = register(
    Theorem(
        "fedawe.lemma2.first_moment",
        title="FedAWE Lemma 2, E[t - tau_i(t)]",
        reference=f"{PAPER}, §6.2, Lemma 2 (proof App. F.3)",
        kind="upper bound",
        terms={"mean_gap": 1 / delta},
        statement="under Assumption 1, E[t - tau_i(t)] <= 1/delta for every t >= 0",
    )
)
lemma2_second = register(
    Theorem(
        "fedawe.lemma2.second_moment",
        title="FedAWE Lemma 2, E[(t - tau_i(t))^2]",
        reference=f"{PAPER}, §6.2, Lemma 2 (proof App. F.3)",
        kind="upper bound",
        terms={"second_moment": 2 / delta**2},
        statement="under Assumption 1, E[(t - tau_i(t))^2] <= 2/delta^2 for every t >= 0",
    )
)
lemma4 = register(
    Theorem(
        "fedawe.lemma4",
        title="FedAWE Lemma 4 (spectral bound on rho)",
        reference=f"{PAPER}, §6.3, Lemma 4 (proof App. F.6, after Wang et al. [57])",
        kind="upper bound",
        terms={"rho_max": 1 - delta**4 * (1 - (1 - delta) ** m) ** 2 / 8},
        statement="under Assumption 1, rho <= 1 - delta^4 (1 - (1 - delta)^m)^2 / 8",
    )
)
lemma1 = register(
    Theorem(
        "fedawe.lemma1",
        title="FedAWE Lemma 1 (consensus contraction)",
        reference=f"{PAPER}, §5, Lemma 1 (after [34, 33, 50])",
        kind="upper bound",
        terms={"contraction": rho ** symbol("t") * symbol("B_sq")},
        statement="E_W ||B (prod_{r=1}^t W^(r) - J)||_F^2 <= rho^t ||B||_F^2 for every "
        "B in R^{d x m} (independent W^(r))",
    )
)

# --- Lemma 5, Proposition 3, Lemma 6 (App. E-F) --------------------------------------------
lemma5 = register(
    Theorem(
        "fedawe.lemma5",
        title="FedAWE Lemma 5 (multi-step perturbation)",
        reference=f"{PAPER}, App. E.1, Lemma 5",
        kind="upper bound",
        terms={
            "noise": 4 * eta_l**2 * s**3 * L**2 * sigma2,
            "drift": 16 * eta_l**2 * s**4 * L**2 * symbol("grad_i_sq"),
        },
        conditions=(_cond("eta_l <= 1/(4 s L)", eta_l, "<=", 1 / (4 * s * L)),),
        statement="under Assumptions 2-3 and eta_l <= 1/(4sL): "
        "E[||sum_{r<s} (grad F_i(x_i^(t,r)) - grad F_i(x_i^t))||^2 | F_t] <= "
        "4 eta_l^2 s^3 L^2 sigma^2 + 16 eta_l^2 s^4 L^2 ||grad F_i(x_i^t)||^2",
    )
)
proposition3 = register(
    Theorem(
        "fedawe.proposition3",
        title="FedAWE Proposition 3 (local vs global dissimilarity)",
        reference=f"{PAPER}, App. F.1, Proposition 3",
        kind="upper bound",
        terms={
            "consensus": 3 * L**2 * symbol("consensus_z"),
            "gradient": 3 * (beta2 + 1) * symbol("grad_z_sq"),
            "heterogeneity": 3 * zeta2,
        },
        statement="under Assumptions 2 and 4: (1/m) sum_i ||grad F_i(z_i^t)||^2 <= "
        "3L^2 (1/m) sum_i ||z_i^t - zbar^t||^2 + 3(beta^2+1) ||grad F(zbar^t)||^2 + 3 zeta^2",
    )
)
_LEMMA6_FACTOR = rho * eta_l**2 * eta_g**2 / (1 - _sqrt_rho) ** 2
lemma6 = register(
    Theorem(
        "fedawe.lemma6",
        title="FedAWE Lemma 6 (consensus error of z)",
        reference=f"{PAPER}, App. F.5, Lemma 6",
        kind="upper bound",
        terms={
            "noise": 3 * s * _LEMMA6_FACTOR * sigma2 / delta**2,
            "heterogeneity": 40 * s**2 * _LEMMA6_FACTOR * zeta2,
            "gradient": 40 * s**2 * _LEMMA6_FACTOR * (beta2 + 1) * symbol("grad_z_avg"),
        },
        ranges={k: v for k, v in RANGES.items() if k != "delta_max"},
        conditions=(
            _cond("eta_l <= delta/(20 s L)", eta_l, "<=", delta / (20 * s * L)),
            _cond(
                "eta_l eta_g <= delta (1 - sqrt(rho)) / (10 s L (sqrt(rho) + 1))",
                eta_l * eta_g,
                "<=",
                delta * (1 - _sqrt_rho) / (10 * s * L * (_sqrt_rho + 1)),
            ),
        ),
        statement="under Assumptions 2-4 and its step-size conditions: "
        "(1/(mT)) sum_t sum_i E||z_i^t - zbar^t||^2 <= 3 rho s eta_l^2 eta_g^2 sigma^2 / "
        "((1 - sqrt(rho))^2 delta^2) + 40 rho s^2 eta_l^2 eta_g^2 zeta^2 / (1 - sqrt(rho))^2 "
        "+ 40 rho s^2 eta_l^2 eta_g^2 (beta^2 + 1) / (1 - sqrt(rho))^2 "
        "(1/T) sum_t E||grad F(zbar^t)||^2",
    )
)


_APPROX = 6 * eta_l**2 * eta_g**2 * s**2 / delta**2
proposition2 = register(
    Theorem(
        "fedawe.proposition2",
        title="FedAWE Proposition 2 (approximation error of z)",
        reference=f"{PAPER}, §6.3, Proposition 2, (9) (proof App. F.4)",
        kind="upper bound",
        terms={
            "gradient": _APPROX * (beta2 + 1) * symbol("grad_z_avg"),
            "heterogeneity": _APPROX * zeta2,
            "consensus": _APPROX * L**2 * symbol("consensus_z_avg"),
        },
        statement="under Assumptions 2 and 4: (1/(mT)) sum_{t<T} sum_i E||x_i^t - z_i^t||^2 <= "
        "6 eta_l^2 eta_g^2 s^2 (beta^2 + 1)/delta^2 (1/T) sum_t E||grad F(zbar^t)||^2 + "
        "6 eta_l^2 eta_g^2 s^2 zeta^2/delta^2 + 6 L^2 eta_l^2 eta_g^2 s^2/delta^2 (1/m) "
        "sum_i (1/T) sum_t E||z_i^t - zbar^t||^2",
    )
)
auxiliary_inactive = register(
    Theorem(
        "fedawe.auxiliary.inactive",
        title="FedAWE (8): the auxiliary model of an inactive client",
        reference=f"{PAPER}, §6.1, (8) (Definition 1 (6); App. C (19), second part)",
        kind="exact",
        terms={"z": symbol("z_prev") - eta_l * eta_g * s * symbol("grad_prev")},
        statement="if i is not in A_{t-1}: z_i^t = z_i^{t-1} - eta_l eta_g s "
        "grad F_i(x_i^{tau_i(t-1)+1}), coordinate by coordinate",
    )
)
auxiliary_active = register(
    Theorem(
        "fedawe.auxiliary.active",
        title="FedAWE (7): the auxiliary model of an active client",
        reference=f"{PAPER}, §6.1, (7), App. C (18)-(19), Proposition 4 (App. F.4)",
        kind="exact",
        terms={"z": symbol("zbar_active") - eta_l * eta_g * symbol("innovation_active")},
        statement="if i is in A_{t-1}: z_i^t = x_i^t = (1/|A_{t-1}|) sum_{j in A_{t-1}} "
        "(z_j^{t-1} - eta_l eta_g Gtilde_j^{t-1}), the innovation (19) Gtilde_j = (t-1 - "
        "tau_j(t-1)) sum_{r<s} grad l_j(x_j^(t-1,r)) - s (t-2 - tau_j(t-1)) grad F_j(x_j^{t-1}) "
        "(fedawe.auxiliary_innovation), coordinate by coordinate",
    )
)


@declare(
    local_sum=Array(),
    grad=Array(like="local_sum"),
    echo=Array(low=1.0),
    active=BoolArray(like="echo"),
)
def auxiliary_innovation(local_sum, grad, echo, active) -> np.ndarray:
    r"""The innovation of the auxiliary sequence, App. C (19) (Xiang et al. 2024):

    .. math:: \tilde G_i^t=\mathbb 1\{i\in A_t\}\Big[(t-\tau_i(t))\sum_{r<s}\nabla\ell_i
              (x_i^{(t,r)})-s\,(t-1-\tau_i(t))\nabla F_i(x_i^t)\Big]
              +\mathbb 1\{i\notin A_t\}\,s\nabla F_i(x_i^t)

    for ``local_sum`` :math:`\sum_r\nabla\ell_i(x_i^{(t,r)})` ``[..., d]`` (the local
    innovation :math:`G_i^t/\eta_l`), ``grad`` :math:`s\nabla F_i(x_i^t)` ``[..., d]``
    (:math:`s` times the gradient), ``echo`` :math:`t-\tau_i(t)` ``[...]`` and ``active``
    :math:`\mathbb 1\{i\in A_t\}` ``[...]``. Then :math:`Z(t+1)=(Z(t)-\eta_l\eta_g\tilde
    G^t)W^{(t)}`, which :data:`auxiliary_active` and :data:`auxiliary_inactive` state.

    Examples
    --------
    >>> auxiliary_innovation([[2.0]], [[1.0]], [3.0], [True]).tolist()
    [[4.0]]
    """
    owner = "auxiliary_innovation"
    if echo.shape != local_sum.shape[:-1] and echo.ndim:
        raise ParameterError(
            f"The 'echo' parameter of {owner} must be a scalar or an array of shape "
            f"{local_sum.shape[:-1]} (one per row of 'local_sum'). Got shape {echo.shape} instead."
        )
    active, echo = active[..., None], echo[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(active, echo * local_sum - (echo - 1) * grad, grad)
    refuse_non_finite(out, owner, {"local_sum": local_sum, "grad": grad, "echo": echo})
    return out


# --- Theorem 1 and Corollaries 1-3 (explicit constants of App. G-I) -------------------------
def _convergence_terms(c_opt, c_noise, c_sigma, c_zeta) -> dict[str, sp.Expr]:
    """The four terms shared by Theorem 1 and Corollaries 2-3, with their constants."""
    drift = eta_l**2 * eta_g**2 * s**2 * L**2 / (delta**2 * (1 - _sqrt_rho) ** 2)
    return {
        "optimisation": c_opt * F_gap / (eta_l * eta_g * s * T),
        "noise": c_noise * eta_l * eta_g * L * delta_max * sigma2 / (m * delta**2),
        "drift_sigma": c_sigma * drift * sigma2,
        "drift_zeta": c_zeta * drift * zeta2,
    }


_CONVENTIONS = (
    _cond("eta_g >= 1 (the proof's 'convention')", eta_g, ">=", 1),
    _cond("delta <= delta_max", delta, "<=", delta_max),
)
theorem1 = register(
    Theorem(
        "fedawe.theorem1",
        title="FedAWE Theorem 1 (convergence of zbar, App. G constants)",
        reference=f"{PAPER}, §6.3, Theorem 1, (13); explicit constants end of App. G",
        kind="upper bound",
        terms=_convergence_terms(6, 24, 15, 2800),
        ranges=RANGES,
        conditions=(*CONDITIONS_11, *_CONVENTIONS),
        statement="under Assumptions 1-4 and (11): (1/T) sum_{t<T} E||grad F(zbar^t)||^2 <= "
        "6 (F(zbar^0) - F*)/(eta_l eta_g s T) + 24 eta_l eta_g L delta_max sigma^2/(m delta^2) "
        "+ 15 eta_l^2 eta_g^2 s^2 L^2 sigma^2/((1-sqrt(rho))^2 delta^2) "
        "+ 2800 eta_l^2 eta_g^2 s^2 L^2 zeta^2/(delta^2 (1-sqrt(rho))^2)",
    )
)
corollary2 = register(
    Theorem(
        "fedawe.corollary2",
        title="FedAWE Corollary 2 (convergence of xbar, App. H.1 constants)",
        reference=f"{PAPER}, App. H.1, Corollary 2 (explicit constants in its proof)",
        kind="upper bound",
        terms=_convergence_terms(12, 48, 31, 5600),
        ranges=RANGES,
        conditions=(*CONDITIONS_11, *_CONVENTIONS),
        statement="under Assumptions 1-4 and (11): (1/T) sum_{t<T} E||grad F(xbar^t)||^2 <= "
        "12 (F(xbar^0) - F*)/(eta_l eta_g s T) + 48 eta_l eta_g L delta_max sigma^2/(m delta^2)"
        " + 31 eta_l^2 eta_g^2 s^2 L^2 sigma^2/((1-sqrt(rho))^2 delta^2) "
        "+ 5600 eta_l^2 eta_g^2 s^2 L^2 zeta^2/((1-sqrt(rho))^2 delta^2), "
        "xbar^t = (1/m) sum_i x_i^t",
    )
)
corollary3 = register(
    Theorem(
        "fedawe.corollary3",
        title="FedAWE Corollary 3 (consensus of x, App. I.1 constants)",
        reference=f"{PAPER}, App. I.1, Corollary 3 (explicit constants in its proof)",
        kind="upper bound",
        terms=_convergence_terms(3, 12, 28, 1600),
        ranges=RANGES,
        conditions=(
            *CONDITIONS_11,
            *_CONVENTIONS,
            _cond("L >= 1 (the proof's convention)", L, ">=", 1),
        ),  # fmt: skip
        statement="under Assumptions 1-4 and (11): (1/T) sum_{t<T} (1/m) sum_i "
        "E||x_i^t - xbar^t||^2 <= 3 (F(xbar^0) - F*)/(eta_l eta_g s T) + 12 eta_l eta_g L "
        "delta_max sigma^2/(m delta^2) + 28 s^2 eta_l^2 eta_g^2 L^2 sigma^2/(delta^2 "
        "(1-sqrt(rho))^2) + 1600 eta_l^2 eta_g^2 s^2 L^2 zeta^2/(delta^2 (1-sqrt(rho))^2)",
    )
)
_COR1_RATES = {eta_l: 1 / (sp.sqrt(T) * s * L), eta_g: sp.sqrt(s * delta * m)}
COROLLARY1_RATES = _COR1_RATES
r"""Corollary 1's step sizes :math:`\eta_l=1/(\sqrt T sL)`, :math:`\eta_g=\sqrt{s\delta m}`."""
_T_ETA_L = (200 * _hetero / delta) ** 2
_T_ETA_PRODUCT = (
    6400 * s * m * (L + 1) ** 2 * (1 + _sqrt_rho) ** 2 * (beta2 + 1) * (1 + L**2)
    / (delta * L**2 * (1 - _sqrt_rho) ** 2)
)  # fmt: skip
COROLLARY1_HORIZONS = (
    _cond(
        "(11) at Corollary 1's rates, eta_l eta_g half: T >= 6400 s m (L+1)^2 (1+sqrt(rho))^2 "
        "(beta^2+1)(1+L^2) / (delta L^2 (1-sqrt(rho))^2)",
        T,
        ">=",
        _T_ETA_PRODUCT,
    ),
    _cond(
        "(11) at Corollary 1's rates, eta_l half: T >= (200 sqrt((beta^2+1)(1+L^2))/delta)^2",
        T,
        ">=",
        _T_ETA_L,
    ),
)
r"""Both conditions (11) at :data:`COROLLARY1_RATES`, solved for the horizon :math:`T`
(:math:`\eta_l\eta_g=\sqrt{s\delta m}/(\sqrt TsL)` and :math:`\eta_l=1/(\sqrt TsL)`)."""
corollary1_horizon = register(
    Theorem(
        "fedawe.corollary1.horizon",
        title="FedAWE Corollary 1, smallest horizon meeting (11)",
        reference=f"{PAPER}, §6.3, Corollary 1 with (11) at its step sizes",
        kind="exact",
        terms={"T_min": sp.Max(_T_ETA_PRODUCT, _T_ETA_L)},
        statement="eta_l = 1/(sqrt(T) s L) and eta_g = sqrt(s delta m) meet both conditions "
        "(11) iff T >= max(6400 s m (L+1)^2 (1+sqrt(rho))^2 (beta^2+1)(1+L^2) / "
        "(delta L^2 (1-sqrt(rho))^2), (200 sqrt((beta^2+1)(1+L^2))/delta)^2); the first "
        "(the eta_l eta_g half) binds unless m s (L+1)^2 (1+sqrt(rho))^2 delta < 6.25 L^2 "
        "(1-sqrt(rho))^2",
    )
)


@declare(
    s=Integer(1),
    m=Integer(1),
    delta=Real(0.0, 1.0, low_open=True),
    rho=Real(0.0, 1.0, high_open=True),
    L=Real(0.0, low_open=True),
    beta2=Real(0.0),
)
def corollary1_binding(*, s: int, m: int, delta: float, rho: float, L: float, beta2: float):
    """The two horizons of :data:`COROLLARY1_HORIZONS` (``eta_product``, ``eta_l``) and the
    name of the larger one, the binding half of (11) at Corollary 1's step sizes.

    Examples
    --------
    >>> h = corollary1_binding(s=1, m=100, delta=0.2, rho=0.5, L=1.0, beta2=0.0)
    >>> h["binding"], f"{h['eta_product']:.3g}", f"{h['eta_l']:.3g}"
    ('eta_product', '8.7e+08', '2e+06')
    """
    values = {"s": s, "m": m, "delta": delta, "rho": rho, "L": L, "beta2": beta2}
    horizon = corollary1_horizon.evaluate(**values)  # validates the values
    at = {symbol(k): v for k, v in values.items()}
    out = {
        "eta_product": float(_T_ETA_PRODUCT.subs(at)),
        "eta_l": float(_T_ETA_L.subs(at)),
        "T_min": float(horizon.total),
    }
    out["binding"] = "eta_product" if out["eta_product"] >= out["eta_l"] else "eta_l"
    return out


corollary1 = register(
    Theorem(
        "fedawe.corollary1",
        title="FedAWE Corollary 1 (rate, order only)",
        reference=f"{PAPER}, §6.3, Corollary 1, (17) (proof App. H.2)",
        kind="order",
        ranges={
            **{k: v for k, v in RANGES.items() if k != "eta_g"},
            "m": (5, 10),
            "T": (10**10, 10**11),
        },  # inside both horizons  # fmt: skip
        terms={
            "optimisation": L * F_gap / sp.sqrt(s * delta * m * T),
            "noise": delta_max * sigma2 / (delta ** sp.Rational(3, 2) * sp.sqrt(s * m * T)),
            "heterogeneity": s * m * (sigma2 + zeta2) / (T * delta * (1 - _sqrt_rho) ** 2),
        },
        conditions=(
            _cond(
                "eta_g = sqrt(s delta m) >= 1 (the proof's convention)", s * delta * m, ">=", 1
            ),  # fmt: skip
            _cond("delta <= delta_max", delta, "<=", delta_max),
            _cond("rho < 1", rho, "<", 1),
            *COROLLARY1_HORIZONS,
        ),
        statement="with eta_l = 1/(sqrt(T) s L), eta_g = sqrt(s delta m) meeting (11): "
        "(1/T) sum_t E||grad F(xbar^t)||^2 ≲ L (F(xbar^0) - F*)/sqrt(s delta m T) + "
        "delta_max sigma^2/(delta^{3/2} sqrt(s m T)) + (s m / T)(sigma^2 + zeta^2)/"
        "(delta (1 - sqrt(rho))^2). With constants: fedawe.corollary2 at these step sizes "
        "(12, 48, 31 and 5600 on the same terms), whose (11) needs both horizons of its "
        "hypotheses (fedawe.corollary1.horizon; the eta_l eta_g half usually binds)",
    )
)

# --- Example 1 (our closed forms) ---------------------------------------------------------
p1, p2, u1, u2 = (symbol(k) for k in ("p1", "p2", "u1", "u2"))
example1_fedavg_active = register(
    Theorem(
        "fedawe.example1.fedavg_active",
        title="FedAWE Example 1, limit of FedAvg over active clients",
        reference=f"{PAPER}, §4, Example 1 and Fig. 2 (closed form: fedtheory's derivation)",
        kind="limit",
        terms={
            "limit": (p1 * (1 - p2) * u1 + p2 * (1 - p1) * u2 + p1 * p2 * (u1 + u2) / 2)
            / (1 - (1 - p1) * (1 - p2))
        },
        statement="F_i(x) = (x - u_i)^2/2, p_i^t = p_i: lim_t E[x^t] of FedAvg averaging the "
        "active clients' models (no update when none is active) is E[mean_{i in A} u_i | A "
        "nonempty], for any s >= 1, 0 < eta_l < 2, eta_g = 1; the minimiser is (u_1+u_2)/2",
    )
)
example1_fedavg_all = register(
    Theorem(
        "fedawe.example1.fedavg_all",
        title="FedAWE Example 1, limit of FedAvg over all clients",
        reference=f"{PAPER}, §4, Example 1 and (3) (closed form: fedtheory's derivation)",
        kind="limit",
        terms={"limit": (p1 * u1 + p2 * u2) / (p1 + p2)},
        statement="F_i(x) = (x - u_i)^2/2, p_i^t = p_i: lim_t E[x^t] of FedAvg dividing the "
        "active clients' updates by m is the minimiser of the biased objective (3), "
        "(p_1 u_1 + p_2 u_2)/(p_1 + p_2), for any s >= 1 and 0 < eta_l < 2, eta_g = 1",
    )
)


# --- Exact quantities the statements speak of ---------------------------------------------
@declare(p=Array(ndim=1, low=0.0, high=1.0, min_size=2))
def mixing_moment(p) -> np.ndarray:
    r"""Exact :math:`M=\mathbb E[(W)^2]` ``[N, N]`` of the mixing matrix (4) when client
    :math:`i` is active independently with probability ``p [N]`` (Xiang et al. 2024, §5).

    :math:`W` is idempotent (averaging on :math:`A`, identity elsewhere), so :math:`M=
    \mathbb E[W]`: :math:`M_{ij}=p_ip_j\,\mathbb E[1/(2+K_{-ij})]` (:math:`i\ne j`) and
    :math:`M_{ii}=p_i\,\mathbb E[1/(1+K_{-i})]+1-p_i`, where :math:`K_{-\cdot}` counts the
    other active clients. With :math:`1/(a+K)=\int_0^1x^{a-1+K}dx` and :math:`\mathbb E
    [x^K]=\prod_k(1-p_k+p_kx)`, both are integrals of polynomials of degree :math:`<N`,
    computed exactly by Gauss-Legendre quadrature with :math:`\lfloor N/2\rfloor+2` nodes
    (:math:`A=\emptyset` gives :math:`W=I`, as in the proof of Lemma 4).

    Examples
    --------
    >>> mixing_moment([1.0, 1.0]).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    n = p.size
    nodes, weights = leggauss(n // 2 + 2)
    x = (nodes + 1) / 2  # [Q] in (0, 1)
    w = weights / 2
    f = 1 - p + p * x[:, None]  # [Q, N] > 0
    full = np.prod(f, axis=1)  # [Q] E[x^K] over all clients
    inv = 1 / f  # [Q, N]
    off = (inv * (w * x * full)[:, None]).T @ inv  # [N, N] sum_q w x full / (f_i f_j)
    out = np.outer(p, p) * off
    diag = p * ((w * full) @ inv) + 1 - p  # [N]
    np.fill_diagonal(out, diag)
    return out


@declare(p=Array(low=0.0, high=1.0, min_size=2))
def mixing_rho(p) -> np.ndarray:
    r""":math:`\rho(t)=\lambda_2(\mathbb E[(W^{(t)})^2])` for each row of ``p [N]`` or
    ``[T, N]`` (exact, :func:`mixing_moment`); :math:`\rho=\max_t\rho(t)` (Xiang et al.
    2024, §5 and Lemma 4). ``M`` is symmetric, doubly stochastic and positive semi-definite
    with the eigenvector :math:`\mathbf 1` of eigenvalue 1, so :math:`\lambda_2(M)=
    \lambda_{\max}(M-J)` is the factor of Lemma 1.

    Examples
    --------
    >>> float(mixing_rho([1.0, 1.0, 1.0]).round(12))
    0.0
    """
    owner, a = "mixing_rho", p
    if a.ndim not in (1, 2) or a.shape[-1] < 2:
        raise ParameterError(
            f"The 'p' parameter of {owner} must be an array [N] or [T, N] with N >= 2. "
            f"Got shape {a.shape} instead."
        )
    rows = a.reshape(-1, a.shape[-1])
    out = np.array([np.linalg.eigvalsh(mixing_moment(r))[-2] for r in rows])
    out = np.clip(out, 0.0, 1.0)  # eigvalsh rounding only: M is PSD with spectrum in [0, 1]
    return out.reshape(a.shape[:-1])


@declare(p=Array(ndim=2, low=0.0, high=1.0))
def staleness_moments(p) -> tuple[np.ndarray, np.ndarray]:
    r"""Exact :math:`\mathbb E[t-\tau_i(t)]` and :math:`\mathbb E[(t-\tau_i(t))^2]`, both
    ``[T, N]``, for availability probabilities ``p [T, N]`` (round :math:`t`, client
    :math:`i`; independent rounds, Assumption 1), the quantities of Lemma 2 (Xiang et al.
    2024, §6.2).

    With :math:`X_t=t-\tau_i(t)`, :math:`X_0=1` (:math:`\tau_i(0)=-1`) and
    :math:`X_{t+1}=1` if :math:`i\in A_t`, else :math:`X_t+1`:
    :math:`\mathbb E X_{t+1}=1+(1-p^t)\mathbb EX_t` and
    :math:`\mathbb E X_{t+1}^2=1+(1-p^t)(\mathbb EX_t^2+2\mathbb EX_t)`.

    Examples
    --------
    >>> first, second = staleness_moments([[0.5], [0.5]])
    >>> first[:, 0].tolist(), second[:, 0].tolist()
    ([1.0, 1.5], [1.0, 2.5])
    """
    first = np.empty_like(p)
    second = np.empty_like(p)
    first[0], second[0] = 1.0, 1.0
    for t in range(p.shape[0] - 1):
        first[t + 1] = 1 + (1 - p[t]) * first[t]
        second[t + 1] = 1 + (1 - p[t]) * (second[t] + 2 * first[t])
    refuse_non_finite((first, second), "staleness_moments", {"p": p})
    return first, second
