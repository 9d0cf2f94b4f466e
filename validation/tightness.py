r"""Tightness table: the worst measured / bound found for every upper bound with a cheap
measured side (:mod:`fedtheory.tightness`).

For each family of ``fedtheory.tightness.FAMILIES`` (CA-Fed Theorems 1 and 3, the
TV/chi-square inequality, FedAU's per-round Theorem 3, E3CS (27)/(28) on short horizons,
FedLaAvg on Example 1) the search looks for the instance inside the bound's hypotheses that
maximises measured / bound, with a fixed budget of evaluations. Each row compares the
measured quantity with the bound *at the worst instance found*: a ratio above 1 there would
be a counterexample. For the Monte-Carlo families (E3CS) the row's measured value is the
upper 95% confidence limit of the mean regret, re-measured with independent replicates at
the worst instance (the search itself maximised over noise), and the verdict follows the
rule of :func:`fedtheory.verdict.upper_bound_outcome`: *holds* when the upper limit is at
most the bound, *violated* when the lower limit is above it, else *inconclusive*. The notes
give each worst instance's key constants and what is proved about the supremum (attained,
approached, or unknown), with "proved supremum s, reached r" for every family that has one
(CA-Fed Theorems 1 and 3, TV vs chi-square; the figure marks it): a worst ratio well below
a proved supremum says the budget was too small, not that the bound is loose.

Where performance estimation applies (a deterministic method under a fixed participation
pattern: :func:`fedtheory.pep.exact_worst_case_for`), the table adds the *exact worst case*
over the bound's whole function class at the worst instance's setting, so that bound / exact
is the bound's exact looseness there and measured / exact says how close the search came.
"""

from __future__ import annotations

import json

import numpy as np

from fedtheory.pep.catalogue import exact_worst_case_certified
from fedtheory.pep.certificate import certified
from fedtheory.tightness import DEFAULT_BUDGET, FAMILIES, search
from fedtheory.tightness.families import CATALOGUE_KEYS
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import Comparison, compare_upper_bound, format_ratio, upper_bound_outcome


def _supremum(key: str) -> float | None:
    """The proved supremum of measured / bound over the family (its ``tightness`` says
    how: attained or approached), or None."""
    return FAMILIES[key].proved_supremum


@part("tightness")
def settings(size: Size) -> dict:
    return {
        "keys": [key for key in FAMILIES if key in CATALOGUE_KEYS],
        "budget": {"tiny": 12, "quick": 60, "full": DEFAULT_BUDGET}[size],
        "monte_carlo_budget": {"tiny": 6, "quick": 20, "full": 100}[size],
        "seed": 0,
    }


@part("tightness")
def compute(s: dict) -> dict[str, np.ndarray]:
    """One entry per family ``[F]``; the instances as JSON strings."""
    keys = ("ratio", "measured", "low", "bound", "floor", "budget", "evaluations")
    out: dict[str, list] = {k: [] for k in keys}
    out["instance"] = []
    out["attained"] = []
    out["exact"] = []  # exact worst case by PEP at the worst instance's setting, or NaN
    out["exact_accuracy"] = []  # its certificate's tolerance (NaN without a value)
    for key in s["keys"]:
        family = FAMILIES[key]
        budget = s["monte_carlo_budget"] if family.monte_carlo else s["budget"]
        result = search(family, budget=budget, seed=s["seed"])
        ev = result.worst.evaluation if result.confirmation is None else result.confirmation
        measured = ev.measured if ev.interval is None else ev.interval[1]
        out["ratio"].append(result.ratio)
        out["measured"].append(measured)
        out["low"].append(ev.measured if ev.interval is None else ev.interval[0])
        out["bound"].append(ev.bound)
        out["floor"].append(ev.floor)  # rounding floor of the magnitudes of the computation
        out["budget"].append(budget)
        out["evaluations"].append(result.evaluations)
        out["attained"].append(result.attained)
        exact = exact_worst_case_certified(key, dict(ev.constants))
        out["exact"].append(np.nan if exact is None else exact[0])
        out["exact_accuracy"].append(np.nan if exact is None else exact[1])
        out["instance"].append(
            json.dumps({"integers": dict(result.worst.integers), **dict(ev.constants)})
        )
    return {k: np.array(v) for k, v in out.items()}


def _constants(text: str) -> str:
    values = json.loads(text)
    ints = values.pop("integers")
    shown = {**ints, **{k: v for k, v in values.items() if k not in ints}}
    return ", ".join(
        f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in shown.items()
    )


@part("tightness")
def judge(data, s):
    rows = []
    for i, key in enumerate(s["keys"]):
        family = FAMILIES[key]
        what = "upper 95% limit of the mean" if family.monte_carlo else "measured"
        claim = (
            f"{family.theorem.title} at the worst instance found ({what}; budget "
            f"{int(data['budget'][i])}; {_constants(str(data['instance'][i]))})"
        )
        ref, high, low, bound = (
            family.theorem.reference,
            *(float(data[k][i]) for k in ("measured", "low", "bound")),
        )
        if not family.monte_carlo:
            floor = float(data["floor"][i])
            rows.append(compare_upper_bound(claim, ref, high, bound, floor=floor))
            continue
        verdict = upper_bound_outcome(low, high, bound)
        detail = (
            f"95% CI of the mean [{low:.4g}, {high:.4g}] from independent replicates at the "
            f"worst instance; upper limit / bound {format_ratio(high, bound)}"
        )
        rows.append(Comparison(claim, ref, "<=", high, bound, verdict, detail, (low, high)))
    return rows


@part("tightness")
def notes(data, s) -> list[str]:
    lines = []
    for i, key in enumerate(s["keys"]):
        family = FAMILIES[key]
        sup = _supremum(key)
        ratio = float(data["ratio"][i])
        head = f"worst ratio {ratio:.4g}"
        if sup is not None:
            head = f"proved supremum {sup:.4g}, reached {ratio:.4g}"
        if bool(data["attained"][i]):
            head += " (attained: measured = bound within the rounding floor)"
        exact = float(data["exact"][i]) if "exact" in data else float("nan")
        if np.isfinite(exact):
            bound, measured = float(data["bound"][i]), float(data["measured"][i])
            acc = float(data["exact_accuracy"][i])
            head += (
                f"; exact worst case (PEP) {certified(exact, acc)} (to {acc:.1g}, its "
                f"certificate's tolerance) at this setting: bound / exact "
                f"{format_ratio(bound, exact, acc)}, measured / exact "
                f"{format_ratio(measured, exact, acc)}"
            )
        lines.append(
            f"`{key}`: {head} after {int(data['evaluations'][i])} "
            f"evaluations (budget {int(data['budget'][i])}, seed {s['seed']}). "
            f"Known: {family.tightness}. Reproduce: `fedtheory tightness {key} --budget "
            f"{int(data['budget'][i])} --seed {s['seed']}`"
        )
    return lines


_LABELS = {
    "cafed.theorem1": r"CA-Fed Theorem 1: $F(w_t)-F^*$",
    "cafed.theorem3": r"CA-Fed Theorem 3: $F(w_t)-F^*$",
    "divergences.tv_chi_square": r"TV vs $\chi^2$: $d_{TV}\leq\sqrt{\chi^2}/2$",
    "fedau.theorem3.per_round": r"FedAU Theorem 3: $\mathbb{E}[(p\,\omega_t-1)^2]$",
    "e3cs.regret": r"E3CS (27): regret $R_T$",
    "e3cs.regret_optimal": r"E3CS (28): regret $R_T$, $\eta=\eta^*$",
    "fedlaavg.example1.fedlaavg_bound": r"FedLaAvg, Example 1: $\min_t\|x_t-x^*\|^2$",
    "fedawe.lemma2.first_moment": r"FedAWE Lemma 2: $\mathbb{E}[t-\tau_i(t)]$",
}
"""Each family's row in the paper's symbols (mathtext); a family not listed shows its
theorem's title."""


@part("tightness")
def plot(data, s, fig):
    (ax,) = plots.panels(fig, 1)
    keys = s["keys"]
    y = np.arange(len(keys))
    ax.barh(y, data["ratio"], color=plots.COLORS[0], alpha=0.6, label="worst ratio found")
    known = [j for j, key in enumerate(keys) if _supremum(key) is not None]
    ax.axvline(1.0, **plots.REFERENCE, ls="--", zorder=1,
               label="ratio 1 (beyond: counterexample)")  # fmt: skip
    # the diamonds above their bar's centre line, in front of the ratio-1 line: visible
    ax.plot([_supremum(keys[j]) for j in known], [j + 0.3 for j in known], "D",
            color=plots.COLORS[1], ms=8, zorder=3, clip_on=False,
            label="proved supremum (attained or approached)")  # fmt: skip
    ax.set_yticks(y, [_LABELS.get(k, FAMILIES[k].theorem.title) for k in keys])
    ax.set(
        xlim=(0.0, 1.1 * max(1.0, float(np.max(data["ratio"])))),
        xlabel="worst measured / bound found (dimensionless)",
        title="Worst ratio found by the tightness search per upper bound",
    )
    plots.legend(ax, ncols=3)
    none = [FAMILIES[k].theorem.title for k in keys if _supremum(k) is None]
    return (
        "Bars: the largest measured / bound the search found inside the hypotheses (the "
        "rows' worst instances, one row per family, named by what the bound bounds in the "
        "paper's symbols); orange diamonds, just above their bar: the supremum proved for "
        "the family, attained or approached (the notes say which); the dashed line: "
        "ratio 1, beyond which an instance would be a counterexample. "
        + (
            "No proved supremum for: " + "; ".join(none) + " (the notes say what is known)."
            if none
            else ""
        )
    ).strip()


register(
    Check(
        "tightness",
        "Tightness table: worst measured / bound per upper bound",
        "the catalogue's upper bounds (CA-Fed Theorems 1 and 3, TV vs chi-square, FedAU "
        "Theorem 3 per round, E3CS (27)-(28), FedLaAvg Example 1) at the worst instance found",
        settings,
        compute,
        judge,
        plot,
        bounds=("bound",),
        notes=notes,
        cost=1.9,
    )
)
