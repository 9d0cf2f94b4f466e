r"""FedLaAvg Lemma 2 against simulation (Yan et al., arXiv 2002.07399, Lemma 2): the staleness
:math:`t-T_i^t` of FedLaAvg runs (absent-longest selection, every client available at least
once in every window of :math:`E` rounds) against :math:`I=\lceil N/K\rceil E`.
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability import TraceReplay
from fedtheory.bounds import fedlaavg
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import FedLaAvg, simulate
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import compare_upper_bound

BOUNDS = ("staleness_bound",)


@part("fedlaavg-staleness")
def settings(size: Size) -> dict:
    return {
        "staleness": [[6, 2, 3], [10, 3, 4], [8, 8, 2], [12, 1, 5]],  # (N, K, E)
        "staleness_rounds": {"tiny": 60, "quick": 200, "full": 1000}[size],
        "seed": 0,
    }


@part("fedlaavg-staleness")
def compute(s: dict) -> dict[str, np.ndarray]:
    measured, bound = [], []
    prob = QuadraticProblem.random(12, 1, seed=s["seed"])
    for N, K, E in s["staleness"]:
        rng = np.random.default_rng(s["seed"] + N)
        T = s["staleness_rounds"]
        once = (np.arange(T)[:, None] + rng.integers(0, E, N)) % E == 0  # once per window
        masks = once | (rng.random((4, T, N)) < 0.3)  # [R, T, N]
        sub = QuadraticProblem(prob.A[:N], prob.c[:N])
        alg = FedLaAvg(clients_per_round=K, lr=0.05)
        record = {"last": lambda state, mask: state.last}  # T_i^t after round t
        last = np.concatenate(
            [
                simulate(sub, TraceReplay(m), alg, rounds=T, eval_every=T, record=record).recorded[
                    "last"
                ]
                for m in masks
            ]
        )  # [R, T, N]: one run per replicate's mask
        I = fedlaavg.staleness_bound(N, K, E)  # noqa: E741 (the paper's symbol)
        age = np.arange(T)[None, :, None] - last  # t - T_i^t
        # from round I on every client has participated once (Lemma 2's regime)
        measured.append(int(age[:, np.arange(T) >= I].max(initial=0)))
        bound.append(fedlaavg.staleness.evaluate(N=N, k=K, E_avail=E).total)
    return {"staleness": np.array(measured, float), "staleness_bound": np.array(bound, float)}


@part("fedlaavg-staleness")
def judge(data, s):
    return [
        compare_upper_bound(
            "FedLaAvg staleness max_{t,i} (t - T_i^t) <= ceil(N/K) E, runs with (N, K, E) = "
            + ", ".join(str(tuple(c)) for c in s["staleness"]),
            fedlaavg.staleness.reference,
            data["staleness"],
            data["staleness_bound"],
        ),
    ]


@part("fedlaavg-staleness")
def plot(data, s, fig):
    (ax,) = plots.panels(fig, 1)
    runs = np.arange(len(s["staleness"]))
    ax.plot(runs, data["staleness"], **plots.series(0, line=False),
            label=r"measured $\max_{t,i}\,(t-T_i^t)$")  # fmt: skip
    ax.plot(runs, data["staleness_bound"], **plots.series(1, line=False),
            label=r"Lemma 2: $\lceil N/K\rceil E$")  # fmt: skip
    ax.set_xticks(runs, [str(tuple(c)) for c in s["staleness"]])
    ax.set(xlabel="run $(N, K, E)$", ylabel="staleness (rounds)",
           title="FedLaAvg Lemma 2")  # fmt: skip
    plots.legend(ax)
    return None


register(
    Check(
        "fedlaavg-staleness",
        "FedLaAvg Lemma 2 against simulation",
        "FedLaAvg Lemma 2: staleness t - T_i^t <= ceil(N/K) E",
        settings,
        compute,
        judge,
        plot,
        bounds=BOUNDS,
        cost=1.7,
    )
)
