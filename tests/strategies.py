"""Hypothesis strategies shared by the tests, bounded to where the theorems are claimed."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fedtheory.problems import QuadraticProblem

probabilities = st.floats(0.02, 0.98, allow_nan=False)


@st.composite
def simplex(draw, n: int, *, low: float = 1e-3):
    """Positive weights summing to one."""
    raw = np.array(draw(st.lists(st.floats(low, 1.0), min_size=n, max_size=n)))
    return raw / raw.sum()


@st.composite
def quadratic_problems(draw, max_clients: int = 5, max_dim: int = 3):
    """Random strongly convex quadratic problems with exact constants."""
    n = draw(st.integers(2, max_clients))
    d = draw(st.integers(1, max_dim))
    mu = draw(st.floats(0.1, 2.0))
    L = mu * draw(st.floats(1.0, 20.0))
    seed = draw(st.integers(0, 2**31 - 1))
    alpha = draw(simplex(n))
    return QuadraticProblem.random(
        n, d, mu=mu, L=L, spread=draw(st.floats(0.0, 3.0)), alpha=alpha, seed=seed
    )


@st.composite
def weight_instances(draw, max_clients: int = 12, *, bias: str = "none"):
    """Instances of CA-Fed's App. D weight program (``fedtheory.optim.WeightInstance``)."""
    from fedtheory.optim import WeightInstance

    n = draw(st.integers(2, max_clients))
    floats = st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)
    a = np.array(draw(st.lists(st.floats(0.1, 5.0), min_size=n, max_size=n)))
    return WeightInstance(
        a,
        draw(st.floats(0.0, 3.0)),
        draw(st.floats(-1.0, 1.0)),
        np.array(draw(floats)),
        draw(simplex(n)),
        Q=draw(st.floats(0.5, 3.0)),
        bias=bias,
        # tiny positive bias weights give weights ~ sqrt(w) that no solver resolves
        bias_weight=0.0 if bias == "none" else draw(st.just(0.0) | st.floats(1e-3, 2.0)),
    )
