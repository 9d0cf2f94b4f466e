r"""CA-Fed Theorem 2: :math:`\mathbb E[F_B(\bar w_T)-F_B^*]` against the bound as :math:`T`
grows, for several correlation levels :math:`\lambda(P)` (Rodio et al., Sec. III-B).

Instance: a random strongly convex quadratic problem (exact :math:`L`, :math:`\mu`,
:math:`\Gamma`, noise :math:`\sigma_k^2`); the server projects onto the ball
:math:`W=\{\|w\|\le\rho\}` that contains every client minimiser (CA-Fed (3), Assumption 2);
Lemma 1's constants are computed on :math:`W` (:math:`D\le\max_kL_k(\rho+\|c_k\|)`,
:math:`\mathrm{diam}W=2\rho`); clients follow independent two-state chains with common
:math:`\lambda_k`, whose product chain gives :math:`\lambda(P)`, :math:`C_P`, :math:`T_P`
(closed form) and :math:`M=2^N` states; fixed weights :math:`q`; step sizes
:math:`\eta_t=a/(t+b)` (so :math:`\sum\eta_t=\infty`, :math:`\sum\ln(t)\eta_t^2<\infty`).
Measured: :math:`F_B(\bar w_{T,0})-F_B^*` with :math:`\bar w_T=\sum_t\eta_tw_t/\sum_t\eta_t`
per replicate, mean and confidence interval, against Theorem 2 as published; rows whose
instance breaks a checked hypothesis (:math:`\eta_t\le1/(2L(EQ+1))`, :math:`T\ge T_P`) are
labelled *outside assumptions*.
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability import TwoStateMarkov
from fedtheory.bounds import cafed
from fedtheory.budget import check_bytes
from fedtheory.constraints import (
    Array,
    Exemplified,
    InstanceOf,
    Integer,
    MappingOf,
    Names,
    Real,
    declare,
)
from fedtheory.constraints import Size as SizeIn
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import FedAvg, FixedWeights, InverseTime, footprint, simulate
from fedtheory.sim.runner import CHUNK_ELEMENTS
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import Settings, part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import compare_mean_upper_bound


@part("cafed-theorem2")
def settings(size: Size) -> dict:
    return {
        "num_clients": 4,
        "dim": 2,
        "mu": 1.0,
        "L": 2.0,
        "spread": 1.0,
        "noise_std": 0.5,
        "pi": [0.2, 0.4, 0.6, 0.8],
        "lams": {"tiny": [0.0, 0.9], "quick": [0.0, 0.5, 0.9], "full": [0.0, 0.5, 0.9, 0.99]}[size],
        "local_steps": 2,
        "a": 0.5,
        "b": 20.0,
        "horizons": {"tiny": [20, 80], "quick": [50, 200, 800], "full": [50, 200, 800, 3200]}[size],
        "replicates": {"tiny": 8, "quick": 64, "full": 128}[size],
        "seed": 0,
    }


SETTINGS = Settings("cafed-theorem2")
"""This check's settings (those of a check built on it, such as ``cafed-weights``, too)."""
PROBLEM = Exemplified(
    InstanceOf("fedtheory.problems.quadratic:QuadraticProblem"),
    lambda args: problem_on_ball(args["s"])[0],
)
PROCESS = Exemplified(
    InstanceOf("fedtheory.availability:TwoStateMarkov"),
    lambda args: TwoStateMarkov(np.array(args["s"]["pi"]), 0.5),
)
POINT = Exemplified(MappingOf(), lambda args: {**settings("tiny"), "lam": 0.5, "horizon": 4})
"""The settings of one sweep point (:func:`sweep_point`): the check's with scalar ``lam``
and ``horizon`` (checked by :func:`sweep_check`, which names a typo)."""


@declare(s=SETTINGS)
def problem_on_ball(s: dict) -> tuple[QuadraticProblem, float]:
    """The quadratic problem of settings ``s`` and the radius of the ball ``W``."""
    problem = QuadraticProblem.random(
        s["num_clients"],
        s["dim"],
        mu=s["mu"],
        L=s["L"],
        spread=s["spread"],
        noise_std=s["noise_std"],
        seed=s["seed"],
    )
    radius = 1.5 * float(np.linalg.norm(problem.c, axis=1).max())  # W contains every w_k^*
    return problem, radius


@declare(s=SETTINGS, horizon=Integer(0))
def schedule(s: dict, horizon: int) -> np.ndarray:
    """Step sizes eta_0..eta_T ``[T+1]`` (eta_t = a/(t+b), as :class:`InverseTime`)."""
    check_bytes(8 * (horizon + 1), "schedule", what=f"{horizon + 1} step sizes",
                fixes="a smaller horizon")  # fmt: skip
    eta = InverseTime(s["a"], s["b"])
    return eta.a / (np.arange(horizon + 1) + eta.b)


def _constants(s, problem, radius, process):
    """Everything Theorem 2 needs except the weights, as ``theorem2.evaluate`` keywords."""
    mix = process.mixing_constants()
    norm_c = np.linalg.norm(problem.c, axis=1)
    L_k = np.linalg.eigvalsh(problem.A)[:, -1]
    D = float(np.max(L_k * (radius + norm_c)))  # sup of ||grad F_k|| on W (upper estimate)
    sigma2 = np.full(problem.num_clients, problem.dim * problem.noise_std**2)
    lemma = cafed.lemma1_constants(D, sigma2, 2 * radius)
    w_star, _ = problem.optimum()
    kw = {
        "E": s["local_steps"],
        "M": 2**problem.num_clients,
        "L": problem.L,
        "Gamma": problem.gamma(),
        "G": lemma.G,
        "D": lemma.D,
        "H": lemma.H,
        "lam": mix.rate,
        "C_P": mix.C_P,
        "T_P": mix.T_P,
        "dist0_sq": float(w_star @ w_star),  # w_0 = 0
    }
    return kw, sigma2


@declare(s=SETTINGS, problem=PROBLEM, radius=Real(0.0, low_open=True), process=PROCESS,
         horizon=SizeIn(), Q=Real(0.0, low_open=True), finite_result=True)  # fmt: skip
def program(s, problem, radius, process, horizon: int, Q: float) -> cafed.Theorem2Program:
    """CA-Fed Theorem 2 as a function of the weights (App. D form) on this instance."""
    kw, sigma2 = _constants(s, problem, radius, process)
    return cafed.theorem2_program(schedule(s, horizon), sigma2=sigma2, pi=process.pi, Q=Q, **kw)


def _bound(s, problem, radius, process, q, horizon) -> tuple[float, bool]:
    """Theorem 2 at horizon ``T`` (value, hypotheses hold)."""
    kw, sigma2 = _constants(s, problem, radius, process)
    agg = cafed.theorem2_aggregates(
        schedule(s, horizon), lam=kw["lam"], C_P=kw.pop("C_P"), T_P=kw["T_P"], H=kw.pop("H")
    )
    res = cafed.theorem2.evaluate(
        **agg.as_kwargs(),
        **kw,
        Q=float(q.sum()),
        pi_q=float(process.pi @ q),
        noise_q=float(np.sum(sigma2 * process.pi * q**2)),
        strict=False,
    )
    return float(res.total), res.valid


@declare(
    s=SETTINGS,
    pi=Exemplified(Array(low=0.0, high=1.0, low_open=True), lambda args: args["s"]["pi"]),
    lam=Real(0.0, 1.0, high_open=True),
    horizons=Exemplified(Array(integer=True, low=1), lambda args: [2]),
    replicates=SizeIn(),
    seed=Integer(0),
)
def measure(
    s: dict, pi: np.ndarray, lam: float, horizons: np.ndarray, *, replicates: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    r"""Theorem 2 on the instance of ``s`` with availability ``TwoStateMarkov(pi, lam)``:
    measured :math:`F_B(\bar w_T)-F_B^*` ``[R, H]`` of ``replicates`` runs from ``seed``,
    the bound ``[H]``, whether its checked hypotheses hold ``[H]``, and :math:`\lambda(P)`."""
    problem, radius = problem_on_ball(s)
    q = problem.alpha.copy()  # biased weights q = alpha (F_B != F)
    horizons = np.asarray(horizons)
    rounds = int(horizons.max())
    eta = InverseTime(s["a"], s["b"])
    weights = schedule(s, rounds)  # eta_0..eta_T
    p = FixedWeights(q).effective_weights(pi)
    _, fb_star = problem.optimum(p)
    process = TwoStateMarkov(pi, lam)
    alg = FedAvg(FixedWeights(q), local_steps=s["local_steps"], lr=eta, radius=radius)
    rec = simulate(problem, process, alg, rounds=rounds, replicates=replicates, seed=seed)
    measured = np.empty((replicates, horizons.size))
    bound = np.empty(horizons.size)
    inside = np.empty(horizons.size)
    for j, T in enumerate(horizons):
        w = weights[1 : T + 1]  # eta_1..eta_T
        wbar = np.einsum("t,rtd->rd", w, rec.iterates[:, 1 : T + 1]) / w.sum()
        measured[:, j] = problem.loss(wbar, p) - fb_star
        bound[j], inside[j] = _bound(s, problem, radius, process, q, int(T))
    return measured, bound, inside, process.mixing_constants().rate


@part("cafed-theorem2")
def compute(s: dict) -> dict[str, np.ndarray]:
    horizons = np.array(s["horizons"])
    runs = [
        measure(s, np.array(s["pi"]), lam, horizons, replicates=s["replicates"], seed=s["seed"])
        for lam in s["lams"]
    ]
    return {
        "horizon": horizons,
        "measured": np.stack([r[0] for r in runs]),
        "bound": np.stack([r[1] for r in runs]),
        "inside": np.stack([r[2] for r in runs]),
        "lambda_P": np.array([r[3] for r in runs]),
    }


SWEPT = ("lam", "horizon", "participation")
"""Scalar settings of a sweep point besides :func:`settings`' (``participation`` optional)."""


def _point(s: dict) -> tuple[np.ndarray, float, int]:
    """The checked availability profile, ``lam`` and ``horizon`` of sweep point ``s``."""
    owner = "sweep_point"
    pi = Array(ndim=1, low=0, high=1, low_open=True, min_size=1).check(s["pi"], "pi", owner, {})
    if "participation" in s:
        top = float(pi.mean() / pi.max())  # largest mean keeping every pi_k <= 1
        pi = (
            pi
            * Real(low=0, high=top, low_open=True).check(
                s["participation"], "participation", owner, {}
            )
            / pi.mean()
        )
    lam = Real(low=0, high=1, high_open=True).check(s["lam"], "lam", owner, {})
    return pi, lam, SizeIn().check(s["horizon"], "horizon", owner, {})


@declare(s=POINT)
def sweep_check(s: dict) -> None:
    """Refuse, before any sweep work, settings :func:`sweep_point` cannot run: a name it
    does not read (with the nearest valid one), a missing ``lam``/``horizon``, a value out
    of its range, or a run above the memory budget (:mod:`fedtheory.budget`: the
    simulator's estimate, the step sizes and the problem's matrices)."""
    owner = "the cafed-theorem2 sweep"
    allowed = tuple(sorted(set(settings("tiny")) | set(SWEPT)))
    Names(allowed).check(s, "settings", owner, {})
    if missing := [k for k in ("lam", "horizon") if k not in s]:
        raise ParameterError(
            f"The 'settings' parameter of {owner} must set {missing} (a value or a grid axis)."
        )
    r, t, n, d = (SizeIn().check(s[k], k, owner, {})
                  for k in ("replicates", "horizon", "num_clients", "dim"))  # fmt: skip
    keep = footprint.estimate(replicates=r, rounds=t, num_clients=n, dim=d, eval_every=1,
                              keep_masks=True, state=(), chunk_elements=CHUNK_ELEMENTS)  # fmt: skip
    extra = 8 * (t + 1) + 8 * n * d * (d + 1) + 16 * r * n * d  # eta, A and c, client models
    check_bytes(keep.total + extra, owner, what=f"{r} replicates x {t} rounds x {n} clients",
                fixes="a smaller horizon or fewer replicates")  # fmt: skip
    pi, lam, _ = _point(s)
    problem_on_ball(s)  # checks the problem's settings
    TwoStateMarkov(pi, lam)
    InverseTime(s["a"], s["b"])
    SizeIn().check(s["local_steps"], "local_steps", owner, {})


@declare(s=POINT, seed=Integer(0))
def sweep_point(s: dict, seed: int) -> dict:
    r"""The measurement at one point, for :func:`fedtheory.sweep.run_sweep`: the settings
    ``s`` of :func:`settings` with scalars ``lam`` (:math:`\lambda_k`), ``horizon``
    (:math:`T`) and optionally ``participation`` (the mean availability :math:`\bar\pi`:
    the profile ``s["pi"]`` rescaled to that mean, each :math:`\pi_k\le1`). The instance
    (problem, ball, weights) is that of ``s["seed"]``; ``s["replicates"]`` runs draw from
    ``seed``. Returns ``measured`` ``[R]``, the ``bound``, whether Theorem 2's checked
    hypotheses hold (``inside``) and :math:`\lambda(P)`. :func:`sweep_check` checks the
    settings before a sweep starts."""
    pi, lam, horizon = _point(s)
    measured, bound, inside, rate = measure(
        s, pi, lam, np.array([horizon]), replicates=s["replicates"], seed=seed
    )
    return {
        "measured": measured[:, 0],
        "bound": float(bound[0]),
        "inside": bool(inside[0]),
        "lambda_P": float(rate),
    }


@part("cafed-theorem2")
def judge(data, s):
    return [
        compare_mean_upper_bound(
            f"E[F_B(wbar_T) - F_B*] <= CA-Fed Theorem 2, lambda_k={lam:g} "
            f"(lambda(P)={data['lambda_P'][i]:.3g})",
            cafed.theorem2.reference,
            data["measured"][i],
            data["bound"][i],
            assumptions_hold=bool(data["inside"][i].all()),
        )
        for i, lam in enumerate(s["lams"])
    ]


@part("cafed-theorem2")
def plot(data, s, fig):
    ax0, ax1, ax2 = plots.panels(fig, 3)
    T = data["horizon"]
    n = len(s["lams"])
    for i in range(n):
        ci, yerr = plots.row_bars(data["measured"][i])  # the row's intervals: [H, 3], [2, H]
        label = rf"$\lambda(P)={data['lambda_P'][i]:.3g}$"
        x = plots.dodge(T, i, n, log=True)
        ax0.errorbar(x, ci[:, 0], yerr=yerr, **plots.series(i), markersize=4, label=label)
        ax1.plot(x, ci[:, 0], **plots.series(i, line=False), label=f"measured, {label}")
        ax1.plot(T, data["bound"][i], **plots.series(i, filled=False),
                 label=f"Theorem 2 bound, {label}")  # fmt: skip
        ax2.plot(T, ci[:, 2] / data["bound"][i], **plots.series(i), label=label)
    ax0.set(
        xscale="log",
        yscale="log",
        xlabel="horizon $T$ (rounds)",
        ylabel=r"measured $F_B(\bar w_T)-F_B^*$ (objective units)",
        title="Measured: mean and family-wise 95% CI",
    )
    ax1.set(
        xscale="log",
        yscale="log",
        xlabel="horizon $T$ (rounds)",
        ylabel=r"$F_B(\bar w_T)-F_B^*$ (objective units)",
        title="Theorem 2 bound vs measured mean",
    )
    ax2.set(
        xscale="log",
        yscale="log",
        xlabel="horizon $T$ (rounds)",
        ylabel="upper family-wise limit / bound (dimensionless)",
        title="Tightness ratio",
    )
    for ax in (ax0, ax1, ax2):
        plots.log_ticks(ax, T)
        plots.log_labels(ax)
        plots.legend(ax, ncols=1)
    return (
        f"Left: the measured error of each of the {n} chains on its own scale, so that the "
        "family-wise 95% confidence intervals the rows are judged on (Bonferroni over the "
        "horizons) show; middle: the same means (filled markers) against the bound "
        "(hollow markers, lines), some four decades above; right: the upper family-wise limit "
        "divided by the bound. Points of the chains are shifted slightly along T: none hides "
        "another."
    )


register(
    Check(
        "cafed-theorem2",
        "CA-Fed Theorem 2 vs T and λ(P)",
        "Rodio et al. (CA-Fed), Theorem 2 (as published)",
        settings,
        compute,
        judge,
        plot,
        bounds=("bound",),
        sweep=sweep_point,
        sweep_check=sweep_check,
        cost=1.4,
    )
)
