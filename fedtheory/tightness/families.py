r"""Instance families of the catalogue's upper bounds whose measured side is cheap.

Each family keeps its bound's hypotheses true on its whole box and measures exactly where
possible:

* ``cafed.theorem1`` / ``cafed.theorem3`` (Rodio et al. 2023, Theorems 1 and 3): quadratic
  clients :math:`F_k(w)=\frac12(w-c_k)^\top A_k(w-c_k)` (so :math:`\kappa\ge1` holds by
  construction), any target :math:`\alpha` and effective weights :math:`p` in the open
  simplex (every such :math:`p` is :math:`\pi\odot q/\pi^\top q` for some availability and
  weights), any point :math:`w`; measured: the exact :math:`F(w)-F^*`
  (:func:`fedtheory.bounds.cafed.decomposition`).
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

``FAMILIES`` maps each catalogue key to its family.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from fedtheory.bounds import cafed, divergences, e3cs, fedau, fedlaavg
from fedtheory.params import (
    check_array,
    check_finite_result,
    check_int,
    check_real,
    check_seed,
    check_size,
)
from fedtheory.problems import QuadraticProblem
from fedtheory.tightness.family import Evaluation, Family, Integer, Real
from fedtheory.verdict import mean_confidence_interval

KAPPA_MAX = 100.0
"""Largest condition number of the CA-Fed family (eigenvalues in ``[1, KAPPA_MAX]``)."""
WEIGHT_FLOOR = 0.01
"""Raw simplex coordinates lie in ``[WEIGHT_FLOOR, 1]`` (so every weight is positive)."""
E3CS_REPLICATES = 32
"""Replicates of the E3CS families (one success matrix and one selection run each)."""


# --- CA-Fed Theorems 1 and 3 -----------------------------------------------------------------
def _cafed_reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    n, d = ints["N"], ints["d"]
    out = [Real(f"u[{k},{j}]", 0.0, 1.0) for k in range(n) for j in range(d)]
    out += [Real(f"theta[{k}]", 0.0, math.pi) for k in range(n)] if d == 2 else []
    out += [Real(f"c[{k},{j}]", -1.0, 1.0) for k in range(n) for j in range(d)]
    out += [Real(f"a[{k}]", WEIGHT_FLOOR, 1.0) for k in range(n)]
    out += [Real(f"b[{k}]", WEIGHT_FLOOR, 1.0) for k in range(n)]
    out += [Real("beta", -4.0, 4.0)] + ([Real("zeta", -4.0, 4.0)] if d == 2 else [])
    return tuple(out)


def _cafed_instance(ints: Mapping[str, int], x) -> tuple[QuadraticProblem, np.ndarray, np.ndarray]:
    r"""The CA-Fed family's instance ``(problem, p [N], w [d])`` at a point.

    Client :math:`k` has eigenvalues :math:`\kappa_{\max}^{u_{kj}}` (so
    :math:`\mu\ge1`, :math:`L\le\kappa_{\max}`), rotated by :math:`\theta_k` when
    :math:`d=2`, and minimiser :math:`c_k\in[-1,1]^d`; :math:`\alpha\propto a`,
    :math:`p\propto b`; the point is
    :math:`w=w_B^*+\beta s+\zeta s^\perp` with :math:`s=w_B^*-w^*` and, when :math:`d=2`,
    :math:`s^\perp` its rotation by a right angle (so :math:`(\beta,\zeta)` are the
    coordinates of :math:`w-w_B^*` in the basis :math:`(s,s^\perp)`; :math:`\beta=1` is the
    worst point of the two-client instance of :func:`theorem3_attaining_point`). The ratio is
    invariant under scaling all :math:`A_k` or all :math:`c_k`, hence the fixed boxes."""
    n, d = ints["N"], ints["d"]
    x = np.asarray(x, dtype=float)
    i = 0

    def take(m):
        nonlocal i
        i += m
        return x[i - m : i]

    eig = KAPPA_MAX ** take(n * d).reshape(n, d)  # [N, d]
    if d == 2:
        th = take(n)
        rot = np.stack(
            [np.stack([np.cos(th), -np.sin(th)], -1), np.stack([np.sin(th), np.cos(th)], -1)], -2
        )  # [N, 2, 2]
        A = np.einsum("nij,nj,nkj->nik", rot, eig, rot)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
    else:
        A = eig[:, :, None]  # [N, 1, 1]
    c = take(n * d).reshape(n, d)
    a, b = take(n), take(n)
    beta = take(1)[0]
    problem = QuadraticProblem(A, c, alpha=a / a.sum())
    p = b / b.sum()
    w_star, _ = problem.optimum()
    w_b, _ = problem.optimum(p)
    shift = w_b - w_star
    w = w_b + beta * shift
    if d == 2:
        w = w + take(1)[0] * np.array([-shift[1], shift[0]])
    return problem, p, w


def _cafed_evaluate(which: str):
    def evaluate(ints, x, seed) -> Evaluation:
        problem, p, w = _cafed_instance(ints, x)
        dec = cafed.decomposition(problem, w, p)
        res = getattr(dec, which)
        constants = {
            "N": ints["N"],
            "d": ints["d"],
            "kappa": problem.kappa,
            "gap_B": float(problem.loss(w, p) - problem.optimum(p)[1]),
            "chi2": divergences.chi_square(problem.alpha, p),
            "d_tv": divergences.total_variation(problem.alpha, p),
            "Gamma": problem.gamma(),
            "Gamma_prime": problem.gamma(p),
        }
        return Evaluation(float(dec.measured), float(res.total), constants)

    return evaluate


_CAFED_INTEGERS = (
    Integer("N", 2, 5, "clients"),
    Integer("d", 1, 2, "dimension"),
)


def theorem1_near_tight_point(delta: float) -> tuple[dict, np.ndarray]:
    r"""A point of the ``cafed.theorem1`` family where measured / bound is
    :math:`(1-4\delta^2)/(1-2\delta^2)` (:math:`\to1` as :math:`\delta\to0`).

    Two clients in one dimension, :math:`A_k=1` (:math:`\kappa=1`), :math:`c=(-1,1)`,
    :math:`\alpha=(\frac12,\frac12)`, :math:`p=(\frac12-\delta,\frac12+\delta)`,
    :math:`w=2w_B^*-w^*=4\delta`: :math:`F(w)-F^*=8\delta^2`,
    :math:`F_B(w)-F_B^*=2\delta^2`, :math:`\chi^2=4\delta^2/(1-4\delta^2)`,
    :math:`\Gamma=\frac12`. So Theorem 1 is tight: the supremum of the ratio is 1
    (approached, attained at no :math:`\delta>0` of this instance)."""
    delta = check_real(delta, "delta", "theorem1_near_tight_point", low=0.0, high=0.49,
                       low_open=True)  # fmt: skip
    x = np.array([0.0, 0.0, -1.0, 1.0, 1.0, 1.0, 0.5 - delta, 0.5 + delta, 1.0])
    return {"N": 2, "d": 1}, x


def theorem3_attaining_point(delta: float) -> tuple[dict, np.ndarray]:
    r"""A point of the ``cafed.theorem3`` family where measured = bound exactly.

    Two clients in one dimension, :math:`A_k=1`, :math:`c=(-1,1)`,
    :math:`p=(\frac12,\frac12)` (:math:`w_B^*=0`), :math:`\alpha=(\frac12+\delta,
    \frac12-\delta)` (:math:`w^*=-2\delta`, :math:`d_{TV}=\delta`), :math:`w=2\delta`:
    :math:`F(w)-F^*=8\delta^2=2\cdot2\delta^2+8\delta^2\cdot\frac12` with
    :math:`\Gamma'=\frac12`. So Theorem 3 is attained (its worst ratio is exactly 1)."""
    delta = check_real(delta, "delta", "theorem3_attaining_point", low=0.0, high=0.49,
                       low_open=True)  # fmt: skip
    x = np.array([0.0, 0.0, -1.0, 1.0, 0.5 + delta, 0.5 - delta, 1.0, 1.0, 1.0])
    return {"N": 2, "d": 1}, x


CAFED_THEOREM1 = Family(
    cafed.theorem1,
    "quadratic clients (N <= 5, d <= 2, kappa <= 100), any alpha, p in the open simplex, "
    "any w; measured: exact F(w) - F^*",
    _CAFED_INTEGERS,
    _cafed_reals,
    _cafed_evaluate("theorem1"),
    tightness="tight: sup ratio = 1, approached at kappa = 1 (theorem1_near_tight_point: "
    "ratio (1 - 4 delta^2)/(1 - 2 delta^2))",
)
CAFED_THEOREM3 = Family(
    cafed.theorem3,
    CAFED_THEOREM1.description,
    _CAFED_INTEGERS,
    _cafed_reals,
    _cafed_evaluate("theorem3"),
    tightness="attained: ratio exactly 1 at kappa = 1 (theorem3_attaining_point)",
)


# --- d_TV <= sqrt(chi^2)/2 -------------------------------------------------------------------
def _simplex_reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    n = ints["N"]
    return tuple(Real(f"{s}[{k}]", WEIGHT_FLOOR, 1.0) for s in "ab" for k in range(n))


def _tv_chi_square(ints, x, seed) -> Evaluation:
    n = ints["N"]
    alpha, p = x[:n] / x[:n].sum(), x[n:] / x[n:].sum()
    chi2 = divergences.chi_square(alpha, p)
    bound = float(divergences.tv_chi_square.evaluate(chi2=chi2).total)
    tv = divergences.total_variation(alpha, p)
    return Evaluation(tv, bound, {"N": n, "chi2": chi2, "d_tv": tv})


TV_CHI_SQUARE = Family(
    divergences.tv_chi_square,
    "alpha, p in the open simplex (N <= 8 clients); measured: d_TV(alpha, p)",
    (Integer("N", 2, 8, "clients"),),
    _simplex_reals,
    _tv_chi_square,
    tightness="attained: ratio exactly 1 when |alpha_k - p_k|/p_k is constant (Cauchy-Schwarz "
    "equality), e.g. p = (1/2, 1/2), alpha = (1/2 + delta, 1/2 - delta)",
)


# --- FedAU Theorem 3, per round --------------------------------------------------------------
def _fedau(ints, x, seed) -> Evaluation:
    K, t, p = ints["K"], ints["t"], float(x[0])
    measured = float(fedau.weight_error_exact(p, K, t + 1)[t])
    bound = float(fedau.theorem3_per_round.evaluate(p=p, K_cut=K, t=t).total)
    return Evaluation(measured, bound, {"p": p, "K": K, "t": t})


FEDAU_PER_ROUND = Family(
    fedau.theorem3_per_round,
    "Bernoulli(p) participation, FedAU Algorithm 2 with cutoff K <= 12, round 1 <= t <= 40; "
    "measured: exact E[(p omega_t - 1)^2]",
    (Integer("K", 1, 12, "cutoff"), Integer("t", 1, 40, "round")),
    lambda ints: (Real("p", 1e-4, 1.0),),
    _fedau,
    tightness="tight as t -> infinity: with K = 1, omega_t = 1 and the ratio is "
    "t(1 - p)/(t(1 - p) + 2) (-> 1 as p -> 0, t -> infinity; 40/42 at t = 40)",
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


def e3cs_regret_samples(
    K: int, k: int, T: int, *, sigma: float, eta: float, rho, replicates: int, seed: int
) -> np.ndarray:
    r"""Regret (26) of E3CS (exact-marginal sampling, Huang et al. 2022, Algorithm 1) on
    ``replicates`` Bernoulli(:math:`\rho_i`) success matrices ``[R, T, K]``: one value per
    replicate, ``[R]`` (:math:`\mathrm{CEP}^*_T` of the best fixed allocation minus
    :math:`\sum_t\sum_ip_{i,t}x_{i,t}`); round :math:`t`'s randomness from ``seed``."""
    from fedtheory.availability import Bernoulli
    from fedtheory.sim import E3CS, run_selection

    owner = "e3cs_regret_samples"
    K = check_int(K, "K", owner, low=2)
    k = check_int(k, "k", owner, low=1, high=K)
    T = check_int(T, "T", owner, low=1)
    rho = check_array(rho, "rho", owner, shape=(K,), low=0.0, high=1.0)
    replicates = check_int(replicates, "replicates", owner, low=2)
    seed = check_seed(seed, owner)
    x = Bernoulli(rho).sample(T, replicates=replicates, seed=seed).numpy()
    rec = run_selection(E3CS(k, sigma=sigma, eta=eta, sampler="systematic"), x, seed=seed)
    return rec.regret


def _e3cs_evaluate(optimal: bool):
    def evaluate(ints, x, seed) -> Evaluation:
        K, k, T = ints["K"], ints["k"], ints["T"]
        head = 0 if optimal else 1
        c, rho = float(x[head]), x[head + 1 :]
        sigma = c * k / K
        S = float(e3cs.quota_sum(np.full(T, sigma), k=k, K=K))
        kw = {"K": K, "k": k, "sum_quota": S}
        if optimal:
            eta = float(e3cs.optimal_eta.evaluate(**kw).total)
            bound = float(e3cs.regret_optimal.evaluate(**kw).total)
        else:
            eta = float(x[0])
            bound = float(e3cs.regret.evaluate(eta=eta, **kw).total)
        samples = e3cs_regret_samples(
            K, k, T, sigma=sigma, eta=eta, rho=rho, replicates=E3CS_REPLICATES, seed=seed
        )
        mean, low, high = mean_confidence_interval(samples, 0.95)
        constants = {"K": K, "k": k, "T": T, "sigma": sigma, "eta": eta, "sum_quota": S}
        return Evaluation(mean, bound, constants, (low, high))

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
E3CS_REGRET = Family(
    e3cs.regret,
    _E3CS_DESCRIPTION + ", eta in [0.01, 0.99]",
    _E3CS_INTEGERS,
    lambda ints: _e3cs_reals(ints, with_eta=True),
    _e3cs_evaluate(optimal=False),
    monte_carlo=True,
)
E3CS_REGRET_OPTIMAL = Family(
    e3cs.regret_optimal,
    _E3CS_DESCRIPTION + ", eta = eta^* of (28), c <= 0.95",
    _E3CS_INTEGERS,
    lambda ints: _e3cs_reals(ints, with_eta=False),
    _e3cs_evaluate(optimal=True),
    monte_carlo=True,
)


# --- FedLaAvg on Example 1 -------------------------------------------------------------------
def fedlaavg_example1_error(x0: float, t1: int, t2: int, T: int, *, e1=0.0, e2=1.0) -> float:
    r"""Exact :math:`\min_{0\le t\le T}(x_t-x^*)^2` of FedLaAvg (Yan et al. 2020, Algorithm 1,
    one available client per iteration, exact gradients) on Example 1 with
    :math:`\gamma=1/(2\sqrt T)`: :math:`x_{t+1}=x_t-\frac\gamma2(g_1+g_2)`, where client
    :math:`i(t)` (1 for the first :math:`t_1` iterations of each period, then 2) refreshes
    its cached gradient :math:`g_i=2(x_t-e_i)`; both caches start at 0 (FedLaAvg, Algorithms 1-2, as
    ``fedtheory.sim.FedLaAvg``). :math:`\hat x=\arg\min_{x_t}f(x_t)` includes :math:`x_0`,
    as the validation ``example1-algorithms`` does."""
    owner = "fedlaavg_example1_error"
    reals = {
        n: np.float64(check_real(v, n, owner)) for n, v in (("x0", x0), ("e1", e1), ("e2", e2))
    }
    t1, t2 = check_size(t1, "t1", owner), check_size(t2, "t2", owner)
    T = check_size(T, "T", owner)
    x0, e1, e2 = reals["x0"], reals["e1"], reals["e2"]
    gamma, centre, e = 1 / (2 * math.sqrt(T)), (e1 + e2) / 2, (e1, e2)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: check_finite_result below
        x, cached, best = x0, [0.0, 0.0], (x0 - centre) ** 2
        for t in range(T):
            i = 0 if t % (t1 + t2) < t1 else 1
            cached[i] = 2 * (x - e[i])
            x = x - gamma * (cached[0] + cached[1]) / 2
            best = min(best, (x - centre) ** 2)
    check_finite_result(best, owner, reals)
    return float(best)


def _fedlaavg(ints, x, seed) -> Evaluation:
    t1, t2, T, x0 = ints["t1"], ints["t2"], ints["T"], float(x[0])
    measured = fedlaavg_example1_error(x0, t1, t2, T)
    bound = fedlaavg.fedlaavg_bound.evaluate(x0=x0, e1=0.0, e2=1.0, t1=t1, t2=t2, T=T).total
    return Evaluation(measured, float(bound), {"x0": x0, "t1": t1, "t2": t2, "T": T})


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

FAMILIES: dict[str, Family] = {
    f.key: f
    for f in (
        CAFED_THEOREM1,
        CAFED_THEOREM3,
        TV_CHI_SQUARE,
        FEDAU_PER_ROUND,
        E3CS_REGRET,
        E3CS_REGRET_OPTIMAL,
        FEDLAAVG_EXAMPLE1,
    )
}
