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
* FedAWE's Theorem 1 and Corollaries 2-3 at :math:`\sigma=0` (Xiang et al. 2024, §6.3,
  App. G, H.1, I.1; :func:`fedtheory.pep.catalogue.fedawe_statement`): the exact worst
  case of each left side over :math:`L`-smooth convex clients (Assumption 4 imposed where
  the PEP evaluates, an upper bound on that subclass's worst case), in exact expectation
  over every mask of the paper's dynamics (full participation, stationary, staircase,
  sine; few clients and rounds), against the bound at the same constants (step sizes on
  the boundary of (11)).
  The measured side is the largest value of a few shared-curvature quadratics inside the
  hypotheses (:math:`F(\bar x^0)-F^*=\Delta`, :math:`\beta^2=0`,
  :math:`\zeta^2` as assumed), run in the simulator on every mask and weighted by its
  probability: search :math:`\le` exact :math:`\le` bound.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from fedtheory.validation import plots
from fedtheory.validation.kinds import part
from fedtheory.validation.registry import Check, Size, register
from fedtheory.verdict import compare_equal, compare_upper_bound, consistency_check


def tolerance_text(data, key: str) -> str:
    """Which tolerance a row's comparison with PEP values took: the largest of their
    certificates' (:attr:`fedtheory.pep.certificate.Certificate.tolerance`)."""
    i = int(np.argmax(data[f"{key}_accuracy"]))
    return (
        f"tolerance {data[f'{key}_accuracy'][i]:.2g} from the certificate of the PEP at point "
        f"{i + 1} (|gap| {data[f'{key}_gap'][i]:.2g} + max(1, tr G) {data[f'{key}_scale'][i]:.3g}"
        f" x largest feasibility error {data[f'{key}_feasibility'][i]:.2g}), the largest of "
        f"{data[f'{key}_accuracy'].size}"
    )


def _certificate(out: dict, key: str, result) -> None:
    """Append ``result``'s value tolerance and where it comes from under ``key``."""
    c = result.certificate
    for name, v in (("accuracy", c.tolerance), ("gap", abs(c.gap)), ("scale", c.scale),
                    ("feasibility", c.feasibility)):  # fmt: skip
        out.setdefault(f"{key}_{name}", []).append(v)


@part("pep-exact")
def settings(size: Size) -> dict:
    grid = {
        "tiny": [[1, 1, 4], [2, 1, 6]],
        "quick": [[1, 1, 4], [2, 1, 6], [3, 1, 8], [2, 2, 12]],
        "full": [[1, 1, 4], [2, 1, 6], [3, 1, 8], [2, 2, 12], [5, 1, 18], [9, 1, 24]],
    }[size]
    periods = {"tiny": [1, 2, 4], "quick": [1, 2, 4, 6], "full": [1, 2, 4, 6, 8]}[size]
    laws = {
        "tiny": [["full", 2, 2], ["stationary", 2, 2]],
        "quick": [["full", 2, 4], ["stationary", 2, 2], ["staircase", 2, 2], ["sine", 2, 2]],
        "full": [["full", 2, 6], ["stationary", 2, 3], ["staircase", 2, 3], ["sine", 2, 3],
                 ["stationary", 3, 2]],
    }[size]  # fmt: skip
    return {"grid": grid, "x0": 3.0, "t1": 2, "t2": 1, "gamma": 0.1, "periods": periods,
            "fedawe_laws": laws, "fedawe_p": [0.5, 0.8, 0.65], "fedawe_search": 4}  # fmt: skip


def fedawe_probabilities(dynamics: str, m: int, T: int, p) -> np.ndarray:
    """:math:`p_i^t` ``[T, m]`` of the paper's dynamics (§7, App. J.3) on base probabilities
    ``p[:m]``, periods 2 (staircase) and 4 (sine) so that a few rounds see them change;
    ``"full"``: every client always available."""
    from fedtheory.availability import NonStationary

    if dynamics == "full":
        return np.ones((T, m))
    period = {"stationary": 20, "staircase": 2, "sine": 4}[dynamics]
    proc = NonStationary(np.asarray(p[:m], float), dynamics=dynamics, period=period)
    return proc.probabilities(np.arange(T))


def fedawe_search(criterion: str, probabilities, c: dict, *, count: int, seed: int) -> float:
    r"""The largest expected criterion over ``count`` quadratics
    :math:`F_i(x)=\frac12(x-u_i)^\top A(x-u_i)` with :math:`A=\mathrm{diag}(L,L/2)`,
    :math:`\frac1m\sum_i\|A(u_i-\bar u)\|^2=\zeta^2` and :math:`F(x_0)-F^*=\Delta`
    (inside the statements' hypotheses, :math:`\beta^2=0`), each run by the simulator's
    FedAWE on every mask of the law (replicates), weighted by the masks' probabilities. The
    first instance puts :math:`x_0-\bar u` on the top eigenvector; the others draw
    directions from ``seed``."""
    from fedtheory import rng
    from fedtheory.pep import Participation
    from fedtheory.problems import QuadraticProblem
    from fedtheory.sim import FedAWE
    from fedtheory.validation.fedawe_statements import staleness

    part = Participation.independent(probabilities)
    masks = torch.as_tensor(part.masks)  # [K, T, m]
    K, T, m = masks.shape
    A = np.diag([c["L"], c["L"] / 2])
    gen = rng.numpy_rng(seed, 0, rng.DATA)
    alg = FedAWE(local_steps=c["s"], lr=c["eta_l"], server_lr=c["eta_g"])
    best = 0.0
    for k in range(count):
        e = np.array([1.0, 0.0]) if k == 0 else gen.standard_normal(2)
        spread = gen.standard_normal((m, 2))
        spread -= spread.mean(axis=0)
        spread *= np.sqrt(c["zeta2"] / np.mean(np.sum((spread @ A) ** 2, -1)))
        u = spread  # ubar = 0
        x0 = e * np.sqrt(2 * c["F_gap"] / (e @ A @ e))
        problem = QuadraticProblem(np.broadcast_to(A, (m, 2, 2)), u)
        state = alg.init(problem, torch.as_tensor(x0).expand(K, -1).clone())
        x = [state.x.numpy()]
        for t in range(T):
            state = alg.step(problem, state, masks[:, t], t)
            x.append(state.x.numpy())
        x = np.stack(x, axis=1)[:, :T]  # [K, T, m, d] client models x_i^t
        if criterion == "fedawe_zbar":
            gap = staleness(part.masks)[..., None]
            grads = (x - u) @ A
            x = x - c["eta_l"] * c["eta_g"] * c["s"] * (gap - 1) * grads  # z_i^t
        if criterion == "fedawe_consensus_x":
            spread = x - x.mean(axis=2, keepdims=True)
            value = np.sum(spread**2, -1).mean(axis=(1, 2))  # [K] (1/T) sum_t (1/m) sum_i
        else:
            value = np.sum((x.mean(axis=2) @ A) ** 2, -1).mean(axis=1)  # [K] (1/T) sum_t
        best = max(best, float(part.probs @ value))
    return best


@part("pep-exact")
def compute(s: dict) -> dict[str, np.ndarray]:
    from fedtheory.pep import worst_case
    from fedtheory.pep.catalogue import (
        EXAMPLE1,
        example1_plateau,
        example1_setting,
        fedawe_statement,
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
        _certificate(out, "exact", result)
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
            _certificate(out, name, r)
        out[name] = values
    plateau = [
        example1_plateau(t1=s["t1"], t2=s["t2"], periods=k, gamma=s["gamma"]) for k in s["periods"]
    ]
    out["trajectory"] = [v for _, v in plateau]
    out["limit"] = [g for g, _ in plateau]
    out["rounds"] = rounds
    for criterion in FEDAWE_ROWS:
        cols: dict[str, list] = {k: [] for k in ("exact", "bound", "search")}
        for dynamics, m, T in s["fedawe_laws"]:
            p = fedawe_probabilities(dynamics, m, T, s["fedawe_p"])
            result, bound, c = fedawe_statement(criterion, p)
            if not result.ok:
                raise RuntimeError(
                    f"PEP of FedAWE {criterion} ({dynamics}, m={m}, T={T}): {result}"
                )
            cols["exact"].append(result.value)
            cols["bound"].append(bound)
            _certificate(cols, "pep", result)
            cols["search"].append(
                fedawe_search(criterion, p, c, count=s["fedawe_search"], seed=len(cols["search"]))
            )
        for k, v in cols.items():
            out[f"{criterion}_{k.removeprefix('pep_')}"] = v
    return {k: np.asarray(v, float) for k, v in out.items()}


def _said(row, data, key: str):
    """``row`` with the tolerance its comparison took (:func:`tolerance_text`)."""
    return replace(row, detail=f"{row.detail}; {tolerance_text(data, key)}")


@part("pep-exact")
def judge(data, s):
    ref4 = "Yan et al. 2020 (FedLaAvg), arXiv Theorem 1; journal App. G Theorem 4"
    ref1 = "Yan et al. 2020 (FedLaAvg), Example 1; journal App. C eq. (16)-(19)"
    return [
        _said(compare_upper_bound(
            "FedLaAvg on Example 1's class: exact worst case of min_t ||x_t - x*||^2 (PEP) "
            f"<= the theorem's bound, grid (t1, t2, T) = {s['grid']}, x0 = {s['x0']:g}",
            ref4,
            data["exact"],
            data["bound"],
            floor=data["exact_accuracy"],
        ), data, "exact"),
        _said(consistency_check(compare_equal(
            "the PEP's worst-case instance replayed in the simulator attains the PEP value",
            ref4,
            data["replayed"],
            data["exact"],
            rtol=0.0,
            atol=float(np.max(data["exact_accuracy"])),
        )), data, "exact"),
        _said(compare_upper_bound(
            "FedAvg on Example 1 from x0 = x*: (X_B - x*)^2 (1 - rho^k)^2 at the k-th period "
            f"end <= the exact worst case (PEP, ||x0 - x*|| <= 1), gamma = {s['gamma']:g}",
            ref1,
            data["trajectory"],
            data["fedavg"],
            floor=data["fedavg_accuracy"],
        ), data, "fedavg"),
        *fedawe_judge(data, s),
    ]  # fmt: skip


FEDAWE_ROWS = {
    "fedawe_zbar": ("Theorem 1", "(1/T) sum_t E||grad F(zbar^t)||^2"),
    "fedawe_xbar": ("Corollary 2", "(1/T) sum_t E||grad F(xbar^t)||^2"),
    "fedawe_consensus_x": ("Corollary 3", "(1/T) sum_t (1/m) sum_i E||x_i^t - xbar^t||^2"),
}


def _laws(s) -> str:
    return ", ".join(f"{d} (m={m}, T={T})" for d, m, T in s["fedawe_laws"])


@part("pep-exact")
def fedawe_judge(data, s):
    from fedtheory.bounds import fedawe
    from fedtheory.pep.catalogue import FEDAWE_STATEMENTS

    rows = []
    for criterion, (name, lhs) in FEDAWE_ROWS.items():
        ref = getattr(fedawe, FEDAWE_STATEMENTS[criterion])
        floor = data[f"{criterion}_accuracy"]
        rows += [
            compare_upper_bound(
                f"FedAWE {name} at sigma = 0: exact worst case of {lhs} (PEP, L-smooth convex "
                f"clients, every mask enumerated) <= the bound, laws {_laws(s)}",
                ref.reference, data[f"{criterion}_exact"], data[f"{criterion}_bound"],
                floor=floor,
            ),
            consistency_check(compare_upper_bound(
                f"FedAWE {name}: the largest of {s['fedawe_search']} quadratics inside the "
                "hypotheses (simulator, exact expectation over the masks) <= the exact worst "
                "case",
                ref.reference, data[f"{criterion}_search"], data[f"{criterion}_exact"],
                floor=floor,
            )),
        ]  # fmt: skip
        rows[-2:] = [_said(r, data, criterion) for r in rows[-2:]]
    return rows


@part("pep-exact")
def fedawe_notes(data, s) -> list[str]:
    from fedtheory.pep.catalogue import RESOLUTION  # below it, only value + error is known

    out = []
    for criterion, (name, _) in FEDAWE_ROWS.items():
        ex, acc = data[f"{criterion}_exact"], data[f"{criterion}_accuracy"]
        if np.any(ex < RESOLUTION * acc):  # below the solver's resolution: a bound only
            out.append(
                f"FedAWE {name} over {_laws(s)}: exact worst case at most "
                + ", ".join(f"{v:.2g}" for v in ex + acc)
                + " (below the solver's resolution at (11)'s step sizes), bound "
                + ", ".join(f"{v:.4g}" for v in data[f"{criterion}_bound"])
            )
            continue
        out.append(
            f"FedAWE {name} over {_laws(s)}: bound / exact worst case "
            + ", ".join(f"{r:.4g}" for r in data[f"{criterion}_bound"] / ex)
            + "; measured / exact "
            + ", ".join(f"{r:.4g}" for r in data[f"{criterion}_search"] / ex)
        )
    return out


@part("pep-exact")
def notes(data, s) -> list[str]:
    ratio = data["bound"] / data["exact"]
    return [
        *fedawe_notes(data, s),
        f"bound / exact worst case of FedLaAvg Theorem 4 over (t1, t2, T) = {s['grid']}: "
        + ", ".join(f"{r:.4g}" for r in ratio),
        f"exact worst cases at period ends T = {[int(t) for t in data['rounds']]}: FedAvg "
        + ", ".join(f"{v:.4g}" for v in data["fedavg"])
        + f" (limit (X_B - x*)^2 = {data['limit'][0]:.4g}); FedLaAvg "
        + ", ".join(f"{v:.4g}" for v in data["fedlaavg"]),
    ]


@part("pep-exact")
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
    plots.log_labels(ax1)
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
    plots.log_labels(ax2)
    plots.legend(ax2)
    return (
        "Left: one point per grid entry (blocks in brackets); the replayed instance's open "
        "markers sit on the exact worst case (equal within its certificate's tolerance). "
        "Right: FedAvg's exact worst case stays above the paper's trajectory from x0 = x* "
        "and tends to a positive level (its limit cycle), FedLaAvg's decreases."
    )


register(
    Check(
        "pep-exact",
        "Bounds against exact worst cases (performance estimation)",
        "FedLaAvg's Theorem 4 on Example 1, FedAvg's Example 1 limit and FedAWE's Theorem 1 "
        "and Corollaries 2-3 (sigma = 0) against the exact worst case over the statement's "
        "function class (PEP, Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017)",
        settings,
        compute,
        judge,
        plot,
        bounds=(
            "bound",
            "exact",
            "fedavg",
            *(f"{c}_{k}" for c in FEDAWE_ROWS for k in ("bound", "exact")),
        ),  # fmt: skip
        notes=notes,
        cost=2.7,
    )
)
