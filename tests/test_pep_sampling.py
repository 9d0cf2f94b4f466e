"""The server's samplers as PEP participation laws (fedtheory.pep.sampling): the enumerated
law has the sampler's exact inclusion probabilities, the aggregator gives the sampler's
weights on each mask, the worst case under the law is attained in the simulator, limit
cases, refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")

from fedtheory.pep import (  # noqa: E402
    AtOptimum,
    Participation,
    Quadratic,
    replay,
    sampled_law,
    worst_case,
)
from fedtheory.sim import (  # noqa: E402
    AverageParticipating,
    FedAvg,
    SampleBernoulli,
    SampleUniform,
    SampleWithoutReplacement,
    SampleWithReplacement,
)
from tests.conftest import (  # noqa: E402
    assert_parameter_error,
    assert_pep_close,
    assert_replay_attains,
    assert_tight,
)

P = np.array([0.2, 0.3, 0.5])
SAMPLERS = {
    "uniform": SampleUniform(2),
    "scheme-II": SampleWithoutReplacement(2, P),
    "bernoulli": SampleBernoulli([0.5, 0.8, 1.0], P),
}


@pytest.mark.parametrize("key", list(SAMPLERS))
def test_the_law_has_the_samplers_inclusion_and_weights(key):
    sampler, rounds, n = SAMPLERS[key], 2, 3
    law = sampled_law(sampler, rounds, n)
    masks, probs = law.participation.masks, law.participation.probs  # [M, T, N], [M]
    assert np.isclose(probs.sum(), 1.0)
    for t in range(rounds):  # exact marginals, round by round
        marginal = (probs[:, None] * masks[:, t]).sum(0)
        assert_tight(marginal, sampler.inclusion(np.ones(n, bool)), rtol=1e-12)
    # the aggregator's weights on a mask are the sampler's on the draw selecting that mask
    rows = masks.reshape(-1, n)
    u = np.where(rows, 0.0, np.nextafter(1.0, 0.0))  # keys: the mask's clients first
    drawn = sampler.draw(np.ones_like(rows), u)
    assert (drawn.selected == rows).all()
    assert_tight(law.aggregator(torch.from_numpy(rows)).numpy(), drawn.weights, rtol=1e-12)


def test_worst_case_under_scheme_two_is_attained_in_the_simulator():
    law = sampled_law(SampleWithoutReplacement(1, [0.5, 0.5]), rounds=2, num_clients=2)
    alg = FedAvg(law.aggregator, local_steps=2, lr=0.1)
    r = worst_case(alg, Quadratic(0.5, 1.0), law.participation, heterogeneity=AtOptimum(0.1))
    assert r.ok and law.participation.masks.shape[0] == 4
    assert_replay_attains(replay(r).value, r)


def test_sampling_every_client_is_full_participation():
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=0.1)
    law = sampled_law(SampleUniform(2), rounds=2, num_clients=2)
    a = worst_case(alg, Quadratic(0.5, 1.0), law.participation, heterogeneity=AtOptimum(0.1))
    b = worst_case(alg, Quadratic(0.5, 1.0), Participation.full(2, 2),
                   heterogeneity=AtOptimum(0.1))  # fmt: skip
    assert_pep_close(a, b)


def test_refusals_name_the_parameter():
    assert_parameter_error(lambda: sampled_law(SampleWithReplacement(2, P), 1, 3), "'sampler'",
                           "Scheme I")  # fmt: skip
    assert_parameter_error(lambda: sampled_law(SAMPLERS["scheme-II"], 1, 4), "'num_clients'",
                           "3 weights")  # fmt: skip
    assert_parameter_error(lambda: sampled_law(SampleUniform(3), 5, 6), "'rounds'", "4096")
