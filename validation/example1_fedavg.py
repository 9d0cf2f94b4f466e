r"""FedAvg on FedLaAvg's Example 1 with unequal blocks (SPEC §2.2, §8.1).

Simulated FedAvg (one exact gradient step per round on :math:`f_i=(x-e_i)^2`, alternating
availability :math:`t_1\ne t_2`) for several learning rates :math:`\gamma`. Measured: the
last period-end iterate and the time average of the last period. Predicted: the closed
forms :math:`X_B` and :math:`(t_1e_1+t_2e_2)/(t_1+t_2)`, both far from :math:`x^*`.
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory.availability import AlternatingBlocks
from fedtheory.bounds import fedlaavg
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import AverageParticipating, FedAvg, simulate
from fedtheory.verdict import compare_equal
from validation.registry import Check, register

CONVERGED = 1e-12  # |r|^rounds below this: the iterate sits on the limit cycle
RTOL = 1e-8


def settings(quick: bool) -> dict:
    return {
        "e1": 0.0,
        "e2": 1.0,
        "t1": 9,
        "t2": 1,
        "x0": 5.0,
        "gammas": [0.2, 0.05, 0.01] if quick else [0.3, 0.1, 0.03, 0.01, 0.003],
    }


def _rounds(gamma: float, period: int) -> int:
    need = math.log(CONVERGED) / math.log(abs(1 - 2 * gamma))
    return period * (math.ceil(need / period) + 1)


def compute(s: dict) -> dict[str, np.ndarray]:
    problem = QuadraticProblem.example1(s["e1"], s["e2"])
    process = AlternatingBlocks(s["t1"], s["t2"])
    period = s["t1"] + s["t2"]
    end, avg, traces = [], [], []
    for gamma in s["gammas"]:
        alg = FedAvg(AverageParticipating(), local_steps=1, lr=gamma)
        rounds = _rounds(gamma, period)
        x = simulate(problem, process, alg, rounds=rounds, w0=[s["x0"]]).iterates[0, :, 0]
        end.append(x[-1])  # x_{k(t1+t2)}: rounds is a multiple of the period
        avg.append(x[-period - 1 : -1].mean())  # the t1+t2 iterates of the last period
        traces.append(np.pad(x[:200], (0, max(0, 200 - x.size)), constant_values=np.nan))
    return {
        "gamma": np.array(s["gammas"]),
        "end": np.array(end),
        "average": np.array(avg),
        "trace": np.array(traces),
    }


def _predicted(data, s):
    kw = {"e1": s["e1"], "e2": s["e2"], "t1": s["t1"], "t2": s["t2"]}
    xb = fedlaavg.end_of_period.evaluate(gamma=data["gamma"], **kw).total
    xa = fedlaavg.after_block1.evaluate(gamma=data["gamma"], **kw).total
    avg = fedlaavg.time_average.evaluate(gamma=data["gamma"], **kw).total
    return xb, xa, avg


def judge(data, s):
    xb, _, avg = _predicted(data, s)
    ref = fedlaavg.end_of_period.reference
    return [
        compare_equal(
            "FedAvg period-end iterate -> X_B (Example 1, unequal blocks)",
            ref,
            data["end"],
            xb,
            rtol=RTOL,
            atol=RTOL,
        ),
        compare_equal(
            "FedAvg time average = (t1 e1 + t2 e2)/(t1 + t2) != x*",
            ref,
            data["average"],
            avg,
            rtol=RTOL,
            atol=RTOL,
        ),
    ]


def plot(data, s, fig):
    xb, xa, avg = _predicted(data, s)
    x_star = (s["e1"] + s["e2"]) / 2
    ax1, ax2 = fig.subplots(1, 2)
    for g, tr, b in zip(data["gamma"], data["trace"], xb, strict=True):
        (line,) = ax1.plot(tr, lw=1, label=f"FedAvg, gamma={g:g}")
        ax1.axhline(b, color=line.get_color(), ls="--", lw=0.8)
    ax1.axhline(x_star, color="k", lw=1.5, label="optimum x*")
    ax1.set(xlabel="round t", ylabel="iterate x_t", title="Trajectories (dashed: X_B)")
    ax1.legend(fontsize=7)
    ax2.semilogx(data["gamma"], data["end"], "o", label="measured period-end iterate")
    ax2.semilogx(data["gamma"], xb, "-", label="X_B (closed form)")
    ax2.semilogx(data["gamma"], xa, ":", label="X_A (closed form)")
    ax2.semilogx(data["gamma"], data["average"], "s", mfc="none", label="measured time average")
    ax2.axhline(avg[0], color="C3", ls="--", label="(t1 e1 + t2 e2)/(t1 + t2)")
    ax2.axhline(x_star, color="k", lw=1.5, label="optimum x*")
    ax2.set(
        xlabel="learning rate gamma",
        ylabel="x",
        title=f"Limit cycle vs closed forms (t1={s['t1']}, t2={s['t2']})",
    )
    ax2.legend(fontsize=7)


register(
    Check(
        "example1-fedavg",
        "FedAvg fails on FedLaAvg's Example 1",
        "Yan et al. (FedLaAvg), Example 1 / journal Thm 1, App. C (16)-(19)",
        settings,
        compute,
        judge,
        plot,
    )
)
