r"""Plain reference implementations: one replicate, one client at a time, NumPy loops.

These are the algorithms written the way the papers state them, for reading, teaching and
debugging; the vectorised classes of :mod:`fedtheory.sim` must agree with them (tested in
float64 on deterministic gradients). They read their hyperparameters from the same
configuration objects but share no update code with the vectorised path.

``run(problem, algorithm, mask [T, N], w0 [d]) -> iterates [T+1, d]``. With stochastic
gradients, pass ``generator(t)``; the draws then differ from the vectorised path (which
draws for all participants at once), so only the distribution is the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.params import check_array, check_bool_array, check_instance, check_int, check_size
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.aggregation import FedAU
from fedtheory.sim.algorithm import LocalTraining
from fedtheory.sim.cafed import CaFed
from fedtheory.sim.divergence import algorithm_label
from fedtheory.sim.fedavg import FedAvg
from fedtheory.sim.fedawe import FedAWE
from fedtheory.sim.fedlaavg import FedLaAvg
from fedtheory.sim.fedvarp import FedVARP
from fedtheory.sim.mifa import MIFA
from fedtheory.sim.mimic import MimiC

GeneratorFn = Callable[[int], torch.Generator | None]


def fedau_omega(mask: np.ndarray, cutoff: float) -> np.ndarray:
    r"""FedAU Algorithm 2 written literally: weights :math:`\omega_t^n` ``[T, N]`` from the
    participation ``mask [T, N]`` (row ``t`` uses rows ``< t`` only)."""
    mask = check_bool_array(mask, "mask", "reference.fedau_omega", ndim=2)
    if cutoff != math.inf:
        check_size(cutoff, "cutoff", "reference.fedau_omega")
    rounds, n_clients = mask.shape
    omega = np.ones((rounds, n_clients))
    for n in range(n_clients):
        count, gap, weight = 0, 0, 1.0
        for t in range(1, rounds):
            gap += 1
            if mask[t - 1, n] or gap == cutoff:
                weight = gap if count == 0 else (count * weight + gap) / (count + 1)
                count += 1
                gap = 0
            omega[t, n] = weight
    return omega


def _vector(value: object, name: str, owner: str, shape: tuple[int, ...] | None) -> np.ndarray:
    """A float vector of ``shape`` (any length if None). Entries are not required finite: a
    diverging run reaches these helpers with inf, and :func:`run` reports it."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        a = None
    if a is None or a.ndim != 1 or (shape is not None and a.shape != shape):
        want = "a vector" if shape is None else f"an array of shape {shape}"
        got = f"shape {a.shape}" if a is not None else type(value).__name__
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be {want}. Got {got} instead."
        )
    return a


def local_update(
    problem: FederatedProblem,
    alg: LocalTraining,
    w: np.ndarray,
    k: int,
    t: int,
    generator: torch.Generator | None,
) -> np.ndarray:
    r"""Client ``k``'s update :math:`\Delta=y_E-w` after ``alg.local_steps`` SGD steps."""
    owner = "reference.local_update"
    check_instance(problem, FederatedProblem, "problem", owner)
    check_instance(alg, LocalTraining, "alg", owner)
    w = _vector(w, "w", owner, (problem.dim,))
    k = check_int(k, "k", owner, low=0, high=problem.num_clients - 1)
    t = check_int(t, "t", owner, low=0)
    if generator is not None:
        check_instance(generator, torch.Generator, "generator", owner)
    y = w.copy()
    lr = alg.client_lr(t)
    for _ in range(alg.local_steps):
        g = problem.grad(torch.from_numpy(y)[None], torch.tensor([k]), generator)[0].numpy()
        y = y - lr * (g + alg.prox * (y - w))
    return y - w


def server_update(alg: LocalTraining, w: np.ndarray, v: np.ndarray, t: int) -> np.ndarray:
    """``w + eta_s(t) v``, projected onto the ball of radius ``alg.radius`` if set."""
    owner = "reference.server_update"
    check_instance(alg, LocalTraining, "alg", owner)
    w = _vector(w, "w", owner, None)
    v = _vector(v, "v", owner, w.shape)
    w = w + alg.server_rate(check_int(t, "t", owner, low=0)) * v
    norm = np.linalg.norm(w)
    if alg.radius is not None and norm > alg.radius:
        w = w * (alg.radius / norm)
    return w


def _fedavg(problem, alg: FedAvg, mask, w, gen):
    if isinstance(alg.aggregator, FedAU):
        weights = mask * fedau_omega(mask, alg.aggregator.cutoff) / mask.shape[1]
    else:
        weights = np.stack([alg.aggregator(torch.from_numpy(m[None]))[0].numpy() for m in mask])
    out = [w]
    for t, m in enumerate(mask):
        v = np.zeros_like(w)
        for k in np.flatnonzero(m):
            v += weights[t, k] * local_update(problem, alg, w, k, t, gen(t))
        w = server_update(alg, w, v, t)
        out.append(w)
    return out


def _mifa(problem, alg: MIFA, mask, w, gen):
    latest = np.zeros((mask.shape[1], w.size))
    out = [w]
    for t, m in enumerate(mask):
        for k in np.flatnonzero(m):
            latest[k] = local_update(problem, alg, w, k, t, gen(t))
        w = server_update(alg, w, latest.mean(axis=0), t)
        out.append(w)
    return out


def _fedvarp(problem, alg: FedVARP, mask, w, gen):
    latest = np.zeros((mask.shape[1], w.size))
    out = [w]
    for t, m in enumerate(mask):
        v = latest.mean(axis=0)
        active = np.flatnonzero(m)
        if active.size == 0 and alg.skip_empty_rounds:
            v = np.zeros_like(w)
        for k in active:
            delta = local_update(problem, alg, w, k, t, gen(t))
            v = v + (delta - latest[k]) / active.size
            latest[k] = delta
        w = server_update(alg, w, v, t)
        out.append(w)
    return out


def _fedlaavg(problem, alg: FedLaAvg, mask, w, gen):
    latest = np.zeros((mask.shape[1], w.size))
    last = np.full(mask.shape[1], -1)
    out = [w]
    for t, m in enumerate(mask):
        available = sorted(np.flatnonzero(m), key=lambda i: last[i])  # stable sort
        for k in available[: alg.clients_per_round]:
            latest[k] = local_update(problem, alg, w, k, t, gen(t))
            last[k] = t
        w = server_update(alg, w, latest.mean(axis=0), t)
        out.append(w)
    return out


def _mimic(problem, alg: MimiC, mask, w, gen):
    correction = np.zeros((mask.shape[1], w.size))
    out = [w]
    for t, m in enumerate(mask):
        active = np.flatnonzero(m)
        deltas = {k: local_update(problem, alg, w, k, t, gen(t)) for k in active}
        v = np.zeros_like(w)
        for k in active:
            v += (deltas[k] + correction[k]) / active.size
        for k in active:
            correction[k] = v - deltas[k]
        w = server_update(alg, w, v, t)
        out.append(w)
    return out


def _cafed_proxy(q, pi_hat, gap, alpha, bias_coef):
    """CA-Fed (18): <F_hat - F_hat^*, pi ~. q> + kappa_bar^2 Gamma_hat' d_TV^2(alpha, pi ~. q)."""
    n = len(q)
    mass = sum(pi_hat[k] * q[k] for k in range(n))
    if mass == 0:
        return math.nan
    p_eff = [pi_hat[k] * q[k] / mass for k in range(n)]
    tv = 0.5 * sum(abs(alpha[k] - p_eff[k]) for k in range(n))
    return sum(gap[k] * p_eff[k] for k in range(n)) + bias_coef * tv**2


def _cafed_estimates(alg: CaFed, history, t):
    """(pi_hat, lam_hat) per client after the availability rows ``history`` (rounds 0..t)."""
    n = len(alg.alpha)
    if alg.prior is None:
        return list(alg.pi), list(alg.lam)
    pi_hat, lam_hat = [0.0] * n, [0.0] * n
    for k in range(n):
        seq = [bool(row[k]) for row in history]
        on = sum(seq)
        pairs = list(zip(seq[:-1], seq[1:], strict=True))
        n11 = sum(a and b for a, b in pairs)
        n10 = sum(a and not b for a, b in pairs)
        n00 = sum(not a and not b for a, b in pairs)
        n01 = sum(not a and b for a, b in pairs)
        if alg.variant == "code":  # the code's BayesianActivityEstimator
            h, p, lam = alg.prior.horizon, alg.pi[k], alg.lam[k]
            n00 += not seq[0]  # its initial active set is empty
            pi_hat[k] = (on + p * h) / (t + 1 + h)
            a = (n11 + (p + lam - lam * p) * h) / (t + 1 + h)
            b = (n00 + (1 - p + lam * p) * h) / (t + 1 + h)
        else:
            p = alg.prior
            pi_hat[k] = (on + p.on) / (t + 1 + p.on + p.off)
            a = (n11 + p.stay_on) / (n11 + n10 + p.stay_on + p.leave_on)
            b = (n00 + p.stay_off) / (n00 + n01 + p.stay_off + p.leave_off)
        lam_hat[k] = a + b - 1
    return pi_hat, lam_hat


def _cafed(problem, alg: CaFed, mask, w, gen):
    """CA-Fed, Algorithm 1 of Rodio et al. 2023 (or the authors' code, ``alg.variant``),
    line by line for one replicate."""
    n = mask.shape[1]
    alpha = alg.alpha
    code = alg.variant == "code"
    running_min = not code and alg.initial_minimum == "first"  # else F_hat^* fixed (0 or F^*)
    beta = alg.beta if not code else 1 - alg.smoothness
    loss_hat, loss_min, started = np.zeros(n), np.zeros(n), False
    if code:
        loss_min = np.array(problem.client_optima()[1], float)
    out = [w]
    for t, m in enumerate(mask):
        active = [k for k in range(n) if m[k]]
        if alg.losses == "exact":
            losses = problem.client_losses(w)
        else:  # one mini-batch per active client (section IV-A)
            losses = np.zeros(n)
            for k in active:
                point, client = torch.from_numpy(w)[None], torch.tensor([k])
                losses[k] = float(
                    problem.batch_losses(point, client, gen(t), batch_size=alg.loss_batch)[0]
                )
        if not started and active:  # first observation: unseen clients get the mean loss
            mean = sum(losses[k] for k in active) / len(active)
            for k in range(n):
                loss_hat[k] = losses[k] if m[k] else mean
                if running_min:
                    loss_min[k] = loss_hat[k]
            started = True
        elif started:
            for k in active:  # (15); the code's s F_hat + (1 - s) F is beta = 1 - s
                loss_hat[k] = (1 - beta) * loss_hat[k] + beta * losses[k]
            if running_min:
                for k in range(n):
                    loss_min[k] = min(loss_min[k], loss_hat[k])
        pi_hat, lam_hat = _cafed_estimates(alg, mask[: t + 1], t)
        gap = [loss_hat[k] - loss_min[k] for k in range(n)]
        gamma = max(gap)  # (17)

        q = [alpha[k] / pi_hat[k] for k in range(n)]
        by_lambda = sorted(range(n), key=lambda k: abs(lam_hat[k]), reverse=True)
        by_pi = sorted(range(n), key=lambda k: pi_hat[k])
        for order in (by_lambda, by_pi):  # get(), twice
            eps = _cafed_proxy(q, pi_hat, gap, alpha, alg.trade_off * gamma)
            for k in order:
                trial = list(q)
                trial[k] = 0.0
                eps_trial = _cafed_proxy(trial, pi_hat, gap, alpha, alg.trade_off * gamma)
                drop = eps - eps_trial
                if math.isfinite(eps_trial) and (drop > alg.tau if alg.strict else drop >= alg.tau):
                    q, eps = trial, eps_trial
        v = np.zeros_like(w)
        for k in active:
            if q[k] > 0:
                v += q[k] * local_update(problem, alg, w, k, t, gen(t))
        w = server_update(alg, w, v, t)
        out.append(w)
    return out


def _fedawe_loop(problem, alg: FedAWE, mask, w, gen):
    """FedAWE, Algorithm 1 of Xiang et al. 2024 (``alg.variant="code"``: the authors' rate
    and clipped aggregated update), line by line for one replicate: the server models
    ``[T+1]`` and the final client models ``[N, d]`` and last active rounds ``[N]``."""
    n = mask.shape[1]
    x = [w.copy() for _ in range(n)]  # line 2: x_i^0 = x^0, tau_i(0) = -1
    tau = [-1] * n
    out = [w]
    for t, m in enumerate(mask):
        active = [i for i in range(n) if m[i]]
        if not active:  # nobody reports: W = I, every model and tau_i stays
            out.append(w)
            continue
        sent, echoed = np.zeros_like(w), np.zeros_like(w)
        for i in active:  # lines 4-13
            g = -local_update(problem, alg, x[i], i, t, gen(t))  # G_i^t = x_i^t - x_i^(t,s)
            sent += x[i] / len(active)
            echoed += (t - tau[i]) * g / len(active)
        if alg.clip is not None:
            norm = np.linalg.norm(echoed)
            if norm > alg.clip:
                echoed = echoed * (alg.clip / norm)
        w = sent - alg.server_rate(t) * echoed  # line 15: mean of x_i^t - eta_g (t-tau) G
        if alg.radius is not None and np.linalg.norm(w) > alg.radius:
            w = w * (alg.radius / np.linalg.norm(w))
        for i in active:  # lines 16-21
            x[i] = w.copy()
            tau[i] = t
        out.append(w)
    return out, np.array(x), np.array(tau)


def _fedawe(problem, alg: FedAWE, mask, w, gen):
    return _fedawe_loop(problem, alg, mask, w, gen)[0]


_REFERENCES = {
    FedAvg: _fedavg,
    MIFA: _mifa,
    FedVARP: _fedvarp,
    FedLaAvg: _fedlaavg,
    MimiC: _mimic,
    CaFed: _cafed,
    FedAWE: _fedawe,
}


def run(
    problem: FederatedProblem,
    algorithm: LocalTraining,
    mask: np.ndarray,
    w0: np.ndarray,
    *,
    generator: GeneratorFn | None = None,
) -> np.ndarray:
    """Iterates ``[T+1, d]`` of ``algorithm`` on one replicate with availability
    ``mask [T, N]`` from ``w0 [d]``, one client at a time."""
    if type(algorithm) not in _REFERENCES:
        known = ", ".join(cls.__name__ for cls in _REFERENCES)
        raise ParameterError(
            f"The 'algorithm' parameter of reference.run must be one of {known}. "
            f"Got {type(algorithm).__name__} instead."
        )
    owner = "reference.run"
    check_instance(problem, FederatedProblem, "problem", owner)
    mask = check_bool_array(mask, "mask", owner, ndim=2)
    if mask.shape[0] == 0 or mask.shape[1] != problem.num_clients:
        raise ParameterError(
            f"The 'mask' parameter of {owner} must have shape (T, {problem.num_clients}) "
            f"(one column per client). Got shape {mask.shape} instead."
        )
    w0 = check_array(w0, "w0", owner, shape=(problem.dim,))
    if generator is not None and not callable(generator):
        raise ParameterError(
            f"The 'generator' parameter of {owner} must be a callable t -> torch.Generator. "
            f"Got {type(generator).__name__} instead."
        )
    if algorithm.full_first_round and mask.shape[0] > 0:
        mask[0] = True
    gen = generator if generator is not None else (lambda t: None)
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite iterates are reported
        out = np.array(_REFERENCES[type(algorithm)](problem, algorithm, mask, w0, gen))
    bad = ~np.isfinite(out).all(axis=-1)
    if bad.any():
        raise DivergenceError(algorithm_label(algorithm), int(np.argmax(bad)) - 1, 0, "the model w")
    return out
