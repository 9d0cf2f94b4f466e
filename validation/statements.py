r"""Lemmas and proof steps against simulation: measured next to the statement.

* FedLaAvg Lemma 2: the staleness :math:`t-T_i^t` of FedLaAvg runs (absent-longest selection,
  every client available at least once in every window of :math:`E` rounds) against
  :math:`I=\lceil N/K\rceil E`.
* E3CS Claim 1, Fact 9, (9) and the zero-regret remark on the ProbAlloc states of E3CS runs
  (the paper's :math:`K=100`, :math:`k=20`, four volatility classes): Claim 1's allocation at
  every state, Fact 9 on the best fixed comparator and on the algorithm's own quotas, the
  realised CEP against (9) with exact-marginal sampling and with the paper's own sampler
  (successive sampling, ``torch.multinomial`` without replacement, which §IV-C says
  "suffice[s] to ensure ... :math:`\mathbb E[\mathbb I_{\{i\in A_t\}}]=p_{i,t}`"; inside the
  paper's assumptions, so this row is the evidence for erratum ``e3cs.sampler``), the regret
  at :math:`\sigma=k/K`.
* CA-Fed on the chains of ``cafed_population``: (5) with the product closed-form
  :math:`C_P`, :math:`\lambda(P)=\max_k\lambda(P_k)` and (23) on the product chain of the
  first clients (exact matrix powers); (21), (22) and Lemmas 2-3 on projected FedAvg runs of
  ``cafed-theorem2``'s instance with the population's :math:`\lambda=\nu` chains.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory import markov
from fedtheory.availability import Bernoulli, TraceReplay, TwoStateMarkov
from fedtheory.availability.builders import cafed_population
from fedtheory.bounds import cafed, e3cs, fedlaavg
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import E3CS, FedAvg, FedLaAvg, FixedWeights, InverseTime, run_selection, simulate
from fedtheory.sim.selection.allocation import prob_alloc, quota_constant
from fedtheory.validation import cafed_theorem2, plots
from fedtheory.validation.kinds import part
from fedtheory.validation.registry import Check, Size, register
from fedtheory.verdict import (
    compare_equal,
    compare_mean_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
    evidence_of,
    rounding_floor,
)

RATES = (0.1, 0.3, 0.6, 0.9)
CEP_MARGIN = 0.01
"""Equivalence margin of E3CS (9), E[CEP_T] / sum_t sum_i p x == 1 (two one-sided tests,
:func:`fedtheory.verdict.compare_mean_equal`): a ratio off by 1% is a systematic error."""
ROUNDING = 1e-10  # (5) is compared where C_P lambda^t is above the rounding of matrix powers


BOUNDS = (
    "staleness_bound", "claim1_pred", "fact9_zero", "cep_one", "regret_even_pred",
    "eq5_bound", "lambda_max", "eq23_bound", "eq21_bound", "eq22_one", "lemma2_bound",
    "lemma3_bound",
)  # fmt: skip


@part("statements")
def settings(size: Size) -> dict:
    return {
        "staleness": [[6, 2, 3], [10, 3, 4], [8, 8, 2], [12, 1, 5]],  # (N, K, E)
        "staleness_rounds": {"tiny": 60, "quick": 200, "full": 1000}[size],
        "e3cs_rounds": {"tiny": 40, "quick": 80, "full": 500}[size],
        "e3cs_replicates": {"tiny": 4, "quick": 16, "full": 64}[size],
        "chain_clients": {"tiny": 4, "quick": 6, "full": 8}[size],
        "lookahead": {"tiny": 600, "quick": 1000, "full": 3000}[size],
        "run_rounds": {"tiny": 40, "quick": 100, "full": 400}[size],
        "run_replicates": {"tiny": 8, "quick": 24, "full": 64}[size],
        "seed": 0,
    }


def _staleness(s: dict) -> tuple[np.ndarray, np.ndarray]:
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
    return np.array(measured, float), np.array(bound, float)


def _e3cs(s: dict) -> dict[str, np.ndarray]:
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
    }


def _chains(s: dict) -> dict[str, np.ndarray]:
    pop = cafed_population(num_clients=24, seed=s["seed"])
    pi, lam = pop.process.pi[: s["chain_clients"]], pop.process.lam[: s["chain_clients"]]
    mats = markov.two_state_matrix(pi, lam)  # [n, 2, 2]
    P = markov.kron_chain(mats)
    stationary = markov.stationary_distribution(P)
    mix = markov.product_mixing_constants(pi, lam)
    t = np.arange(0, s["lookahead"] + 1)
    powers = [np.eye(P.shape[0])]
    for _ in t[1:]:
        powers.append(powers[-1] @ P)
    dev = np.array([np.abs(Pt - stationary).max() for Pt in powers])  # [T+1]
    H = cafed_theorem2._constants(
        cafed_theorem2.settings("tiny"), *cafed_theorem2.problem_on_ball(
            cafed_theorem2.settings("tiny")), TwoStateMarkov(pi, lam))[0]["H"]  # fmt: skip
    T = s["lookahead"]
    J = cafed.theorem2_aggregates(np.ones(T + 1), lam=mix.rate, C_P=mix.C_P, T_P=0, H=H).J
    tt = np.arange(1, T + 1)
    res = cafed.eq23.evaluate(strict=False, J_t=J, t=tt, C_P=mix.C_P, H=H, lam=mix.rate)
    inside = J >= np.log(2 * mix.C_P * H * tt) / np.log(1 / mix.rate)
    rates = [markov.mixing_rate(m) for m in mats]
    eq5 = mix.C_P * mix.rate ** t.astype(float)  # (5) at t = 0 too (cafed.eq5 from t = 1)
    eq5[1:] = cafed.eq5.evaluate(C_P=mix.C_P, lam=mix.rate, t=t[1:], T_P=0).total
    above = eq5 > ROUNDING  # matrix powers carry ~1e-15 of rounding: compare above it
    return {
        "chain_dev": dev[above],
        "eq5_bound": eq5[above],
        "lambda_product": np.array([markov.mixing_rate(P)]),
        "lambda_max": np.array([cafed.product_lambda.evaluate(lam_max=max(rates)).total]),
        "eq23_dev": dev[J],
        "eq23_bound": res.total,
        "eq23_inside": inside.astype(float),
        "H": np.array([H]),
    }


def _run(s: dict) -> dict[str, np.ndarray]:
    ts = cafed_theorem2.settings("tiny")
    prob, radius = cafed_theorem2.problem_on_ball(ts)
    pi = np.array(ts["pi"])
    process = TwoStateMarkov(pi, 0.9)  # the population's correlated lambda = nu
    kw, sigma2 = cafed_theorem2._constants(ts, prob, radius, process)
    q = prob.alpha.copy()
    schedule = InverseTime(ts["a"], ts["b"])
    T = s["run_rounds"]
    eta = np.array([schedule(t) for t in range(T + 1)])
    alg = FedAvg(FixedWeights(q), local_steps=ts["local_steps"], lr=schedule, radius=radius)
    rec = simulate(prob, process, alg, rounds=T, replicates=s["run_replicates"], seed=s["seed"])
    w, mask = rec.iterates, rec.participation.astype(float)  # [R, T+1, d], [R, T, N]
    q_active = mask @ q  # [R, T]
    step = np.linalg.norm(np.diff(w, axis=1), axis=-1)  # [R, T]
    bound22 = cafed.eq22.evaluate(eta_t=eta[:T], G=kw["G"], E=kw["E"], q_active=1.0).total
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio22 = np.where(q_active > 0, step / (bound22 * q_active), 0.0)  # [R, T]
    flat = w.reshape(-1, w.shape[-1])
    losses = prob.client_losses(flat).reshape(w.shape[0], w.shape[1], -1)  # [R, T+1, N]
    pair = np.abs(np.diff(losses, axis=1)).max(-1)  # [R, T]
    p = FixedWeights(q).effective_weights(pi)
    w_b, _ = prob.optimum(p)
    fb = prob.client_losses(w_b[None])[0]
    t = np.arange(1, T)
    active = mask[:, t]
    lhs2 = np.einsum("t,rtn,n,rtn->r", eta[t], active, q, losses[:, t] - fb)
    agg = cafed.theorem2_aggregates(eta[:T], lam=kw["lam"], C_P=kw["C_P"], T_P=0, H=kw["H"])
    J = agg.J[t - 1]
    lhs3 = np.einsum("t,rtn,n,rtn->r", eta[t], active, q, losses[:, t - J] - losses[:, t])
    c1 = cafed.lemma2.evaluate(
        dist0_B_sq=float(w_b @ w_b), E=kw["E"], pi_q_sq_sigma=float(np.sum(pi * q**2 * sigma2)),
        sum_eta_sq=float(np.sum(eta[t] ** 2)), pi_q=float(pi @ q), G=kw["G"], L=prob.L,
        Q=float(q.sum()), Gamma=prob.gamma(p), eta_max=float(eta[t].max()),
    ).total  # fmt: skip
    c3 = cafed.lemma3.evaluate(
        E=kw["E"], D=kw["D"], G=kw["G"], Q=float(q.sum()), pi_q=float(pi @ q),
        sum_J_eta=cafed.lookback_sum(eta[:T], agg.J),
    ).total  # fmt: skip
    return {
        "eq22_ratio": ratio22[:, :: max(1, T // 8)],  # [R, P] a few rounds
        "eq22_one": np.ones(1),
        "eq21_gap": pair,
        "eq21_bound": cafed.eq21.evaluate(D=kw["D"], diff_norm=step).total,
        "lemma2_lhs": lhs2,
        "lemma2_bound": np.array([c1]),
        "lemma3_lhs": lhs3,
        "lemma3_bound": np.array([c3]),
    }


@part("statements")
def compute(s: dict) -> dict[str, np.ndarray]:
    staleness, staleness_bound = _staleness(s)
    return {
        "staleness": staleness,
        "staleness_bound": staleness_bound,
        **_e3cs(s),
        "fact9_zero": np.zeros(1),
        **_chains(s),
        **_run(s),
    }


@part("statements")
def judge(data, s):
    inside = data["eq23_inside"] == 1
    rows = [
        compare_upper_bound(
            "FedLaAvg staleness max_{t,i} (t - T_i^t) <= ceil(N/K) E, runs with (N, K, E) = "
            + ", ".join(str(tuple(c)) for c in s["staleness"]),
            fedlaavg.staleness.reference,
            data["staleness"],
            data["staleness_bound"],
        ),
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
        compare_upper_bound(
            f"CA-Fed (5) on the product chain of cafed_population's first {s['chain_clients']} "
            "clients: max|P^t - pi| <= C_P lambda^t (product closed-form C_P)",
            cafed.eq5.reference,
            data["chain_dev"],
            data["eq5_bound"],
        ),
        compare_equal(
            "CA-Fed lambda(kron P_k) = max_k lambda(P_k) on the same chain",
            cafed.product_lambda.reference,
            data["lambda_product"],
            data["lambda_max"],
            rtol=1e-9,
        ),
        compare_upper_bound(
            "CA-Fed (23) on the same chain where the min in J_t does not bind: "
            "max|P^J_t - pi| <= 1/(2Ht)",
            cafed.eq23.reference,
            data["eq23_dev"][inside],
            data["eq23_bound"][inside],
        ),
        compare_upper_bound(
            "CA-Fed (21) on projected FedAvg runs: max_k |F_k(w_t+1) - F_k(w_t)| <= D ||w_t+1 - "
            "w_t||",
            cafed.eq21.reference,
            data["eq21_gap"],
            data["eq21_bound"],
        ),
        compare_mean_upper_bound(
            "CA-Fed (22): E[||w_t+1 - w_t|| / (eta_t G E sum_{A_t} q_k)] <= 1",
            cafed.eq22.reference,
            data["eq22_ratio"],
            data["eq22_one"],
        ),
        compare_mean_upper_bound(
            "CA-Fed Lemma 2: sum_t eta_t sum_{A_t} q_k (F_k(w_t) - F_k(w_B*)) <= C_1",
            cafed.lemma2.reference,
            data["lemma2_lhs"],
            data["lemma2_bound"],
        ),
        compare_mean_upper_bound(
            "CA-Fed Lemma 3: sum_t eta_t sum_{A_t} q_k (F_k(w_t-J_t) - F_k(w_t)) "
            "<= C_3/ln(1/lambda)",
            cafed.lemma3.reference,
            data["lemma3_lhs"],
            data["lemma3_bound"],
        ),
    ]
    return rows


@part("statements")
def plot(data, s, fig):
    ax1, ax2 = plots.panels(fig, 2)
    t = np.arange(data["chain_dev"].size)
    # entries of P^t are at most 1 and carry one rounding per matrix product: below this
    # floor a deviation is rounding, not the chain's convergence
    floor = 10.0 ** np.ceil(np.log10(rounding_floor(1.0, ulps=t.size)))  # up to a decade
    ax1.plot(t, plots.floored(data["chain_dev"], floor), **plots.series(0, line=False),
             markersize=3, label=r"measured $\max|P^t-\pi|$")  # fmt: skip
    ax1.plot(t, data["eq5_bound"], **plots.series(1, marker=False),
             label=r"(5): $C_P\,\lambda^t$")  # fmt: skip
    ax1.set(yscale="log", xlabel="round $t$", ylabel="deviation (probability)",
            title="CA-Fed (5) on a product chain")  # fmt: skip
    plots.mark_floor(ax1, floor, what="float64 rounding")
    plots.legend(ax1)
    tt = np.arange(1, data["eq23_bound"].size + 1)
    inside = data["eq23_inside"] == 1
    ax2.plot(tt[inside], data["eq23_dev"][inside], **plots.series(0, line=False),
             markersize=3, label=r"$\max|P^{J_t}-\pi|$ where $J_t<t$")  # fmt: skip
    ax2.plot(tt[~inside], data["eq23_dev"][~inside], **plots.series(1, line=False),
             markersize=3, label=r"same where the min in $J_t$ binds ($J_t=t$)")  # fmt: skip
    ax2.plot(tt, data["eq23_bound"], **plots.series(2, marker=False),
             label=r"(23): $1/(2Ht)$")  # fmt: skip
    ax2.set(xscale="log", yscale="log", xlabel="round $t$", ylabel="deviation (probability)",
            title="CA-Fed (23), proof of Theorem 2")  # fmt: skip
    plots.legend(ax2)
    return (
        f"Left: deviations below {floor:.2g} (float64 rounding after {t.size} matrix products "
        "of entries at most 1, rounded up to a power of ten) are drawn on that floor. Right: "
        "where the min in J_t binds, "
        "(23) is not claimed (erratum cafed.proof.step23). The figure draws the two rows "
        "that are curves over rounds, (5) and (23); the other "
        f"{len(judge(data, s)) - 2} rows of this validation are single numbers (a maximum, "
        "a ratio or a mean each), given in this section's list of rows and in the verdict "
        "table, not drawn."
    )


@part("statements")
def notes(data, s):
    binds = int((data["eq23_inside"] == 0).sum())
    return [
        f"CA-Fed (23): the min{{., t}} in J_t binds at {binds} of {data['eq23_bound'].size} "
        "rounds on this chain (H = "
        f"{float(data['H'][0]):.3g}); there (23) is not claimed here: see erratum "
        "cafed.proof.step23.",
    ]


register(
    Check(
        "statements",
        "Lemmas and proof steps against simulation",
        "FedLaAvg Lemma 2; E3CS Claim 1, Fact 9, (9), remark; CA-Fed (5), (21)-(23), Lemmas 2-3",
        settings,
        compute,
        judge,
        plot,
        bounds=BOUNDS,
        notes=notes,
        cost=2.4,
    )
)
