r"""CA-Fed aggregation weights: optimal (cvxpy), KKT water-filling, greedy CA-Fed and
Unbiased; their bound values and their measured errors on one instance (Rodio et al., Sec. III-C
and App. D).

Instance: the problem, ball :math:`W`, step sizes and constants of ``cafed-theorem2``, with
heterogeneous availability (:math:`\pi_k`) and correlation (:math:`\lambda_k`). The weight
objective (CA-Fed problem (III-C), Theorem 2 composed with Theorem 1)

.. math:: f(q)=\frac{2\kappa^2}{\sum_t\eta_t}\Big(\frac{\tfrac12q^\top Aq+B}{\pi^\top q}+C\Big)
          +2\kappa^4\chi^2_{\alpha\|p(q)}\Gamma \;\ge\;\mathbb E[F(\bar w_T)-F^*]

is minimised over :math:`q\ge0`, :math:`\|q\|_1=1` by cvxpy (convex in :math:`(y,s)`),
by CA-Fed's greedy ``get`` and compared with Unbiased :math:`q\propto\alpha/\pi`; App. D's
program without the bias term is solved by cvxpy and by the KKT water-filling form. Each
weight vector is then run (FedAvg with fixed weights, Markov availability) and its measured
:math:`F(\bar w_T)-F^*` is compared with its :math:`f(q)`.
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability import TwoStateMarkov
from fedtheory.optim import WeightInstance, WeightProgram, greedy_weights, waterfilling_weights
from fedtheory.sim import FedAvg, FixedWeights, InverseTime, simulate
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.validation.papers.cafed import theorem2 as cafed_theorem2
from fedtheory.verdict import compare_equal, compare_mean_upper_bound, compare_upper_bound

METHODS = ("optimal (cvxpy)", "greedy CA-Fed", "Unbiased")
SOLVER_RTOL = 1e-5  # interior-point accuracy (optim.SOLVER_OPTIONS) on objective values


@part("cafed-weights")
def settings(size: Size) -> dict:
    s = cafed_theorem2.settings(size)
    s.update(
        num_clients=6,
        pi=[0.9, 0.9, 0.5, 0.5, 0.1, 0.1],
        lam_k=[0.0, 0.9, 0.0, 0.9, 0.0, 0.9],
        rounds={"tiny": 100, "quick": 400, "full": 2000}[size],
    )
    return s


def _instances(s, problem, radius, process) -> tuple[WeightInstance, WeightInstance]:
    """(problem (III-C) with the chi-square bias, App. D's program without it)."""
    prog = cafed_theorem2.program(s, problem, radius, process, s["rounds"], Q=1.0)
    scale = 2 * problem.kappa**2 / prog.sum_eta
    args = (scale * prog.A, scale * prog.B, scale * prog.C, process.pi, problem.alpha)
    biased = WeightInstance.theorem1(*args, kappa=problem.kappa, Gamma=problem.gamma())
    return biased, WeightInstance(*args)


@part("cafed-weights")
def compute(s: dict) -> dict[str, np.ndarray]:
    problem, radius = cafed_theorem2.problem_on_ball(s)
    process = TwoStateMarkov(np.array(s["pi"]), np.array(s["lam_k"]))
    biased, opt_only = _instances(s, problem, radius, process)
    unbiased = problem.alpha / process.pi
    q = np.array(
        [
            WeightProgram(problem.num_clients, bias="chi2").solve(biased).q,
            greedy_weights(biased, lam=process.lam).q,
            unbiased / unbiased.sum(),
        ]
    )  # [methods, N]
    bound = np.array([biased.objective(qi) for qi in q])
    cvx = WeightProgram(problem.num_clients).solve(opt_only)
    kkt = waterfilling_weights(opt_only)
    _, f_star = problem.optimum()
    eta = cafed_theorem2.schedule(s, s["rounds"])[1:]  # eta_1..eta_T
    errors = []
    for qi in q:
        alg = FedAvg(
            FixedWeights(qi),
            local_steps=s["local_steps"],
            lr=InverseTime(s["a"], s["b"]),
            radius=radius,
        )
        rec = simulate(
            problem, process, alg, rounds=s["rounds"], replicates=s["replicates"], seed=s["seed"]
        )
        wbar = np.einsum("t,rtd->rd", eta, rec.iterates[:, 1:]) / eta.sum()
        errors.append(problem.loss(wbar) - f_star)
    return {
        "q": q,
        "bound": bound,
        "optimum": np.array(bound[0]),
        "error": np.array(errors),  # [methods, R]
        "cvxpy_value": np.array(cvx.objective),
        "kkt_value": np.array(opt_only.objective(kkt.q)),
        "cvxpy_q": cvx.q,
        "kkt_q": kkt.q,
        "pi": process.pi,
        "lam": process.lam,
    }


@part("cafed-weights")
def judge(data, s):
    ref = "Rodio et al. (CA-Fed), problem (III-C), Theorems 1-2"
    rows = [
        compare_equal(
            "App. D program: cvxpy optimum == KKT water-filling value",
            "Rodio et al. (CA-Fed), App. D eq. (27)",
            data["cvxpy_value"],
            data["kkt_value"],
            rtol=SOLVER_RTOL,
        )
    ]
    for i in (1, 2):
        rows.append(
            compare_upper_bound(
                f"cvxpy optimum of (III-C) <= f at {METHODS[i]} weights (solver rtol "
                f"{SOLVER_RTOL:g})",
                ref,
                data["optimum"],
                data["bound"][i] * (1 + SOLVER_RTOL),
            )
        )
    for i, name in enumerate(METHODS):
        rows.append(
            compare_mean_upper_bound(
                f"E[F(wbar_T) - F*] <= f(q) with {name} weights",
                ref,
                data["error"][i],
                data["bound"][i],
            )
        )
    return rows


HATCHES = ("", "//", "..", "xx")


@part("cafed-weights")
def plot(data, s, fig):
    ax1, ax3, ax2 = plots.panels(fig, 3)
    x = np.arange(len(METHODS))
    # the excess over the optimum in percent, from 0: the weightings' bounds differ by a
    # fraction of a percent, which an axis zoomed to the values' range would magnify
    excess = 100 * (data["bound"] - data["optimum"]) / data["optimum"]
    for i in range(len(METHODS)):
        ax1.bar(x[i], excess[i], 0.6, color=plots.COLORS[i], hatch=HATCHES[i % len(HATCHES)],
                edgecolor="white")  # fmt: skip
        ax1.annotate(f"{excess[i]:.3g}%", (x[i], excess[i]), ha="center", va="bottom",
                     xytext=(0, 2), textcoords="offset points", fontsize=8)  # fmt: skip
    ax1.set_ylim(0, max(1.25 * float(excess.max()), 1e-3))
    ax1.set_xticks(x, METHODS, rotation=15)
    ax1.set(
        ylabel=r"$(f(q)-f^*)/f^*$ (% of the optimum)",
        title=rf"Bound $f(q)$ above the optimum $f^*$ = {float(data['optimum']):,.0f}",
    )
    ci, yerr = plots.confidence_bars(data["error"])  # [M, 3], [2, M]
    for i in range(len(METHODS)):
        ax3.errorbar(x[i], ci[i, 0], yerr=yerr[:, i : i + 1], **plots.series(i, line=False))
    ax3.set_xticks(x, METHODS, rotation=15)
    ax3.set(
        ylabel=r"measured $F(\bar w_T)-F^*$ (objective units)",
        title="Measured error (mean, 95% CI)",
    )
    n = data["q"].shape[1]
    names = (*METHODS, "KKT (App. D, no bias)")
    weights = (*data["q"], data["kkt_q"])
    width = 0.8 / len(names)
    for i, (name, q) in enumerate(zip(names, weights, strict=True)):
        ax2.bar(np.arange(n) + i * width, q, width, label=name, color=plots.COLORS[i],
                hatch=HATCHES[i % len(HATCHES)], edgecolor="white")  # fmt: skip
        for k in np.flatnonzero(np.asarray(q) <= 1e-12):  # a zero weight draws no bar: say 0
            ax2.annotate("0", (k + i * width, 0.0), ha="center", va="bottom", xytext=(0, 2),
                         textcoords="offset points", fontsize=8, color=plots.COLORS[i],
                         fontweight="bold")  # fmt: skip
    pairs = zip(data["pi"], data["lam"], strict=True)
    ticks = [rf"$\pi={p:g}$" "\n" rf"$\lambda={lam:g}$" for p, lam in pairs]  # fmt: skip
    ax2.set_xticks(np.arange(n) + 0.4 - width / 2, ticks)
    ax2.set(
        xlabel="client $k$ (availability $\\pi_k$, chain $\\lambda_k$)",
        ylabel="weight $q_k$ (dimensionless, sums to 1)",
        title="Weights per client",
    )
    plots.legend(ax2, ncols=2)
    same = [
        f"{METHODS[i]} and {METHODS[j]}"
        for i in range(len(METHODS))
        for j in range(i + 1, len(METHODS))
        if np.allclose(data["q"][i], data["q"][j], rtol=1e-9, atol=1e-12)
    ]
    return (
        "Left: each weighting's bound f(q) (Theorems 1+2) as its excess over the cvxpy "
        f"optimum f* = {float(data['optimum']):.6g} of (III-C), in percent, on an axis from 0: "
        f"the weightings differ by {np.ptp(data['bound']) / data['optimum']:.2%} of the optimum. "
        + "".join(
            f"{pair} give the same weights here, hence the same bound and measured error. "
            for pair in same
        )
        + (
            "Right: a weight of exactly 0 draws no bar; it is marked 0 in its weighting's colour."
            if np.any(np.asarray(weights) <= 1e-12)
            else ""
        )
    ).strip()


register(
    Check(
        "cafed-weights",
        "CA-Fed weights: optimal, KKT, greedy, Unbiased",
        "Rodio et al. (CA-Fed), App. D (27), problem (III-C), Algorithm 1 (get)",
        settings,
        compute,
        judge,
        plot,
        bounds=("bound", "kkt_value"),
        cost=0.7,
    )
)
