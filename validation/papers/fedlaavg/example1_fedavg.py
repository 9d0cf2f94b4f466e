r"""FedAvg on FedLaAvg's Example 1, unequal and equal blocks (Yan et al., Example 1, App. C).

Simulated FedAvg (one exact gradient step per round on :math:`f_i=(x-e_i)^2`, alternating
availability) for several learning rates :math:`\gamma`, run until the iterate sits on its
limit cycle.

* Unequal blocks :math:`t_1\ne t_2`: measured last period-end iterate and time average of
  the last period; predicted :math:`X_B` and :math:`(t_1e_1+t_2e_2)/(t_1+t_2)\ne x^*`.
* Equal blocks :math:`t_1=t_2=\tau`: the time average is :math:`x^*` but the iterate
  oscillates; measured :math:`|x_{\text{after block 1}}-x_{\text{period end}}|`, predicted
  :math:`\frac{1-\rho}{1+\rho}|e_1-e_2|`, :math:`\rho=(1-2\gamma)^\tau`.
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory.availability import AlternatingBlocks
from fedtheory.bounds import fedlaavg
from fedtheory.constraints import MAX_SIZE, Real, declare
from fedtheory.constraints import Size as SizeIn
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import AverageParticipating, FedAvg, simulate
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import compare_equal

CONVERGED = 1e-12  # |r|^rounds below this: the iterate sits on the limit cycle
RTOL = 1e-8
TRACE = 200  # rounds of trajectory kept for the figure


@part("example1-fedavg")
def settings(size: Size) -> dict:
    gammas = {
        "tiny": [0.2, 0.05],
        "quick": [0.2, 0.05, 0.01],
        "full": [0.3, 0.1, 0.03, 0.01, 0.003],
    }[size]
    return {"e1": 0.0, "e2": 1.0, "t1": 9, "t2": 1, "tau": 5, "x0": 5.0, "gammas": gammas}


@declare(gamma=Real(0, 1, low_open=True, high_open=True), period=SizeIn())
def limit_cycle_rounds(gamma: float, period: int) -> int:
    r"""Whole periods of rounds after which the transient :math:`|r|^t`,
    :math:`r=1-2\gamma` (:math:`x_{t+1}-e_i=r(x_t-e_i)`, Example 1), is below
    ``CONVERGED``, plus one more period; :math:`0<\gamma<1` is the limit cycle's hypothesis
    (:math:`|r|<1`). More than ``MAX_SIZE`` rounds (a step too small) is refused."""
    nearest_end = min(gamma, 1 - gamma)  # |r| = 1 - 2 * nearest_end, log1p accurate near 0
    # gamma = 1/2: r = 0, the first round lands on the cycle
    need = math.log(CONVERGED) / math.log1p(-2 * nearest_end) if nearest_end < 0.5 else 0.0
    if need > MAX_SIZE:
        raise ParameterError(
            f"The 'gamma' parameter of limit_cycle_rounds must leave a transient below "
            f"{CONVERGED:g} within {MAX_SIZE} rounds (|1 - 2*gamma|**{MAX_SIZE} < {CONVERGED:g}). "
            f"Got {gamma!r} instead."
        )
    rounds = period * (math.ceil(need / period) + 1)
    if rounds > MAX_SIZE:
        raise ParameterError(
            f"The 'period' parameter of limit_cycle_rounds must leave at most {MAX_SIZE} "
            f"rounds (whole periods past the transient of gamma={gamma!r}). Got {period!r} instead."
        )
    return rounds


def _limit_cycle(s: dict, t1: int, t2: int) -> dict[str, np.ndarray]:
    """FedAvg for every learning rate: the last period of its trajectory."""
    problem = QuadraticProblem.example1(s["e1"], s["e2"])
    process = AlternatingBlocks(t1, t2)
    period = t1 + t2
    end, after1, avg, traces = [], [], [], []
    for gamma in s["gammas"]:
        alg = FedAvg(AverageParticipating(), local_steps=1, lr=gamma)
        # at least TRACE rounds, so that every trajectory of the figure reaches its end
        rounds = max(limit_cycle_rounds(gamma, period), period * math.ceil(TRACE / period))
        x = simulate(problem, process, alg, rounds=rounds, w0=[s["x0"]]).iterates[0, :, 0]
        end.append(x[-1])  # x_{k(t1+t2)}: rounds is a multiple of the period
        after1.append(x[-1 - t2])  # x_{k(t1+t2)-t2}: after client 1's block
        avg.append(x[-period - 1 : -1].mean())  # the t1+t2 iterates of the last period
        traces.append(x[:TRACE])
    return {
        "end": np.array(end),
        "after1": np.array(after1),
        "average": np.array(avg),
        "trace": np.array(traces),
    }


@part("example1-fedavg")
def compute(s: dict) -> dict[str, np.ndarray]:
    gamma = np.array(s["gammas"])
    kw = {"e1": s["e1"], "e2": s["e2"], "gamma": gamma}
    unequal = _limit_cycle(s, s["t1"], s["t2"])
    equal = _limit_cycle(s, s["tau"], s["tau"])
    tt = {"t1": s["t1"], "t2": s["t2"]}
    return {
        "gamma": gamma,
        **{f"unequal_{k}": v for k, v in unequal.items()},
        **{f"equal_{k}": v for k, v in equal.items()},
        "equal_amplitude": np.abs(equal["after1"] - equal["end"]),
        "X_B": fedlaavg.end_of_period.evaluate(**kw, **tt).total,
        "X_A": fedlaavg.after_block1.evaluate(**kw, **tt).total,
        "block_average": fedlaavg.time_average.evaluate(**kw, **tt).total,
        "equal_block_average": fedlaavg.time_average.evaluate(**kw, t1=s["tau"], t2=s["tau"]).total,
        "amplitude": fedlaavg.equal_block_amplitude.evaluate(**kw, tau=s["tau"]).total,
    }


@part("example1-fedavg")
def judge(data, s):
    def equal(claim, theorem, measured, predicted):
        return compare_equal(
            claim, theorem.reference, data[measured], data[predicted], rtol=RTOL, atol=RTOL
        )

    return [
        equal(
            "FedAvg period-end iterate -> X_B (unequal blocks)",
            fedlaavg.end_of_period,
            "unequal_end",
            "X_B",
        ),
        equal(
            "FedAvg time average = (t1 e1 + t2 e2)/(t1 + t2) != x* (unequal blocks)",
            fedlaavg.time_average,
            "unequal_average",
            "block_average",
        ),
        equal(
            "FedAvg time average = (e1 + e2)/2 = x* (equal blocks)",
            fedlaavg.time_average,
            "equal_average",
            "equal_block_average",
        ),
        equal(
            "FedAvg oscillation |X_A - X_B| = (1-rho)/(1+rho)|e1-e2| (equal blocks)",
            fedlaavg.equal_block_amplitude,
            "equal_amplitude",
            "amplitude",
        ),
    ]


@part("example1-fedavg")
def plot(data, s, fig):
    x_star = (s["e1"] + s["e2"]) / 2
    ax1, ax2, ax3 = plots.panels(fig, 3)
    traces = zip(data["gamma"], data["unequal_trace"], data["X_B"], strict=True)
    for i, (g, tr, b) in enumerate(traces):
        style = plots.series(i, points=tr.size)
        ax1.plot(tr, **{**style, "linewidth": 1}, label=rf"FedAvg, $\gamma={g:g}$")
        ax1.axhline(b, color=style["color"], ls=(0, (2, 2)), lw=0.8)
    ax1.axhline(x_star, **plots.REFERENCE, label="optimum $x^*$")
    # the axis shows the limit cycles; the transient from x_0 leaves it at the top
    cycle = data["unequal_trace"][:, TRACE // 2 :]
    low, high = min(cycle.min(), x_star), max(cycle.max(), x_star)
    pad = 0.15 * (high - low)
    ax1.set_ylim(low - 2 * pad, high + pad)
    ax1.annotate(
        f"all runs start at $x_0={s['x0']:g}$ (above the axis)",
        xy=(0.98, 0.02),
        xycoords="axes fraction",
        ha="right",
        va="bottom",
        fontsize=8,
    )
    ax1.set(
        xlabel="round $t$",
        ylabel=f"iterate $x_t$ (data units: $e_1={s['e1']:g}$, $e_2={s['e2']:g}$)",
        title=f"Unequal blocks $t_1={s['t1']}$, $t_2={s['t2']}$ (thin dashed: $X_B$)",
    )
    plots.legend(ax1, ncols=2)
    g = data["gamma"]
    ax2.plot(g, data["X_B"], **plots.series(0, marker=False), label="$X_B$ (closed form)")
    ax2.plot(g, data["unequal_end"], **plots.series(0, line=False),
             label="measured period end")  # fmt: skip
    ax2.plot(g, data["X_A"], **plots.series(1, marker=False), label="$X_A$ (closed form)")
    ax2.plot(g, data["block_average"], **plots.series(2, marker=False),
             label="$(t_1e_1+t_2e_2)/(t_1+t_2)$")  # fmt: skip
    ax2.plot(g, data["unequal_average"], **plots.series(2, line=False, filled=False),
             markersize=9, label=r"measured average ($t_1\neq t_2$)")  # fmt: skip
    ax2.axhline(x_star, **plots.REFERENCE, label="optimum $x^*$")
    ax2.plot(g, data["equal_average"], **plots.series(3, line=False),
             label=r"measured average ($t_1=t_2=\tau$)")  # fmt: skip
    ax2.set(
        xscale="log",
        xlabel=r"learning rate $\gamma$ (dimensionless)",
        ylabel="$x$ (data units)",
        title="Limit cycle: its end and time average",
    )
    plots.log_ticks(ax2, g)
    plots.legend(ax2, ncols=2)
    ax3.plot(g, data["amplitude"], **plots.series(0, marker=False),
             label=r"$\frac{1-\rho}{1+\rho}|e_1-e_2|$ (closed form)")  # fmt: skip
    ax3.plot(g, data["equal_amplitude"], **plots.series(0, line=False),
             label="measured $|x_{\\mathrm{mid}}-x_{\\mathrm{end}}|$")  # fmt: skip
    ax3.set(
        xscale="log",
        yscale="log",
        xlabel=r"learning rate $\gamma$ (dimensionless)",
        ylabel="oscillation amplitude (data units)",
        title=rf"Equal blocks $\tau={s['tau']}$: oscillation around $x^*$",
    )
    plots.log_ticks(ax3, g)
    plots.legend(ax3)
    return (
        f"Left: the first {TRACE} rounds of each run, on the scale of the limit cycles (every "
        f"run starts at x_0 = {s['x0']:g}, above the axis; thin dashed line of its colour: "
        "X_B). Data units: the clients' data e1, e2 are numbers on the same axis as x. "
        "Middle: the measured period-end iterates lie on the closed form "
        "X_B and the measured time averages on (t1 e1 + t2 e2)/(t1 + t2) (markers on the "
        "lines: the agreement is exact up to rounding), and with equal blocks the measured "
        "time average on the optimum x* = (e1 + e2)/2; right: equal blocks, the measured "
        "amplitude |X_A - X_B| (markers) on the closed form (1 - rho)/(1 + rho)|e1 - e2| (line)."
    )


register(
    Check(
        "example1-fedavg",
        "FedAvg fails on FedLaAvg's Example 1",
        "Yan et al. (FedLaAvg), Example 1 / journal Thm 1, App. C (16)-(19); equal blocks "
        "[derived]",
        settings,
        compute,
        judge,
        plot,
        bounds=("X_B", "block_average", "equal_block_average", "amplitude"),
        cost=0.9,
    )
)
