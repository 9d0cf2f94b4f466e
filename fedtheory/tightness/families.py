r"""Instance families of the catalogue's upper bounds whose measured side is cheap.

Each family keeps its bound's hypotheses true on its whole box and measures exactly where
possible:

* ``cafed.theorem1`` / ``cafed.theorem3`` (Rodio et al. 2023, Theorems 1 and 3): quadratic
  clients :math:`F_k(w)=\frac12(w-c_k)^\top A_k(w-c_k)` (so :math:`\kappa\ge1` holds by
  construction; the smallest eigenvalue is normalised to 1 and the first minimiser to 0, as
  the ratio is invariant under both), any target :math:`\alpha` and effective weights
  :math:`p` in the open simplex (every such :math:`p` is :math:`\pi\odot q/\pi^\top q` for
  some availability and weights), any point :math:`w`; measured: the exact :math:`F(w)-F^*`
  (:func:`fedtheory.bounds.cafed.decomposition_constants`).
* ``divergences.tv_chi_square``: measured :math:`d_{TV}(\alpha,p)`, bound
  :math:`\sqrt{\chi^2_{\alpha\|p}}/2`.
* ``fedau.theorem3.per_round`` (Wang & Ji 2024, proof of Theorem 3): measured the exact
  :math:`\mathbb E[(p\,\omega_t-1)^2]` of FedAU's Algorithm 2
  (:func:`fedtheory.bounds.fedau.weight_error_exact`).
* ``e3cs.regret`` / ``e3cs.regret_optimal`` (Huang et al. 2022, eqs. (27)/(28)): E3CS with
  exact-marginal (systematic) sampling, so the run is the theorem's set-up, on Bernoulli
  success matrices over short horizons; measured: the regret (26) of every replicate
  (:attr:`fedtheory.sim.SelectionRecord.regret`), Monte Carlo over replicates.
* ``fedlaavg.example1.fedlaavg_bound`` (Yan et al. 2020, arXiv Theorem 1): FedLaAvg on
  Example 1 with :math:`\gamma=1/(2\sqrt T)`; measured the exact
  :math:`\min_{0\le t\le T}(x_t-x^*)^2` (:func:`fedlaavg_example1_error`).

``FAMILIES`` maps each catalogue key to its family (and, once registered, each user family:
:func:`fedtheory.tightness.register`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from importlib import import_module

import numpy as np

from fedtheory import papers
from fedtheory.bounds import cafed, divergences, e3cs, fedau, fedlaavg
from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import Array, Size, declare, refuse_non_finite
from fedtheory.constraints import Integer as IntegerIn
from fedtheory.constraints import Real as RealIn
from fedtheory.tightness.family import Family, Integer, Measurement, Real
from fedtheory.verdict import mean_confidence_interval

KAPPA_MAX = 100.0
"""Largest condition number of the CA-Fed family (eigenvalues in ``[1, KAPPA_MAX]``)."""
LOG_WEIGHT_RANGE = 2.0
"""CA-Fed family: :math:`\\log_{10}(\\alpha_k/\\alpha_0)` and :math:`\\log_{10}(p_k/p_0)` lie in
``[-LOG_WEIGHT_RANGE, LOG_WEIGHT_RANGE]``."""
WEIGHT_FLOOR = 0.01
"""Raw simplex coordinates lie in ``[WEIGHT_FLOOR, 1]`` (so every weight is positive)."""
E3CS_REPLICATES = 32
"""Replicates of the E3CS families (one success matrix and one selection run each)."""


# --- CA-Fed Theorems 1 and 3 -----------------------------------------------------------------
def _cafed_reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    n, d = ints["N"], ints["d"]
    out = [Real(f"u[{k},{j}]", 0.0, 1.0) for k in range(n) for j in range(d) if k + j > 0]
    out += [Real(f"theta[{k}]", 0.0, math.pi) for k in range(n)] if d == 2 else []
    out += [Real(f"c[{k},{j}]", -1.0, 1.0) for k in range(1, n) for j in range(d)]
    out += [Real(f"log_a[{k}]", -LOG_WEIGHT_RANGE, LOG_WEIGHT_RANGE) for k in range(1, n)]
    out += [Real(f"log_b[{k}]", -LOG_WEIGHT_RANGE, LOG_WEIGHT_RANGE) for k in range(1, n)]
    out += [Real("beta", -4.0, 4.0)] + ([Real("zeta", -4.0, 4.0)] if d == 2 else [])
    return tuple(out)


def _cafed_parts(ints: Mapping[str, int], x) -> dict:
    r"""The CA-Fed family's instance at a point, in the paper's symbols:
    ``A [N, d, d]``, client minimisers ``c [N, d]`` (:math:`w_k^*`), ``alpha``, ``p`` ``[N]``
    and the coordinates ``beta``, ``zeta`` of :math:`w-w_B^*` (see :func:`_cafed_instance`)."""
    n, d = ints["N"], ints["d"]
    x = np.asarray(x, dtype=float)
    i = 0

    def take(m):
        nonlocal i
        i += m
        return x[i - m : i]

    eig = KAPPA_MAX ** np.concatenate([[0.0], take(n * d - 1)]).reshape(n, d)  # [N, d]
    if d == 2:
        th = take(n)
        rot = np.stack(
            [np.stack([np.cos(th), -np.sin(th)], -1), np.stack([np.sin(th), np.cos(th)], -1)], -2
        )  # [N, 2, 2]
        A = np.einsum("nij,nj,nkj->nik", rot, eig, rot)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
    else:
        A = eig[:, :, None]  # [N, 1, 1]
    c = np.vstack([np.zeros((1, d)), take((n - 1) * d).reshape(n - 1, d)])
    a = 10.0 ** np.concatenate([[0.0], take(n - 1)])
    b = 10.0 ** np.concatenate([[0.0], take(n - 1)])
    beta = float(take(1)[0])
    zeta = float(take(1)[0]) if d == 2 else 0.0
    return {"A": A, "c": c, "alpha": a / a.sum(), "p": b / b.sum(), "beta": beta, "zeta": zeta}


def _cafed_instance(ints: Mapping[str, int], x):
    r"""The CA-Fed family's instance ``(problem, p [N], w [d])`` at a point.

    Client :math:`k` has eigenvalues :math:`\kappa_{\max}^{u_{kj}}` with :math:`u_{00}=0`
    (the smallest eigenvalue is 1 and belongs to client 0: the ratio is invariant under
    scaling every :math:`A_k` and under relabelling the clients, so :math:`\mu=1`,
    :math:`L\le\kappa_{\max}`), rotated by :math:`\theta_k` when :math:`d=2`, and
    minimiser :math:`c_k` with :math:`c_0=0` and :math:`c_k\in[-1,1]^d` (the ratio is
    invariant under translating and scaling every :math:`c_k`);
    :math:`\alpha_k\propto10^{a_k}`, :math:`p_k\propto10^{b_k}` with :math:`a_0=b_0=0`,
    :math:`a_k,b_k\in[-2,2]`; the point is :math:`w=w_B^*+\beta s+\zeta s^\perp` with
    :math:`s=w_B^*-w^*` and, when :math:`d=2`, :math:`s^\perp` its rotation by a right angle
    (:math:`\beta=1` is the worst point of the two-client instance of
    :func:`theorem3_attaining_point`)."""
    from fedtheory.problems import QuadraticProblem  # torch: on the first evaluation only

    parts = _cafed_parts(ints, x)
    problem = QuadraticProblem(parts["A"], parts["c"], alpha=parts["alpha"])
    w_star, _ = problem.optimum()
    w_b, _ = problem.optimum(parts["p"])
    shift = w_b - w_star
    w = w_b + parts["beta"] * shift
    if ints["d"] == 2:
        w = w + parts["zeta"] * np.array([-shift[1], shift[0]])
    return problem, parts["p"], w


def _cafed_evaluate(ints, x, seed) -> Measurement:
    problem, p, w = _cafed_instance(ints, x)
    c = cafed.decomposition_constants(problem, w, p)
    loss = float(problem.loss(w))
    magnitude = max(abs(loss), abs(c.F_star), abs(float(problem.loss(w, p))), abs(c.F_B_star))
    constants = {"N": ints["N"], "d": ints["d"], **c.as_kwargs()}
    constants["gap_B"] = float(constants["gap_B"])
    return Measurement(loss - c.F_star, constants, magnitude=magnitude)


def _cafed_describe(ints, x) -> dict:
    """The instance in Rodio et al.'s symbols: A_k, the client minimisers w_k^*, alpha, p, w."""
    problem, p, w = _cafed_instance(ints, x)
    parts = _cafed_parts(ints, x)
    A = parts["A"][:, 0, 0] if ints["d"] == 1 else parts["A"]
    return {
        "N": ints["N"],
        "d": ints["d"],
        "A_k": A.tolist(),
        "w_k^*": parts["c"].tolist(),
        "alpha": parts["alpha"].tolist(),
        "p": p.tolist(),
        "w": w.tolist(),
    }


_CAFED_INTEGERS = (
    Integer("N", 2, 5, "clients"),
    Integer("d", 1, 2, "dimension"),
)


@declare(delta=RealIn(0.0, 0.49, low_open=True))
def theorem1_near_tight_point(delta: float) -> tuple[dict, np.ndarray]:
    r"""A point of the ``cafed.theorem1`` family where measured / bound is
    :math:`(1-4\delta^2)/(1-2\delta^2)` (:math:`\to1` as :math:`\delta\to0`).

    Two clients in one dimension, :math:`A_k=1` (:math:`\kappa=1`), :math:`c=(0,1)`,
    :math:`\alpha=(\frac12,\frac12)`, :math:`p=(\frac12-\delta,\frac12+\delta)`,
    :math:`w=2w_B^*-w^*=\frac12+2\delta`: :math:`F(w)-F^*=2\delta^2`,
    :math:`F_B(w)-F_B^*=\delta^2/2`, :math:`\chi^2=4\delta^2/(1-4\delta^2)`,
    :math:`\Gamma=\frac18`. So Theorem 1 is tight: the supremum of the ratio is 1
    (approached, attained at no :math:`\delta>0` of this instance)."""
    log_b = math.log10((0.5 + delta) / (0.5 - delta))
    return {"N": 2, "d": 1}, np.array([0.0, 1.0, 0.0, log_b, 1.0])


@declare(delta=RealIn(0.0, 0.49, low_open=True))
def theorem3_attaining_point(delta: float) -> tuple[dict, np.ndarray]:
    r"""A point of the ``cafed.theorem3`` family where measured = bound exactly.

    Two clients in one dimension, :math:`A_k=1`, :math:`c=(0,1)`,
    :math:`p=(\frac12,\frac12)` (:math:`w_B^*=\frac12`), :math:`\alpha=(\frac12+\delta,
    \frac12-\delta)` (:math:`w^*=\frac12-\delta`, :math:`d_{TV}=\delta`),
    :math:`w=\frac12+\delta`: :math:`F(w)-F^*=2\delta^2=2\cdot\frac{\delta^2}2+
    8\delta^2\cdot\frac18` with :math:`\Gamma'=\frac18`. So Theorem 3 is attained (its
    worst ratio is exactly 1)."""
    log_a = math.log10((0.5 - delta) / (0.5 + delta))
    return {"N": 2, "d": 1}, np.array([0.0, 1.0, log_a, 0.0, 1.0])


_CAFED_DESCRIPTION = (
    "quadratic clients (N <= 5, d <= 2, kappa <= 100), any alpha, p in the open simplex "
    "(ratios within 100), any w; measured: exact F(w) - F^*"
)
CAFED_THEOREM1 = Family(
    cafed.theorem1,
    _CAFED_DESCRIPTION,
    _CAFED_INTEGERS,
    _cafed_reals,
    _cafed_evaluate,
    tightness="tight: sup ratio = 1, approached at kappa = 1 (theorem1_near_tight_point: "
    "ratio (1 - 4 delta^2)/(1 - 2 delta^2))",
    supremum=1.0,
    instance=_cafed_describe,
)
CAFED_THEOREM3 = Family(
    cafed.theorem3,
    _CAFED_DESCRIPTION,
    _CAFED_INTEGERS,
    _cafed_reals,
    _cafed_evaluate,
    tightness="attained: ratio exactly 1 at kappa = 1 (theorem3_attaining_point)",
    supremum=1.0,
    instance=_cafed_describe,
)


# --- d_TV <= sqrt(chi^2)/2 -------------------------------------------------------------------
def _simplex_reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    n = ints["N"]
    return tuple(Real(f"{s}[{k}]", WEIGHT_FLOOR, 1.0) for s in "ab" for k in range(n))


def _tv_chi_square(ints, x, seed) -> Measurement:
    n = ints["N"]
    alpha, p = x[:n] / x[:n].sum(), x[n:] / x[n:].sum()
    chi2 = divergences.chi_square(alpha, p)
    tv = divergences.total_variation(alpha, p)
    return Measurement(tv, {"N": n, "chi2": chi2, "d_tv": tv}, magnitude=1.0)


def _tv_describe(ints, x) -> dict:
    n = ints["N"]
    return {"N": n, "alpha": (x[:n] / x[:n].sum()).tolist(), "p": (x[n:] / x[n:].sum()).tolist()}


TV_CHI_SQUARE = Family(
    divergences.tv_chi_square,
    "alpha, p in the open simplex (N <= 8 clients); measured: d_TV(alpha, p)",
    (Integer("N", 2, 8, "clients"),),
    _simplex_reals,
    _tv_chi_square,
    tightness="attained: ratio exactly 1 when |alpha_k - p_k|/p_k is constant (Cauchy-Schwarz "
    "equality), e.g. p = (1/2, 1/2), alpha = (1/2 + delta, 1/2 - delta)",
    supremum=1.0,
    instance=_tv_describe,
)


# --- FedAU Theorem 3, per round --------------------------------------------------------------
def _fedau(ints, x, seed) -> Measurement:
    K_cut, t, p = ints["K_cut"], ints["t"], float(x[0])
    measured = float(fedau.weight_error_exact(p, K_cut, t + 1)[t])
    return Measurement(measured, {"p": p, "K_cut": K_cut, "t": t}, magnitude=1.0)


FEDAU_PER_ROUND = Family(
    fedau.theorem3_per_round,
    "Bernoulli(p) participation, FedAU Algorithm 2 with cutoff K_cut <= 12, round 1 <= t <= 40; "
    "measured: exact E[(p omega_t - 1)^2]",
    (Integer("K_cut", 1, 12, "cutoff"), Integer("t", 1, 40, "round")),
    lambda ints: (Real("p", 1e-4, 1.0),),
    _fedau,
    tightness="tight as t -> infinity: with K_cut = 1, omega_t = 1 and the ratio is "
    "t(1 - p)/(t(1 - p) + 2) (-> 1 as p -> 0, t -> infinity; 40/42 at t = 40)",
    supremum=1.0,  # approached (the theorem's t is unbounded; this family stops at t = 40)
)


# --- E3CS (27) and (28) ----------------------------------------------------------------------
def _e3cs_reals(ints: Mapping[str, int], *, with_eta: bool) -> tuple[Real, ...]:
    head = [Real("eta", 0.01, 0.99)] if with_eta else []
    top = 1.0 if with_eta else 0.95  # (28) needs sum_t (k - K sigma_t) > 0
    return (
        *head,
        Real("c", 0.0, top),
        *(Real(f"rho[{i}]", 0.0, 1.0) for i in range(ints["K"])),
    )


@declare(
    K=Size(2),
    k=IntegerIn(1, "K"),
    T=Size(),
    rho=Array(shape=("K",), low=0.0, high=1.0),
    replicates=Size(2),
    seed=IntegerIn(0),
)
def e3cs_regret_samples(
    K: int, k: int, T: int, *, sigma: float, eta: float, rho, replicates: int, seed: int
) -> np.ndarray:
    r"""Regret (26) of E3CS (exact-marginal sampling, Huang et al. 2022, Algorithm 1) on
    ``replicates`` Bernoulli(:math:`\rho_i`) success matrices ``[R, T, K]``: one value per
    replicate, ``[R]`` (:math:`\mathrm{CEP}^*_T` of the best fixed allocation minus
    :math:`\sum_t\sum_ip_{i,t}x_{i,t}`); round :math:`t`'s randomness from ``seed``."""
    from fedtheory.availability import Bernoulli
    from fedtheory.sim import E3CS, run_selection

    x = Bernoulli(rho).sample(T, replicates=replicates, seed=seed).numpy()
    rec = run_selection(E3CS(k, sigma=sigma, eta=eta, sampler="systematic"), x, seed=seed)
    return rec.regret


def _e3cs_evaluate(optimal: bool):
    def evaluate(ints, x, seed) -> Measurement:
        K, k, T = ints["K"], ints["k"], ints["T"]
        head = 0 if optimal else 1
        c, rho = float(x[head]), x[head + 1 :]
        sigma = c * k / K
        S = float(e3cs.quota_sum(np.full(T, sigma), k=k, K=K))
        kw = {"K": K, "k": k, "sum_quota": S}
        eta = float(e3cs.optimal_eta.evaluate(**kw).total) if optimal else float(x[0])
        samples = e3cs_regret_samples(
            K, k, T, sigma=sigma, eta=eta, rho=rho, replicates=E3CS_REPLICATES, seed=seed
        )
        mean, low, high = mean_confidence_interval(samples, 0.95)
        constants = {"K": K, "k": k, "T": T, "sigma": sigma, "eta": eta, "sum_quota": S}
        return Measurement(mean, constants, (low, high), magnitude=float(np.abs(samples).max()))

    return evaluate


_E3CS_INTEGERS = (
    Integer("K", 2, 8, "clients"),
    Integer("k", 1, lambda ints: ints["K"], "selected per round"),
    Integer("T", 2, 40, "rounds"),
)
_E3CS_DESCRIPTION = (
    "K <= 8 clients, k <= K selected, T <= 40 rounds, quota sigma = c k/K, Bernoulli(rho_i) "
    f"successes; E3CS with exact-marginal sampling; measured: regret (26), mean of "
    f"{E3CS_REPLICATES} replicates (ratio: upper 95% confidence limit / bound)"
)


def _e3cs_describe(optimal: bool):
    """The instance in Huang et al.'s symbols: K, k, T, the quota sigma, eta (the optimal
    eta^* of (28) is computed, so not listed) and the success probabilities rho."""

    def describe(ints, x) -> dict:
        head = 0 if optimal else 1
        out = {**ints, "sigma": float(x[head]) * ints["k"] / ints["K"]}
        if not optimal:
            out["eta"] = float(x[0])
        return {**out, "rho": x[head + 1 :].tolist()}

    return describe


E3CS_REGRET = Family(
    e3cs.regret,
    _E3CS_DESCRIPTION + ", eta in [0.01, 0.99]",
    _E3CS_INTEGERS,
    lambda ints: _e3cs_reals(ints, with_eta=True),
    _e3cs_evaluate(optimal=False),
    monte_carlo=True,
    instance=_e3cs_describe(optimal=False),
)
E3CS_REGRET_OPTIMAL = Family(
    e3cs.regret_optimal,
    _E3CS_DESCRIPTION + ", eta = eta^* of (28), c <= 0.95",
    _E3CS_INTEGERS,
    lambda ints: _e3cs_reals(ints, with_eta=False),
    _e3cs_evaluate(optimal=True),
    monte_carlo=True,
    instance=_e3cs_describe(optimal=True),
)


# --- FedLaAvg on Example 1 -------------------------------------------------------------------
@declare(x0=RealIn(), t1=Size(), t2=Size(), T=Size(), e1=RealIn(), e2=RealIn())
def fedlaavg_example1_error(x0: float, t1: int, t2: int, T: int, *, e1=0.0, e2=1.0) -> float:
    r"""Exact :math:`\min_{0\le t\le T}(x_t-x^*)^2` of FedLaAvg (Yan et al. 2020, Algorithm 1,
    one available client per iteration, exact gradients) on Example 1 with
    :math:`\gamma=1/(2\sqrt T)`: :math:`x_{t+1}=x_t-\frac\gamma2(g_1+g_2)`, where client
    :math:`i(t)` (1 for the first :math:`t_1` iterations of each period, then 2) refreshes
    its cached gradient :math:`g_i=2(x_t-e_i)`; both caches start at 0 (FedLaAvg, Algorithms 1-2, as
    ``fedtheory.sim.FedLaAvg``). :math:`\hat x=\arg\min_{x_t}f(x_t)` includes :math:`x_0`,
    as the validation ``example1-algorithms`` does."""
    owner = "fedlaavg_example1_error"
    check_seconds(seconds(rounds=T), owner, what=f"{T} iterations of a Python loop",
                  fixes="a smaller T")  # fmt: skip
    x0, e1, e2 = np.float64(x0), np.float64(e1), np.float64(e2)
    reals = {"x0": x0, "e1": e1, "e2": e2}
    gamma, centre, e = 1 / (2 * math.sqrt(T)), (e1 + e2) / 2, (e1, e2)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: refuse_non_finite below
        x, cached, best = x0, [0.0, 0.0], (x0 - centre) ** 2
        for t in range(T):
            i = 0 if t % (t1 + t2) < t1 else 1
            cached[i] = 2 * (x - e[i])
            x = x - gamma * (cached[0] + cached[1]) / 2
            best = min(best, (x - centre) ** 2)
    refuse_non_finite(best, owner, reals)
    return float(best)


def _fedlaavg(ints, x, seed) -> Measurement:
    t1, t2, T, x0 = ints["t1"], ints["t2"], ints["T"], float(x[0])
    measured = fedlaavg_example1_error(x0, t1, t2, T)
    constants = {"x0": x0, "e1": 0.0, "e2": 1.0, "t1": t1, "t2": t2, "T": T}
    return Measurement(measured, constants, magnitude=max(1.0, x0**2))


FEDLAAVG_EXAMPLE1 = Family(
    fedlaavg.fedlaavg_bound,
    "Example 1 with e1 = 0, e2 = 1 (the ratio is invariant under x -> a x + b), blocks "
    "t1, t2 <= 20, horizon T <= 1000, x0 in [-20, 20]; measured: exact min_t (x_t - x^*)^2",
    (Integer("t1", 1, 20, "block 1"), Integer("t2", 1, 20, "block 2"), Integer("T", 1, 1000, "T")),
    lambda ints: (Real("x0", -20.0, 20.0),),
    _fedlaavg,
    tightness="at T = 1 the ratio is at most 1/2, attained at x0 = e1 (x_1 = (x0 + e1)/2; with "
    "a = |x0 - x^*|, the bound is 2a^2 >= 2 measured if 2a >= |e1 - e2|, else a^2 + (e1 - e2)^2/4 "
    "> 2a^2); no closed form for T > 1",
)

_CATALOGUE = (
    CAFED_THEOREM1,
    CAFED_THEOREM3,
    TV_CHI_SQUARE,
    FEDAU_PER_ROUND,
    E3CS_REGRET,
    E3CS_REGRET_OPTIMAL,
    FEDLAAVG_EXAMPLE1,
)
CATALOGUE_KEYS: set[str] = {f.key for f in _CATALOGUE}
"""The catalogue's families, with every registered paper's (a user family may not take one of
these keys)."""
FAMILIES: dict[str, Family] = {f.key: f for f in _CATALOGUE}
"""Every family by key: the catalogue's, each registered paper's (the ``FAMILIES`` of the
modules its record names under ``tightness``, :mod:`fedtheory.papers`), then those
registered by the user (``register``)."""


def _load(paper: papers.Paper) -> None:
    for module in map(import_module, paper.tightness):
        CATALOGUE_KEYS.update(f.key for f in module.FAMILIES)
        FAMILIES.update({f.key: f for f in module.FAMILIES})


papers.on_register(_load)
