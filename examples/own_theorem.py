r"""Bring your own theorem: two user checks and a tightness family, run with

    fedtheory validate --module examples/own_theorem.py --size quick --out own-results
    fedtheory tightness --module examples/own_theorem.py user.fedau.theorem3_no_bias

1. ``sgd-quadratic`` -- a statement from outside the papers, the classic constant-step
   SGD bound for a :math:`\mu`-strongly convex, :math:`L`-smooth objective with unbiased
   gradients of variance at most :math:`\sigma^2` and :math:`\eta\le1/L`:

   .. math:: \mathbb E\|w_T-w^*\|^2\le(1-\eta\mu)^T\|w_0-w^*\|^2+\eta\sigma^2/\mu .

   Proof for a quadratic with Hessian :math:`\mu I\preceq A\preceq LI` (the instances here):
   :math:`w_{t+1}-w^*=(I-\eta A)(w_t-w^*)-\eta\xi_t` with :math:`\mathbb E\xi_t=0`, so
   :math:`\mathbb E\|w_{t+1}-w^*\|^2\le(1-\eta\mu)^2\mathbb E\|w_t-w^*\|^2+\eta^2\sigma^2`
   (:math:`\|I-\eta A\|\le1-\eta\mu` as :math:`\eta\le1/L`); use
   :math:`(1-\eta\mu)^2\le1-\eta\mu` and sum the geometric series. Tight when
   :math:`\eta\mu=1` (then :math:`\mathbb E\|w_T-w^*\|^2=\eta^2\sigma^2=\eta\sigma^2/\mu`).
   Measured by Monte Carlo SGD on a diagonal quadratic, so the verdicts carry confidence
   intervals.
2. ``fedau-theorem3-no-bias`` -- a deliberately false variant of a catalogue theorem: FedAU
   Theorem 3's per-round inequality without its bias term :math:`(1-p)^{2K}` (a misreading
   that forgets the cutoff). Measured by simulating FedAU's Algorithm 2 under Bernoulli
   participation; it must come out *violated*. The same statement is registered as a
   tightness family over its own parameters, measured exactly
   (:func:`fedtheory.bounds.fedau.weight_error_exact`): the search prints a shrunk
   counterexample and exits with status 1.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.availability import Bernoulli
from fedtheory.bounds import Condition, Theorem, fedau
from fedtheory.sim.aggregation import fedau_init, fedau_update
from fedtheory.tightness import register as register_family
from fedtheory.tightness import theorem_family
from fedtheory.validation import register, theorem_check

mu, L, eta = sp.symbols("mu L eta", positive=True)
sigma2, dist0_sq = sp.symbols("sigma2 dist0_sq", nonnegative=True)
T = sp.Symbol("T", positive=True, integer=True)

sgd_bound = Theorem(
    "user.sgd_strongly_convex",
    title="SGD, constant step, strongly convex",
    reference="classic constant-step SGD bound (cf. Moulines & Bach 2011); proof in "
    "examples/own_theorem.py",
    kind="upper bound",
    terms={"contraction": (1 - eta * mu) ** T * dist0_sq, "noise": eta * sigma2 / mu},
    conditions=[
        Condition("eta <= 1/L", eta, "<=", 1 / L),
        Condition("mu <= L", mu, "<=", L),
    ],
    statement="E||w_T - w*||^2 <= (1 - eta mu)^T ||w_0 - w*||^2 + eta sigma^2 / mu",
    meanings={"mu": "strong convexity", "dist0_sq": "||w_0 - w*||^2"},
)


def sgd_distance(*, mu, L, eta, sigma2, dist0_sq, T, dim, replicates, seed):
    """||w_T - w*||^2 of SGD on f(w) = 1/2 sum_i a_i w_i^2 (a_i from mu to L, w* = 0),
    gradient noise N(0, sigma2/dim I), w_0 along the slowest direction; ``[replicates]``."""
    gen = np.random.default_rng(seed)
    a = np.linspace(mu, L, dim)  # [d] eigenvalues
    w = np.zeros((replicates, dim))  # [R, d]
    w[:, 0] = np.sqrt(dist0_sq)
    for _ in range(T):
        noise = gen.normal(0.0, np.sqrt(sigma2 / dim), size=w.shape)
        w = w - eta * (a * w + noise)
    return np.sum(w**2, axis=1)


SGD_INSTANCES = [
    {"mu": 0.5, "L": 2.0, "eta": 0.5, "sigma2": 1.0, "dist0_sq": 4.0, "T": T_, "dim": 4}
    for T_ in (1, 2, 5, 10, 20, 50)
]

# --- a deliberately false variant of a catalogue theorem ------------------------------------
p, K, t = (fedau.theorem3_per_round.notation[n].symbol for n in ("p", "K_cut", "t"))
no_bias = Theorem(
    "user.fedau.theorem3_no_bias",
    title="FedAU Theorem 3 without its bias term (false)",
    reference=fedau.theorem3_per_round.reference + ", bias term (1-p)^{2K} dropped",
    kind="upper bound",
    terms={"variance": fedau.theorem3_per_round.terms["variance"]},
    statement="E[(p omega_t - 1)^2] <= 2K(1-p)/t  (false: the cutoff bias is missing)",
)


def fedau_weight_error(*, p, K_cut, t, replicates, seed):
    """(p omega_t - 1)^2 after t rounds of FedAU's Algorithm 2 (cutoff K) under Bernoulli(p)
    participation, simulated; ``[replicates]``."""
    mask = Bernoulli([p]).sample(t, replicates=replicates, seed=seed)  # [R, t, 1]
    state = fedau_init(replicates, 1)
    for s in range(t):
        state = fedau_update(state, mask[:, s], K_cut)
    return ((p * state.omega[:, 0] - 1.0) ** 2).numpy()


FEDAU_INSTANCES = [{"p": 0.1, "K_cut": 2, "t": t_} for t_ in (5, 10, 20, 40)]

REPLICATES = {"tiny": 200, "quick": 2000, "full": 20000}

register(
    theorem_check(
        sgd_bound,
        sgd_distance,
        name="sgd-quadratic",
        instances=SGD_INSTANCES,
        replicates=REPLICATES,
        x="T",
        measured="E||w_T - w*||^2",
    )
)
register(
    theorem_check(
        no_bias,
        fedau_weight_error,
        name="fedau-theorem3-no-bias",
        instances=FEDAU_INSTANCES,
        replicates=REPLICATES,
        x="t",
        measured="E[(p omega_t - 1)^2]",
    )
)


def fedau_weight_error_exact(p, K_cut, t):
    """Exact E[(p omega_t - 1)^2] of FedAU's Algorithm 2 (Wang & Ji 2024)."""
    return fedau.weight_error_exact(p, K_cut, t + 1)[t]


register_family(
    theorem_family(no_bias, fedau_weight_error_exact, ranges={"t": (1, 40), "K_cut": (1, 12)})
)
