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

* ``cafed.lemma1.G_squared`` / ``cafed.lemma1.H`` -- Lemma 1 (eqs. (6)-(8), proof in
  App. B): :math:`G^2:=D^2+\max_k\sigma_k^2` and :math:`H\le D\,\mathrm{diam}(W)`.
* ``cafed.theorem2`` -- upper bound (Theorem 2) on :math:`\mathbb E[F_B(\bar w_{T,0})-F_B^*]`,
  written over aggregates of the step-size schedule (see :func:`theorem2_aggregates`);
  :func:`theorem2_program` gives its App. D form for the weight optimisation. Encoded as
  published; ``fedtheory.validation.errata`` shows that its proof (App. B) establishes a
  different numerator (noise term :math:`2q^\top\Sigma q`), uses :math:`w_B^*` in
  :math:`\upsilon`, and that its step (23) fails while the :math:`\min\{\cdot,t\}` in
  :math:`\mathcal J_t` binds.
* App. B's steps: ``cafed.lemma2`` (:math:`C_1`), ``cafed.lemma3``
  (:math:`C_3/\ln(1/\lambda)`, with :func:`lookback_sum`), ``cafed.eq21``, ``cafed.eq22``,
  ``cafed.eq23`` (under a condition on :math:`\mathcal J_t` that fedtheory adds: the paper
  states (23) for every :math:`t`), ``cafed.eq5`` (Assumption 1) and
  ``cafed.product_lambda`` (:math:`\lambda(\otimes_kP_k)=\max_k\lambda(P_k)`).

Python names: ``kappa, gap_B, chi2, d_tv, Gamma, Gamma_prime`` denote
:math:`\kappa, F_B(w)-F_B^*, \chi^2_{\alpha\|p}, d_{TV}, \Gamma, \Gamma'`; Theorem 2's
``sum_eta, sum_eta_sq, sum_eta_sq_inv, sum_phi`` denote :math:`S_1=\sum_t\eta_t`,
:math:`S_2=\sum_t\eta_t^2`, :math:`S_2'=\sum_t(\eta_t^2+1/t^2)`,
:math:`S_\phi=\sum_t\ln(2C_PHt)\eta_{t-\mathcal J_t}^2`; ``pi_q`` is :math:`\pi^\top q`,
``noise_q`` is :math:`\sum_k\sigma_k^2\pi_kq_k^2` (so :math:`q^\top\Sigma q=S_2V_q`),
``dist0_sq`` is :math:`\|w_{0,0}-w^*\|^2`, ``lam`` is :math:`\lambda(P)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from fedtheory.bounds.base import BoundResult, Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.divergences import chi_square, total_variation
from fedtheory.bounds.symbols import symbol
from fedtheory.budget import check_bytes
from fedtheory.constraints import (
    Array,
    Instance,
    InstanceOf,
    Integer,
    Probabilities,
    Real,
    declare,
    refuse_non_finite,
)
from fedtheory.errors import ParameterError

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
class DecompositionConstants:
    r"""The constants of CA-Fed Theorems 1 and 3 (Rodio et al. 2023, Sec. III) at points
    ``w [...]`` of a problem with effective weights :math:`p`.

    ``kappa, gap_B, chi2, d_tv, Gamma, Gamma_prime`` denote :math:`\kappa=L/\mu`,
    :math:`F_B(w)-F_B^*`, :math:`\chi^2_{\alpha\|p}`, :math:`d_{TV}(\alpha,p)`,
    :math:`\Gamma=\max_k\{F_k(w^*)-F_k^*\}` and :math:`\Gamma'=\max_k\{F_k(w_B^*)-F_k^*\}`;
    ``F_star`` and ``F_B_star`` are the optimal values :math:`F^*`, :math:`F_B^*`."""

    kappa: float
    gap_B: np.ndarray  # [...] F_B(w) - F_B^*
    chi2: float
    d_tv: float
    Gamma: float
    Gamma_prime: float
    F_star: float
    F_B_star: float

    @declare(theorem=Instance(Theorem, none=True))
    def as_kwargs(self, theorem: Theorem | None = None) -> dict:
        """The constants as keywords: all of them, or those ``theorem`` takes (e.g.
        ``theorem1.evaluate(**c.as_kwargs(theorem1))``)."""
        names = ("kappa", "gap_B", "chi2", "d_tv", "Gamma", "Gamma_prime")
        values = {n: getattr(self, n) for n in names}
        if theorem is None:
            return values
        return {k: v for k, v in values.items() if k in theorem.parameters}


@declare(
    problem=InstanceOf("fedtheory.problems.base:FederatedProblem"),
    w=Array(shape=(..., "problem.dim")),
    p=Probabilities(size="problem.num_clients"),
)
def decomposition_constants(problem, w, p) -> DecompositionConstants:
    r"""The constants CA-Fed Theorems 1 and 3 (Rodio et al. 2023, Sec. III) take, computed
    exactly from ``problem`` (which must give ``L``, ``mu``, ``alpha``, ``loss``,
    ``optimum``, ``gamma``), points ``w [..., d]`` and effective weights ``p [N]``
    (CA-Fed (4)); see :class:`DecompositionConstants`. Use them to evaluate a modified
    statement on the same instances as the paper's."""
    alpha = problem.alpha
    _, f_star = problem.optimum()
    _, fb_star = problem.optimum(p)
    gap = np.maximum(problem.loss(w, p) - fb_star, 0.0)  # >= 0 up to rounding (1e-16)
    return DecompositionConstants(
        kappa=float(problem.kappa),
        gap_B=np.asarray(gap),
        chi2=chi_square(alpha, p),
        d_tv=total_variation(alpha, p),
        Gamma=float(problem.gamma()),
        Gamma_prime=float(problem.gamma(p)),
        F_star=float(f_star),
        F_B_star=float(fb_star),
    )


@dataclass(frozen=True)
class Decomposition:
    """Measured error of points ``w`` next to the Theorem 1 and Theorem 3 bounds, and the
    constants they were evaluated with."""

    measured: np.ndarray  # [...] F(w) - F^*
    theorem1: BoundResult
    theorem3: BoundResult
    constants: DecompositionConstants


@declare(
    problem=InstanceOf("fedtheory.problems.base:FederatedProblem"),
    w=Array(shape=(..., "problem.dim")),
    p=Probabilities(size="problem.num_clients"),
)
def decomposition(problem, w, p) -> Decomposition:
    r"""Evaluate CA-Fed Theorems 1 and 3 (Rodio et al. 2023, Sec. III; both upper bounds on
    :math:`\epsilon=F(w)-F^*`) at points ``w [..., d]`` of ``problem`` (which must give
    ``L``, ``mu``, ``alpha``, ``loss``, ``optimum``, ``gamma``) for effective weights ``p``
    (CA-Fed (4)); ``measured`` is the exact :math:`F(w)-F^*` the bounds are compared with,
    ``constants`` the :class:`DecompositionConstants` both bounds take."""
    c = decomposition_constants(problem, w, p)
    measured = problem.loss(w) - c.F_star
    t1 = theorem1.evaluate(**c.as_kwargs(theorem1))
    t3 = theorem3.evaluate(**c.as_kwargs(theorem3))
    return Decomposition(np.asarray(measured), t1, t3, c)


# --- Lemma 1 ---------------------------------------------------------------------------------
D, G, H, diam_W, sigma2_max = (symbol(n) for n in ("D", "G", "H", "diam_W", "sigma2_max"))

lemma1_G_squared = register(
    Theorem(
        "cafed.lemma1.G_squared",
        title="CA-Fed Lemma 1 (7): G squared",
        reference="Rodio et al. 2023, Lemma 1 eq. (7), proof in App. B",
        kind="exact",
        terms={"gradient": D**2, "noise": sigma2_max},
        statement="G^2 := D^2 + max_k sigma_k^2 bounds E||grad F_k(w, xi)||^2 on W",
    )
)
lemma1_H = register(
    Theorem(
        "cafed.lemma1.H",
        title="CA-Fed Lemma 1 (8): H",
        reference="Rodio et al. 2023, Lemma 1 eq. (8), App. B eq. (21)",
        kind="upper bound",
        terms={"H": D * diam_W},
        statement="|F_k(w) - F_k(w_B^*)| <= D ||w - w_B^*|| <= D diam(W) =: H",
    )
)


@dataclass(frozen=True)
class Lemma1Constants:
    """CA-Fed Lemma 1's constants on a set ``W`` of diameter ``diameter``."""

    D: float  # sup_{w in W, k} ||grad F_k(w)||
    G: float  # sqrt(D^2 + max_k sigma_k^2)
    H: float  # D * diam(W)


@declare(D=Real(0.0), sigma2=Array(ndim=1, low=0.0), diameter=Real(0.0))
def lemma1_constants(D: float, sigma2, diameter: float) -> Lemma1Constants:
    r"""CA-Fed Lemma 1 (App. B): from the gradient bound :math:`D` on :math:`W`, the
    per-client noise variances ``sigma2 [N]`` and :math:`\mathrm{diam}(W)`, return
    :math:`G=\sqrt{D^2+\max_k\sigma_k^2}` (exact, eq. (7)) and :math:`H=D\,\mathrm{diam}(W)`
    (upper bound, eq. (8) via (21))."""
    owner, s2 = "lemma1_constants", sigma2
    g2 = lemma1_G_squared.evaluate(D=D, sigma2_max=float(s2.max())).total
    h = lemma1_H.evaluate(D=D, diam_W=diameter).total
    out = Lemma1Constants(D, float(np.sqrt(g2)), float(h))
    refuse_non_finite(out, owner, {"D": D, "sigma2": s2, "diameter": diameter})
    return out


# --- Theorem 2 -------------------------------------------------------------------------------
L, E, M, Q, lam = (symbol(n) for n in ("L", "E", "M", "Q", "lam"))
T, T_P, C_P = symbol("T"), symbol("T_P"), symbol("C_P")
pi_q, noise_q, dist0_sq = symbol("pi_q"), symbol("noise_q"), symbol("dist0_sq")
S1, S2 = symbol("sum_eta"), symbol("sum_eta_sq")
S2_inv, S_phi, eta_max = symbol("sum_eta_sq_inv"), symbol("sum_phi"), symbol("eta_max")

UPSILON = 2 * dist0_sq / E + sp.Rational(1, 4) * M * Q * S2_inv
PSI = 4 * L * (E * Q + 2) * Gamma * S2 + sp.Rational(2, 3) * (E - 1) * (2 * E - 1) * G**2 * S2
PHI = 2 * E * D * G * Q * S_phi

theorem2 = register(
    Theorem(
        "cafed.theorem2",
        title="CA-Fed Theorem 2",
        reference="Rodio et al. 2023, Theorem 2 (convergence of F_B under Markov availability)",
        kind="upper bound",
        terms={
            "noise": S2 * noise_q / (2 * pi_q * S1),
            "upsilon": UPSILON / (pi_q * S1),
            "psi": PSI / S1,
            "phi": PHI / (sp.log(1 / lam) * S1),
        },
        conditions=[
            Condition(
                "eta_t <= 1/(2L(EQ+1)) (Lemma 2, App. B; added by fedtheory: Theorem 2 states "
                "only (11), errata cafed.theorem2.step_size)",
                eta_max,
                "<=",
                1 / (2 * L * (E * Q + 1)),
            ),
            Condition("T >= T_P", T, ">=", T_P),
        ],
        statement=(
            "E[F_B(wbar_T) - F_B^*] <= ((q^T Sigma q / 2 + upsilon)/(pi^T q) + psi"
            " + phi/ln(1/lambda(P))) / sum_t eta_t"
        ),
    )
)


@dataclass(frozen=True)
class ScheduleAggregates:
    r"""Sums over :math:`t=1..T` of a step-size schedule that CA-Fed Theorem 2 needs."""

    T: int
    sum_eta: np.ndarray  # [...] S_1
    sum_eta_sq: np.ndarray  # [...] S_2
    sum_eta_sq_inv: np.ndarray  # [...] S_2'
    sum_phi: np.ndarray  # [...] S_phi
    eta_max: np.ndarray  # [...] max_{t<=T} eta_t
    J: np.ndarray  # [T] the look-back J_t, t = 1..T

    def as_kwargs(self) -> dict:
        """The keyword arguments of ``theorem2.evaluate`` this record provides."""
        names = ("T", "sum_eta", "sum_eta_sq", "sum_eta_sq_inv", "sum_phi", "eta_max")
        return {n: getattr(self, n) for n in names}


@declare(
    eta=Array(low=0.0, low_open=True),
    lam=Real(0.0, 1.0, low_open=True, high_open=True),
    C_P=Real(0.0, low_open=True),
    T_P=Integer(0),
    H=Real(0.0, low_open=True),
)
def theorem2_aggregates(eta, *, lam: float, C_P: float, T_P: int, H: float) -> ScheduleAggregates:
    r"""Aggregates of the schedule ``eta [..., T+1]`` (entries :math:`\eta_0..\eta_T`) for
    CA-Fed Theorem 2:

    .. math:: \mathcal J_t=\min\{\max\{\lceil\ln(2C_PHt)/\ln(1/\lambda)\rceil,T_P\},t\},\quad
              S_\phi=\sum_{t=1}^T\ln(2C_PHt)\,\eta_{t-\mathcal J_t}^2 .

    The asymptotic hypotheses :math:`\sum\eta_t=\infty`, :math:`\sum\ln(t)\eta_t^2<\infty`
    concern the infinite schedule and cannot be checked on a finite prefix. When
    :math:`2C_PHt<1` the logarithm is negative and is summed as written. Exact (these are
    the sums Theorem 2's upper bound, Rodio et al. 2023 App. C-D, is built from). Memory:
    nine arrays ``[..., T]`` of 8 bytes at once, checked against the budget before the work."""
    owner = "theorem2_aggregates"
    if eta.ndim < 1 or eta.shape[-1] < 2:
        raise ParameterError(
            f"The 'eta' parameter of {owner} must be an array [..., T+1] with T >= 1. "
            f"Got shape {eta.shape} instead."
        )
    T = eta.shape[-1] - 1
    cells = T * max(eta.size // (T + 1), 1)  # [..., T]
    check_bytes(9 * 8 * cells, owner, fixes="a shorter schedule (fewer rounds T)",
                what=f"nine arrays of {cells} entries for T = {T} rounds")  # fmt: skip
    t = np.arange(1, T + 1)
    with np.errstate(over="ignore"):
        log_term = np.log(2 * C_P * H * t)  # [T]
    refuse_non_finite(log_term, owner, {"C_P": C_P, "H": H})
    J = np.minimum(np.maximum(np.ceil(log_term / np.log(1 / lam)), T_P), t).astype(int)
    run = eta[..., 1:]  # [..., T]
    with np.errstate(over="ignore", invalid="ignore"):  # reported below
        out = ScheduleAggregates(
            T=T,
            sum_eta=run.sum(-1),
            sum_eta_sq=(run**2).sum(-1),
            sum_eta_sq_inv=(run**2 + 1.0 / t**2).sum(-1),
            sum_phi=(log_term * eta[..., t - J] ** 2).sum(-1),
            eta_max=run.max(-1),
            J=J,
        )
    refuse_non_finite(out, owner, {"eta": eta, "C_P": C_P, "H": H})
    return out


@dataclass(frozen=True)
class Theorem2Numerator:
    r"""The numerator of CA-Fed Theorem 2 at weights ``q``, term by term."""

    noise: float  # q^T Sigma q / (2 pi^T q)
    upsilon: float  # upsilon / pi^T q
    psi: float
    phi: float  # phi / ln(1/lambda(P))
    total: float


@dataclass(frozen=True)
class Theorem2Program:
    r"""CA-Fed Theorem 2 in the form of App. D, for a fixed :math:`\|q\|_1=Q`:

    .. math:: \text{bound}(q)=\frac1{S_1}\Big(\frac{\tfrac12q^\top\mathrm{diag}(A)q+B}
              {\pi^\top q}+C\Big),\quad A_k=\sigma_k^2\pi_kS_2,\ B=\upsilon,\
              C=\psi+\frac{\phi}{\ln(1/\lambda(P))} .

    ``psi`` and ``phi_over_log`` are kept apart; ``C`` is their sum. The formulas are those of
    ``cafed.theorem2`` (evaluated once, with its hypotheses checked)."""

    A: np.ndarray  # [N]
    B: float
    psi: float
    phi_over_log: float
    pi: np.ndarray  # [N]
    Q: float
    sum_eta: float

    @property
    def C(self) -> float:
        return self.psi + self.phi_over_log

    @declare(q=Array(shape=("self.A[0]",), low=0.0))
    def numerator(self, q) -> Theorem2Numerator:
        """The four terms of the numerator at weights ``q [N]`` (with ``sum(q) = Q``)."""
        if abs(q.sum() - self.Q) > 1e-9 * max(1.0, self.Q) or self.pi @ q <= 0:
            raise ParameterError(
                "The 'q' parameter of Theorem2Program.numerator must be non-negative with "
                f"sum Q = {self.Q:g} and pi^T q > 0. Got sum {q.sum():g} instead."
            )
        mass = float(self.pi @ q)
        noise = 0.5 * float(q @ (self.A * q)) / mass
        up = self.B / mass
        return Theorem2Numerator(noise, up, self.psi, self.phi_over_log, noise + up + self.C)

    @declare(q=Array(shape=("self.A[0]",), low=0.0))
    def bound(self, q) -> float:
        """Theorem 2's right-hand side at ``q``."""
        return self.numerator(q).total / self.sum_eta


@declare(
    eta=Array(ndim=1),
    sigma2=Array(ndim=1, low=0.0),
    pi=Array(shape=("sigma2[0]",), low=0.0, high=1.0),
    Q=Real(),
    E=Real(),
    M=Real(),
    L=Real(),
    Gamma=Real(),
    G=Real(),
    D=Real(),
    lam=Real(0.0, 1.0, low_open=True, high_open=True),
    C_P=Real(0.0, low_open=True),
    T_P=Integer(0),
    H=Real(0.0, low_open=True),
    dist0_sq=Real(),
)
def theorem2_program(
    eta,
    *,
    sigma2,
    pi,
    Q: float,
    E: int,
    M: int,
    L: float,
    Gamma: float,
    G: float,
    D: float,
    H: float,
    lam: float,
    C_P: float,
    T_P: int,
    dist0_sq: float,
) -> Theorem2Program:
    r"""Coefficients of CA-Fed Theorem 2 (Rodio et al. 2023, an upper bound on
    :math:`\mathbb E[F_B(\bar w_{T,0})-F_B^*]`) as a function of the weights :math:`q` (App. D form,
    see :class:`Theorem2Program`), for the schedule ``eta [T+1]``, noise ``sigma2 [N]``,
    availability ``pi [N]`` and the problem and chain constants (Lemma 1's ``D, G, H``;
    ``C_P, T_P, lam`` of (5)). Raises ``HypothesisViolation`` if the schedule breaks
    :math:`\eta_t\le1/(2L(EQ+1))` or :math:`T<T_P`."""
    # the scalars' ranges are Theorem 2's (its evaluate checks them)
    agg = theorem2_aggregates(eta, lam=lam, C_P=C_P, T_P=T_P, H=H)
    res = theorem2.evaluate(
        **agg.as_kwargs(),
        Q=Q, E=E, M=M, L=L, Gamma=Gamma, G=G, D=D, lam=lam, T_P=T_P,
        dist0_sq=dist0_sq, pi_q=1.0, noise_q=0.0,
    )  # fmt: skip
    s1 = float(agg.sum_eta)
    return Theorem2Program(
        A=sigma2 * pi * float(agg.sum_eta_sq),
        B=float(res.terms["upsilon"]) * s1,
        psi=float(res.terms["psi"]) * s1,
        phi_over_log=float(res.terms["phi"]) * s1,
        pi=pi,
        Q=float(Q),
        sum_eta=s1,
    )


# --- App. B: Lemmas 2-3, eqs. (5), (21)-(23), product chains ----------------------------------
V1, R_B, S_J = symbol("pi_q_sq_sigma"), symbol("dist0_B_sq"), symbol("sum_J_eta")
diff_norm, q_active, eta_t = symbol("diff_norm"), symbol("q_active"), symbol("eta_t")
t_, J_t, lam_max = symbol("t"), symbol("J_t"), symbol("lam_max")
_REF_B = "Rodio et al. 2023, App. B"
_STEP_COND = Condition("eta_t <= 1/(2L(EQ+1)) (Lemma 2)", eta_max, "<=", 1 / (2 * L * (E * Q + 1)))

lemma2 = register(
    Theorem(
        "cafed.lemma2",
        title="CA-Fed Lemma 2 (C_1)",
        reference=_REF_B + ", Lemma 2 (convergence under heterogeneous availability)",
        kind="upper bound",
        terms={
            "initial": 2 * R_B / E,
            "noise": 2 * V1 * S2,
            "local_drift": sp.Rational(2, 3) * pi_q * (E - 1) * (2 * E - 1) * G**2 * S2,
            "heterogeneity": 2 * L * (E * Q + 2) * pi_q * Gamma * S2,
        },
        conditions=[_STEP_COND],
        statement="sum_t eta_t E[sum_{k in A_t} q_k (F_k(w_t) - F_k(w_B^*))] <= C_1 = "
        "(2/E)||w_0 - w_B^*||^2 + 2 sum_k pi_k q_k^2 sigma_k^2 S_2 + (2/3) sum_k pi_k q_k "
        "(E-1)(2E-1) G^2 S_2 + 2L(EQ+2) sum_k pi_k q_k Gamma S_2",
    )
)
lemma3 = register(
    Theorem(
        "cafed.lemma3",
        title="CA-Fed Lemma 3 (C_3)",
        reference=_REF_B + ", Lemma 3 (optimization error after J_t steps)",
        kind="upper bound",
        terms={"lookback": E * D * G * Q * S_J * pi_q},
        statement="sum_t eta_t E[sum_{k in A_t} q_k (F_k(w_{t-J_t}) - F_k(w_t))] <= "
        "EDGQ sum_t J_t eta_{t-J_t}^2 sum_k pi_k q_k =: C_3/ln(1/lambda(P))",
    )
)
eq21 = register(
    Theorem(
        "cafed.eq21",
        title="CA-Fed (21)",
        reference=_REF_B + ", eq. (21) (proof of Lemma 3)",
        kind="upper bound",
        terms={"lipschitz": D * diff_norm},
        statement="|F_k(v) - F_k(w)| <= D ||v - w|| for v, w in W",
    )
)
eq22 = register(
    Theorem(
        "cafed.eq22",
        title="CA-Fed (22)",
        reference=_REF_B + ", eq. (22) (proof of Lemma 3)",
        kind="upper bound",
        terms={"step": eta_t * G * E * q_active},
        statement="E_B ||w_{t+1,0} - w_{t,0}|| <= eta_t G E sum_{k in A_t} q_k",
    )
)
eq5 = register(
    Theorem(
        "cafed.eq5",
        title="CA-Fed (5)",
        reference="Rodio et al. 2023, Assumption 1, eq. (5)",
        kind="upper bound",
        terms={"mixing": C_P * lam**t_},
        conditions=[Condition("t >= T_P", t_, ">=", T_P)],
        statement="max_{i,j} |[P^t]_{ij} - pi_j| <= C_P lambda(P)^t for t >= T_P",
    )
)
eq23 = register(
    Theorem(
        "cafed.eq23",
        title="CA-Fed (23)",
        reference=_REF_B + ", eq. (23) (proof of Theorem 2)",
        kind="upper bound",
        terms={"bound": 1 / (2 * H * t_)},
        conditions=[
            Condition(
                "J_t >= ln(2 C_P H t)/ln(1/lambda) (added by fedtheory: the paper states (23) "
                "for every t, and it fails when the min{., t} in J_t binds: errata "
                "cafed.proof.step23)",
                J_t,
                ">=",
                sp.log(2 * C_P * H * t_) / sp.log(1 / lam),
            )
        ],
        statement="|[P^{J_t}]_{ij} - pi_j| <= C_P lambda(P)^{J_t} <= 1/(2Ht)",
    )
)
product_lambda = register(
    Theorem(
        "cafed.product_lambda",
        title="CA-Fed lambda of a product chain",
        reference="Rodio et al. 2023, Sec. III (lambda(P) = (1 + lambda_2)/2) with P = "
        "kron_k P_k [derived: eigenvalues of a Kronecker product are the products]",
        kind="exact",
        terms={"lambda": lam_max},
        statement="independent clients: lambda(kron_k P_k) = max_k lambda(P_k)",
    )
)


@declare(eta=Array(ndim=1, low=0.0), J=Array(ndim=1, low=0.0, min_size=0))
def lookback_sum(eta, J) -> float:
    r""":math:`S_J=\sum_{t=1}^T\mathcal J_t\eta_{t-\mathcal J_t}^2` of CA-Fed Lemma 3 for
    the schedule ``eta [T+1]`` and the look-backs ``J [T]`` (e.g. ``theorem2_aggregates(...).J``).
    Exact."""
    owner = "lookback_sum"
    t = np.arange(1, eta.size)
    if J.shape != t.shape or np.any(J > t) or np.any(J != np.round(J)):
        raise ParameterError(
            f"The 'J' parameter of {owner} must hold integers 0 <= J_t <= t. Got {J} instead."
        )
    with np.errstate(over="ignore"):  # reported below, naming eta
        out = float(np.sum(J * eta[(t - J).astype(int)] ** 2))
    refuse_non_finite(out, owner, {"eta": eta})
    return out
