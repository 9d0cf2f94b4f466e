r"""FedAWE's Example 1 (Xiang et al. 2024, §4, Fig. 2): FedAvg's biased limit under
heterogeneous availability, against FedAWE.

Two clients, :math:`F_i(x)=\frac12(x-u_i)^2`, :math:`u_1=0`, :math:`u_2=100`, client
:math:`i` available with probability :math:`p_i` (the paper's stationary dynamics),
minimiser :math:`x^\star=50`. The paper draws :math:`\|\lim_tE[x^t]-x^\star\|` (Fig. 2)
without a formula; fedtheory's closed forms (:data:`fedtheory.bounds.fedawe.example1`):

* FedAvg over the active clients (no update when none is active):
  :math:`\lim_tE[x^t]=E[\bar u_{A}\mid A\ne\emptyset]`;
* FedAvg over all clients (updates divided by :math:`m`): the minimiser of the biased
  objective (3), :math:`(p_1u_1+p_2u_2)/(p_1+p_2)`.

Both hold for any number of local gradient steps :math:`s` and :math:`0<\eta_l<2`,
:math:`\eta_g=1`. Measured: the mean over replicates of the iterates of the last rounds
(every :math:`E[x^t]` there equals the limit up to the transient, below :math:`10^{-4}`
at these settings, far inside the confidence intervals), judged as an exact statement by
equivalence: the interval must lie within the prediction :math:`\pm1` (1% of
:math:`u_2-u_1`). FedAWE (Algorithm 1, the same local steps, a constant
:math:`\eta_l`) is run alongside: with a constant step its mean may keep a residual
offset (Theorem 1 leaves :math:`\eta_l^2\eta_g^2` terms), while FedAvg's limit does not
depend on :math:`\eta_l`; the finding that FedAWE ends closer to
:math:`x^\star` than FedAvg's limit is judged across the instances, paired, by
:func:`fedtheory.verdict.compare_finding`.
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability import NonStationary
from fedtheory.bounds import fedawe
from fedtheory.problems import QuadraticProblem, fused
from fedtheory.sim import AverageAll, AverageParticipating, FedAvg, FedAWE, simulate
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import compare_finding, compare_mean_equal


@part("fedawe-example1")
def settings(size: Size) -> dict:
    pairs = {
        "tiny": [[0.2, 0.8], [0.5, 0.9], [0.1, 0.3], [0.7, 0.4], [0.05, 0.6]],
        "quick": [[0.2, 0.8], [0.5, 0.9], [0.1, 0.3], [0.7, 0.4], [0.05, 0.6]],
        "full": [[a, b] for a in (0.1, 0.3, 0.5, 0.7, 0.9) for b in (0.1, 0.3, 0.5, 0.7, 0.9)],
    }[size]
    reps = {"tiny": 100, "quick": 400, "full": 4000}[size]
    return {"u1": 0.0, "u2": 100.0, "pairs": pairs, "replicates": reps, "rounds": 200,
            "tail": 100, "local_steps": 2, "lr": 0.5, "fedawe_lr": 0.02, "x0": 0.0,
            "seed": 0, "margin": 1.0}  # fmt: skip


@part("fedawe-example1")
def compute(s: dict) -> dict[str, np.ndarray]:
    with fused.owns_the_cores():  # small tensors: torch on one thread
        return _compute(s)


def _compute(s: dict) -> dict[str, np.ndarray]:
    problem = QuadraticProblem(np.ones((2, 1, 1)), np.array([[s["u1"]], [s["u2"]]]))
    algs = {
        "active": FedAvg(AverageParticipating(), local_steps=s["local_steps"], lr=s["lr"]),
        "all": FedAvg(AverageAll(), local_steps=s["local_steps"], lr=s["lr"]),
        "fedawe": FedAWE(local_steps=s["local_steps"], lr=s["fedawe_lr"]),
    }
    out: dict[str, list] = {k: [] for k in algs}
    for i, (p1, p2) in enumerate(s["pairs"]):
        proc = NonStationary([p1, p2])
        for key, alg in algs.items():
            rec = simulate(problem, proc, alg, rounds=s["rounds"], replicates=s["replicates"],
                           seed=s["seed"] + i, w0=[s["x0"]], keep_masks=False)  # fmt: skip
            out[key].append(rec.iterates[:, -s["tail"] :, 0].mean(axis=1))  # [R]
    p = np.array(s["pairs"])
    kw = {"p1": p[:, 0], "p2": p[:, 1], "u1": s["u1"], "u2": s["u2"]}
    active = fedawe.example1_fedavg_active.evaluate(**kw).total
    x_star = (s["u1"] + s["u2"]) / 2
    return {
        "fedavg_active": np.array(out["active"]).T,  # [R, P]
        "fedavg_all": np.array(out["all"]).T,
        "fedawe_error": np.abs(np.array(out["fedawe"]).mean(axis=1) - x_star),  # [P]
        "limit_active": active,
        "limit_all": fedawe.example1_fedavg_all.evaluate(**kw).total,
        "bias_active": np.abs(active - x_star),
    }


@part("fedawe-example1")
def judge(data, s):
    ref = fedawe.example1_fedavg_active.reference
    return [
        compare_mean_equal(
            f"lim E[x^t] of FedAvg over active clients = E[mean_(i in A) u_i | A nonempty] "
            f"(u = ({s['u1']:g}, {s['u2']:g}), (p1, p2) in {s['pairs']})",
            ref, data["fedavg_active"], data["limit_active"], margin=s["margin"],
        ),
        compare_mean_equal(
            "lim E[x^t] of FedAvg over all clients = (p1 u1 + p2 u2)/(p1 + p2), the minimiser "
            "of the biased objective (3)",
            fedawe.example1_fedavg_all.reference, data["fedavg_all"], data["limit_all"],
            margin=s["margin"],
        ),
        compare_finding(
            "FedAWE ends closer to x* = (u1 + u2)/2 than FedAvg's limit (over active clients), "
            "across the (p1, p2) instances",
            f"{ref}; §5", data["fedawe_error"], data["bias_active"],
        ),
    ]  # fmt: skip


@part("fedawe-example1")
def plot(data, s, fig):
    ax1, ax2 = plots.panels(fig, 2)
    xs = np.arange(len(s["pairs"]))
    labels = [f"({a:g}, {b:g})" for a, b in s["pairs"]]
    for i, (key, limit, name) in enumerate(
        (("fedavg_active", "limit_active", "FedAvg over active"),
         ("fedavg_all", "limit_all", "FedAvg over all"))
    ):  # fmt: skip
        ci, yerr = plots.row_bars(data[key])  # the row's family-wise intervals
        ax1.errorbar(xs, ci[:, 0], yerr=yerr, capsize=3, **plots.series(i, line=False),
                     label=f"{name}: measured (family-wise 95% CI)")  # fmt: skip
        ax1.plot(xs, data[limit], **plots.series(i, filled=False, line=False), markersize=12,
                 label=f"{name}: closed form")  # fmt: skip
    ax1.axhline((s["u1"] + s["u2"]) / 2, **plots.REFERENCE, label="$x^\\star$")
    ax1.set_xticks(xs, labels)
    ax1.set(xlabel="$(p_1, p_2)$", ylabel="limit of $E[x^t]$ (model units)",
            title="Example 1: FedAvg's limits")  # fmt: skip
    plots.legend(ax1, ncols=1)
    # the instances are categories: markers only, no line joining them; log axis with a floor
    both = np.concatenate([data["bias_active"], data["fedawe_error"]])
    positive = both[both > 0]
    floor = 10.0 ** (np.floor(np.log10(positive.min())) - 1) if positive.size else 1e-12
    ax2.plot(
        xs - 0.06,
        plots.floored(data["bias_active"], floor),
        **plots.series(0, line=False),
        label="FedAvg over active: bias of its limit",
    )
    ax2.plot(xs + 0.06, plots.floored(data["fedawe_error"], floor), **plots.series(2, line=False),
             label=r"FedAWE: $|\mathrm{mean} - x^\star|$ (last rounds)")  # fmt: skip
    ax2.set_xticks(xs, labels)
    ax2.set(xlabel="$(p_1, p_2)$", ylabel=r"distance to $x^\star$ (model units)",
            yscale="log", title="Bias against FedAWE")  # fmt: skip
    if np.any(both <= 0):
        plots.mark_floor(ax2, floor, what="0")
    plots.log_labels(ax2)
    plots.legend(ax2)
    return (
        "Each (p1, p2) is a separate instance (no line joins them). Left: hollow large "
        "markers: closed forms; filled markers with bars: measured means. Right: distances "
        "to x* on a log axis"
        + (f"; values below {floor:g} are drawn on that floor." if np.any(both <= 0) else ".")
    )


register(
    Check(
        "fedawe-example1",
        "FedAWE Example 1: FedAvg's biased limit (closed form) against FedAWE",
        "Xiang et al. (FedAWE), NeurIPS 2024: §4, Example 1 and Fig. 2 (closed forms derived "
        "by fedtheory)",
        settings,
        compute,
        judge,
        plot,
        bounds=("limit_active", "limit_all", "bias_active"),
        cost=1.4,
    )
)
