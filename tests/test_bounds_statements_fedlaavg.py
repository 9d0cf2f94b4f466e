"""FedLaAvg's Lemma 2 (staleness), property-tested on runs inside its hypotheses."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.bounds import fedlaavg
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import FedLaAvg
from tests.conftest import assert_upper_bound


@settings(max_examples=15)
@given(st.integers(2, 8), st.integers(1, 4), st.integers(1, 4))
def test_staleness_of_fedlaavg_runs_within_lemma2(N, K, E):
    K = min(K, N)
    rng = np.random.default_rng(N * 100 + K * 10 + E)
    t_all = np.arange(60)[:, None]
    once = (t_all + rng.integers(0, E, N)) % E == 0  # each client once in every E rounds
    mask = torch.as_tensor(once | (rng.random((60, N)) < 0.3))[None]  # [1, T, N]
    prob = QuadraticProblem.random(N, 1, seed=0)
    alg = FedLaAvg(clients_per_round=K, lr=0.1)
    state = alg.init(prob, torch.zeros(1, 1, dtype=torch.float64))
    worst = 0
    for t in range(60):
        state = alg.step(prob, state, mask[:, t], t)
        if t >= fedlaavg.staleness_bound(N, K, E):  # every client has participated by then
            worst = max(worst, int((t - state.last).max()))
    assert_upper_bound(worst, fedlaavg.staleness.evaluate(N=N, k=K, E_avail=E).total)
