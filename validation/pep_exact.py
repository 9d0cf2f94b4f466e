r"""Bounds against exact worst cases (performance estimation, :mod:`fedtheory.pep`).

For deterministic methods under a fixed participation pattern, the PEP (Drori & Teboulle
2014; Taylor, Hendrickx & Glineur 2017) gives the exact worst case over the bound's own
function class, with a checked certificate; the attaining instance is replayed in the
simulator.

* FedLaAvg's bound on Example 1 (Yan et al. 2020, arXiv Theorem 1; journal App. G
  Theorem 4): exact worst case of :math:`\min_t\|x_t-x^*\|^2` over Example 1's class
  (:math:`f_i=\|x-e_i\|^2`, :math:`\|e_1-e_2\|\le1`, :math:`\|x_0-x^*\|\le|x_0-\tfrac12|`)
  against the bound, over a grid of blocks :math:`(t_1,t_2)` and horizons :math:`T`.
* FedAvg on Example 1 (Yan et al. 2020, Example 1, App. C eq. (16)-(19)): the exact worst
  case of :math:`\|x_T-x^*\|^2` at period ends is at least the paper's trajectory from
  :math:`x_0=x^*`, :math:`(X_B-x^*)^2(1-\rho^k)^2`, so it plateaus; FedLaAvg's decreases.
"""

from __future__ import annotations

import numpy as np

from fedtheory.validation import plots
from fedtheory.validation.registry import Check, Size, register
from fedtheory.verdict import compare_equal, compare_upper_bound

REPLAY_RTOL = 1e-5
"""A verified PEP value is exact up to this times ``max(1, |value|)`` (the certificate's
acceptance threshold, ``fedtheory.pep.solve.CHECK_RTOL``): the replay's tolerance and the
floor of the comparisons with a PEP value."""


def settings(size: Size) -> dict:
    grid = {
        "tiny": [[1, 1, 4], [2, 1, 6]],
        "quick": [[1, 1, 4], [2, 1, 6], [3, 1, 8], [2, 2, 12]],
        "full": [[1, 1, 4], [2, 1, 6], [3, 1, 8], [2, 2, 12], [5, 1, 18], [9, 1, 24]],
    }[size]
    periods = {"tiny": [1, 2, 4], "quick": [1, 2, 4, 6], "full": [1, 2, 4, 6, 8]}[size]
    return {"grid": grid, "x0": 3.0, "t1": 2, "t2": 1, "gamma": 0.1, "periods": periods}


def compute(s: dict) -> dict[str, np.ndarray]:
    from fedtheory.pep import worst_case
    from fedtheory.pep.catalogue import (
        EXAMPLE1,
        example1_plateau,
        example1_setting,
        fedlaavg_theorem4,
    )
    from fedtheory.pep.replay import replay
    from fedtheory.sim import AverageParticipating, FedAvg, FedLaAvg

    out: dict[str, list] = {k: [] for k in ("exact", "bound", "replayed", "seconds")}
    for t1, t2, T in s["grid"]:
        result, bound = fedlaavg_theorem4(t1=t1, t2=t2, T=T, x0=s["x0"])
        if not result.ok:
            raise RuntimeError(f"PEP of FedLaAvg Theorem 4 at t1={t1}, t2={t2}, T={T}: {result}")
        out["exact"].append(result.value)
        out["bound"].append(bound)
        out["replayed"].append(replay(result).value)
        out["seconds"].append(result.seconds)
    period = s["t1"] + s["t2"]
    rounds = [k * period for k in s["periods"]]
    algs = {
        "fedavg": FedAvg(AverageParticipating(), local_steps=1, lr=s["gamma"]),
        "fedlaavg": FedLaAvg(clients_per_round=1, local_steps=1, lr=s["gamma"]),
    }
    for name, alg in algs.items():
        values = []
        for T in rounds:
            setting = example1_setting(t1=s["t1"], t2=s["t2"], T=T, a2=1.0)
            r = worst_case(alg, EXAMPLE1, setting.pop("participation"), **setting)
            if not r.ok:
                raise RuntimeError(f"PEP of {name} on Example 1 at T={T}: {r}")
            values.append(r.value)
        out[name] = values
    plateau = [
        example1_plateau(t1=s["t1"], t2=s["t2"], periods=k, gamma=s["gamma"]) for k in s["periods"]
    ]
    out["trajectory"] = [v for _, v in plateau]
    out["limit"] = [g for g, _ in plateau]
    out["rounds"] = rounds
    for key in ("exact", "fedavg"):  # what a verified PEP value is certified to
        out[f"{key}_accuracy"] = [REPLAY_RTOL * max(1.0, abs(v)) for v in out[key]]
    return {k: np.asarray(v, float) for k, v in out.items()}


def judge(data, s):
    ref4 = "Yan et al. 2020 (FedLaAvg), arXiv Theorem 1; journal App. G Theorem 4"
    ref1 = "Yan et al. 2020 (FedLaAvg), Example 1; journal App. C eq. (16)-(19)"
    return [
        compare_upper_bound(
            "FedLaAvg on Example 1's class: exact worst case of min_t ||x_t - x*||^2 (PEP) "
            f"<= the theorem's bound, grid (t1, t2, T) = {s['grid']}, x0 = {s['x0']:g}",
            ref4,
            data["exact"],
            data["bound"],
            floor=float(np.max(data["exact_accuracy"])),
        ),
        compare_equal(
            "the PEP's worst-case instance replayed in the simulator attains the PEP value",
            ref4,
            data["replayed"],
            data["exact"],
            rtol=REPLAY_RTOL,
            atol=REPLAY_RTOL,
        ),
        compare_upper_bound(
            "FedAvg on Example 1 from x0 = x*: (X_B - x*)^2 (1 - rho^k)^2 at the k-th period "
            f"end <= the exact worst case (PEP, ||x0 - x*|| <= 1), gamma = {s['gamma']:g}",
            ref1,
            data["trajectory"],
            data["fedavg"],
            floor=float(np.max(data["fedavg_accuracy"])),
        ),
    ]


def notes(data, s) -> list[str]:
    ratio = data["bound"] / data["exact"]
    return [
        f"bound / exact worst case of FedLaAvg Theorem 4 over (t1, t2, T) = {s['grid']}: "
        + ", ".join(f"{r:.4g}" for r in ratio),
        f"exact worst cases at period ends T = {[int(t) for t in data['rounds']]}: FedAvg "
        + ", ".join(f"{v:.4g}" for v in data["fedavg"])
        + f" (limit (X_B - x*)^2 = {data['limit'][0]:.4g}); FedLaAvg "
        + ", ".join(f"{v:.4g}" for v in data["fedlaavg"]),
    ]


def plot(data, s, fig):
    ax1, ax2 = plots.panels(fig, 2)
    T = np.array([g[2] for g in s["grid"]])
    ax1.plot(T, data["bound"], **plots.series(0, line=False), label="Theorem 4 bound")
    ax1.plot(T, data["exact"], **plots.series(1, line=False), label="exact worst case (PEP)")
    ax1.plot(T, data["replayed"], **plots.series(2, line=False, filled=False),
             markersize=9, label="replayed instance (simulator)")  # fmt: skip
    for (t1, t2, t), y in zip(s["grid"], data["exact"], strict=True):
        ax1.annotate(f"$({t1},{t2})$", (t, y), textcoords="offset points", xytext=(6, 6))
    ax1.set(
        yscale="log",
        xlabel="horizon $T$ (iterations); label: blocks $(t_1,t_2)$",
        ylabel=r"$\min_t\|x_t-x^*\|^2$ (squared model units)",
        title="FedLaAvg on Example 1: bound vs exact worst case",
    )
    plots.legend(ax1)
    t = data["rounds"]
    ax2.plot(t, data["fedavg"], **plots.series(0), label="FedAvg, exact worst case")
    ax2.plot(t, data["fedlaavg"], **plots.series(1), label="FedLaAvg, exact worst case")
    ax2.plot(t, data["trajectory"], **plots.series(2), label=r"FedAvg from $x_0=x^*$ (paper)")
    ax2.axhline(data["limit"][0], **plots.REFERENCE, label=r"$(X_B-x^*)^2$")
    ax2.set(
        yscale="log",
        xlabel="round $T$ (period ends)",
        ylabel=r"$\|x_T-x^*\|^2$ (squared model units)",
        title=rf"Example 1, $\gamma={s['gamma']:g}$, $t_1={s['t1']}$, $t_2={s['t2']}$",
    )
    plots.legend(ax2)
    return (
        "Left: one point per grid entry (blocks in brackets); the replayed instance's open "
        "markers sit on the exact worst case (equal to 1e-5). Right: FedAvg's exact worst "
        "case stays above the paper's trajectory from x0 = x* and tends to a positive level "
        "(its limit cycle), FedLaAvg's decreases."
    )


register(
    Check(
        "pep-exact",
        "Bounds against exact worst cases (performance estimation)",
        "FedLaAvg's Theorem 4 on Example 1 and FedAvg's Example 1 limit against the exact "
        "worst case over the statement's function class (PEP, Drori & Teboulle 2014; "
        "Taylor, Hendrickx & Glineur 2017)",
        settings,
        compute,
        judge,
        plot,
        bounds=("bound", "exact", "fedavg"),  # "exact": the prediction of the replay row
        notes=notes,
    )
)
