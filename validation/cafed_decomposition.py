r"""CA-Fed Theorems 1 and 3 along FedAvg trajectories with Markov availability (SPEC §3.2).

A random strongly convex quadratic problem; clients follow two-state Markov chains; the
server uses fixed weights :math:`q=\alpha` (biased: :math:`p\propto\pi\odot\alpha`) so that
the bias term is non-zero. At every iterate of every replicate the measured error
:math:`F(w_t)-F^*` is compared with both bounds; the tightness ratio is reported.
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability import TwoStateMarkov
from fedtheory.bounds import cafed
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import FedAvg, FixedWeights, simulate
from fedtheory.verdict import compare_upper_bound
from validation.registry import Check, Size, register


def settings(size: Size) -> dict:
    return {
        "num_clients": 8,
        "dim": 3,
        "mu": 1.0,
        "L": 4.0,
        "spread": 2.0,
        "noise_std": 0.5,
        "lam": 0.8,
        "pi_low": 0.1,
        "pi_high": 0.9,
        "lr": 0.05,
        "local_steps": 2,
        "rounds": {"tiny": 40, "quick": 150, "full": 1000}[size],
        "replicates": {"tiny": 4, "quick": 16, "full": 64}[size],
        "seed": 0,
    }


def _instance(s):
    problem = QuadraticProblem.random(
        s["num_clients"],
        s["dim"],
        mu=s["mu"],
        L=s["L"],
        spread=s["spread"],
        noise_std=s["noise_std"],
        seed=s["seed"],
    )
    pi = np.linspace(s["pi_low"], s["pi_high"], s["num_clients"])
    return problem, TwoStateMarkov(pi, s["lam"]), FixedWeights(problem.alpha, name="q=alpha")


def compute(s):
    problem, process, weights = _instance(s)
    alg = FedAvg(weights, local_steps=s["local_steps"], lr=s["lr"])
    rec = simulate(
        problem,
        process,
        alg,
        rounds=s["rounds"],
        replicates=s["replicates"],
        seed=s["seed"],
        w0=np.full(s["dim"], 3.0),
    )
    dec = cafed.decomposition(problem, rec.iterates, weights.effective_weights(process.pi))
    return {
        "measured": dec.measured,
        "theorem1": dec.theorem1.total,
        "theorem3": dec.theorem3.total,
        "bias1": dec.theorem1.terms["bias"],
        "bias3": dec.theorem3.terms["bias"],
    }


def judge(data, s):
    return [
        compare_upper_bound(
            "F(w_t) - F* <= CA-Fed Theorem 1 along trajectories",
            cafed.theorem1.reference,
            data["measured"],
            data["theorem1"],
        ),
        compare_upper_bound(
            "F(w_t) - F* <= CA-Fed Theorem 3 along trajectories",
            cafed.theorem3.reference,
            data["measured"],
            data["theorem3"],
        ),
    ]


def plot(data, s, fig):
    ax1, ax2 = fig.subplots(1, 2)
    t = np.arange(data["measured"].shape[1])
    for key, label in (
        ("measured", "measured F(w_t) - F*"),
        ("theorem1", "Theorem 1 bound"),
        ("theorem3", "Theorem 3 bound"),
    ):
        med = np.median(data[key], axis=0)
        ax1.semilogy(t, med, label=label + " (median over replicates)")
    ax1.semilogy(
        t,
        np.broadcast_to(data["bias1"], data["measured"].shape)[0],
        ":",
        label="Theorem 1 bias term",
    )
    ax1.semilogy(
        t,
        np.broadcast_to(data["bias3"], data["measured"].shape)[0],
        ":",
        label="Theorem 3 bias term",
    )
    ax1.set(
        xlabel="round t",
        ylabel="error (objective units)",
        title="CA-Fed error decomposition, Markov availability",
    )
    ax1.legend(fontsize=7)
    for key, label in (("theorem1", "Theorem 1"), ("theorem3", "Theorem 3")):
        ratio = data["measured"] / data[key]
        ax2.plot(t, ratio.max(axis=0), label=f"{label}: max over replicates")
        ax2.plot(t, np.median(ratio, axis=0), ls="--", label=f"{label}: median")
    ax2.axhline(1.0, color="k", lw=1, label="ratio 1 (bound attained)")
    ax2.set(xlabel="round t", ylabel="measured / bound", title="Tightness ratio")
    ax2.legend(fontsize=7)


register(
    Check(
        "cafed-decomposition",
        "CA-Fed Theorems 1 and 3 along trajectories",
        "Rodio et al. (CA-Fed), Theorems 1 and 3",
        settings,
        compute,
        judge,
        plot,
        bounds=("theorem1", "theorem3"),
    )
)
