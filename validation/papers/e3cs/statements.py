r"""E3CS Claim 1, Fact 9, (9) and the zero-regret remark against simulation (Huang et al.,
IEEE IoT-J 2022), on the ProbAlloc states of E3CS runs (the paper's :math:`K=100`, :math:`k=20`,
four volatility classes): Claim 1's allocation at every state, Fact 9 on the best fixed
comparator and on the algorithm's own quotas, the realised CEP against (9) with exact-marginal
sampling and with the paper's own sampler (successive sampling, ``torch.multinomial`` without
replacement, which §IV-C says "suffice[s] to ensure ... :math:`\mathbb E[\mathbb I_{\{i\in
A_t\}}]=p_{i,t}`"; inside the paper's assumptions, so this row is the evidence for erratum
``e3cs.sampler``), the regret at :math:`\sigma=k/K`.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.availability import Bernoulli
from fedtheory.bounds import e3cs
from fedtheory.sim import E3CS, run_selection
from fedtheory.sim.selection.allocation import prob_alloc, quota_constant
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import compare_equal, compare_mean_equal, compare_upper_bound, evidence_of

RATES = (0.1, 0.3, 0.6, 0.9)
CEP_MARGIN = 0.01
"""Equivalence margin of E3CS (9), E[CEP_T] / sum_t sum_i p x == 1 (two one-sided tests,
:func:`fedtheory.verdict.compare_mean_equal`): a ratio off by 1% is a systematic error."""

BOUNDS = ("claim1_pred", "fact9_zero", "cep_one", "regret_even_pred")


@part("e3cs-statements")
def settings(size: Size) -> dict:
    return {
        "e3cs_rounds": {"tiny": 40, "quick": 80, "full": 500}[size],
        "e3cs_replicates": {"tiny": 4, "quick": 16, "full": 64}[size],
        "seed": 0,
    }


@part("e3cs-statements")
def compute(s: dict) -> dict[str, np.ndarray]:
    K, k = 100, 20
    rho = np.repeat(RATES, 25)
    x = Bernoulli(rho).sample(s["e3cs_rounds"], replicates=s["e3cs_replicates"], seed=s["seed"])
    out: dict[str, list] = {"claim1": [], "claim1_pred": [], "fact9_q": [], "fact9_p": []}
    for c in (0.0, 0.5):
        sigma = quota_constant(c, k, K)
        selector = E3CS(k, sigma=sigma, eta=0.5)
        state = selector.init(x.shape[0], K)
        for t in range(x.shape[1]):
            w = torch.exp(state.log_w - state.log_w.amax(1, keepdim=True)).numpy()
            out["claim1"].append(e3cs.claim1_allocation(w, k, sigma).max())
            out["claim1_pred"].append(e3cs.claim1.evaluate(sigma_t=sigma, k=k, K=K).total)
            p = prob_alloc(state.log_w, k, sigma).p.numpy()
            cap = e3cs.fact9.evaluate(sigma_t=sigma, k=k, K=K).total
            out["fact9_p"].append((p - sigma).max() - cap)  # quota (p - sigma) vs 1 - sigma
            choice = selector.select(state, t, np.random.default_rng([s["seed"], t]))
            state = selector.update(state, t, choice, x[:, t])
        rec = run_selection(selector, x, seed=s["seed"])
        quota = rec.best_fixed.q * (k - K * sigma)  # [R, K]
        out["fact9_q"].append(float((quota - (1 - sigma)).max()))
    cep = {}
    for sampler in ("systematic", "successive"):
        rec = run_selection(E3CS(k, eta=0.5, sampler=sampler), x, seed=s["seed"])
        predicted = e3cs.expected_cep.evaluate(sum_px=rec.expected_cep[:, -1]).total  # [R]
        cep[sampler] = rec.cep[:, -1] / predicted  # E[ratio] = 1 by (9) and the tower rule
    even = run_selection(E3CS(k, sigma=k / K, eta=0.5), x, seed=s["seed"]).regret
    return {
        "claim1": np.array(out["claim1"]),
        "claim1_pred": np.array(out["claim1_pred"]),
        "fact9_q_excess": np.array(out["fact9_q"]),
        "fact9_p_excess": np.array(out["fact9_p"]),
        "cep_systematic": cep["systematic"],
        "cep_successive": cep["successive"],
        "regret_even": even,
        "regret_even_pred": np.full(even.shape, e3cs.zero_regret.evaluate(sum_quota=0.0).total),
        "cep_one": np.ones(1),
        "fact9_zero": np.zeros(1),
    }


@part("e3cs-statements")
def judge(data, s):
    return [
        compare_equal(
            "E3CS Claim 1: alpha_t = min_i w_i/(1 - sigma_t) gives p_i = k/K (max over the "
            "ProbAlloc states of E3CS-0 and E3CS-0.5 runs)",
            e3cs.claim1.reference,
            data["claim1"],
            data["claim1_pred"],
            rtol=1e-12,
        ),
        compare_upper_bound(
            "E3CS Fact 9 on the runs' best fixed comparator: max q*(k - K sigma) - (1 - sigma)",
            e3cs.fact9.reference,
            data["fact9_q_excess"],
            data["fact9_zero"],
        ),
        compare_upper_bound(
            "E3CS Fact 9 on ProbAlloc's own quotas: max (p - sigma) - (1 - sigma) over states",
            e3cs.fact9.reference,
            data["fact9_p_excess"],
            data["fact9_zero"],
        ),
        compare_mean_equal(
            "E3CS (9): realised CEP_T / sum_t sum_i p x, exact-marginal sampling",
            e3cs.expected_cep.reference,
            data["cep_systematic"],
            data["cep_one"],
            margin=CEP_MARGIN,
        ),
        evidence_of(
            "e3cs.sampler",
            compare_mean_equal(
                "E3CS (9) with the paper's own sampler (multinomialNR, Sec. IV-C (i)-(iii); "
                "evidence for erratum e3cs.sampler): realised CEP_T / sum_t sum_i p x",
                e3cs.expected_cep.reference,
                data["cep_successive"],
                data["cep_one"],
                margin=CEP_MARGIN,
            ),
        ),
        compare_equal(
            "E3CS remark: regret (26) at sigma = k/K",
            e3cs.zero_regret.reference,
            data["regret_even"],
            data["regret_even_pred"],
            rtol=0.0,
            atol=1e-9,
        ),
    ]


@part("e3cs-statements")
def plot(data, s, fig):
    (ax,) = plots.panels(fig, 1)
    rows = judge(data, s)
    cep = [r for r in rows if r.claim.startswith("E3CS (9)")]  # exact-marginal, successive
    replicate = np.arange(data["cep_systematic"].size)
    at = replicate.size + 1.0  # each (9) row's mean and the interval its verdict used
    samplers = (("cep_systematic", "exact-marginal sampling"),
                ("cep_successive", "the paper's successive sampling"))  # fmt: skip
    for i, ((key, label), row) in enumerate(zip(samplers, cep, strict=True)):
        ax.plot(replicate, data[key], **plots.series(i, line=False), label=label)
        low, high = row.interval
        ax.errorbar(at + 0.6 * i, row.measured, yerr=[[row.measured - low], [high - row.measured]],
                    **plots.series(i, line=False), capsize=4)  # fmt: skip
    ax.axhspan(1 - CEP_MARGIN, 1 + CEP_MARGIN, color="0.9", zorder=0,
               label=f"(9): ratio 1, margin $\\pm${CEP_MARGIN:g}")  # fmt: skip
    ax.axhline(1.0, **plots.series(2, marker=False))
    ax.set_xticks([*replicate[::2], at + 0.3], [*map(str, replicate[::2]), "mean"])
    ax.set(xlabel="replicate", ylabel=r"$\mathrm{CEP}_T/\sum_t\sum_i p_{i,t}x_{i,t}$",
           title="E3CS (9), realised CEP")  # fmt: skip
    plots.legend(ax)
    return (
        "The figure draws the (9) rows: one ratio per replicate and, at 'mean', each row's "
        "mean with the 95% interval its verdict used (holds when the interval lies inside "
        f"the grey margin 1 ± {CEP_MARGIN:g}, inconclusive when it crosses its edge); the "
        f"other {len(rows) - len(cep)} rows of this validation are single numbers (a maximum or a "
        "mean each), given in this section's list of rows and in the verdict table."
    )


register(
    Check(
        "e3cs-statements",
        "E3CS statements against simulation",
        "E3CS Claim 1, Fact 9, (9), zero-regret remark",
        settings,
        compute,
        judge,
        plot,
        bounds=BOUNDS,
        cost=0.9,
    )
)
