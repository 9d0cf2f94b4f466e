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
* ``fedau.lemmaB33`` (upper bound, Lemma B.3.3, the general descent lemma with the explicit
  constants of the ICLR slides); :func:`quadratic_descent_step` computes its left side exactly
  on quadratic clients.
* ``fedau.theorem3.per_round`` (upper bound, proof of Theorem 3):
  :math:`\mathbb E[(p\,\omega_t-1)^2]\le 2K(1-p)/t+(1-p)^{2K}` for :math:`t\ge1`;
  :func:`weight_error_exact` computes the left side exactly.
* ``fedau.theorem3.order`` (order, Theorem 3): :math:`K\log T/T+(1-p)^{2K}` per client.
* ``fedau.cutoff_geometric.mean`` / ``.variance`` (exact): moments of
  :math:`S=\min(\mathrm{Geom}(p),K)`; :func:`cutoff_geometric_pmf` gives its law.
* ``fedau.corollary4`` (order, Corollary 4) with :func:`corollary4_choices` for
  :math:`K,\gamma,\eta`.

Python names: ``p, K_cut, t, T, N, I, L, gamma, eta`` denote :math:`p_n,K,t,T,N,I,L,\gamma,\eta`;
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
from fedtheory.budget import check_bytes, check_seconds, marginal_seconds, seconds
from fedtheory.constraints import (
    Array,
    Integer,
    Probabilities,
    Real,
    Size,
    declare,
    refuse_non_finite,
)
from fedtheory.errors import ParameterError

p, K, t, T, N, I = (symbol(n) for n in ("p", "K_cut", "t", "T", "N", "I"))
L, gamma, eta, sigma2 = symbol("L"), symbol("gamma"), symbol("eta"), symbol("sigma2")
F_gap, Psi_G, delta2 = symbol("F_gap"), symbol("Psi_G"), symbol("delta2")
Q_w, W_err, R_c = symbol("Q_w"), symbol("weight_error"), symbol("R_c")

_REF = "Wang & Ji 2024 (FedAU, ICLR)"

# --- cut-off geometric distribution ----------------------------------------------------------
CUTOFF_MEAN = (1 - (1 - p) ** K) / p
CUTOFF_VARIANCE = (1 - p) / p**2 - (2 * K - 1) * (1 - p) ** K / p - (1 - p) ** (2 * K) / p**2

SERIES_TERMS = 40
"""Terms of the small-``Kp`` series of the cut-off variance (each at most ``(2Kp)^n/n!``)."""


def _one_minus_power(p_n, K_cut):
    r""":math:`1-(1-p)^K=-\mathrm{expm1}(K\,\mathrm{log1p}(-p))`, accurate to a few ulps."""
    return -np.expm1(K_cut * np.log1p(-p_n))


def _cutoff_mean_stable(*, p, K_cut):
    r"""Stable form of :data:`CUTOFF_MEAN`: :math:`-\mathrm{expm1}(K\,\mathrm{log1p}(-p))/p`
    (no cancellation for :math:`p\to0`, where the mean tends to :math:`K`)."""
    p_n, K_cut = np.asarray(p, float), np.asarray(K_cut, float)
    return _one_minus_power(p_n, K_cut) / p_n


def _cutoff_variance_series(p_n, K_cut):
    r"""Taylor series of :data:`CUTOFF_VARIANCE` in :math:`p`: expanding the binomials,

    .. math:: \mathrm{Var}=\sum_{n=3}^{2K}(-1)^n\Big[(2K-1)\binom K{n-1}p^{n-1}
              -\binom{2K}np^n\Big]/p^2

    (the coefficients of :math:`p^0,p^1,p^2` of the numerator vanish). Terms are built by
    the ratio recurrences of the binomials and vanish beyond :math:`n=2K`; for
    :math:`Kp\le1/2` the :math:`n`-th term is below :math:`(2Kp)^n/n!`, so
    ``SERIES_TERMS`` terms reach float64 accuracy."""
    b = K_cut * (2 * K_cut - 1) * p_n**2  # C(2K, 2) p^2
    c = K_cut * p_n  # C(K, 1) p
    total = np.zeros(np.broadcast_shapes(p_n.shape, K_cut.shape))
    for n in range(3, SERIES_TERMS + 1):
        b = b * np.maximum(2 * K_cut - n + 1, 0) * p_n / n  # C(2K, n) p^n
        c = c * np.maximum(K_cut - n + 2, 0) * p_n / (n - 1)  # C(K, n-1) p^(n-1)
        total = total + (-1) ** n * ((2 * K_cut - 1) * c * p_n - b) / p_n**2
    return total


def _cutoff_variance_stable(*, p, K_cut):
    r"""Stable form of :data:`CUTOFF_VARIANCE` (equal to it; tested against exact rational
    arithmetic). The published form subtracts terms of size :math:`1/p^2` whose difference is
    :math:`O(K^3p)`; for :math:`Kp\le1/2` the series :func:`_cutoff_variance_series` is used,
    and for :math:`K=1` (where it is exactly 0);
    otherwise the published numerator :math:`(1-p)-(2K-1)p\,r-r^2` with
    :math:`r=(1-p)^K=\exp(K\,\mathrm{log1p}(-p))` (its cancellation is then at most a
    factor of about 40)."""
    p_n, K_cut = np.broadcast_arrays(np.asarray(p, float), np.asarray(K_cut, float))
    small = (K_cut * p_n <= 0.5) | (K_cut == 1)  # K = 1: the series is exactly 0
    r = np.exp(K_cut * np.log1p(-p_n))
    closed = ((1 - p_n) - (2 * K_cut - 1) * p_n * r - r * r) / p_n**2
    series = _cutoff_variance_series(np.where(small, p_n, 0.5), np.where(small, K_cut, 1.0))
    return np.where(small, series, closed)


cutoff_mean = register(
    Theorem(
        "fedau.cutoff_geometric.mean",
        title="FedAU cut-off geometric mean",
        reference=_REF + ", proof of Theorem 3 (cut-off geometric distribution)",
        kind="exact",
        terms={"mean": CUTOFF_MEAN},
        statement="E[min(Geom(p), K)] = (1 - (1-p)^K)/p",
        numeric={"mean": _cutoff_mean_stable},
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
        numeric={"variance": _cutoff_variance_stable},
    )
)


@declare(p_n=Array(low=0.0, high=1.0, low_open=True), K_cut=Size())
def cutoff_geometric_pmf(p_n, K_cut: int) -> np.ndarray:
    r"""Law of :math:`S=\min(G,K)`, :math:`G\sim\mathrm{Geom}(p)` on :math:`\{1,2,..\}`:
    :math:`\Pr\{S=k\}=p(1-p)^{k-1}` for :math:`k<K` and :math:`(1-p)^{K-1}` for :math:`k=K`
    (Wang & Ji 2024, proof of Theorem 3). Returns ``[..., K]`` (entry ``k-1`` is
    :math:`\Pr\{S=k\}`) for ``p_n [...]`` in (0, 1]. Exact."""
    check_bytes(16 * p_n.size * K_cut, "cutoff_geometric_pmf",
                what=f"{p_n.size} x {K_cut} probabilities", fixes="a smaller K_cut")  # fmt: skip
    q = p_n[..., None]
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


@declare(
    omega_n=Array(ndim=1, low=0.0),
    p_n=Array(shape=("omega_n[0]",), low=0.0, high=1.0, low_open=True),
)
def effective_weights(omega_n, p_n) -> np.ndarray:
    r"""FedAU Theorem 1 (informal; exact at convergence): with time-constant weights
    :math:`\omega_n` and :math:`\mathbb I_t^n\sim\mathrm{Bern}(p_n)`, Algorithm 1 minimises
    :math:`h=\sum_n\frac{\omega_np_n}PF_n`, :math:`P=\sum_n\omega_np_n`. Returns the weights
    ``[N]`` of :math:`h`; :math:`\omega_n=1/p_n` gives the uniform target :math:`1/N`.
    One meaning with CA-Fed (4)'s :func:`fedtheory.bounds.divergences.effective_weights`
    (:math:`q=\omega`, :math:`\pi=p`: the weight of each client in the objective the
    algorithm minimises; tested equal), here as FedAU Theorem 1's statement."""
    owner, w, q = "effective_weights", omega_n, p_n
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

# --- Lemma B.3.3 (general descent lemma) ------------------------------------------------------
f_x, W_phi, S_omega = symbol("f_tilde"), symbol("phi_gap"), symbol("sum_p_omega_sq")
grad_sq, delta2_t = symbol("grad_sq"), symbol("delta2_tilde")
lemma_b33 = register(
    Theorem(
        "fedau.lemmaB33",
        title="FedAU Lemma B.3.3",
        reference=_REF + ", Lemma B.3.3 (general descent lemma; constants from the ICLR slides)",
        kind="upper bound",
        terms={
            "start": f_x,
            "weight_mismatch": 3
            * gamma
            * eta
            * I
            * N
            / 2
            * (15 * L**2 * I * gamma**2 * sigma2 + sp.Rational(27, 8) * delta2_t)
            * W_phi,
            "drift": sp.Rational(5, 2) * gamma**3 * eta * L**2 * I**2 * (sigma2 + 6 * I * delta2_t),
            "variance": gamma**2
            * eta**2
            * L
            * I
            / N**2
            * (sp.Rational(17, 16) * sigma2 + sp.Rational(27, 8) * I * delta2_t)
            * S_omega,
            "descent": gamma
            * eta
            * I
            * grad_sq
            * (
                sp.Rational(81, 16) * N * W_phi
                + 15 * L**2 * I**2 * gamma**2
                + sp.Rational(27, 8) * gamma * eta * L * I * S_omega / N**2
                - sp.Rational(1, 4)
            ),
        },  # fmt: skip
        conditions=[
            Condition("gamma <= 1/(4 sqrt(15) L I)", gamma, "<=", 1 / (4 * sp.sqrt(15) * L * I)),
            Condition("gamma eta <= 1/(4 L I)", gamma * eta, "<=", 1 / (4 * L * I)),
        ],
        statement="E_t[f~(x_{t+1})] <= f~(x_t) + (3 gamma eta I N/2)(15 L^2 I gamma^2 sigma^2 "
        "+ 27 delta~^2/8) W_phi + (5 gamma^3 eta L^2 I^2/2)(sigma^2 + 6 I delta~^2) + "
        "(gamma^2 eta^2 L I/N^2)(17 sigma^2/16 + 27 I delta~^2/8) S_omega + gamma eta I "
        "[81 N W_phi/16 + 15 L^2 I^2 gamma^2 + 27 gamma eta L I S_omega/(8 N^2) - 1/4] "
        "||grad f~(x_t)||^2, W_phi = sum_n (p_n omega_n/N - phi_n)^2, "
        "S_omega = sum_n p_n omega_n^2",
    )
)


@dataclass(frozen=True)
class DescentStep:
    r"""One round of FedAU's Algorithm 1 on quadratic clients, exactly (see
    :func:`quadratic_descent_step`), with Lemma B.3.3's inputs."""

    expected_next: float  # E_t[f~(x_{t+1})]
    lemma_inputs: dict  # keyword arguments of lemma_b33.evaluate


@declare(
    e=Array(ndim=2),
    x=Array(shape=("e[1]",)),
    L=Real(0.0, low_open=True),
    gamma=Real(0.0, low_open=True),
    eta=Real(0.0, low_open=True),
    I=Size(),
    sigma2=Real(0.0),
    p=Array(shape=("e[0]",), low=0.0, high=1.0, low_open=True),
    omega=Array(shape=("e[0]",), low=0.0),
    phi=Probabilities(size="e[0]"),
)
def quadratic_descent_step(
    e, x, *, L: float, gamma: float, eta: float, I: int, sigma2: float, p, omega, phi
) -> DescentStep:
    r"""Exact :math:`\mathbb E_t[\tilde f(x_{t+1})]` for one round of FedAU's Algorithm 1
    (Wang & Ji 2024) on clients :math:`F_n(x)=\frac L2\|x-e_n\|^2` (``e [N, d]``) from
    ``x [d]``, with :math:`\mathbb I_t^n\sim\mathrm{Bern}(p_n)`, weights ``omega [N]``,
    :math:`I` local SGD steps of size :math:`\gamma` with isotropic gradient noise of total
    variance :math:`\sigma^2`, and :math:`\tilde f=\sum_n\varphi_nF_n` (``phi`` on the
    simplex). Each update is affine in :math:`x` and the noise:
    :math:`\Delta^n=(a^I-1)(x-e_n)-\gamma\sum_ia^{I-1-i}\xi_i`, :math:`a=1-\gamma L`, so
    :math:`\mathbb E\tilde f(x_{t+1})=\tilde f(\mu)+\frac L2\operatorname{tr}\mathrm{Cov}`.
    Exact. These clients satisfy Assumptions 1-3 with :math:`\tilde\delta^2=
    L^2\max_n\|e_n-\bar e_\varphi\|^2`; ``lemma_inputs`` holds that and the other inputs
    of ``lemma_b33``."""
    owner = "quadratic_descent_step"
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: refuse_non_finite below
        expected, inputs = _descent_step(e, x, L, gamma, eta, I, sigma2, p, omega, phi)
    scales = {"e": e, "x": x, "L": L, "gamma": gamma, "eta": eta, "sigma2": sigma2, "omega": omega}
    refuse_non_finite(expected, owner, scales)
    return DescentStep(expected, inputs)


def _geometric_sum(log_ratio: float, terms: int) -> float:
    r""":math:`\sum_{i<I}r^i=(r^I-1)/(r-1)` for :math:`r=e^{\ell}` (``log_ratio`` :math:`\ell`,
    ``-inf`` for :math:`r=0`), in ``expm1`` form (no cancellation for :math:`r` near 1, no
    loop over the terms)."""
    return (
        float(terms) if log_ratio == 0 else float(np.expm1(terms * log_ratio) / np.expm1(log_ratio))
    )


def _descent_step(e, x, L, gamma, eta, I, sigma2, p, omega, phi) -> tuple[float, dict]:  # noqa: E741
    """:func:`quadratic_descent_step` on checked inputs (numpy floats: overflow gives inf)."""
    n_clients = e.shape[0]
    L, gamma, eta, sigma2 = (np.float64(v) for v in (L, gamma, eta, sigma2))
    a = 1.0 - gamma * L
    m = (a**I - 1.0) * (x - e)  # [N, d] mean update of each client
    v = gamma**2 * sigma2 * _geometric_sum(2.0 * np.log(np.abs(a)), I)  # noise variance of Delta
    mean = x + eta / n_clients * np.einsum("n,nd->d", p * omega, m)
    m2 = np.sum(m**2, axis=1)  # [N]
    trace_cov = (eta / n_clients) ** 2 * float(np.sum(omega**2 * (p * (m2 + v) - p**2 * m2)))
    center = phi @ e
    spread = 0.5 * L * float(phi @ np.sum((e - center) ** 2, axis=1))
    expected = 0.5 * L * float(np.sum((mean - center) ** 2)) + spread + 0.5 * L * trace_cov
    inputs = {
        "f_tilde": 0.5 * L * float(np.sum((x - center) ** 2)) + spread,
        "phi_gap": float(np.sum((p * omega / n_clients - phi) ** 2)),
        "sum_p_omega_sq": float(np.sum(p * omega**2)),
        "grad_sq": L**2 * float(np.sum((x - center) ** 2)),
        "delta2_tilde": L**2 * float(np.max(np.sum((e - center) ** 2, axis=1))),
        "gamma": float(gamma), "eta": float(eta), "I": I, "L": float(L), "N": n_clients,
        "sigma2": float(sigma2),
    }  # fmt: skip
    return expected, inputs


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


@declare(p_n=Array(ndim=1, low=0.0, high=1.0, low_open=True), K_cut=Size(), rounds=Size())
def weight_error_bound(p_n, K_cut: int, rounds: int) -> float:
    r"""Explicit upper bound on the weight error
    :math:`\frac1{NT}\sum_{t=0}^{T-1}\sum_n\mathbb E(p_n\omega_t^n-1)^2` from the proof of
    FedAU Theorem 3: the round :math:`t=0` contributes :math:`(1-p_n)^2` exactly
    (:math:`\omega_0^n=1`), each :math:`t\ge1` at most :math:`2K(1-p_n)/t+(1-p_n)^{2K}`."""
    owner, q = "weight_error_bound", p_n
    check_bytes(32 * rounds * q.size, owner, what=f"{rounds} rounds x {q.size} clients",
                fixes="fewer rounds")  # fmt: skip
    ts = np.arange(1, rounds)[:, None]  # [T-1, 1]
    later = theorem3_per_round.evaluate(p=q[None, :], K_cut=K_cut, t=ts).total if rounds > 1 else 0
    return float(((1 - q) ** 2 + np.sum(later, axis=0)).sum() / (q.size * rounds))


@declare(
    omega=Array(ndim=3, low=0.0, min_size=0),
    p_n=Array(shape=("omega[2]",), low=0.0, high=1.0, low_open=True, min_size=0),
)
def weight_error_measured(p_n, omega) -> np.ndarray:
    r"""Measured weight error :math:`\frac1{NT}\sum_{t,n}(p_n\omega_t^n-1)^2` of weights
    ``omega [R, T, N]`` (e.g. FedAU's Algorithm 2 along simulated runs) for participation
    probabilities ``p_n [N]``; returns ``[R]``. Its mean over replicates estimates the
    weight-error term of FedAU Theorem 2 (Wang & Ji 2024; the ``weight_error`` argument),
    which Theorem 3 bounds from above. Exact for the given weights (an empirical quantity)."""
    with np.errstate(over="ignore"):  # reported below, naming omega
        out = np.mean((p_n * omega - 1.0) ** 2, axis=(1, 2))
    refuse_non_finite(out, "weight_error_measured", {"omega": omega})
    return out


@declare(p_n=Array(low=0.0, high=1.0, low_open=True), K_cut=Size(), rounds=Size())
def weight_error_exact(p_n, K_cut: int, rounds: int) -> np.ndarray:
    r"""Exact :math:`\mathbb E[(p\,\omega_t-1)^2]` for :math:`t=0..T-1` under Bernoulli(p)
    participation and FedAU Algorithm 2 with cutoff :math:`K` (``[..., T]`` for ``p_n [...]``).

    Algorithm 2 records an interval when the client participated in the previous round or the
    gap counter reaches :math:`K`; :math:`\omega_t` is the mean of the recorded intervals, or
    1 before the first one. The recorded intervals are i.i.d. with the cut-off geometric law
    :math:`f(l)=p(1-p)^{l-1}` (:math:`l<K`), :math:`f(K)=(1-p)^{K-1}`, and the gap counter at
    round :math:`t` is :math:`t-S_m` (the intervals tile the rounds), so with
    :math:`f^{*m}` the law of the sum :math:`S_m` of :math:`m` intervals and
    :math:`P(L>c)=(1-p)^c`,

    .. math:: \mathbb E[(p\omega_t-1)^2]=\sum_{c=0}^{K-1}(1-p)^c
              \sum_{m\ge0}f^{*m}(t-c)\,\bigl(p\,\tfrac{t-c}{m}-1\bigr)^2

    (the :math:`m=0` term is :math:`(p-1)^2` at :math:`t-c=0`). Cost: :math:`O(T^2K)`
    multiply-adds in compiled convolutions per value of :math:`p` and :math:`O(T)` memory
    (``weight_error_exact(0.1, 50, 5000)`` takes seconds); the previous dynamic programme over
    (intervals, sum, gap counter) cost :math:`O(T^3K)` time and :math:`O(T^2K)` memory.
    """
    owner, q, T = "weight_error_exact", p_n, rounds
    what = f"{q.size} x {T} rounds and the renewal sums"
    check_bytes(8 * q.size * T + 64 * T, owner, what=what, fixes="fewer rounds")
    K = min(K_cut, T)  # a cutoff K_cut >= T costs as K_cut = T (_weight_error_renewal)
    work = q.size * T * T * (K + 1) / 2  # multiply-adds of the convolutions
    fixes = "fewer rounds or a smaller K_cut (the cost grows with T^2 min(K_cut, T))"
    check_seconds(seconds(flops=2 * work), owner, fixes=fixes if K > 1 else "fewer rounds",
                  what=f"{q.size} x {T}^2 x {K + 1} / 2 multiply-adds, T = rounds = {T}, "
                  f"min(K_cut, T) = {K}", units=work, unit="multiply-add",
                  probe=_multiply_add_seconds)  # fmt: skip
    out = np.stack([_weight_error_renewal(p, K_cut, T) for p in q.reshape(-1)])
    return out.reshape(q.shape + (T,))


def _multiply_add_seconds() -> float:
    """Seconds a multiply-add of :func:`_weight_error_renewal` takes on this machine now."""
    T, K = 1500, 4
    return marginal_seconds(lambda m: _weight_error_renewal(0.5, K, T * m), 1) / (
        ((2 * T) ** 2 - T**2) * (K + 1) / 2
    )


def _weight_error_renewal(p: float, K: int, T: int) -> np.ndarray:
    """:func:`weight_error_exact` for one ``p``, ``[T]`` (the renewal sum in its docstring).
    Intervals and gaps longer than ``T - 1`` rounds never show in rounds ``0..T-1``: a
    cutoff ``K >= T`` gives the uncut law there, so only ``min(K, T)`` terms are built."""
    stay = 1.0 - p
    cut = K < T
    K = min(K, T)
    f = np.zeros(K + 1)  # f[l]: law of one recorded interval, l = 1..K
    f[1:K] = p * stay ** np.arange(K - 1)
    f[K] = stay ** (K - 1) if cut else p * stay ** (K - 1)
    s = np.arange(T, dtype=float)
    weighted = np.zeros(T)  # sum_m f^{*m}(s) (p s / m - 1)^2
    weighted[0] = (p - 1.0) ** 2  # m = 0: omega = 1
    law = f[1 : min(K, T - 1) + 1].copy()  # f^{*m} on its support [m, min(mK, T-1)], m = 1
    for m in range(1, T):
        end = m + law.size
        weighted[m:end] += law * (p * s[m:end] / m - 1.0) ** 2
        if m + 1 >= T:
            break
        law = np.convolve(law, f[1:])[: T - (m + 1)]  # f^{*(m+1)} from s = m + 1
    return np.convolve(weighted, stay ** np.arange(K))[:T]  # sum_c P(L > c) weighted(t - c)


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


@declare(
    p_min=Real(0.0, 1.0, low_open=True, high_open=True),
    T=Integer(2),
    L=Real(0.0, low_open=True),
    I=Integer(1),
    F_gap=Real(0.0, low_open=True),
    N=Integer(1),
    Q=Real(0.0, low_open=True),
    delta2=Real(0.0),
    sigma2=Real(0.0),
)
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
    owner = "corollary4_choices"
    if I * delta2 + sigma2 <= 0:
        raise ParameterError(
            f"The 'sigma2' parameter of {owner} must give I delta2 + sigma2 in (0, inf). "
            "Got 0 instead."
        )
    log_c = -2.0 * math.log1p(-p_min)
    K_real = math.log(T) / log_c
    if not math.isfinite(K_real):  # a denormal p_min
        raise ParameterError(
            f"The 'p_min' parameter of {owner} must be large enough for K = ln T / "
            f"(-2 ln(1 - p_min)) to be finite. Got {p_min:g} instead."
        )
    inputs = dict(p_min=p_min, T=T, L=L, I=I, F_gap=F_gap, N=N, Q=Q, delta2=delta2, sigma2=sigma2)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        products = np.array([L * I * math.sqrt(T), Q * (I * delta2 + sigma2) * L * I * T])
    if not np.all(np.isfinite(products)):
        refuse_non_finite(products, owner, inputs)
    gamma_ = min(1 / (L * I * math.sqrt(T)), 1 / (4 * math.sqrt(15) * L * I))
    ge = min(
        math.sqrt(F_gap * N / (Q * (I * delta2 + sigma2) * L * I * T)),
        1 / (2 * L * I),
        N / (27 * L * I * Q),
    )
    if not gamma_ > 0 or not ge > 0:  # underflow to 0: the choices are not representable
        refuse_non_finite(math.inf, owner, inputs)
    out = Corollary4Choices(K_real, math.ceil(K_real), gamma_, ge, ge / gamma_, 1 / log_c)
    refuse_non_finite(out, owner, inputs)
    return out
