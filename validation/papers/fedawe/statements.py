r"""FedAWE's lemmas against exact values and simulation (Xiang et al. 2024).

Four availability dynamics of the paper (§7, App. J.3: stationary, staircase, sine,
interleaved sine; :class:`~fedtheory.availability.NonStationary`), on base probabilities
spread in ``[p_low, p_high]`` so that the interleaved sine cuts some clients to 0.

* **Lemma 2** (``fedawe-lemma2``): the exact :math:`\mathbb E[t-\tau_i(t)]` and
  :math:`\mathbb E[(t-\tau_i(t))^2]` (:func:`fedtheory.bounds.fedawe.staleness_moments`,
  from the exact :math:`p_i^t`) against :math:`1/\delta` and :math:`2/\delta^2` at every
  round and client, and the mean measured on sampled masks against the exact value.
* **Proposition 1** (``fedawe-proposition1``): the echo factors FedAWE applies in a run
  add up to :math:`R` at every round :math:`R-1` where the client is active.
* **Lemma 4 and Lemma 1** (``fedawe-lemma4``): the exact :math:`\rho=\max_t\lambda_2
  (\mathbb E[(W^{(t)})^2])` (:func:`fedtheory.bounds.fedawe.mixing_rho`, Gauss-Legendre
  quadrature of the exact expectation, cross-checked here against the mean of sampled
  :math:`W`) against Lemma 4's bound; Lemma 1's :math:`\mathbb E\|B(\prod_rW^{(r)}-J)
  \|_F^2\le\rho^t\|B\|_F^2` measured on sampled products.
* **Lemma 5** (``fedawe-lemma5``): on a quadratic with additive Gaussian gradient noise the
  left side is exact (:func:`lemma5_exact`); compared with the bound at
  :math:`\eta_l\le1/(4sL)`, and the closed form with local SGD runs of the simulator.

The interleaved sine breaks Assumption 1 (:math:`p_i^t=0` in some rounds): its rows are
*outside assumptions* (for Lemma 2 the bound is then evaluated at the smallest positive
:math:`p_i^t`, for information).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch

from fedtheory import rng
from fedtheory.availability import AvailabilityProcess, NonStationary
from fedtheory.availability.nonstationary import DYNAMICS
from fedtheory.bounds import fedawe
from fedtheory.budget import check_bytes, check_seconds, seconds
from fedtheory.constraints import Array, BoolArray, Either, Exemplified, Instance, Real, declare
from fedtheory.constraints import Size as SizeIn
from fedtheory.problems import FederatedProblem, QuadraticProblem, fused
from fedtheory.sim import FedAWE, simulate
from fedtheory.sim.local import local_sgd
from fedtheory.validation.custom import theorem_check
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import Holding, part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import compare_equal, compare_mean_equal, compare_mean_upper_bound
from fedtheory.verdict import compare_upper_bound as compare_upper

STALENESS_MARGIN = 0.05
"""Relative equivalence margin of a sampled time-averaged t - tau_i(t) against its exact mean."""
MIXING_MARGIN = 0.05
"""Equivalence margin of a sampled entry of W against the exact E[W^2] (entries in [0, 1])."""
LEMMA5_MARGIN = 0.05
"""Relative equivalence margin of the sampled Lemma 5 drift against its closed form."""

NAMES = {
    "stationary": "stationary",
    "staircase": "staircase",
    "sine": "sine",
    "interleaved_sine": "interleaved sine",
}


@declare(s=Exemplified(Holding("p_low", "p_high", "clients", "period", "gamma", "cutoff"),
                     lambda args: _base()))  # fmt: skip
def processes(s: dict) -> dict[str, NonStationary]:
    """The paper's four dynamics on the settings' base probabilities."""
    p = np.linspace(s["p_low"], s["p_high"], s["clients"])
    return {
        d: NonStationary(p, dynamics=d, period=s["period"], gamma=s["gamma"], cutoff=s["cutoff"])
        for d in DYNAMICS
    }


def _base() -> dict:
    return {"clients": 8, "p_low": 0.15, "p_high": 0.95, "period": 20, "gamma": 0.3,
            "cutoff": 0.1, "seed": 0}  # fmt: skip


@declare(mask=BoolArray(ndim=3))
def staleness(mask: np.ndarray) -> np.ndarray:
    r""":math:`t-\tau_i(t)` ``[R, T, N]`` from a mask ``[R, T, N]`` (:math:`\tau_i(0)=-1`)."""
    r, t, n = mask.shape
    rounds = np.arange(t)[None, :, None]
    last = np.maximum.accumulate(np.where(mask, rounds, -1), axis=1)  # last active <= t
    tau = np.concatenate([np.full((r, 1, n), -1), last[:, :-1]], axis=1)  # last active < t
    return rounds - tau


# --- Lemma 2 -----------------------------------------------------------------------------
@part("fedawe-lemma2")
def lemma2_settings(size: Size) -> dict:
    reps = {"tiny": 200, "quick": 2000, "full": 20000}[size]
    return {**_base(), "rounds": 60, "replicates": reps}


@part("fedawe-lemma2")
def lemma2_compute(s: dict) -> dict[str, np.ndarray]:
    out = {}
    for d, proc in processes(s).items():
        prob = proc.probabilities(np.arange(s["rounds"]))  # [T, N]
        first, second = fedawe.staleness_moments(prob)
        positive = prob[prob > 0].min()
        delta = proc.delta(s["rounds"])
        at = delta if delta > 0 else positive
        x = staleness(proc.sample(s["rounds"], replicates=s["replicates"], seed=s["seed"]).numpy())
        out |= {
            f"{d}_first": first,
            f"{d}_second": second,
            f"{d}_predicted": first.mean(axis=0),  # [N] exact time average per client
            f"{d}_bound1": np.float64(fedawe.lemma2_first.evaluate(delta=at).total),
            f"{d}_bound2": np.float64(fedawe.lemma2_second.evaluate(delta=at).total),
            f"{d}_delta": np.float64(delta),
            f"{d}_measured": x.mean(axis=1),  # [R, N] time average per client and replicate
        }
    return out


@part("fedawe-lemma2")
def lemma2_judge(data, s):
    rows = []
    for d in DYNAMICS:
        hold = bool(data[f"{d}_delta"] > 0)
        where = f" ({NAMES[d]}, every t < {s['rounds']} and client)"
        rows += [
            compare_upper(f"E[t - tau_i(t)] <= 1/delta{where}", fedawe.lemma2_first.reference,
                          data[f"{d}_first"], data[f"{d}_bound1"], assumptions_hold=hold),
            compare_upper(f"E[(t - tau_i(t))^2] <= 2/delta^2{where}",
                          fedawe.lemma2_second.reference, data[f"{d}_second"],
                          data[f"{d}_bound2"], assumptions_hold=hold),
            compare_mean_equal(f"sampled (1/T) sum_t (t - tau_i(t)) = exact mean, per client "
                               f"({NAMES[d]}, T = {s['rounds']})",
                               "fedtheory: exact moments from the marginals p_i^t",
                               data[f"{d}_measured"], data[f"{d}_predicted"],
                               margin=STALENESS_MARGIN * data[f"{d}_first"].mean(axis=0)),
        ]  # fmt: skip
    return rows


@part("fedawe-lemma2")
def lemma2_plot(data, s, fig):
    axes = plots.panels(fig, 2)
    what = (("first", "bound1", r"$1/\delta$"), ("second", "bound2", r"$2/\delta^2$"))
    for ax, (moment, bound, formula) in zip(axes, what, strict=True):
        for i, d in enumerate(DYNAMICS):
            worst = data[f"{d}_{moment}"].max(axis=1)  # [T] worst client
            ax.plot(worst, **plots.series(i, points=worst.size),
                    label=f"{NAMES[d]} (exact)")  # fmt: skip
        bounds = {d: data[f"{d}_{bound}"] for d in DYNAMICS}
        for group in plots.coinciding(bounds):
            i = DYNAMICS.index(group[0])
            assumed = "" if data[f"{group[0]}_delta"] > 0 else " (at smallest $p>0$)"
            ax.axhline(bounds[group[0]], color=plots.COLORS[i], ls=":", lw=1.2,
                       label=f"{formula} $= {float(bounds[group[0]]):.3g}$, "
                       f"{', '.join(NAMES[d] for d in group)}{assumed}")  # fmt: skip
    axes[0].set(xlabel="round $t$", ylabel=r"$\max_i\mathbb{E}[t-\tau_i(t)]$ (rounds)",
                yscale="log", title=r"Lemma 2, first moment (dotted: $1/\delta$)")  # fmt: skip
    axes[1].set(xlabel="round $t$", ylabel=r"$\max_i\mathbb{E}[(t-\tau_i(t))^2]$ (rounds$^2$)",
                yscale="log", title=r"Lemma 2, second moment (dotted: $2/\delta^2$)")  # fmt: skip
    for ax in axes:
        plots.log_labels(ax)
        plots.legend(ax, ncols=2)
    return (
        "Exact moments of the worst client per round; the dotted lines are the bounds, in the "
        "colour of the first dynamics they belong to and named in the legend with every "
        "dynamics sharing that delta (for the interleaved sine, at the smallest positive "
        "probability: Assumption 1 fails there). Sampled means agree with the exact values "
        "(verdict rows)."
    )


# --- Proposition 1 -----------------------------------------------------------------------
@declare(
    "rounds",
    "replicates",
    "seed",
    problem=Exemplified(
        Instance(FederatedProblem), lambda args: QuadraticProblem.random(2, 2, mu=0.5, L=2.0)
    ),
    proc=Exemplified(
        Instance(AvailabilityProcess), lambda args: NonStationary([0.5, 0.9], dynamics="sine")
    ),
    alg=Exemplified(Instance(FedAWE), lambda args: FedAWE(local_steps=2, lr=0.05)),
    w0=Either(Array(shape=("problem.dim",)), Array(shape=("replicates", "problem.dim"))),
)
def run_fedawe(problem, proc, alg, *, rounds: int, replicates: int, seed: int, w0):
    """FedAWE run by :func:`~fedtheory.sim.simulate`, recording every round: the mask
    ``[R, T, N]``, echo factors ``[R, T, N]`` and client models ``[R, T+1, N, d]`` (entry 0:
    the initial models)."""
    cells = replicates * (rounds + 1) * problem.num_clients
    check_bytes(cells * (24 * problem.dim + 9), "run_fedawe", fixes="fewer rounds or replicates",
                what=f"every round's client models [R, T+1, N, d], {cells:.3g} of them, twice, "
                     "with the echo factors and the mask")  # fmt: skip
    record = {"echo": lambda state, mask: state.echo, "x": lambda state, mask: state.x}
    run = simulate(problem, proc, alg, rounds=rounds, replicates=replicates, seed=seed, w0=w0,
                   eval_every=rounds, record=record)  # fmt: skip
    start = np.broadcast_to(
        run.iterates[:, :1, None], (replicates, 1, *run.recorded["x"].shape[2:])
    )
    return run.participation, run.recorded["echo"], np.concatenate([start, run.recorded["x"]], 1)


@part("fedawe-proposition1")
def prop1_settings(size: Size) -> dict:
    reps = {"tiny": 4, "quick": 20, "full": 200}[size]
    return {**_base(), "rounds": 80, "replicates": reps, "dim": 2, "noise": 0.1,
            "local_steps": 2, "lr": 0.05}  # fmt: skip


@part("fedawe-proposition1")
def prop1_compute(s: dict) -> dict[str, np.ndarray]:
    problem = QuadraticProblem.random(s["clients"], s["dim"], mu=0.5, L=2.0,
                                      noise_std=s["noise"], seed=s["seed"])  # fmt: skip
    alg = FedAWE(local_steps=s["local_steps"], lr=s["lr"])
    out = {}
    for d, proc in processes(s).items():
        run = {"rounds": s["rounds"], "replicates": s["replicates"], "seed": s["seed"]}
        mask, echo, _ = run_fedawe(problem, proc, alg, **run, w0=np.ones(s["dim"]))
        total = np.cumsum(echo, axis=1)  # sum_{t' <= t} 1{i in A_t'} (t' - tau_i(t'))
        rounds = np.broadcast_to(np.arange(1, s["rounds"] + 1)[None, :, None], mask.shape)
        out[f"{d}_measured"] = total[mask]  # at every active (replicate, round R-1, client)
        out[f"{d}_predicted"] = rounds[mask].astype(float)
    return out


@part("fedawe-proposition1")
def prop1_judge(data, s):
    return [
        compare_equal(
            f"sum_(t<R) 1{{i in A_t}} (t - tau_i(t)) = R whenever i is active in round R-1 "
            f"({NAMES[d]}, {data[f'{d}_measured'].size} active pairs of FedAWE runs)",
            fedawe.proposition1.reference,
            data[f"{d}_measured"],
            data[f"{d}_predicted"],
            rtol=0.0,
        )  # fmt: skip
        for d in DYNAMICS
    ]


def _largest(values: np.ndarray) -> float:
    """The entry of largest magnitude (signed)."""
    return float(values[np.argmax(np.abs(values))])


@part("fedawe-proposition1")
def prop1_plot(data, s, fig):
    ax1, ax2 = plots.panels(fig, 2)
    worst = 0.0
    for i, d in enumerate(DYNAMICS):
        R, measured = data[f"{d}_predicted"], data[f"{d}_measured"]
        residual = measured - R  # [active pairs] 0 when the identity holds
        worst = max(worst, float(np.max(np.abs(residual), initial=0.0)))
        rounds, count = np.unique(R, return_counts=True)
        ax1.plot(rounds, [_largest(residual[R == r]) for r in rounds],
                 **plots.series(i, points=rounds.size), label=NAMES[d])  # fmt: skip
        ax2.plot(rounds, count, **plots.series(i, points=rounds.size), label=NAMES[d])
    span = max(worst, 1.0)
    ax1.set(ylim=(-span, span), xlabel="round count $R$ (rounds)",
            ylabel=r"residual: sum of echo factors $-\ R$ (rounds)",
            title="Proposition 1: residual per round (0: identity exact)")  # fmt: skip
    ax2.set(xlabel="round count $R$ (rounds)", ylabel="active (replicate, client) pairs checked",
            title="Pairs checked per round, by dynamics")  # fmt: skip
    plots.legend(ax1, ncols=2)
    plots.legend(ax2, ncols=2)
    total = sum(int(data[f"{d}_predicted"].size) for d in DYNAMICS)
    return (
        f"Left: the residual of largest magnitude over the active pairs of each round, for "
        f"each dynamics: a line through every round, markers at every {max(1, rounds.size // 12)}"
        "th round, at other rounds for each dynamics (the lines coincide where the residuals "
        "are equal); the largest |residual| "
        f"over all {total} pairs is {worst:g} rounds. Right: how many pairs each round checks "
        "(a line through every round; markers at some rounds tell the dynamics apart)."
    )


# --- Lemma 4 and Lemma 1 -----------------------------------------------------------------
@declare(mask=BoolArray(ndim=(1, 2, 3, 4)))
def mixing_matrices(mask: np.ndarray) -> np.ndarray:
    r"""Mixing matrices (4) ``[..., N, N]`` of masks ``[..., N]``:
    :math:`W=\mathrm{diag}(1-a)+aa^\top/\max(|A|,1)` (identity when nobody is active)."""
    a = mask.astype(float)
    count = np.maximum(a.sum(-1), 1.0)[..., None, None]
    eye = np.eye(a.shape[-1])
    return eye * (1 - a)[..., None, :] + a[..., :, None] * a[..., None, :] / count


@part("fedawe-lemma4")
def lemma4_settings(size: Size) -> dict:
    reps = {"tiny": 400, "quick": 4000, "full": 40000}[size]
    return {**_base(), "replicates": reps, "depth": 6, "dim": 3}


@part("fedawe-lemma4")
def lemma4_compute(s: dict) -> dict[str, np.ndarray]:
    out = {}
    gen = rng.numpy_rng(s["seed"], 0, rng.DATA)
    B = gen.standard_normal((s["dim"], s["clients"]))
    J = np.full((s["clients"],) * 2, 1 / s["clients"])
    for d, proc in processes(s).items():
        prob = proc.probabilities(np.arange(s["period"]))  # one period: every p^t there is
        rho_t = fedawe.mixing_rho(prob)
        delta = proc.delta(s["period"])
        mask = proc.sample(s["depth"], replicates=s["replicates"], seed=s["seed"]).numpy()
        W = mixing_matrices(mask)  # [R, depth, N, N]
        product = np.broadcast_to(np.eye(s["clients"]), W[:, 0].shape).copy()
        errors = []
        for t in range(s["depth"]):
            product = product @ W[:, t]
            errors.append(np.sum((B @ (product - J)) ** 2, axis=(-2, -1)))
        rho = float(rho_t.max())
        out |= {
            f"{d}_rho": np.float64(rho),
            f"{d}_rho_t": rho_t,
            f"{d}_lemma4": np.float64(
                fedawe.lemma4.evaluate(delta=delta, m=s["clients"]).total if delta > 0 else 1.0
            ),
            f"{d}_delta": np.float64(delta),
            f"{d}_M_sampled": W[:, 0].reshape(s["replicates"], -1),  # W^2 = W: E[W] = M
            f"{d}_M_exact": fedawe.mixing_moment(prob[0]).ravel(),
            f"{d}_consensus": np.stack(errors, axis=1),  # [R, depth]
            f"{d}_lemma1": np.array(
                [
                    fedawe.lemma1.evaluate(rho=rho, t=t + 1, B_sq=float(np.sum(B**2))).total
                    for t in range(s["depth"])
                ]  # fmt: skip
            ),
        }
    return out


@part("fedawe-lemma4")
def lemma4_judge(data, s):
    rows = []
    for d in DYNAMICS:
        hold = bool(data[f"{d}_delta"] > 0)
        rows += [
            compare_upper(
                f"exact rho = max_t lambda_2(E[W^2]) <= 1 - delta^4 (1 - (1 - delta)^m)^2 / 8 "
                f"({NAMES[d]}, m = {s['clients']})",
                fedawe.lemma4.reference, data[f"{d}_rho"], data[f"{d}_lemma4"],
                assumptions_hold=hold,
            ),
            compare_mean_equal(
                f"mean of sampled W^(0) = exact E[W^2] (entrywise, {NAMES[d]})",
                "fedtheory: E[W^2] = E[W] by Gauss-Legendre quadrature (bounds.fedawe)",
                data[f"{d}_M_sampled"], data[f"{d}_M_exact"], margin=MIXING_MARGIN,
            ),
            compare_mean_upper_bound(
                f"E||B (prod_(r<=t) W^(r) - J)||_F^2 <= rho^t ||B||_F^2, t = 1..{s['depth']} "
                f"({NAMES[d]}, exact rho)",
                fedawe.lemma1.reference, data[f"{d}_consensus"], data[f"{d}_lemma1"],
                assumptions_hold=bool(data[f"{d}_rho"] < 1),
            ),
        ]  # fmt: skip
    return rows


RHO_FLOOR = 1e-12
"""Spectral gaps :math:`1-\rho` below this are drawn on it (an exact :math:`\rho=1`)."""


@part("fedawe-lemma4")
def lemma4_plot(data, s, fig):
    ax1, ax_m, ax2 = plots.panels(fig, 3)
    xs = np.arange(len(DYNAMICS))
    gap = np.array([1.0 - float(data[f"{d}_rho"]) for d in DYNAMICS])  # exact 1 - rho
    floor = np.array([1.0 - float(data[f"{d}_lemma4"]) for d in DYNAMICS])  # Lemma 4's gap
    ax1.plot(
        xs - 0.08,
        plots.floored(gap, RHO_FLOOR),
        **plots.series(0, line=False),
        label=r"exact spectral gap $1-\rho$",
    )
    ax1.plot(
        xs + 0.08,
        plots.floored(floor, RHO_FLOOR),
        **plots.series(1, line=False),
        label=r"Lemma 4's guaranteed gap $\delta^4(1-(1-\delta)^m)^2/8$",
    )
    ax1.set_xticks(xs, [NAMES[d] for d in DYNAMICS])
    ax1.set(
        yscale="log",
        ylabel=r"$1-\rho$ (dimensionless)",
        title=r"Lemma 4: $\rho\leq$ bound $\Leftrightarrow$ gap above it",
    )
    plots.mark_floor(ax1, RHO_FLOOR, what=r"$\rho=1$")
    plots.legend(ax1)
    sampled = {NAMES[d]: data[f"{d}_M_sampled"].mean(axis=0) for d in DYNAMICS}
    exact = {NAMES[d]: data[f"{d}_M_exact"] for d in DYNAMICS}
    for i, group in enumerate(plots.coinciding(sampled)):
        ax_m.plot(exact[group[0]], sampled[group[0]], **plots.series(i, line=False),
                  label=" = ".join(group))  # fmt: skip
    ends = np.array([0.0, max(float(np.max(v)) for v in exact.values())])
    ax_m.plot(ends, ends, color="k", lw=1, ls=":", label="equal (the diagonal)")
    ax_m.set(
        xlabel=r"exact entry of $\mathbb{E}[W^2]=\mathbb{E}[W]$",
        ylabel=r"mean of the sampled $W^{(0)}$ entry",
        title=rf"$\mathbb{{E}}[W^2]$, entrywise (margin $\pm{MIXING_MARGIN:g}$)",
    )
    plots.legend(ax_m)
    t = np.arange(1, s["depth"] + 1)
    measured = {NAMES[d]: data[f"{d}_consensus"].mean(axis=0) for d in DYNAMICS}
    bounds = {NAMES[d]: data[f"{d}_lemma1"] for d in DYNAMICS}
    for i, group in enumerate(plots.coinciding(measured)):
        ax2.plot(
            t,
            measured[group[0]],
            **plots.series(i, line=False),
            label=f"measured: {' = '.join(group)}",
        )
    rho = {NAMES[d]: float(data[f"{d}_rho"]) for d in DYNAMICS}
    for j, group in enumerate(plots.coinciding(bounds)):
        ax2.plot(
            t,
            bounds[group[0]],
            **plots.series(j + 3, marker=False),
            label=rf"$\rho^t\|B\|_F^2$, $\rho={rho[group[0]]:.4g}$: {', '.join(group)}",
        )
    ax2.set(
        xlabel="$t$ (rounds)",
        ylabel=r"$\mathbb{E}\|B(\prod W-J)\|_F^2$ (model units$^2$)",
        yscale="log",
        title="Lemma 1: measured and its bound",
    )
    plots.log_labels(ax2)
    plots.legend(ax2)
    attained = [NAMES[d] for d, g, f in zip(DYNAMICS, gap, floor, strict=True) if g <= f]
    return (
        "Left: a dynamics satisfies Lemma 4 when its exact gap (circle) lies above the "
        "guaranteed one (square); gaps below "
        f"{RHO_FLOOR:g} are drawn on that floor. "
        + (
            f"Bound attained (rho equal to it): {', '.join(attained)}"
            + (
                " (delta = 0 there: Lemma 4's assumption fails and its bound is taken as 1)."
                if any(float(data[f"{d}_delta"]) == 0 for d in DYNAMICS)
                else "."
            )
            if attained
            else "The bound is attained by no dynamics."
        )
        + " Middle: each entry of the mean sampled W^(0) against the exact E[W^2] (on the "
        "diagonal when equal; dynamics with equal means share one series). Right: Lemma 1's "
        "consensus error E||B (prod W - J)||_F^2 (markers) and its bound rho^t ||B||_F^2 "
        "(lines); dynamics whose measured values (or exact rho) are equal share one series, "
        "named by all of them."
    )


# --- Lemma 5 -----------------------------------------------------------------------------
@declare(
    "steps",
    "lr",
    finite_result=True,
    e0=Array(ndim=1),
    A=Array(shape=("e0[0]", "e0[0]")),
    sigma2=Real(0.0),
)
def lemma5_exact(A: np.ndarray, e0: np.ndarray, *, steps: int, lr: float, sigma2: float) -> float:
    r"""Exact :math:`\mathbb E\|\sum_{r<s}(\nabla F(x^{(r)})-\nabla F(x^{(0)}))\|^2` for
    :math:`F(x)=\frac12(x-u)^\top A(x-u)`, :math:`e_0=x^{(0)}-u`, SGD with additive
    zero-mean noise of covariance :math:`(\sigma^2/d)I`: with :math:`P=I-\eta A`,
    :math:`\sum_r\nabla F(x^{(r)})-\nabla F(x^{(0)})=A\sum_r(P^r-I)e_0-\eta A\sum_{k<s-1}
    \big(\sum_{r=k+1}^{s-1}P^{r-1-k}\big)\xi_k`, where the inner sum is the partial sum
    :math:`\sum_{j\le s-2-k}P^j` (``s`` steps: :math:`O(s\log s)` products of ``[d, d]``)."""
    d = A.shape[0]
    check_bytes(
        16 * steps * d * d,
        "lemma5_exact",
        what=f"{steps} powers [{d}, {d}] and their partial sums",
        fixes="fewer steps",
    )
    work = seconds(rounds=steps, flops=2 * steps * math.log2(steps + 1) * d**3)
    check_seconds(
        work, "lemma5_exact", what=f"{steps} matrix powers [{d}, {d}]", fixes="fewer steps"
    )
    P = np.eye(d) - lr * A
    powers = np.empty((steps, d, d))
    for r in range(steps):
        powers[r] = np.linalg.matrix_power(P, r)
    mean = A @ sum(pw - np.eye(d) for pw in powers) @ e0
    partial = np.cumsum(powers, axis=0)  # [s, d, d] sum_{j <= m} P^j
    var = 0.0
    for k in range(steps - 1):
        var += (
            lr * lr * np.sum((A @ partial[steps - 2 - k]) ** 2) * sigma2 / d
        )  # overflow: inf, refused
    return float(mean @ mean + var)


@part("fedawe-lemma5")
def lemma5_settings(size: Size) -> dict:
    reps = {"tiny": 500, "quick": 4000, "full": 40000}[size]
    return {"steps": [1, 2, 5, 10], "lr_fraction": [1.0, 0.25], "dim": 3, "mu": 0.5, "L": 2.0,
            "noise": 0.5, "replicates": reps, "seed": 1}  # fmt: skip


@part("fedawe-lemma5")
def lemma5_compute(s: dict) -> dict[str, np.ndarray]:
    with fused.owns_the_cores():  # small tensors: torch on one thread
        return _lemma5_compute(s)


def _lemma5_compute(s: dict) -> dict[str, np.ndarray]:
    problem = QuadraticProblem.random(1, s["dim"], mu=s["mu"], L=s["L"], noise_std=s["noise"],
                                      seed=s["seed"])  # fmt: skip
    A, u = problem.A[0], problem.c[0]
    x0 = u + np.ones(s["dim"])
    sigma2 = s["dim"] * s["noise"] ** 2
    grad0 = A @ (x0 - u)
    exact, bound, sampled = [], [], []
    for steps in s["steps"]:
        for frac in s["lr_fraction"]:
            lr = frac / (4 * steps * problem.L)
            exact.append(lemma5_exact(A, x0 - u, steps=steps, lr=lr, sigma2=sigma2))
            bound.append(fedawe.lemma5.evaluate(eta_l=lr, s=steps, L=problem.L, sigma2=sigma2,
                                                grad_i_sq=float(grad0 @ grad0)).total)  # fmt: skip
            # the same quantity from the simulator's local SGD (gradients along the path)
            gen = rng.torch_generator(s["seed"], steps, rng.GRADIENT_NOISE)
            y = torch.as_tensor(x0).expand(s["replicates"], -1).clone()
            clients = torch.zeros(s["replicates"], dtype=torch.int64)
            total = torch.zeros_like(y)
            for _ in range(steps):  # one local step at a time to read x^(t,r)
                total += (y - torch.as_tensor(u)) @ torch.as_tensor(A) - torch.as_tensor(grad0)
                y = y + local_sgd(problem, y, clients, steps=1, lr=lr, generator=gen)
            sampled.append((total**2).sum(-1).numpy())
    return {"exact": np.array(exact), "predicted": np.array(exact), "bound": np.array(bound),
            "sampled": np.stack(sampled, axis=1)}  # fmt: skip


@part("fedawe-lemma5")
def lemma5_judge(data, s):
    return [
        compare_upper(
            "E||sum_(r<s) (grad F_i(x^(t,r)) - grad F_i(x^t))||^2 (exact, quadratic) <= "
            f"Lemma 5's bound, s in {s['steps']}, eta_l = c/(4sL), c in {s['lr_fraction']}",
            fedawe.lemma5.reference, data["exact"], data["bound"],
        ),
        compare_mean_equal(
            "local SGD runs of the simulator reproduce the exact value (every s, eta_l)",
            "fedtheory: closed form of lemma5_exact", data["sampled"], data["predicted"],
            margin=LEMMA5_MARGIN * data["exact"],
        ),
    ]  # fmt: skip


@part("fedawe-lemma5")
def lemma5_plot(data, s, fig):
    (ax,) = plots.panels(fig, 1)
    k = len(s["lr_fraction"])
    steps = np.array(s["steps"], float)
    exact = np.asarray(data["exact"], dtype=float)
    positive = exact[exact > 0]
    floor = 10.0 ** (np.floor(np.log10(positive.min())) - 1) if positive.size else 1e-12
    for j, frac in enumerate(s["lr_fraction"]):
        x, y = plots.dodge(steps, j, k, log=True, width=0.03), exact[j::k]
        # a 0 is drawn on the floor as a marker alone: a line from it to the next value
        # would draw a slope the data does not have
        ax.plot(x, np.where(y > 0, y, np.nan), **plots.series(j),
                label=f"exact, c = {frac:g}")  # fmt: skip
        ax.plot(x[y <= 0], np.full(int(np.sum(y <= 0)), floor),
                **plots.series(j, line=False))  # fmt: skip
        ax.plot(steps, data["bound"][j::k], **{**plots.series(j, filled=False), "linestyle": ":"},
                label=f"Lemma 5 bound, c = {frac:g}")  # fmt: skip
    ax.set(xscale="log", yscale="log", xlabel="local steps $s$",
           ylabel="squared gradient drift (gradient units$^2$)",
           title=r"Lemma 5 at $\eta_l=c/(4sL)$")  # fmt: skip
    plots.log_ticks(ax, steps)
    plots.mark_floor(ax, floor, what="exact 0")
    plots.legend(ax, ncols=2)
    zero = sorted({int(v) for v in np.repeat(steps, k)[exact == 0]})
    return (
        f"The exact drift is 0 at s = {', '.join(map(str, zero))} (the sum over r < s then "
        f"holds only its r = 0 term, which is 0), drawn as a marker alone on the {floor:g} "
        "floor (no line joins it to the next value); the exact "
        "values of the two step sizes are shifted slightly along s so that neither hides the "
        "other."
        if zero
        else None
    )


# --- Lemma 4 on random populations, through the user's path (theorem_check) ---------------
@declare("seed", delta=Real(0.0, 1.0, low_open=True), m=SizeIn(2))
def population_rho(*, delta: float, m: int, seed: int) -> float:
    r"""Exact :math:`\rho` of ``m`` clients with :math:`p_i=\delta+(1-\delta)U_i`,
    :math:`U_i\sim\mathcal U(0,1)` from ``seed``, one client at :math:`p=\delta`
    (Assumption 1: :math:`p_i\ge\delta>0`; Lemma 4's :math:`\rho` needs :math:`m\ge2`)."""
    check_bytes(
        32 * m * m, "population_rho", what=f"a moment matrix [{m}, {m}]", fixes="fewer clients m"
    )
    check_seconds(
        seconds(flops=2 * m**3),
        "population_rho",
        what=f"the eigenvalues of a [{m}, {m}] matrix",
        fixes="fewer clients m",
    )
    u = rng.numpy_rng(seed, 0, rng.DATA).random(m)
    u[0] = 0.0
    return float(fedawe.mixing_rho(delta + (1 - delta) * u))


POPULATIONS = {
    "tiny": [{"delta": d, "m": m, "seed": 0} for d in (0.1, 0.5) for m in (2, 10)],
    "quick": [
        {"delta": d, "m": m, "seed": i}
        for i, d in enumerate((0.05, 0.2, 0.5, 0.9))
        for m in (2, 5, 20, 50)
    ],  # fmt: skip
    "full": [
        {"delta": d, "m": m, "seed": i}
        for i, d in enumerate(np.linspace(0.02, 0.98, 9))
        for m in (2, 3, 5, 10, 20, 50, 100)
    ],  # fmt: skip
}


@part("fedawe-lemma4-populations")
def populations_plot(data, s, fig):
    r"""Spectral gaps against :math:`m`, one colour per :math:`\delta`: the exact
    :math:`1-\rho` (markers) and Lemma 4's guaranteed :math:`\delta^4(1-(1-\delta)^m)^2/8`
    (lines); right, their ratio, at least 1 where :math:`\rho` is within the bound (on
    :math:`\rho` itself, near 1, the curves would lie on top of each other)."""
    ax1, ax2 = plots.panels(fig, 2)
    insts = s["instances"]
    gap = 1.0 - data["measured"][:, 0]
    guaranteed = 1.0 - data["bound"]
    for i, delta in enumerate(dict.fromkeys(inst["delta"] for inst in insts)):
        idx = sorted((j for j, inst in enumerate(insts) if inst["delta"] == delta),
                     key=lambda j: insts[j]["m"])  # fmt: skip
        m = [insts[j]["m"] for j in idx]
        tag = rf"$\delta={delta:g}$"
        ax1.plot(m, gap[idx], **plots.series(i, line=False), label=rf"$1-\rho$, {tag}")
        ax1.plot(m, guaranteed[idx], **plots.series(i, marker=False), label=f"Lemma 4, {tag}")
        ax2.plot(m, gap[idx] / guaranteed[idx], **plots.series(i), label=tag)
    ax2.axhline(1.0, color="k", lw=1, ls=":", label=r"ratio 1 ($\rho$ on the bound)")
    for ax in (ax1, ax2):
        ax.set(xscale="log", yscale="log", xlabel="$m$ (clients)")
        plots.log_ticks(ax, sorted({inst["m"] for inst in insts}))
        plots.log_labels(ax)
    ax1.set(ylabel=r"spectral gap $1-\rho$", title=r"Lemma 4: exact gap and its guarantee")
    ax2.set(ylabel=r"$(1-\rho)\,/\,$guaranteed gap", title=r"Within the bound: ratio $\geq 1$")
    plots.legend(ax1, ncols=2)
    plots.legend(ax2, ncols=3)
    return (
        "FedAWE Lemma 4 on random populations (one client at p = delta, the others uniform "
        "above it): left, the exact spectral gap 1 - rho (markers) and the gap Lemma 4 "
        "guarantees, delta^4 (1 - (1 - delta)^m)^2 / 8 (lines), against the number of "
        "clients m, one colour per delta; right, their ratio, at least 1 where rho is "
        "within the bound. Drawn as gaps on a log axis: rho and its bound lie within "
        f"{max(gap.max(), guaranteed.max()):.2g} of 1, where they would overlap."
    )


CLAIM = "Xiang et al. (FedAWE), NeurIPS 2024"
for _name, _title, _parts, _bounds in (
    ("fedawe-lemma2", "FedAWE Lemma 2: unavailability statistics under the paper's dynamics",
     (lemma2_settings, lemma2_compute, lemma2_judge, lemma2_plot),
     tuple(f"{d}_{k}" for d in DYNAMICS for k in ("bound1", "bound2", "predicted"))),
    ("fedawe-proposition1", "FedAWE Proposition 1: the echo identity on runs",
     (prop1_settings, prop1_compute, prop1_judge, prop1_plot),
     tuple(f"{d}_predicted" for d in DYNAMICS)),
    ("fedawe-lemma4", "FedAWE Lemmas 4 and 1: exact rho of the mixing matrices",
     (lemma4_settings, lemma4_compute, lemma4_judge, lemma4_plot),
     tuple(f"{d}_{k}" for d in DYNAMICS for k in ("lemma4", "M_exact", "lemma1"))),
    ("fedawe-lemma5", "FedAWE Lemma 5: multi-step perturbation, exact on quadratics",
     (lemma5_settings, lemma5_compute, lemma5_judge, lemma5_plot), ("bound", "predicted")),
):  # fmt: skip
    register(Check(_name, _title, f"{CLAIM}: {_title.split(': ')[0][7:]}", *_parts,
                   bounds=_bounds, cost=0.2))  # fmt: skip

register(
    replace(
        theorem_check(
            fedawe.lemma4,
            population_rho,
            name="fedawe-lemma4-populations",
            instances=POPULATIONS,
            x="m",
            measured="exact rho (random population above delta)",
            title="FedAWE Lemma 4 on random heterogeneous populations",
        ),
        plot=populations_plot,
        cost=0.1,
    )
)
