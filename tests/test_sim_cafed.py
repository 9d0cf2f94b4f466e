"""CA-Fed in the simulator (Rodio et al. 2023, Algorithm 1) and its baselines: vectorised ==
plain reference loop in float64, limit cases, the baselines' weights against plain loops,
and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedtheory.availability import TwoStateMarkov
from fedtheory.availability.estimators import BetaPrior
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import FedAvg, reference, simulate, unbiased_weights
from fedtheory.sim.cafed import (
    AdaFedWeights,
    CaFed,
    F3astWeights,
    adafed_weights,
    cafed_proxy_error,
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
    return CaFed(alpha=ALPHA, pi=PI, lam=LAM, **{**SETTINGS, **kw})


ALGORITHMS = {
    "oracle": _oracle(),
    "oracle-tau": _oracle(tau=1e-3, beta=0.8, trade_off=5.0),
    "beta-prior": CaFed(alpha=ALPHA, prior=BetaPrior(2.0, 1.0, 1.0, 3.0, 1.0, 1.0), **SETTINGS),
    "projected": _oracle(radius=1.5, full_first_round=True),
}


@pytest.mark.parametrize("key", list(ALGORITHMS))
def test_vectorised_equals_reference_loop(key):
    alg = ALGORITHMS[key]
    rec = simulate(PROB, PROC, alg, rounds=25, replicates=3, seed=4, w0=W0)
    available = rec.participation.sum(-1)  # [R, T]
    assert np.any(rec.participants < available) and np.any(rec.participants > 1)  # get acts
    for r in range(3):
        ref = reference.run(PROB, alg, rec.participation[r], W0)
        assert_tight(rec.iterates[r], ref)


def test_applied_weights_and_participants_are_recorded():
    alg = ALGORITHMS["oracle-tau"]
    problem = PROB
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
    cafed = CaFed(alpha=[1.0], pi=[1.0], lam=[0.0], **SETTINGS)
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
    (lambda: _oracle(beta=0.0), "'beta'", "(0, 1]"),
    (lambda: _oracle(tau=-1.0), "'tau'", "[0, inf)"),
    (lambda: _oracle(trade_off=-1.0), "'trade_off'", "[0, inf)"),
    (lambda: CaFed(alpha=ALPHA, pi=PI * 2, lam=LAM), "'pi'", "(0, 1]"),
    (lambda: CaFed(alpha=[0.5, 0.6], prior=BetaPrior()), "'alpha'", "summing to 1"),
    (
        lambda: CaFed(alpha=[0.5, 0.5], prior=BetaPrior()).init(PROB, torch.zeros(1, D)),
        "'problem'",
        "N=2",
    ),
    (lambda: AdaFedWeights(ALPHA, np.zeros(N)), "'pi'", "(0, 1]"),
    (lambda: F3astWeights(ALPHA, PI, clients=0), "'clients'", "[1, inf)"),
    (lambda: F3astWeights(ALPHA, PI, beta_r=2.0), "'beta_r'", "[0, 1]"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_raises_parameter_error(call, name, allowed):
    assert_parameter_error(call, name, allowed)
