r"""Hypothesis strategies for instances with exact constants, bounded to where the theorems
are claimed (the project's own property tests use them; so can yours).

Every public function checks its arguments (``ParameterError``) and returns a hypothesis
strategy. Problems, data and processes are imported when a value is drawn, so importing
this module stays light.

=================================  ============================================================
strategy                           draws
=================================  ============================================================
``probabilities``                  one probability in [0.02, 0.98] (a constant strategy)
``participation_probabilities``    Bernoulli probabilities ``p [N]``
``simplex(n)``                     positive weights summing to one (``near_degenerate=True``
                                   mixes in weights of 1e-12..1e-6 and dominant clients)
``quadratic_problems``             strongly convex quadratics with ``kappa`` in a given range
``least_squares_problems``         ridge least squares on heterogeneous Gaussian data
``logistic_problems``              ridge logistic regression (binary labels)
``federated_datasets``             small data sets with uneven client sizes
``two_state_chains``               feasible CA-Fed pairs ``(pi, lambda)``
``stochastic_matrices``            primitive stochastic matrices ``[n, n]``
``cyclic_patterns``                FedAU's cyclic participation (``Cyclic``)
``block_patterns``                 FedLaAvg's alternating blocks (``AlternatingBlocks``)
``step_schedules``                 decreasing step sizes ``a / (t + b)^c``
``quota_schedules``                E3CS fairness quotas ``sigma_t`` in [0, k/K]
``weight_instances``               CA-Fed App. D weight programs
``e3cs_allocation_inputs``         inputs of E3CS's ProbAlloc
=================================  ============================================================

Values drawn inside a catalogue theorem's hypotheses: :func:`fedtheory.testing.theorem_values`.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fedtheory.constraints import Array, Bool, Integer, Option, Real, Size, declare
from fedtheory.errors import ParameterError

probabilities = st.floats(0.02, 0.98, allow_nan=False)
"""One probability in [0.02, 0.98] (away from the degenerate 0 and 1)."""

_TINY = (1e-12, 1e-9, 1e-6)  # near-degenerate weights


def _ordered(pair, name: str, owner: str) -> tuple[float, float]:
    """A declared pair ``(low, high)`` (an array of two reals) with ``low <= high``."""
    a, b = float(pair[0]), float(pair[1])
    if a > b:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be a pair (low, high) with low <= high. "
            f"Got ({a!r}, {b!r}) instead."
        )
    return a, b


# --- weights and probabilities -------------------------------------------------------------
@st.composite
def _simplex(draw, n: int, low: float, near_degenerate: bool):
    entry = st.floats(low, 1.0)
    if near_degenerate:
        entry = entry | st.sampled_from(_TINY)
    raw = np.array(draw(st.lists(entry, min_size=n, max_size=n)))
    return raw / raw.sum()


@declare(n=Size(), low=Real(0.0, 1.0, low_open=True), near_degenerate=Bool())
def simplex(n: int, *, low: float = 1e-3, near_degenerate: bool = False):
    r"""Positive weights ``[n]`` summing to one (raw entries in ``[low, 1]``, normalised).

    With ``near_degenerate=True`` entries of :math:`10^{-12}`, :math:`10^{-9}` and
    :math:`10^{-6}` are mixed in, so some clients weigh almost nothing (and one can weigh
    almost everything).
    """
    return _simplex(n, low, near_degenerate)


@declare(
    max_clients=Size(),
    low=Real(0.0, 1.0, low_open=True),
    high=Real(0.0, 1.0, low_open=True),
    min_clients=Integer(1, "max_clients"),
)
def participation_probabilities(
    max_clients: int = 8, *, low: float = 0.02, high: float = 1.0, min_clients: int = 1
):
    """Bernoulli participation probabilities ``p [N]`` in ``[low, high]``, ``N`` in
    ``[min_clients, max_clients]``."""
    if high < low:
        raise ParameterError(
            f"The 'high' parameter of participation_probabilities must be in [low, 1] = "
            f"[{low!r}, 1]. Got {high!r} instead."
        )
    return st.integers(min_clients, max_clients).flatmap(
        lambda n: st.lists(st.floats(low, high), min_size=n, max_size=n).map(np.array)
    )


# --- problems with exact constants ------------------------------------------------------------
@st.composite
def _quadratic_problems(draw, max_clients, max_dim, kappa, noise_std):
    from fedtheory.problems import QuadraticProblem

    n = draw(st.integers(2, max_clients))
    d = draw(st.integers(1, max_dim))
    mu = draw(st.floats(0.1, 2.0))
    L = mu * draw(st.floats(*kappa))
    seed = draw(st.integers(0, 2**31 - 1))
    alpha = draw(_simplex(n, 1e-3, False))
    return QuadraticProblem.random(
        n,
        d,
        mu=mu,
        L=L,
        spread=draw(st.floats(0.0, 3.0)),
        noise_std=draw(st.floats(*noise_std)),
        alpha=alpha,
        seed=seed,
    )


@declare(
    max_clients=Size(2),
    max_dim=Size(),
    kappa=Array(shape=(2,), low=1.0),
    noise_std=Array(shape=(2,), low=0.0),
)
def quadratic_problems(
    max_clients: int = 5,
    max_dim: int = 3,
    *,
    kappa: tuple[float, float] = (1.0, 20.0),
    noise_std: tuple[float, float] = (0.0, 0.0),
):
    r"""Strongly convex quadratic problems (``QuadraticProblem.random``) with
    :math:`\kappa=L/\mu` in the range ``kappa`` (both extremes attained by an eigenvalue),
    ``2..max_clients`` clients, dimension ``1..max_dim`` and gradient noise standard
    deviation in ``noise_std``; every constant is exact."""
    owner = "quadratic_problems"
    return _quadratic_problems(
        max_clients,
        max_dim,
        _ordered(kappa, "kappa", owner),
        _ordered(noise_std, "noise_std", owner),
    )


@st.composite
def _data_problems(draw, model, max_clients, max_dim, ridge):
    from fedtheory.data import FederatedDataset, gaussian_linear
    from fedtheory.problems import LeastSquaresProblem, LogisticRegressionProblem

    n = draw(st.integers(2, max_clients))
    d = draw(st.integers(1, max_dim))
    samples = draw(st.integers(2, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    data = gaussian_linear(
        n, d, samples, heterogeneity=draw(st.floats(0.0, 2.0)), noise=0.1, seed=seed
    )
    rho = draw(st.floats(*ridge))
    if model == "least_squares":
        return LeastSquaresProblem(data, ridge=rho, batch_size=1)
    binary = FederatedDataset(data.features, (data.labels > 0).astype(float), data.counts)
    return LogisticRegressionProblem(binary, ridge=rho, batch_size=1)


@declare(max_clients=Size(2), max_dim=Size(), ridge=Array(shape=(2,), low=0.0))
def least_squares_problems(
    max_clients: int = 4, max_dim: int = 3, *, ridge: tuple[float, float] = (0.01, 1.0)
):
    """Ridge least-squares problems on heterogeneous Gaussian linear data (``gaussian_linear``),
    batch size 1 (so the exact gradient noise is non-zero); ridge in ``ridge``."""
    ridge = _ordered(ridge, "ridge", "least_squares_problems")
    return _data_problems("least_squares", max_clients, max_dim, ridge)


@declare(max_clients=Size(2), max_dim=Size(), ridge=Array(shape=(2,), low=1e-6))
def logistic_problems(
    max_clients: int = 4, max_dim: int = 3, *, ridge: tuple[float, float] = (0.01, 1.0)
):
    r"""Ridge binary logistic-regression problems (certified :math:`L`, :math:`\mu=\rho`)
    on the sign of Gaussian linear data; ridge :math:`\rho` in ``ridge`` (positive)."""
    ridge = _ordered(ridge, "ridge", "logistic_problems")
    return _data_problems("logistic", max_clients, max_dim, ridge)


@st.composite
def _federated_datasets(draw, num_classes, max_clients):
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


@declare(num_classes=Size(2, none=True), max_clients=Size())
def federated_datasets(*, num_classes: int | None = None, max_clients: int = 5):
    """Small federated data sets with uneven client sizes (padding exercised).

    ``num_classes=None`` gives binary 0/1 labels; otherwise class ids ``0..C-1``."""
    return _federated_datasets(num_classes, max_clients)


@st.composite
def _weight_instances(draw, max_clients, bias):
    from fedtheory.optim import WeightInstance

    n = draw(st.integers(2, max_clients))
    floats = st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)
    a = np.array(draw(st.lists(st.floats(0.1, 5.0), min_size=n, max_size=n)))
    return WeightInstance(
        a,
        draw(st.floats(0.0, 3.0)),
        draw(st.floats(-1.0, 1.0)),
        np.array(draw(floats)),
        draw(_simplex(n, 1e-3, False)),
        Q=draw(st.floats(0.5, 3.0)),
        bias=bias,
        # tiny positive bias weights give weights ~ sqrt(w) that no solver resolves
        bias_weight=0.0 if bias == "none" else draw(st.just(0.0) | st.floats(1e-3, 2.0)),
    )


@declare(max_clients=Size(2), bias=Option("none", "chi2", "tv"))
def weight_instances(max_clients: int = 12, *, bias: str = "none"):
    """Instances of CA-Fed's App. D weight program (``fedtheory.optim.WeightInstance``)."""
    return _weight_instances(max_clients, bias)


# --- availability ---------------------------------------------------------------------------
@st.composite
def _two_state_chains(draw):
    pi = draw(probabilities)
    low = 1.0 - 1.0 / max(pi, 1.0 - pi)
    lam = draw(st.floats(max(low, -0.98), 0.98))
    return pi, lam


def two_state_chains():
    r"""Feasible CA-Fed pairs ``(pi, lam)``: :math:`\pi\in[0.02,0.98]`, :math:`\lambda` in
    its feasible range :math:`[1-1/\max(\pi,1-\pi),1)` intersected with
    :math:`[-0.98,0.98]`."""
    return _two_state_chains()


@st.composite
def _stochastic_matrices(draw, max_states, sparse):
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


@declare(max_states=Size(2), sparse=Bool())
def stochastic_matrices(max_states: int = 6, *, sparse: bool = True):
    """Irreducible aperiodic (primitive) stochastic matrices ``[n, n]``, ``n`` in
    ``2..max_states``.

    A cycle ``i -> i+1 (mod n)`` and a self-loop at state 0 are kept positive, which makes
    the chain irreducible and aperiodic; the other entries are random and may be zero.
    """
    return _stochastic_matrices(max_states, sparse)


@st.composite
def _cyclic_patterns(draw, max_clients, max_period):
    from fedtheory.availability import Cyclic

    n = draw(st.integers(1, max_clients))
    p = draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n))
    return Cyclic(np.array(p), period=draw(st.integers(2, max_period)))


@declare(max_clients=Size(), max_period=Size(2))
def cyclic_patterns(max_clients: int = 6, *, max_period: int = 20):
    """FedAU's cyclic participation (``availability.Cyclic``): per-client targets
    ``p [N]`` in [0, 1] and a period in ``2..max_period``."""
    return _cyclic_patterns(max_clients, max_period)


@st.composite
def _block_patterns(draw, max_block, max_clients):
    from fedtheory.availability import AlternatingBlocks

    n = draw(st.integers(2, max_clients))
    group1 = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    group1[0], group1[-1] = True, False  # both groups non-empty
    t1, t2 = draw(st.integers(1, max_block)), draw(st.integers(1, max_block))
    return AlternatingBlocks(t1, t2, group1=group1)


@declare(max_block=Size(), max_clients=Size(2))
def block_patterns(max_block: int = 10, *, max_clients: int = 2):
    """FedLaAvg's alternating blocks (``availability.AlternatingBlocks``): block lengths
    ``t1, t2`` in ``1..max_block`` and two non-empty groups among ``2..max_clients``
    clients (Example 1 when ``max_clients=2``)."""
    return _block_patterns(max_block, max_clients)


# --- schedules ------------------------------------------------------------------------------
@st.composite
def _step_schedules(draw, max_rounds):
    T = draw(st.integers(1, max_rounds))
    a, b, c = draw(st.floats(1e-3, 0.5)), draw(st.floats(1.0, 10.0)), draw(st.floats(0.5, 1.0))
    return a / (np.arange(T + 1) + b) ** c


@declare(max_rounds=Size())
def step_schedules(max_rounds: int = 60):
    """Decreasing step sizes ``eta_t = a / (t + b)^c``, ``t = 0..T`` (CA-Fed Theorem 2),
    ``a`` in [1e-3, 0.5], ``b`` in [1, 10], ``c`` in [0.5, 1], ``T`` in ``1..max_rounds``."""
    return _step_schedules(max_rounds)


@st.composite
def _quota_schedules(draw, k, K, max_rounds, saturated):
    T = draw(st.integers(1, max_rounds))
    top = 1.0 if saturated else 0.99
    fractions = draw(st.lists(st.floats(0.0, top), min_size=T, max_size=T))
    return np.array(fractions) * k / K


@declare(K=Size(), k=Integer(1, "K"), max_rounds=Size(), saturated=Bool())
def quota_schedules(*, k: int, K: int, max_rounds: int = 50, saturated: bool = True):
    """Fairness quotas ``sigma_t`` in [0, k/K] (E3CS). With ``saturated=False`` every quota is
    at most 0.99 k/K, so sum_t (k - K sigma_t) > 0 (the hypothesis of E3CS's optimal eta)."""
    return _quota_schedules(k, K, max_rounds, saturated)


@st.composite
def _e3cs_allocation_inputs(draw, max_clients):
    n = draw(st.integers(2, max_clients))
    k = draw(st.integers(1, n))
    reps = draw(st.integers(1, 3))
    spread = draw(st.sampled_from([1.0, 10.0, 1e4]))
    raw = draw(st.lists(st.floats(-1.0, 1.0), min_size=reps * n, max_size=reps * n))
    log_w = spread * np.array(raw).reshape(reps, n)
    fraction = draw(st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)))
    return log_w, k, fraction * k / n


@declare(max_clients=Size(2))
def e3cs_allocation_inputs(max_clients: int = 12):
    """(log_w [R, K], k, sigma) for E3CS's ProbAlloc: log-weights with moderate spread or huge
    gaps (so that some weights underflow), sigma anywhere in [0, k/K] including both ends."""
    return _e3cs_allocation_inputs(max_clients)
