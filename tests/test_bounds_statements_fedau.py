"""FedAU's Lemma B.3.3, property-tested on quadratic clients inside its hypotheses, and its
exact expected descent step against Monte Carlo."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.bounds import fedau
from tests.conftest import assert_upper_bound


@settings(max_examples=40)
@given(st.integers(0, 10_000))
def test_lemma_b33_holds_on_quadratic_clients_inside_its_hypotheses(seed):
    rng = np.random.default_rng(seed)
    N, d, L, I = int(rng.integers(1, 6)), int(rng.integers(1, 3)), rng.uniform(0.2, 3), 3
    gamma = rng.uniform(0.05, 1) / (4 * np.sqrt(15) * L * I)
    eta = rng.uniform(0.05, 1) / (4 * L * I) / gamma
    p = rng.uniform(0.05, 1, N)
    step = fedau.quadratic_descent_step(
        rng.normal(size=(N, d)) * 2, rng.normal(size=d) * 3, L=L, gamma=gamma, eta=eta, I=I,
        sigma2=rng.uniform(0, 2), p=p, omega=rng.uniform(0, 3, N) / p,
        phi=rng.dirichlet(np.ones(N)),
    )  # fmt: skip
    assert_upper_bound(step.expected_next, fedau.lemma_b33.evaluate(**step.lemma_inputs).total)


def test_quadratic_descent_step_equals_monte_carlo():
    rng = np.random.default_rng(0)
    e, x = rng.normal(size=(3, 2)), np.array([1.0, -2.0])
    kw = dict(L=1.5, gamma=0.02, eta=2.0, I=3, sigma2=0.8, p=[0.3, 0.6, 0.9],
              omega=[2.0, 1.0, 0.5], phi=[0.2, 0.3, 0.5])  # fmt: skip
    exact = fedau.quadratic_descent_step(e, x, **kw).expected_next
    n = 200_000
    part = rng.random((n, 3)) < np.array(kw["p"])
    y = np.broadcast_to(x, (n, 3, 2)).copy()
    for _ in range(kw["I"]):
        y -= kw["gamma"] * (kw["L"] * (y - e) + rng.normal(size=y.shape) * np.sqrt(0.4))
    nxt = x + kw["eta"] / 3 * np.einsum("mn,n,mnd->md", part, kw["omega"], y - x)
    f = 0.5 * kw["L"] * np.einsum("n,mnd->m", kw["phi"], (nxt[:, None] - e) ** 2)
    assert abs(f.mean() - exact) <= 5 * f.std() / np.sqrt(n)
