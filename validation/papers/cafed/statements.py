r"""CA-Fed's proof steps against simulation (Rodio et al., IEEE INFOCOM 2023), on the chains of
``cafed_population``: (5) with the product closed-form :math:`C_P`,
:math:`\lambda(P)=\max_k\lambda(P_k)` and (23) on the product chain of the first clients
(exact matrix powers); (21), (22) and Lemmas 2-3 on projected FedAvg runs of
``cafed-theorem2``'s instance with the population's :math:`\lambda=\nu` chains.
"""

from __future__ import annotations

import numpy as np

from fedtheory import markov
from fedtheory.availability import TwoStateMarkov
from fedtheory.availability.builders import cafed_population
from fedtheory.bounds import cafed
from fedtheory.sim import FedAvg, FixedWeights, InverseTime, simulate
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.validation.papers.cafed import theorem2 as cafed_theorem2
from fedtheory.verdict import (
    compare_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
    rounding_floor,
)

ROUNDING = 1e-10  # (5) is compared where C_P lambda^t is above the rounding of matrix powers

BOUNDS = (
    "eq5_bound", "lambda_max", "eq23_bound", "eq21_bound", "eq22_one", "lemma2_bound",
    "lemma3_bound",
)  # fmt: skip


@part("cafed-statements")
def settings(size: Size) -> dict:
    return {
        "chain_clients": {"tiny": 4, "quick": 6, "full": 8}[size],
        "lookahead": {"tiny": 600, "quick": 1000, "full": 3000}[size],
        "run_rounds": {"tiny": 40, "quick": 100, "full": 400}[size],
        "run_replicates": {"tiny": 8, "quick": 24, "full": 64}[size],
        "seed": 0,
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


@part("cafed-statements")
def compute(s: dict) -> dict[str, np.ndarray]:
    return {**_chains(s), **_run(s)}


@part("cafed-statements")
def judge(data, s):
    inside = data["eq23_inside"] == 1
    return [
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


@part("cafed-statements")
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


@part("cafed-statements")
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
        "cafed-statements",
        "CA-Fed's proof steps against simulation",
        "CA-Fed (5), (21)-(23), Lemmas 2-3",
        settings,
        compute,
        judge,
        plot,
        bounds=BOUNDS,
        notes=notes,
        cost=0.4,
    )
)
