r"""Plain reference of training with client selection (E3CS Algorithm 1 and its baselines):
one replicate and one client at a time, Python loops, the paper's ProbAlloc read literally.

For reading, teaching and debugging; :class:`~fedtheory.sim.selection.fedavg.SelectedFedAvg`
must agree with it in float64 (tested). It shares no selection or update code with the
vectorised path; it only reads the same random draws (round ``t``'s SELECTION generator, in
the order the vectorised samplers consume it) so that both select the same clients, and the
client-side SGD of :mod:`fedtheory.sim.reference`.
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory import rng
from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import Array, BoolArray, Instance, Integer, Real, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.reference import local_step, server_step
from fedtheory.sim.selection.allocation import check_quota
from fedtheory.sim.selection.fedavg import SelectedFedAvg
from fedtheory.sim.selection.policies import E3CS, FedCS, PowD, RandomSelection

__all__ = ["paper_prob_alloc", "run_selected"]


@declare(w=Array(ndim=1, low=0.0, low_open=True), k=Integer(1, "w[0]"), sigma=Real(0.0),
         finite_result=True)  # fmt: skip
def paper_prob_alloc(w: list[float], k: int, sigma: float) -> tuple[list[float], set[int]]:
    r"""E3CS Algorithm 2 (ProbAlloc) read literally on linear weights: (17) if no client
    overflows, else :math:`\alpha_t` by (23) for :math:`m=0,1,\dots`, :math:`S_t`,
    :math:`w'` and (18). ⚠ The comparison in (22)-(23) is read as
    :math:`w_j\le(1-\sigma_t)\alpha_t` (the paper writes :math:`w_j\le\Psi`).
    Returns ``(p, S_t)``. Overflows for large weights: use
    :func:`~fedtheory.sim.selection.prob_alloc` in practice."""
    w, n = w.tolist(), w.size
    sigma = check_quota(sigma, k, n, "paper_prob_alloc")
    if sigma + (k - n * sigma) * max(w) / sum(w) <= 1:
        return [sigma + (k - n * sigma) * wi / sum(w) for wi in w], set()
    ws = sorted(w, reverse=True)
    for m in range(n):
        alpha = sum(ws[m:]) / (k - n * sigma - m * (1 - sigma))  # (23)
        if ws[m] <= (1 - sigma) * alpha:
            break
    capped = {i for i in range(n) if w[i] > (1 - sigma) * alpha}
    w_cap = [min(wi, (1 - sigma) * alpha) for wi in w]
    return [sigma + (k - n * sigma) * wc / sum(w_cap) for wc in w_cap], capped


def _systematic(p: list[float], k: int, keys: np.ndarray, u: float) -> set[int]:
    """Systematic sampling in the random order ``argsort(keys)``: client ``i`` is chosen iff
    a point ``u + l`` (``l`` integer) falls in its interval ``[low, cum)``."""
    chosen, cum = set(), 0.0
    order = np.argsort(keys)
    for pos, i in enumerate(order):
        low, cum = cum, (cum + p[i] if pos < len(order) - 1 else k)
        if math.ceil(cum - u) > math.ceil(low - u):
            chosen.add(int(i))
    return chosen


def _exponential_race(w: list[float], size: int, race: np.ndarray) -> set[int]:
    """Successive weighted sampling of ``size`` clients: the ``size`` smallest
    ``race[i] / w[i]`` among the clients of positive weight."""
    positive = [i for i in range(len(w)) if w[i] > 0]
    return set(sorted(positive, key=lambda i: race[i] / w[i])[:size])


@declare(
    problem=Instance(FederatedProblem),
    algorithm=Instance(SelectedFedAvg),
    mask=BoolArray(shape=(None, None, "problem.num_clients")),
    w0=Array(shape=("problem.dim",)),
    finite_result=True,
)
def run_selected(
    problem: FederatedProblem,
    algorithm: SelectedFedAvg,
    mask,
    w0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Run ``algorithm`` on the success masks ``mask [R, T, K]`` from ``w0 [d]``.

    Deterministic gradients only (the vectorised path draws noise for all participants at
    once). Returns the iterates ``[R, T+1, d]``, the models returned per round ``[R, T]``
    (the CEP increments) and, for E3CS, the final log-weights ``[R, K]`` (else zeros).
    """
    reps, rounds, n = mask.shape
    work = reps * rounds * n * algorithm.local_steps
    what = f"{work} client steps, one at a time"
    check_seconds(seconds(rounds=work, cells=work * len(w0)), "run_selected", what=what,
                  fixes="fewer rounds or replicates")  # fmt: skip
    sel = algorithm.selector
    omega = problem.alpha if algorithm.omega is None else algorithm.omega
    w = [np.array(w0, float) for _ in range(reps)]
    log_w = [[0.0] * n for _ in range(reps)]
    out = np.empty((reps, rounds + 1, len(w0)))
    out[:, 0] = w
    returned = np.zeros((reps, rounds), dtype=int)
    for t in range(rounds):
        gen = rng.numpy_rng(algorithm.seed, t, rng.SELECTION)
        allocs = []
        if isinstance(sel, E3CS):
            sigma = sel.quota(t)
            allocs = [paper_prob_alloc([math.exp(v) for v in lw], sel.k, sigma) for lw in log_w]
            if sel.sampler == "systematic":
                keys, u = gen.random((reps, n)), gen.random((reps, 1))[:, 0]
                chosen = [_systematic(allocs[r][0], sel.k, keys[r], u[r]) for r in range(reps)]
            else:  # successive sampling, as the paper's code, on the reference's p
                race = gen.standard_exponential((reps, n))
                chosen = [_exponential_race(allocs[r][0], sel.k, race[r]) for r in range(reps)]
        elif isinstance(sel, FedCS):
            top = sorted(range(n), key=lambda i: (-sel.rho[i], i))[: sel.k]
            chosen = [set(top) for _ in range(reps)]
        elif isinstance(sel, RandomSelection | PowD):
            race = gen.standard_exponential((reps, n))
            size = sel.k if isinstance(sel, RandomSelection) else sel.d
            chosen = [_exponential_race([1.0] * n, size, race[r]) for r in range(reps)]
            if isinstance(sel, PowD):
                losses = [problem.client_losses(w[r]) for r in range(reps)]
                chosen = [
                    set(sorted(c, key=lambda i, r=r: -losses[r][i])[: sel.k])
                    for r, c in enumerate(chosen)
                ]
        else:
            raise TypeError(f"no plain reference for {sel!r}")
        for r in range(reps):
            v = np.zeros_like(w[r])
            for i in sorted(chosen[r]):
                if not mask[r, t, i]:
                    continue
                returned[r, t] += 1
                v += omega[i] * local_step(problem, algorithm, w[r], i, t, None, replicate=r)
                p, capped = allocs[r] if allocs else ([], set())
                if allocs and i not in capped:  # E3CS (15)-(16)
                    log_w[r][i] += (sel.k - n * sigma) * sel.eta / n / p[i]
            w[r] = server_step(algorithm, w[r], v, t, replicate=r)
            out[r, t + 1] = w[r]
    return out, returned, np.array(log_w)
