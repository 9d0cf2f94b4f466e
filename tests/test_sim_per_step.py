"""Per-step client rates (``PerStep``): the index a schedule receives, the vectorised
simulator against its plain loop, the PEP's local loop against the tight rate of gradient
descent, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.availability import Bernoulli, TwoStateMarkov
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import (
    MIFA,
    AverageParticipating,
    FedAvg,
    InverseTime,
    PerStep,
    reference,
    simulate,
)
from fedtheory.sim.optimizer import SGD, Training
from tests.conftest import assert_parameter_error, assert_tight

N, D, E = 5, 3, 3
PROB = QuadraticProblem.random(N, D, mu=0.5, L=2.0, seed=7)
PROC = TwoStateMarkov(np.linspace(0.2, 0.9, N), 0.5)
W0 = np.array([1.5, -1.0, 0.5])
MU = 0.5
LI = PerStep(InverseTime(a=2 / MU, b=8.0))  # Li et al.: eta_s = 2 / (mu (gamma + s))


def round_and_step(t: int, k: int) -> float:
    return 0.2 / (1 + t) + 0.01 * k


class Recording:
    """A schedule that records every index it receives."""

    def __init__(self) -> None:
        self.seen: list = []

    def __call__(self, *index) -> float:
        self.seen.append(index)
        return 0.1


def test_a_per_step_schedule_receives_the_global_sgd_step_and_a_round_schedule_the_round():
    # E = 2, 2 rounds, one client always available: steps s = 0, 1 (round 0), 2, 3 (round 1)
    one = QuadraticProblem(PROB.A[:1], PROB.c[:1])
    full = Bernoulli(np.ones(1))
    per_step, per_round, pair = Recording(), Recording(), Recording()
    for lr in (PerStep(per_step), per_round, PerStep(pair, index="round_step")):
        simulate(one, full, FedAvg(AverageParticipating(), local_steps=2, lr=lr), rounds=2)
    assert per_step.seen == [(0,), (1,), (2,), (3,)]
    assert per_round.seen == [(0,), (1,)]
    assert pair.seen == [(0, 0), (0, 1), (1, 0), (1, 1)]


@pytest.mark.parametrize(
    "algorithm",
    [
        FedAvg(AverageParticipating(), local_steps=E, lr=LI),
        FedAvg(AverageParticipating(), local_steps=E, lr=LI, prox=0.3, server_lr=0.8),
        MIFA(local_steps=E, lr=PerStep(round_and_step, index="round_step")),
    ],
    ids=["fedavg-li", "fedavg-li-prox", "mifa-round-step"],
)
def test_per_step_simulator_equals_its_plain_loop(algorithm):
    rec = simulate(PROB, PROC, algorithm, rounds=12, replicates=3, seed=4, w0=W0)
    assert (rec.available < N).any() and (rec.available > 0).any()
    for r in range(3):
        assert_tight(rec.iterates[r], reference.run(PROB, algorithm, rec.participation[r], W0),
                     rtol=1e-12)  # fmt: skip


def test_per_step_rates_are_not_the_rate_of_the_round():
    """The per-step schedule changes the iterates (the local loop reads every step's rate)."""
    per_round = FedAvg(AverageParticipating(), local_steps=E, lr=lambda t: LI.rate(t, 0, E))
    a = simulate(PROB, PROC, FedAvg(AverageParticipating(), local_steps=E, lr=LI), rounds=4)
    b = simulate(PROB, PROC, per_round, rounds=4)
    assert not np.allclose(a.iterates[0, 1:], b.iterates[0, 1:], rtol=1e-6, atol=0)


def test_pep_local_loop_takes_per_step_rates_with_the_tight_rate_of_gradient_descent():
    pep = pytest.importorskip("fedtheory.pep")
    pytest.importorskip("PEPit")
    from fedtheory.pep import solve

    # one client: E steps per round are gradient steps with eta_s <= 2 / (mu + L); on
    # F_{mu,L} the worst ||x_T - x*||^2 / ||x_0 - x*||^2 is prod_s (1 - eta_s mu)^2 (tight:
    # Taylor, Hendrickx & Glineur 2017, step by step)
    mu, L, rounds, steps = 0.5, 2.0, 2, 3
    lr = PerStep(InverseTime(a=2 / mu, b=8 * L / mu))
    alg = FedAvg(AverageParticipating(), local_steps=steps, lr=lr)
    r = pep.worst_case(alg, pep.SmoothStronglyConvex(mu, L), pep.Participation.full(rounds, 1))
    etas = [lr.rate(t, k, steps) for t in range(rounds) for k in range(steps)]
    assert len(set(etas)) == rounds * steps and max(etas) <= 2 / (mu + L)
    exact = float(np.prod([(1 - eta * mu) ** 2 for eta in etas]))
    assert r.status == "verified"
    assert abs(r.value - exact) <= solve.CHECK_RTOL * max(1.0, exact), (r.value, exact)


def bad(t: int) -> float:
    return -0.1 if t == 4 else 0.1


def test_refusals_name_the_parameter():
    assert_parameter_error(lambda: PerStep(bad).rate(2, 0, 2), "schedule(4)", "(0")
    assert_parameter_error(lambda: PerStep(bad, index="global"), "index", "round_step")
    assert_parameter_error(lambda: PerStep(bad).rate(0, 3, 3), "'k'", "[0, 2]")
    assert_parameter_error(lambda: FedAvg(AverageParticipating(), server_lr=LI), "server_lr",
                           "schedule of the round")  # fmt: skip
    momentum = Training(client=SGD(momentum=0.9))
    assert_parameter_error(lambda: FedAvg(AverageParticipating(), lr=LI, training=momentum),
                           "'lr'", "plain local SGD")  # fmt: skip
    assert_parameter_error(lambda: LI(0), "'lr'", "schedule of the round")
