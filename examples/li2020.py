r"""Li, Huang, Yang, Wang & Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR
2020), Theorems 1 and 2, checked on fedtheory's simulator without writing FedAvg
(docs/guide/outside-paper.md walks through it).

Setting (Li et al. §2-3): :math:`F=\sum_kp_kF_k`, each :math:`F_k` :math:`L`-smooth and
:math:`\mu`-strongly convex (Assumptions 1-2), stochastic gradients of variance at most
:math:`\sigma_k^2` (Assumption 3) and second moment at most :math:`G^2` (Assumption 4),
:math:`\Gamma=F^*-\sum_kp_kF_k^*`, :math:`E` local SGD steps between averagings,
:math:`\kappa=L/\mu`, :math:`\gamma=\max\{8\kappa,E\}` and the step size
:math:`\eta_t=\frac2{\mu(\gamma+t)}` of the global SGD step :math:`t`. Theorem 1 (full
participation):

.. math:: \mathbb E[F(w_T)]-F^*\le\frac\kappa{\gamma+T-1}\Big(\frac{2B}\mu+
          \frac{\mu\gamma}2\mathbb E\|w_1-w^*\|^2\Big),\quad
          B=\sum_kp_k^2\sigma_k^2+6L\Gamma+8(E-1)^2G^2.

Theorem 2 (partial participation, :math:`K` devices per round): the same with :math:`B`
replaced by :math:`B+C`, :math:`C=\frac4KE^2G^2` for Scheme I (sampling with replacement
by :math:`p_k`, weights :math:`1/K`) and :math:`C=\frac{N-K}{N-1}\frac4KE^2G^2` for Scheme
II (uniform without replacement, weights :math:`p_kN/K`; the theorem assumes balanced
:math:`p_k=1/N`).

Indexing: the paper's first model is :math:`w_1` and its step :math:`t` runs with
:math:`\eta_t`; here the initial model is ``w0`` (the paper's :math:`w_1`) and the global
SGD step :math:`s=0,1,\dots` (round :math:`r`, local step :math:`j`: :math:`s=rE+j`) runs
with :math:`\eta_s=2/(\mu(\gamma+s))` (``PerStep(InverseTime(2 / mu, gamma))``), the
reading under which the paper's proof (Appendix, with its :math:`\gamma` one less) gives
the bound as stated; after ``rounds`` rounds the server model is :math:`w_T` with
:math:`T=\text{rounds}\cdot E+1`. ``K`` is written ``k`` (``K`` is another paper's symbol
in fedtheory's shared notation).

:math:`G^2` is estimated on the run: the largest mean over replicates of
:math:`\|\nabla F_k(y)\|^2` at the local iterates :math:`y` the simulator asks gradients at,
plus :math:`\sigma_k^2` (a sampled client's iterates have the law every client's would
have: the sampling is independent of the local steps).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
import torch
from hypothesis import strategies as st

from fedtheory.availability import Bernoulli
from fedtheory.bounds import Theorem
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import (
    FedAvg,
    FixedWeights,
    InverseTime,
    PerStep,
    SampledFedAvg,
    SampleWithoutReplacement,
    SampleWithReplacement,
    simulate,
)
from fedtheory.testing import strategies
from fedtheory.tightness import register, strategy_family

kappa, mu, L, G2 = sp.symbols("kappa mu L G2", positive=True)
Gamma, S, D1 = sp.symbols("Gamma S D1", nonnegative=True)  # 0: same clients, no noise, w0 = w^*
E, T, k, N = sp.symbols("E T k N", positive=True, integer=True)
gamma = sp.Max(8 * kappa, E)
B = S + 6 * L * Gamma + 8 * (E - 1) ** 2 * G2  # S = sum_k p_k^2 sigma_k^2
REFERENCE = "Li, Huang, Yang, Wang & Zhang, ICLR 2020"


def li_bound(key, title, *, C=None, rate=kappa / (gamma + T - 1)):
    """The bound of Theorem 1 (``C`` None) or 2 (``C`` added to ``B``) at ``rate``."""
    terms = {"2B/mu": rate * 2 * B / mu, "initial": rate * mu * gamma / 2 * D1}
    if C is not None:
        terms["2C/mu"] = rate * 2 * C / mu
    return Theorem(key, title=title, reference=REFERENCE, kind="upper bound", terms=terms)


theorem1 = li_bound("li2020.theorem1", "Li et al. 2020 Theorem 1 (full participation)")
scheme1 = li_bound("li2020.scheme1", "Li et al. 2020 Theorem 2, Scheme I", C=4 / k * E**2 * G2)
scheme2 = li_bound("li2020.scheme2", "Li et al. 2020 Theorem 2, Scheme II",
                   C=(N - k) / (N - 1) * 4 / k * E**2 * G2)  # fmt: skip
wrong_rate = li_bound("li2020.theorem1_t2", "Theorem 1 at rate 1/T^2 (planted, false)",
                      rate=kappa * gamma / (gamma + T - 1) ** 2)  # fmt: skip


class Watched(QuadraticProblem):
    """A quadratic problem that keeps, per client, the largest mean of
    :math:`\\|\\nabla F_k(y)\\|^2` over the pairs of one gradient call (one local step)."""

    def watch(self) -> None:
        self.seen = np.zeros(self.num_clients)

    def grad(self, w, clients, generator=None):
        exact = torch.einsum("mij,mj->mi", torch.from_numpy(self.A)[clients],
                             w - torch.from_numpy(self.c)[clients])  # fmt: skip
        cli = clients.numpy()
        count = np.bincount(cli, minlength=self.num_clients)
        total = np.bincount(cli, (exact**2).sum(-1).numpy(), minlength=self.num_clients)
        self.seen = np.maximum(self.seen, total / np.maximum(count, 1))
        return super().grad(w, clients, generator)


@st.composite
def instances(draw, scheme=None, max_rounds=400):
    """Quadratic clients (N <= 4, d <= 2, kappa in [1, 3], minimisers spread up to 1, gradient
    noise), E, rounds, w0 near w^*, and for Theorem 2 the scheme and k. Up to 400 rounds:
    T reaches 50 times gamma = max(8 kappa, E) <= 24, where a rate in T (1/T against
    1/T^2) shows; at 40 rounds, T <= 5 gamma at E = 1, it barely does."""
    n, d = draw(st.integers(2, 4)), draw(st.integers(1, 2))
    m = draw(st.floats(0.1, 1.0))
    alpha = np.full(n, 1 / n) if scheme == "II" else draw(strategies.simplex(n))
    problem = Watched.random(n, d, mu=m, L=m * draw(st.floats(1.0, 3.0)),
                             spread=draw(st.floats(0.0, 1.0)), noise_std=draw(st.floats(0.1, 1.0)),
                             alpha=alpha, seed=draw(st.integers(0, 2**16)))  # fmt: skip
    offset = draw(st.lists(st.floats(-1, 1), min_size=d, max_size=d))
    return {"problem": problem, "E": draw(st.integers(1, 4)),
            "rounds": draw(st.integers(1, max_rounds)), "w0": problem.optimum()[0] + offset,
            "k": draw(st.integers(1, n)) if scheme else n, "scheme": scheme}  # fmt: skip


def run(problem, E, rounds, w0, k, scheme, replicates, seed):
    """F(w_T) - F^* of each replicate, and the run's G^2 estimate."""
    lr = PerStep(InverseTime(a=2 / problem.mu, b=max(8 * problem.kappa, E)))
    p = problem.alpha
    if scheme is None:  # full participation: w_{t+1} = sum_k p_k w^k
        algorithm = FedAvg(FixedWeights(p), local_steps=E, lr=lr)
    else:
        sampler = SampleWithReplacement(k, p) if scheme == "I" else SampleWithoutReplacement(k, p)
        algorithm = SampledFedAvg(sampler, local_steps=E, lr=lr, seed=seed)
    problem.watch()
    everyone = Bernoulli(np.ones(problem.num_clients))
    rec = simulate(problem, everyone, algorithm, rounds=rounds, replicates=replicates,
                   seed=seed, w0=np.array(w0), eval_every=rounds)  # fmt: skip
    sigma2 = problem.noise_variance(np.zeros(problem.dim))
    return rec.metrics["gap"][:, -1], float(np.max(problem.seen + sigma2))


def measure(problem, E, rounds, w0, k, scheme, replicates, seed):
    """Replicates of F(w_T) - F^* (Monte Carlo: the theorem bounds their mean)."""
    return run(problem, E, rounds, w0, k, scheme, replicates, seed)[0]


def constants(problem, E, rounds, w0, k, scheme):
    """The theorems' constants at an instance (G^2 from 256 replicates of the run)."""
    w_star, f_star = problem.optimum()
    sigma2 = problem.noise_variance(np.zeros(problem.dim))
    return {"kappa": problem.kappa, "mu": problem.mu, "L": problem.L,
            "Gamma": f_star,  # F^* - sum_k p_k F_k^*, every F_k^* = 0 here
            "G2": run(problem, E, rounds, w0, k, scheme, 256, 1)[1],
            "S": float(problem.alpha**2 @ sigma2),
            "D1": float(np.sum((np.array(w0) - w_star) ** 2)),
            "E": E, "T": rounds * E + 1, "k": k, "N": problem.num_clients}  # fmt: skip


for theorem in (theorem1, wrong_rate):  # `fedtheory tightness KEY --module examples/li2020.py`
    register(strategy_family(theorem, measure, instances(), constants, replicates=64))
