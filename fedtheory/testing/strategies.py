"""Hypothesis strategies for instances with exact constants, bounded to where the theorems
are claimed (the project's own property tests use them; so can yours)."""

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


@st.composite
def step_schedules(draw, max_rounds: int = 60):
    """Decreasing step sizes eta_t = a / (t + b)^c, t = 0..T (CA-Fed Theorem 2)."""
    T = draw(st.integers(1, max_rounds))
    a, b, c = draw(st.floats(1e-3, 0.5)), draw(st.floats(1.0, 10.0)), draw(st.floats(0.5, 1.0))
    return a / (np.arange(T + 1) + b) ** c


@st.composite
def quota_schedules(draw, *, k: int, K: int, max_rounds: int = 50, saturated: bool = True):
    """Fairness quotas sigma_t in [0, k/K] (E3CS). With ``saturated=False`` every quota is at
    most 0.99 k/K, so sum_t (k - K sigma_t) > 0 (the hypothesis of E3CS's optimal eta)."""
    T = draw(st.integers(1, max_rounds))
    top = 1.0 if saturated else 0.99
    fractions = draw(st.lists(st.floats(0.0, top), min_size=T, max_size=T))
    return np.array(fractions) * k / K


@st.composite
def federated_datasets(draw, *, num_classes: int | None = None, max_clients: int = 5):
    """Small federated data sets with uneven client sizes (padding exercised).

    ``num_classes=None`` gives binary 0/1 labels; otherwise class ids ``0..C-1``."""
    from fedtheory.data import FederatedDataset

    n = draw(st.integers(1, max_clients))
    p = draw(st.integers(1, 4))
    counts = draw(st.lists(st.integers(1, 12), min_size=n, max_size=n))
    gen = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    scale = draw(st.floats(0.1, 3.0))
    classes = 2 if num_classes is None else num_classes
    xs = [scale * gen.standard_normal((m, p)) for m in counts]
    ys = [gen.integers(0, classes, size=m).astype(float) for m in counts]
    return FederatedDataset.from_clients(xs, ys, num_classes=num_classes)


@st.composite
def stochastic_matrices(draw, max_states: int = 6, *, sparse: bool = True):
    """Irreducible aperiodic (primitive) stochastic matrices ``[n, n]``.

    A cycle ``i -> i+1 (mod n)`` and a self-loop at state 0 are kept positive, which makes
    the chain irreducible and aperiodic; the other entries are random and may be zero.
    """
    n = draw(st.integers(2, max_states))
    values = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=n * n, max_size=n * n)))
    values = values.reshape(n, n)
    if sparse:
        keep = np.array(draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n)))
        values = values * keep.reshape(n, n)
    floor = draw(st.floats(1e-3, 1.0))
    values[np.arange(n), (np.arange(n) + 1) % n] += floor
    values[0, 0] += floor
    return values / values.sum(axis=1, keepdims=True)


@st.composite
def two_state_chains(draw):
    """Feasible CA-Fed pairs ``(pi, lam)`` with ``lam`` in the open interval (-1, 1)."""
    pi = draw(probabilities)
    low = 1.0 - 1.0 / max(pi, 1.0 - pi)
    lam = draw(st.floats(max(low, -0.98), 0.98))
    return pi, lam


@st.composite
def e3cs_allocation_inputs(draw, max_clients: int = 12):
    """(log_w [R, K], k, sigma) for E3CS's ProbAlloc: log-weights with moderate spread or huge
    gaps (so that some weights underflow), sigma anywhere in [0, k/K] including both ends."""
    n = draw(st.integers(2, max_clients))
    k = draw(st.integers(1, n))
    reps = draw(st.integers(1, 3))
    spread = draw(st.sampled_from([1.0, 10.0, 1e4]))
    raw = draw(st.lists(st.floats(-1.0, 1.0), min_size=reps * n, max_size=reps * n))
    log_w = spread * np.array(raw).reshape(reps, n)
    fraction = draw(st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)))
    return log_w, k, fraction * k / n
