"""CA-Fed in the simulator (Rodio et al. 2023, Algorithm 1, and the authors' code as a
variant) and its baselines: vectorised == plain reference loop in float64, the exclusion
against a literal transcription of the authors' rule, limit cases, the baselines' weights
against plain loops, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from fedtheory.availability import TwoStateMarkov
from fedtheory.availability.estimators import BetaPrior, CodePrior
from fedtheory.data import cafed_clustered
from fedtheory.optim.greedy import greedy_exclusion
from fedtheory.problems import LogisticRegressionProblem, QuadraticProblem
from fedtheory.sim import FedAvg, reference, simulate, unbiased_weights
from fedtheory.sim.cafed import (
    AdaFedWeights,
    CaFed,
    F3astWeights,
    adafed_weights,
    cafed_exclusion_orders,
    cafed_proxy_error,
    proxy_values,
)
from tests.conftest import assert_parameter_error, assert_tight

N, D = 8, 3
PROB = QuadraticProblem.random(N, D, mu=0.5, L=2.0, spread=2.0, seed=3)
PI = np.array([0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.1])
LAM = np.array([0.9, 0.0, 0.9, 0.01, 0.9, -0.05, 0.9, 0.0])
PROC = TwoStateMarkov(PI, LAM)
ALPHA = np.full(N, 1 / N)
W0 = np.array([1.0, -2.0, 0.5])
SETTINGS = dict(local_steps=2, lr=0.05, server_lr=0.5)


def _oracle(**kw) -> CaFed:
    return CaFed(alpha=ALPHA, pi=PI, lam=LAM, **{"losses": "exact", **SETTINGS, **kw})


def _code(**kw) -> CaFed:
    return CaFed(alpha=ALPHA, pi=PI, lam=LAM, variant="code", **{**SETTINGS, **kw})


# A data problem whose batches cover each client's data: batch losses are exact, so the
# vectorised and the reference path can be compared on the paper's default loss report.
DATA = LogisticRegressionProblem(cafed_clustered(N, D, 12, seed=0), batch_size=None)
ALGORITHMS = {
    "oracle": (PROB, _oracle()),
    "oracle-tau": (PROB, _oracle(tau=1e-3, beta=0.8, trade_off=5.0)),
    "beta-prior": (
        PROB,
        CaFed(
            alpha=ALPHA, prior=BetaPrior(2.0, 1.0, 1.0, 3.0, 1.0, 1.0), losses="exact", **SETTINGS
        ),
    ),
    "projected": (PROB, _oracle(radius=1.5, full_first_round=True)),
    "batch-losses": (DATA, CaFed(alpha=DATA.alpha, pi=PI, lam=LAM, **SETTINGS)),
    "code": (PROB, _code(smoothness=0.2)),
    "code-estimator": (PROB, _code(prior=CodePrior(horizon=10.0), smoothness=0.0, tau=1e-4)),
    "zero-minimum-strict": (
        DATA,
        CaFed(alpha=DATA.alpha, pi=PI, lam=LAM, initial_minimum="zero", strict=True, **SETTINGS),
    ),  # fmt: skip
}


@pytest.mark.parametrize("key", list(ALGORITHMS))
def test_vectorised_equals_reference_loop(key):
    problem, alg = ALGORITHMS[key]
    rec = simulate(problem, PROC, alg, rounds=25, replicates=3, seed=4, w0=W0)
    available = rec.participation.sum(-1)  # [R, T]
    assert np.any(rec.participants < available) and np.any(rec.participants > 1)  # get acts
    for r in range(3):
        ref = reference.run(problem, alg, rec.participation[r], W0)
        assert_tight(rec.iterates[r], ref)


def test_applied_weights_and_participants_are_recorded():
    problem, alg = ALGORITHMS["oracle-tau"]
    state = alg.init(problem, torch.from_numpy(np.tile(W0, (2, 1))))
    mask = PROC.sample(6, replicates=2, seed=1)
    for t in range(6):
        state = alg.step(problem, state, mask[:, t], t)
        assert torch.all(state.participants <= mask[:, t])  # only available clients work
        assert torch.all((state.weights > 0) == state.participants)


def test_huge_trade_off_with_positive_tau_is_unbiased_fedavg():
    """CA-Fed §VI-A: kappa_bar^2 -> inf reduces CA-Fed to the Unbiased baseline (a positive
    tau keeps get from accepting exact ties)."""
    cafed = _oracle(tau=1e-12, trade_off=1e12)
    unbiased = FedAvg(unbiased_weights(ALPHA, PI), **SETTINGS)
    a = simulate(PROB, PROC, cafed, rounds=20, replicates=2, seed=5, w0=W0)
    b = simulate(PROB, PROC, unbiased, rounds=20, replicates=2, seed=5, w0=W0)
    assert_tight(a.iterates, b.iterates)


def test_one_always_available_client_is_fedavg():
    """Limit case: one client with pi = 1 is never excluded and gets q = alpha/pi = 1."""
    one = QuadraticProblem.random(1, D, mu=0.5, L=2.0, seed=9)
    always = TwoStateMarkov([0.999999], 0.0)
    cafed = CaFed(alpha=[1.0], pi=[1.0], lam=[0.0], losses="exact", **SETTINGS)
    fedavg = FedAvg(unbiased_weights([1.0], [1.0]), **SETTINGS)
    a = simulate(one, always, cafed, rounds=15, replicates=2, seed=6, w0=W0)
    b = simulate(one, always, fedavg, rounds=15, replicates=2, seed=6, w0=W0)
    assert_tight(a.iterates, b.iterates)


def test_get_with_tau_zero_accepts_ties_and_keeps_one_client_in_round_zero():
    """Algorithm 1 with tau = 0 accepts eps - eps+ >= 0: in the first round every loss gap is
    zero, so the proxy is identically 0 and get excludes every client but one."""
    alg = _oracle()
    state = alg.init(PROB, torch.from_numpy(W0[None].copy()))
    state = alg.step(PROB, state, torch.ones(1, N, dtype=torch.bool), 0)
    assert int(state.participants.sum()) == 1


def test_strict_test_at_tau_zero_rejects_ties_and_keeps_every_client_in_round_zero():
    """§IV-A's "decreasing by more than a threshold tau >= 0": with strict=True the tie of
    the first round (every gap 0, proxy 0 for every q) excludes nobody."""
    alg = _oracle(strict=True)
    state = alg.init(PROB, torch.from_numpy(W0[None].copy()))
    state = alg.step(PROB, state, torch.ones(1, N, dtype=torch.bool), 0)
    assert int(state.participants.sum()) == N


def test_zero_initial_minimum_makes_the_gap_the_filtered_loss():
    """initial_minimum="zero": F_hat^* stays 0, so the gaps are F_hat (positive): no ties."""
    alg = CaFed(alpha=DATA.alpha, pi=PI, lam=LAM, initial_minimum="zero", **SETTINGS)
    state = alg.init(DATA, torch.zeros(2, D, dtype=torch.float64))
    mask = torch.ones(2, N, dtype=torch.bool)
    for t in range(3):
        state = alg.step(DATA, state, mask, t, torch.Generator().manual_seed(t))
    assert torch.all(state.loss_min == 0) and torch.all(state.loss_hat > 0)
    first = CaFed(alpha=DATA.alpha, pi=PI, lam=LAM, **SETTINGS)
    s0 = first.step(DATA, first.init(DATA, torch.zeros(2, D, dtype=torch.float64)), mask, 0)
    assert torch.equal(s0.loss_min, s0.loss_hat)  # the running minimum starts at the reports


def _code_sampler_allocation(alpha, pi, lam, loss_estimates, optimums, bias_const, tolerance):
    """The authors' ``MarkovianClientsSampler.sample`` (oracle estimates) written out
    literally for one round: allocation alpha/pi, ``_truncate_clients`` over the clients
    sorted by |stability| (descending), then by availability (ascending)."""
    n = len(alpha)
    ids = list(range(n))

    def objective(allocation):
        weights = pi * allocation
        weights = weights / weights.sum()
        optimization_term = (loss_estimates - optimums) @ weights
        dissimilarity = np.max(loss_estimates - optimums)
        tv_value = np.square(0.5 * np.abs(alpha - weights).sum())
        return optimization_term + dissimilarity * tv_value * bias_const

    def truncate(allocation, ordered_ids):
        running = np.copy(allocation)
        current = np.copy(allocation)
        running_objective = objective(running)
        for client_id in ordered_ids:
            current[client_id] = 0
            if current.sum() == 0:
                break
            current_objective = objective(current)
            if running_objective - current_objective >= tolerance:
                running = np.copy(current)
                running_objective = current_objective
            else:
                current = np.copy(running)
        return running

    allocation = alpha / pi
    allocation = truncate(allocation, sorted(ids, key=lambda i: abs(lam[i]), reverse=True))
    return truncate(allocation, sorted(ids, key=lambda i: pi[i], reverse=False))


def test_exclusion_equals_the_authors_rule_on_random_inputs_with_negative_lambda():
    """CaFed's get (both variants share it) == the authors' code, transcribed, on 400 random
    instances with lambda in [-1, 1] (ties in lambda and zero loss gaps included); ordering by
    signed lambda instead differs on some of them, so the test can fail."""
    rng = np.random.default_rng(2023)
    signed_differs = 0
    for batch in range(8):
        n, r = int(rng.integers(2, 13)), 50
        alpha = rng.dirichlet(np.ones(n))
        pi = rng.uniform(0.05, 1.0, (r, n))
        lam = rng.uniform(-1.0, 1.0, (r, n))
        lam[:, : n // 3] = np.round(lam[:, : n // 3], 1)  # some ties in |lambda|
        optimums = rng.uniform(0.0, 0.5, (r, n))
        loss = optimums + rng.exponential(0.3, (r, n)) * (rng.uniform(size=(r, n)) > 0.2)
        tau = 0.0 if batch % 2 == 0 else 1e-3
        alg = CaFed(alpha=alpha, pi=pi[0], lam=lam[0], tau=tau, trade_off=2.0)
        tensors = [torch.from_numpy(x) for x in (pi, lam, loss - optimums)]
        got = alg.aggregation_weights(*tensors).numpy()
        for i in range(r):
            want = _code_sampler_allocation(alpha, pi[i], lam[i], loss[i], optimums[i], 2.0, tau)
            assert_tight(got[i], want)
        signed = torch.argsort(tensors[1], dim=-1, descending=True, stable=True)
        orders = [signed, cafed_exclusion_orders(tensors[0], tensors[1])[1]]
        gap, a = tensors[2], torch.from_numpy(alpha)

        def proxy(q, pi_t=tensors[0][:, None], gap=gap[:, None], a=a):  # [R, K, N] -> [R, K]
            return proxy_values(q, pi_t, gap, a, gap.amax(-1), 2.0)  # NaN: never kept

        with_signed = greedy_exclusion(proxy, a / tensors[0], orders, tau=tau).numpy()
        signed_differs += int(np.sum(np.any(with_signed != got, axis=1)))
    assert signed_differs > 0


def test_code_variant_uses_true_local_optima_and_the_smoothness_convention():
    """Variant "code": F_hat^* is the problem's F_k^* throughout, and its filter with
    smoothness s is (15) with beta = 1 - s."""
    code, paper = _code(smoothness=0.3), _oracle(beta=0.7)
    w0 = torch.from_numpy(np.tile(W0, (2, 1)))
    sc, sp_ = code.init(PROB, w0), paper.init(PROB, w0)
    mask = PROC.sample(6, replicates=2, seed=8)
    for t in range(6):
        sc, sp_ = code.step(PROB, sc, mask[:, t], t), paper.step(PROB, sp_, mask[:, t], t)
        assert torch.all(sc.loss_min == 0.0)  # quadratic clients: F_k^* = 0
        losses = torch.from_numpy(PROB.client_losses(sc.w.numpy()))
        a = code.filter_losses(sc, losses, mask[:, t])[0]
        b = paper.filter_losses(sc._replace(loss_min=sp_.loss_min), losses, mask[:, t])[0]
        assert_tight(a.numpy(), b.numpy())
    data = LogisticRegressionProblem(cafed_clustered(N, D, 20, seed=1), batch_size=4)
    state = CaFed(alpha=data.alpha, pi=PI, lam=LAM, variant="code").init(data, w0)
    assert_tight(state.loss_min[1].numpy(), data.client_optima()[1])


def test_batch_losses_are_unbiased_and_reported_for_active_clients_only():
    """The paper's loss report: a mini-batch estimate of F_k(w_t) (section IV-A), unbiased;
    a batch at least a client's data gives the exact loss."""
    data = LogisticRegressionProblem(cafed_clustered(4, 3, 40, seed=2), batch_size=5)
    alg = CaFed(alpha=data.alpha, pi=[0.5] * 4, lam=[0.0] * 4)
    w = torch.from_numpy(np.random.default_rng(0).normal(size=(3, data.dim)))
    mask = torch.tensor([[True, False, True, True]] * 3)
    gen = torch.Generator().manual_seed(0)
    draws = torch.stack([alg.reported_losses(data, w, mask, gen) for _ in range(1000)]).numpy()
    assert np.all(draws[:, :, 1] == 0.0)
    exact = data.client_losses(w.numpy())  # [3, 4]
    for r in range(3):
        for k in (0, 2, 3):
            x = draws[:, r, k]
            assert np.std(x) > 0
            assert stats.ttest_1samp(x, exact[r, k]).pvalue > 1e-3, (r, k)
    whole = CaFed(alpha=data.alpha, pi=[0.5] * 4, lam=[0.0] * 4, loss_batch=1000)
    assert_tight(whole.reported_losses(data, w, mask, gen).numpy()[:, 0], exact[:, 0])


def test_proxy_error_matches_its_formula():
    rng = np.random.default_rng(0)
    q, pi, gap = (torch.from_numpy(rng.uniform(0.1, 1, (2, 5))) for _ in range(3))
    alpha = torch.full((5,), 0.2, dtype=torch.float64)
    gamma = gap.max(-1).values
    got = cafed_proxy_error(q, pi, gap, alpha, gamma, 3.0)
    for r in range(2):
        p = (pi[r] * q[r] / (pi[r] @ q[r])).numpy()
        tv = 0.5 * np.abs(0.2 - p).sum()
        assert_tight(got[r], gap[r].numpy() @ p + 3.0 * tv**2 * float(gamma[r]))


# -- baselines --------------------------------------------------------------------------------
def test_adafed_weights_plain_loop():
    mask = PROC.sample(1, replicates=4, seed=2)[:, 0]
    got = AdaFedWeights(ALPHA, PI)(mask).numpy()
    for r in range(4):
        active = [k for k in range(N) if mask[r, k]]
        total = sum(ALPHA[k] / PI[k] for k in active)
        want = [ALPHA[k] / PI[k] / total if mask[r, k] else 0.0 for k in range(N)]
        assert_tight(got[r], want)
    assert torch.all(
        adafed_weights(
            torch.zeros(1, N, dtype=torch.bool), *(torch.from_numpy(x) for x in (ALPHA, PI))
        )
        == 0
    )


def test_f3ast_weights_plain_loop():
    mask = PROC.sample(1, replicates=4, seed=3)[:, 0]
    rule = F3astWeights(ALPHA, PI, clients=3, beta_r=0.1)
    got = rule(mask).numpy()
    for r in range(4):
        rate = [0.9 * PI[k] + 0.1 * bool(mask[r, k]) for k in range(N)]
        active = [k for k in range(N) if mask[r, k]]
        top = sorted(active, key=lambda k: -(ALPHA[k] ** 2) / rate[k] ** 2)[:3]
        want = [ALPHA[k] / rate[k] if k in top else 0.0 for k in range(N)]
        assert_tight(got[r], want)


def test_f3ast_with_every_client_and_no_smoothing_is_unbiased():
    mask = PROC.sample(1, replicates=3, seed=4)[:, 0]
    f3ast = F3astWeights(ALPHA, PI, clients=N, beta_r=0.0)(mask)
    assert_tight(f3ast.numpy(), unbiased_weights(ALPHA, PI)(mask).numpy())


BAD_CALLS = [
    (lambda: CaFed(alpha=ALPHA), "'prior'", "exactly"),
    (lambda: CaFed(alpha=ALPHA, pi=PI, lam=LAM, prior=BetaPrior()), "'prior'", "exactly"),
    (lambda: CaFed(alpha=ALPHA, pi=PI), "'prior'", "exactly"),
    (lambda: CaFed(alpha=ALPHA, prior=CodePrior(), variant="code"), "'prior'", "exactly"),
    (lambda: CaFed(alpha=ALPHA, pi=PI, lam=LAM, prior=CodePrior()), "'prior'", "BetaPrior"),
    (lambda: CaFed(alpha=ALPHA, prior=BetaPrior(), variant="code"), "'prior'", "CodePrior"),
    (lambda: CaFed(alpha=ALPHA, pi=PI, lam=LAM, prior=1.0), "'prior'", "CodePrior"),
    (lambda: _oracle(variant="authors"), "'variant'", "code"),
    (lambda: _oracle(losses="full"), "'losses'", "exact"),
    (lambda: _oracle(loss_batch=0), "'loss_batch'", "[1, inf)"),
    (lambda: _oracle(beta=0.0), "'beta'", "(0, 1]"),
    (lambda: _oracle(smoothness=0.1), "'smoothness'", "None"),
    (lambda: _code(beta=0.2), "'beta'", "None"),
    (lambda: _code(smoothness=1.5), "'smoothness'", "[0, 1]"),
    (lambda: _oracle(tau=-1.0), "'tau'", "[0, inf)"),
    (lambda: _oracle(strict=1), "'strict'", "bool"),
    (lambda: _oracle(initial_minimum="none"), "'initial_minimum'", "zero"),
    (lambda: _code(initial_minimum="zero"), "'initial_minimum'", "'first'"),
    (lambda: _oracle(trade_off=-1.0), "'trade_off'", "[0, inf)"),
    (lambda: CaFed(alpha=ALPHA, pi=PI * 2, lam=LAM), "'pi'", "(0, 1]"),
    (lambda: CaFed(alpha=[0.5, 0.6], prior=BetaPrior()), "'alpha'", "summing to 1"),
    (
        lambda: CaFed(alpha=[0.5, 0.5], prior=BetaPrior()).init(PROB, torch.zeros(1, D)),
        "'problem'",
        "N=2",
    ),
    (
        lambda: CaFed(alpha=ALPHA, pi=PI, lam=LAM).init(PROB, torch.zeros(1, D)),
        "'losses'",
        "'exact'",
    ),
    (
        lambda: DATA.batch_losses(
            torch.zeros(1, D, dtype=torch.float64), torch.tensor([0]), batch_size=0
        ),
        "'batch_size'",
        "[1, 2147483647]",
    ),
    (lambda: AdaFedWeights(ALPHA, np.zeros(N)), "'pi'", "(0, 1]"),
    (lambda: F3astWeights(ALPHA, PI, clients=0), "'clients'", "[1, inf)"),
    (lambda: F3astWeights(ALPHA, PI, beta_r=2.0), "'beta_r'", "[0, 1]"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_raises_parameter_error(call, name, allowed):
    assert_parameter_error(call, name, allowed)
