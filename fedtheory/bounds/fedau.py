r"""FedAU (Wang & Ji, ICLR 2024) -- adaptive aggregation weights under unknown participation.

Setting: :math:`N` clients, client :math:`n` participates in round :math:`t` with
:math:`\mathbb I_t^n\sim\mathrm{Bern}(p_n)` (Assumption 4, independent across rounds and
clients); Algorithm 1 applies :math:`x_{t+1}=x_t+\frac\eta N\sum_n\omega_t^n\Delta_t^n` with
:math:`I` local steps of size :math:`\gamma`; Algorithm 2 sets :math:`\omega_t^n` to the mean
of the observed participation intervals, each cut off at :math:`K`.

* ``fedau.theorem1`` (exact, Theorem 1, informal): constant weights :math:`\omega_n` make
  Algorithm 1 minimise :math:`h=\frac1P\sum_n\omega_np_nF_n`, :math:`P=\sum_n\omega_np_n`;
  :func:`effective_weights` returns :math:`\omega_np_n/P`.
* ``fedau.theorem2`` (order, Theorem 2): the four terms of the bound on
  :math:`\frac1T\sum_t\mathbb E\|\nabla f(x_t)\|^2`; the weight-error term is fed by a
  measured value (:func:`weight_error_measured`) or by :func:`weight_error_bound`
  (Theorem 3's explicit form).
* ``fedau.theorem3.per_round`` (upper bound, proof of Theorem 3):
  :math:`\mathbb E[(p\,\omega_t-1)^2]\le 2K(1-p)/t+(1-p)^{2K}` for :math:`t\ge1`;
  :func:`weight_error_exact` computes the left side exactly.
* ``fedau.theorem3.order`` (order, Theorem 3): :math:`K\log T/T+(1-p)^{2K}` per client.
* ``fedau.cutoff_geometric.mean`` / ``.variance`` (exact): moments of
  :math:`S=\min(\mathrm{Geom}(p),K)`; :func:`cutoff_geometric_pmf` gives its law.
* ``fedau.corollary4`` (order, Corollary 4) with :func:`corollary4_choices` for
  :math:`K,\gamma,\eta`.

Python names: ``p, K, t, T, N, I, L, gamma, eta`` denote :math:`p_n,K,t,T,N,I,L,\gamma,\eta`;
``F_gap, Psi_G, delta2, sigma2, Q_w, weight_error, R_c`` denote :math:`\mathcal F,\Psi_G,
\delta^2,\sigma^2,Q,\frac1{NT}\sum_{t,n}\mathbb E(p_n\omega_t^n-1)^2,R`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import symbol
from fedtheory.errors import ParameterError
from fedtheory.params import check_array, check_finite_result, check_int, check_real, check_size

p, K, t, T, N, I = (symbol(n) for n in ("p", "K", "t", "T", "N", "I"))
L, gamma, eta, sigma2 = symbol("L"), symbol("gamma"), symbol("eta"), symbol("sigma2")
F_gap, Psi_G, delta2 = symbol("F_gap"), symbol("Psi_G"), symbol("delta2")
Q_w, W_err, R_c = symbol("Q_w"), symbol("weight_error"), symbol("R_c")

_REF = "Wang & Ji 2024 (FedAU, ICLR)"

# --- cut-off geometric distribution ----------------------------------------------------------
CUTOFF_MEAN = (1 - (1 - p) ** K) / p
CUTOFF_VARIANCE = (1 - p) / p**2 - (2 * K - 1) * (1 - p) ** K / p - (1 - p) ** (2 * K) / p**2

cutoff_mean = register(
    Theorem(
        "fedau.cutoff_geometric.mean",
        title="FedAU cut-off geometric mean",
        reference=_REF + ", proof of Theorem 3 (cut-off geometric distribution)",
        kind="exact",
        terms={"mean": CUTOFF_MEAN},
        statement="E[min(Geom(p), K)] = (1 - (1-p)^K)/p",
    )
)
cutoff_variance = register(
    Theorem(
        "fedau.cutoff_geometric.variance",
        title="FedAU cut-off geometric variance",
        reference=_REF + ", proof of Theorem 3 (cut-off geometric distribution)",
        kind="exact",
        terms={"variance": CUTOFF_VARIANCE},
        statement="Var[min(Geom(p), K)] = (1-p)/p^2 - (2K-1)(1-p)^K/p - (1-p)^{2K}/p^2",
    )
)


def cutoff_geometric_pmf(p_n, K_cut: int) -> np.ndarray:
    r"""Law of :math:`S=\min(G,K)`, :math:`G\sim\mathrm{Geom}(p)` on :math:`\{1,2,..\}`:
    :math:`\Pr\{S=k\}=p(1-p)^{k-1}` for :math:`k<K` and :math:`(1-p)^{K-1}` for :math:`k=K`
    (Wang & Ji 2024, proof of Theorem 3). Returns ``[..., K]`` (entry ``k-1`` is
    :math:`\Pr\{S=k\}`) for ``p_n [...]`` in (0, 1]. Exact."""
    owner = "fedau.cutoff_geometric_pmf"
    q = check_array(p_n, "p_n", owner, low=0.0, high=1.0, low_open=True)[..., None]
    K_cut = check_size(K_cut, "K_cut", owner)
    k = np.arange(1, K_cut + 1)
    return np.where(k < K_cut, q * (1 - q) ** (k - 1), (1 - q) ** (K_cut - 1))


# --- Theorem 1 -------------------------------------------------------------------------------
omega_n, P_mass = symbol("omega_n"), symbol("P_mass")
theorem1 = register(
    Theorem(
        "fedau.theorem1",
        title="FedAU Theorem 1",
        reference=_REF + ", Theorem 1 (objective minimised at convergence, informal)",
        kind="exact",
        terms={"weight": omega_n * p / P_mass},
        statement="constant weights omega_n minimise h = (1/P) sum_n omega_n p_n F_n, "
        "P = sum_n omega_n p_n: client n's weight in h is omega_n p_n / P",
    )
)


def effective_weights(omega_n, p_n) -> np.ndarray:
    r"""FedAU Theorem 1 (informal; exact at convergence): with time-constant weights
    :math:`\omega_n` and :math:`\mathbb I_t^n\sim\mathrm{Bern}(p_n)`, Algorithm 1 minimises
    :math:`h=\sum_n\frac{\omega_np_n}PF_n`, :math:`P=\sum_n\omega_np_n`. Returns the weights
    ``[N]`` of :math:`h`; :math:`\omega_n=1/p_n` gives the uniform target :math:`1/N`."""
    owner = "fedau.effective_weights"
    w = check_array(omega_n, "omega_n", owner, ndim=1, low=0.0)
    q = check_array(p_n, "p_n", owner, shape=w.shape, low=0.0, high=1.0, low_open=True)
    mass = float(w @ q)
    if mass <= 0:
        raise ParameterError(
            f"The 'omega_n' parameter of {owner} must give P = sum omega_n p_n in (0, inf). "
            "Got P = 0 instead."
        )
    return theorem1.evaluate(omega_n=w, p=q, P_mass=mass).total


# --- Theorem 2 -------------------------------------------------------------------------------
theorem2 = register(
    Theorem(
        "fedau.theorem2",
        title="FedAU Theorem 2",
        reference=_REF + ", Theorem 2 (convergence error w.r.t. the original objective)",
        kind="order",
        terms={
            "optimisation": F_gap / (gamma * eta * I * T),
            "weight_error": (Psi_G + delta2 + gamma**2 * L**2 * I * sigma2) * W_err,
            "noise": gamma * eta * L * Q_w * (I * delta2 + sigma2) / N,
            "local_drift": gamma**2 * L**2 * I * (I * delta2 + sigma2),
        },
        conditions=[
            Condition("gamma <= 1/(4 sqrt(15) L I)", gamma, "<=", 1 / (4 * sp.sqrt(15) * L * I)),
            Condition("gamma eta <= 1/(2 L I)", gamma * eta, "<=", 1 / (2 * L * I)),
            Condition("gamma eta <= N/(27 L I Q)", gamma * eta, "<=", N / (27 * L * I * Q_w)),
        ],
        statement=(
            "(1/T) sum_t E||grad f(x_t)||^2 <= O(F/(gamma eta I T) + (Psi_G + delta^2 + "
            "gamma^2 L^2 I sigma^2) W_err + gamma eta L Q (I delta^2 + sigma^2)/N + "
            "gamma^2 L^2 I (I delta^2 + sigma^2))"
        ),
    )
)

# --- Theorem 3 -------------------------------------------------------------------------------
theorem3_per_round = register(
    Theorem(
        "fedau.theorem3.per_round",
        title="FedAU Theorem 3 (per round)",
        reference=_REF + ", proof of Theorem 3 (per-round inequality)",
        kind="upper bound",
        terms={"variance": 2 * K * (1 - p) / t, "bias": (1 - p) ** (2 * K)},
        statement="E[(p omega_t - 1)^2] <= 2K(1-p)/t + (1-p)^{2K}, t >= 1",
    )
)
theorem3_order = register(
    Theorem(
        "fedau.theorem3.order",
        title="FedAU Theorem 3 (order)",
        reference=_REF + ", Theorem 3 (bounding the weight error term)",
        kind="order",
        terms={"variance": K * sp.log(T) / T, "bias": (1 - p) ** (2 * K)},
        conditions=[Condition("T >= 2", T, ">=", sp.Integer(2))],
        statement="(1/(NT)) sum_{t,n} E[(p_n omega_t^n - 1)^2] = O(K log T / T + "
        "(1/N) sum_n (1-p_n)^{2K}); one client here, average the bias over clients",
    )
)


def weight_error_bound(p_n, K_cut: int, rounds: int) -> float:
    r"""Explicit upper bound on the weight error
    :math:`\frac1{NT}\sum_{t=0}^{T-1}\sum_n\mathbb E(p_n\omega_t^n-1)^2` from the proof of
    FedAU Theorem 3: the round :math:`t=0` contributes :math:`(1-p_n)^2` exactly
    (:math:`\omega_0^n=1`), each :math:`t\ge1` at most :math:`2K(1-p_n)/t+(1-p_n)^{2K}`."""
    owner = "fedau.weight_error_bound"
    q = check_array(p_n, "p_n", owner, ndim=1, low=0.0, high=1.0, low_open=True, min_size=1)
    K_cut = check_size(K_cut, "K_cut", owner)
    rounds = check_size(rounds, "rounds", owner)
    ts = np.arange(1, rounds)[:, None]  # [T-1, 1]
    later = theorem3_per_round.evaluate(p=q[None, :], K=K_cut, t=ts).total if rounds > 1 else 0
    return float(((1 - q) ** 2 + np.sum(later, axis=0)).sum() / (q.size * rounds))


def weight_error_measured(p_n, omega) -> np.ndarray:
    r"""Measured weight error :math:`\frac1{NT}\sum_{t,n}(p_n\omega_t^n-1)^2` of weights
    ``omega [R, T, N]`` (e.g. FedAU's Algorithm 2 along simulated runs) for participation
    probabilities ``p_n [N]``; returns ``[R]``. Its mean over replicates estimates the
    weight-error term of FedAU Theorem 2 (Wang & Ji 2024; the ``weight_error`` argument),
    which Theorem 3 bounds from above. Exact for the given weights (an empirical quantity)."""
    owner = "fedau.weight_error_measured"
    w = check_array(omega, "omega", owner, ndim=3, low=0.0)
    q = check_array(p_n, "p_n", owner, shape=(w.shape[2],), low=0.0, high=1.0, low_open=True)
    return np.mean((q * w - 1.0) ** 2, axis=(1, 2))


def weight_error_exact(p_n, K_cut: int, rounds: int) -> np.ndarray:
    r"""Exact :math:`\mathbb E[(p\,\omega_t-1)^2]` for :math:`t=0..T-1` under Bernoulli(p)
    participation and FedAU Algorithm 2 with cutoff :math:`K` (``[..., T]`` for ``p_n [...]``).

    Algorithm 2 records an interval when the client participated in the previous round or the
    gap counter reaches :math:`K`; :math:`\omega_t` is the mean of the recorded intervals, or 1
    before the first one. The law of (number of intervals, their sum, gap counter) is
    propagated exactly over the rounds (a dynamic programme over ``[m, s, c]``)."""
    owner = "fedau.weight_error_exact"
    q = check_array(p_n, "p_n", owner, low=0.0, high=1.0, low_open=True)
    K_cut = check_size(K_cut, "K_cut", owner)
    rounds = check_size(rounds, "rounds", owner)
    flat = q.reshape(-1, 1, 1, 1)  # [P, 1, 1, 1]
    n = rounds  # m, s <= rounds - 1
    law = np.zeros((flat.shape[0], n, n, K_cut))  # [P, m, s, c]
    law[:, 0, 0, 0] = 1.0
    m = np.arange(n)[:, None]
    s = np.arange(n)[None, :]
    omega_ms = np.where(m > 0, s / np.maximum(m, 1), 1.0)  # [m, s]
    err = (flat[..., 0] * omega_ms - 1.0) ** 2  # [P, m, s]
    out = np.empty((flat.shape[0], rounds))
    for r in range(rounds):
        out[:, r] = np.einsum("pmsc,pms->p", law, err)
        if r == rounds - 1:
            break
        new = np.zeros_like(law)
        for c in range(K_cut):
            gap = c + 1
            mass = law[..., c]  # [P, m, s]
            record = flat[..., 0] * mass if gap < K_cut else mass
            if gap < n:  # sums s <= rounds - 1: longer intervals cannot have been recorded
                new[:, 1:, gap:, 0] += record[:, :-1, : n - gap]
            if gap < K_cut:
                new[..., gap] += (1 - flat[..., 0]) * mass
        law = new
    return out.reshape(q.shape + (rounds,))


# --- Corollary 4 -----------------------------------------------------------------------------
sigma = sp.sqrt(sigma2)
delta = sp.sqrt(delta2)
corollary4 = register(
    Theorem(
        "fedau.corollary4",
        title="FedAU Corollary 4",
        reference=_REF + ", Corollary 4 (convergence of FedAU)",
        kind="order",
        terms={
            "noise": sigma * sp.sqrt(L * F_gap * Q_w) / sp.sqrt(N * I * T),
            "heterogeneity": delta * sp.sqrt(L * F_gap * Q_w) / sp.sqrt(N * T),
            "weight_error": (Psi_G + delta2 + sigma2 / (I * T)) * R_c * sp.log(T) ** 2 / T,
            "optimisation": (L * F_gap * (1 + Q_w / N) + delta2 + sigma2 / T) / T,
        },
        conditions=[Condition("T >= 2", T, ">=", sp.Integer(2))],
        statement="(1/T) sum_t E||grad f(x_t)||^2 = O(sigma sqrt(L F Q)/sqrt(NIT) + "
        "delta sqrt(L F Q)/sqrt(NT) + (Psi_G + delta^2 + sigma^2/(IT)) R log^2 T / T + "
        "(L F (1 + Q/N) + delta^2 + sigma^2/T)/T)",
    )
)


@dataclass(frozen=True)
class Corollary4Choices:
    r"""FedAU Corollary 4's parameters. ``K`` is :math:`\log_cT` (real); Algorithm 2 needs an
    integer, ``K_int`` is its ceiling (the caller chooses which to use)."""

    K: float
    K_int: int
    gamma: float
    gamma_eta: float
    eta: float
    R: float  # 1/log c


def corollary4_choices(
    *,
    p_min: float,
    T: int,
    L: float,
    I: int,  # noqa: E741 (the paper's symbol)
    F_gap: float,
    N: int,
    Q: float,
    delta2: float,
    sigma2: float,
) -> Corollary4Choices:
    r"""FedAU Corollary 4: :math:`K=\log_cT` with :math:`c=(1-\min_np_n)^{-2}`,
    :math:`\gamma=\min\{\frac1{LI\sqrt T},\frac1{4\sqrt{15}LI}\}` and
    :math:`\gamma\eta=\min\{\sqrt{\frac{\mathcal FN}{Q(I\delta^2+\sigma^2)LIT}},
    \frac1{2LI},\frac N{27LIQ}\}` (Wang & Ji 2024, Corollary 4: the parameter choices of an
    order result; the values are exact, the rate they give is an order)."""
    owner = "fedau.corollary4_choices"
    p_min = check_real(p_min, "p_min", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    T = check_int(T, "T", owner, low=2)
    L = check_real(L, "L", owner, low=0.0, low_open=True)
    I = check_int(I, "I", owner, low=1)  # noqa: E741
    F_gap = check_real(F_gap, "F_gap", owner, low=0.0, low_open=True)
    N = check_int(N, "N", owner, low=1)
    Q = check_real(Q, "Q", owner, low=0.0, low_open=True)
    delta2 = check_real(delta2, "delta2", owner, low=0.0)
    sigma2 = check_real(sigma2, "sigma2", owner, low=0.0)
    if I * delta2 + sigma2 <= 0:
        raise ParameterError(
            f"The 'sigma2' parameter of {owner} must give I delta2 + sigma2 in (0, inf). "
            "Got 0 instead."
        )
    log_c = -2.0 * math.log1p(-p_min)
    K_real = math.log(T) / log_c
    inputs = dict(p_min=p_min, T=T, L=L, I=I, F_gap=F_gap, N=N, Q=Q, delta2=delta2, sigma2=sigma2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        products = np.array([L * I * math.sqrt(T), Q * (I * delta2 + sigma2) * L * I * T])
    if not np.all(np.isfinite(products)):
        check_finite_result(products, owner, inputs)
    gamma_ = min(1 / (L * I * math.sqrt(T)), 1 / (4 * math.sqrt(15) * L * I))
    ge = min(
        math.sqrt(F_gap * N / (Q * (I * delta2 + sigma2) * L * I * T)),
        1 / (2 * L * I),
        N / (27 * L * I * Q),
    )
    if not gamma_ > 0 or not ge > 0:  # underflow to 0: the choices are not representable
        check_finite_result(math.inf, owner, inputs)
    out = Corollary4Choices(K_real, math.ceil(K_real), gamma_, ge, ge / gamma_, 1 / log_c)
    check_finite_result(out, owner, inputs)
    return out
