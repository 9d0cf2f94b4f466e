r"""Fused local SGD for generalised linear models: all :math:`E` steps of all pairs in one
compiled loop (numba), the simulator's hot path.

For a (replicate, client) pair with client :math:`k`, start :math:`y_0=w` and run

.. math:: y_{j+1}=y_j-\eta\Big(\frac1{b_k}\sum_{i\in\mathcal B_j}\big(\psi(x_i^\top y_j)-y_i\big)x_i
          +\rho\,y_j+\mu_{\rm prox}(y_j-w)\Big),

with the link :math:`\psi(z)=z` (least squares :math:`\tfrac12(x^\top w-y)^2`) or
:math:`\psi(z)=1/(1+e^{-z})` (binary logistic regression), ridge :math:`\rho` and FedProx's
:math:`\mu_{\rm prox}`: the recursion of :func:`fedtheory.sim.local_sgd` driven by
:meth:`~fedtheory.problems.data_backed.DataProblem.grad`, with the same batch laws:

* without replacement: :math:`\mathcal B_j` is a uniform :math:`b_k`-subset,
  :math:`b_k=\min(b,n_k)`, drawn by a partial Fisher--Yates shuffle from :math:`b_k`
  uniforms :math:`u_i`: swap position :math:`i` with :math:`i+\lfloor u_i(n_k-i)\rfloor`.
  Running it on the arrangement the previous step left is still exact (a uniform subset
  whatever the arrangement), so the index table is reset once per round, not per step;
* with replacement: :math:`b` indices :math:`\lfloor u_in_k\rfloor`;
* full batch: every sample, no randomness.

The uniforms are counter-based, drawn inside the kernel and so in parallel: pair :math:`m`
has a 64-bit key :math:`\kappa_m` (``keys [M]``, drawn by the caller from its torch
generator, so runs are deterministic) and its :math:`i`-th uniform of step :math:`j` is
output number :math:`jb+i` of SplitMix64 seeded with :math:`\kappa_m` (Steele, Lea and
Flood, OOPSLA 2014: :math:`z=\kappa_m+(jb+i+1)\gamma` through its 64-bit finaliser, then
:math:`u=\lfloor z/2^{11}\rfloor2^{-53}`), a stream that passes BigCrush.
:func:`uniforms` gives the same numbers in NumPy. ``grad`` draws :math:`n_{\max}` keys per
pair and step from torch instead; both samplers have the same law, not the same numbers.

Per pair and step the kernel reads the :math:`b` sampled rows once for :math:`x_i^\top y`
and again from cache for the update: no ``[M, b, p]`` batch is ever materialised, which is
what bounds the op-by-op path.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from fedtheory.compiled import njit

__all__ = ["IDENTITY", "LOGISTIC", "owns_the_cores", "threads"]  # the rest: inputs unchecked

IDENTITY, LOGISTIC = 0, 1
"""Links :math:`\\psi`: least squares and binary logistic regression."""

FULL_BATCH, WITHOUT_REPLACEMENT, WITH_REPLACEMENT = 0, 1, 2
_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment, 2^64 over the golden ratio
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)  # its finaliser
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
_PIECES_PER_THREAD = 4  # pieces of pairs taken in turn: a thread slowed down takes fewer
_BLOCK = 4  # rows read together: four independent loads in flight hide memory latency
_FAST = {"reassoc", "contract", "nsz", "arcp"}
"""Fast-math flags that let LLVM vectorise the dot products but keep NaN and inf exact (no
``nnan``/``ninf``), so that a diverging run returns non-finite updates, which the simulator
reports as a :class:`~fedtheory.errors.DivergenceError`, instead of undefined behaviour."""


@njit(boundscheck=False, nogil=True)
def _uniform(key, counter):
    """Output ``counter`` (from 0) of SplitMix64 seeded with ``key``, in [0, 1 - 2^-53]."""
    z = key + (counter + np.uint64(1)) * _GAMMA
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return np.float64(z >> _S11) * 1.1102230246251565e-16  # 2^-53


def uniforms(keys: np.ndarray, steps: int, batch: int) -> np.ndarray:
    """The kernel's uniforms ``[steps, M, batch]`` of pairs with ``keys [M]`` (uint64),
    computed in NumPy (module docstring)."""
    keys = np.asarray(keys, dtype=np.uint64)
    counters = np.arange(1, steps * batch + 1, dtype=np.uint64).reshape(steps, 1, batch)
    with np.errstate(over="ignore"):
        z = keys[:, None] + counters * _GAMMA
        z = (z ^ (z >> _S30)) * _MIX1
        z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return (z >> _S11).astype(np.float64) * 2.0**-53


@njit(boundscheck=False, nogil=True)
def draw_batch(order, uniforms, n_k, size, sampler, rows):
    """Write the ``size`` sample indices of one batch of a client with ``n_k`` samples to
    ``rows`` (module docstring); ``order`` holds an arrangement of ``0..n_k-1`` that partial
    Fisher--Yates updates in place, ``uniforms [size]`` in [0, 1)."""
    for i in range(size):
        if sampler == FULL_BATCH:
            rows[i] = i
        elif sampler == WITHOUT_REPLACEMENT:
            swap = i + int(uniforms[i] * (n_k - i))  # u <= 1 - 2^-53: u*m rounds below m
            picked = order[swap]
            order[swap] = order[i]
            order[i] = picked
            rows[i] = picked
        else:
            rows[i] = int(uniforms[i] * n_k)


@njit(fastmath=_FAST, boundscheck=False, nogil=True)
def _dots(X, rows, start, y, z):
    """``z[i] = <X[rows[i]], y>`` for the block of rows starting at ``start``."""
    r0, r1, r2, r3 = rows[start], rows[start + 1], rows[start + 2], rows[start + 3]
    a0 = a1 = a2 = a3 = 0.0
    for j in range(y.shape[0]):
        a0 += X[r0, j] * y[j]
        a1 += X[r1, j] * y[j]
        a2 += X[r2, j] * y[j]
        a3 += X[r3, j] * y[j]
    z[start], z[start + 1], z[start + 2], z[start + 3] = a0, a1, a2, a3


@njit(fastmath=_FAST, boundscheck=False, nogil=True)
def _accumulate(X, rows, start, c, g):
    """``g += sum_i c[i] X[rows[i]]`` over the block of rows starting at ``start``."""
    r0, r1, r2, r3 = rows[start], rows[start + 1], rows[start + 2], rows[start + 3]
    c0, c1, c2, c3 = c[start], c[start + 1], c[start + 2], c[start + 3]
    for j in range(g.shape[0]):
        g[j] += c0 * X[r0, j] + c1 * X[r1, j] + c2 * X[r2, j] + c3 * X[r3, j]


@njit(fastmath=_FAST, error_model="numpy", boundscheck=False, nogil=True)
def _kernel(X, labels, n_max, counts, clients, w, keys, steps, b, sampler, link, lr, ridge, prox,
            out, pairs):  # fmt: skip
    """``out[m] = y_E - w[m]`` for the pairs ``m`` of ``pairs`` (see the module docstring),
    in that order (sorted by client, so a client's rows stay in cache across its
    replicates); each pair's numbers depend neither on the order nor on the other pairs."""
    d = w.shape[1]
    order = np.empty(n_max, dtype=np.int64)
    rows = np.empty(max(b, n_max) + _BLOCK, dtype=np.int64)  # padded to whole blocks
    u = np.empty(b)
    z = np.empty(rows.shape[0])
    y = np.empty(d)
    g = np.empty(d)
    for m in pairs:
        k = clients[m]
        n_k = counts[k]
        base = k * n_max
        if sampler == FULL_BATCH:
            size = n_k
        elif sampler == WITHOUT_REPLACEMENT:
            size = min(b, n_k)
        else:
            size = b
        for i in range(n_k):
            order[i] = i
        y[:] = w[m]
        for s in range(steps):
            for i in range(size if sampler != FULL_BATCH else 0):
                u[i] = _uniform(keys[m], np.uint64(s * b + i))
            draw_batch(order, u, n_k, size, sampler, rows)
            rows[:size] += base
            rows[size : size + _BLOCK] = base  # padding rows get weight 0 below
            for start in range(0, size, _BLOCK):
                _dots(X, rows, start, y, z)
            for i in range(size):  # z_i <- (psi(z_i) - y_i) / b_k
                if link == LOGISTIC:
                    z[i] = 1.0 / (1.0 + math.exp(-z[i]))
                z[i] = (z[i] - labels[rows[i]]) / size
            z[size : size + _BLOCK] = 0.0
            g[:] = 0.0
            for start in range(0, size, _BLOCK):
                _accumulate(X, rows, start, z, g)
            for j in range(d):
                y[j] -= lr * (g[j] + ridge * y[j] + prox * (y[j] - w[m, j]))
        for j in range(d):
            out[m, j] = y[j] - w[m, j]
    return out


def local_sgd_glm(
    X: np.ndarray,
    labels: np.ndarray,
    counts: np.ndarray,
    clients: np.ndarray,
    w: np.ndarray,
    keys: np.ndarray,
    *,
    steps: int,
    batch: int,
    sampler: int,
    link: int,
    lr: float,
    ridge: float,
    prox: float,
    threads: int = 1,
) -> np.ndarray:
    r"""Updates :math:`\Delta=y_E-w` ``[M, d]`` (float64) of ``steps`` local steps of pairs
    ``clients [M]`` from ``w [M, d]``.

    ``X [N, n_max, d]`` (float64 or float32), ``labels [N, n_max]``, ``counts [N]``, the
    pairs' stream ``keys [M]`` (uint64, module docstring) and the mini-batch size ``batch``
    (ignored by the full batch). Package-internal: the caller
    (:class:`~fedtheory.problems.data_backed.DataProblem`) has checked the inputs.

    With ``threads > 1`` the pairs, sorted by client, are cut into ``4 * threads`` pieces of
    about equal work, which the calling thread and ``threads - 1`` threads of a shared pool
    take in turn (the kernel releases the GIL; a thread slowed down by a neighbour takes
    fewer): every pair is computed by the same code from the same inputs, so the result is
    bit-identical whatever ``threads``. Plain Python threads, not numba's parallel loops,
    so no numba threading layer (and no second OpenMP runtime beside torch's) is ever
    loaded and the kernel stays one cached serial function."""
    batch = 0 if sampler == FULL_BATCH else batch
    args = (X.reshape(-1, X.shape[2]), labels.reshape(-1), X.shape[1], counts, clients, w,
            keys, steps, batch, sampler, link, lr, ridge, prox, np.empty(w.shape))  # fmt: skip
    order = np.argsort(clients, kind="stable")
    pieces = _balanced_runs(order, _pair_work(counts[clients[order]], batch, sampler),
                            _PIECES_PER_THREAD * threads if threads > 1 else 1)  # fmt: skip
    taken = itertools.count()  # next() is atomic: each piece is taken by exactly one thread

    def work() -> None:
        while (i := next(taken)) < len(pieces):
            _kernel(*args, pieces[i])

    helpers = [_pool(threads - 1).submit(work) for _ in range(min(threads, len(pieces)) - 1)]
    try:
        work()
    finally:
        for helper in helpers:
            helper.result()  # waits, and re-raises a helper's exception here
    return args[-1]


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """A pool of ``workers`` threads for the kernel, made once per size (and again in a
    forked child, where the parent's threads do not exist)."""
    return ThreadPoolExecutor(max_workers=max(workers, 1), thread_name_prefix="fedtheory-kernel")


os.register_at_fork(after_in_child=_pool.cache_clear)


_THREADS: ContextVar[int | None] = ContextVar("fedtheory_kernel_threads", default=None)
_LOCK = threading.Lock()
_HELD = {"depth": 0, "torch": 1, "cores": 1}  # open blocks, torch's threads to restore, kernel's


def threads() -> int:
    """Threads the kernel runs on: those :func:`owns_the_cores` took from torch, else
    :func:`fedtheory.threads.available` (torch's count, no more than the idle cores)."""
    from fedtheory.threads import available

    held = _THREADS.get()
    return available() if held is None else held


@contextmanager
def owns_the_cores() -> Iterator[int]:
    """Within the block, the kernel gets :func:`fedtheory.threads.available` threads
    (torch's ``torch.get_num_threads()``, no more than the machine has idle cores) and
    torch's own operations run on one (restored on exit; blocks may nest or overlap in
    several Python threads: the outermost fixes the count, the last one out restores).

    Why: after each parallel operation, torch's OpenMP workers spin-wait (libgomp's default
    ``GOMP_SPINCOUNT``, about ten milliseconds) on the cores the kernel's threads need, so
    the kernel on two threads ran no faster than on one inside a simulation of the
    benchmark configuration, while alone it ran 1.7-1.9x faster. A round's other
    operations are small; the simulator holds this block around its rounds when the
    kernel does the local training."""
    import torch

    from fedtheory.threads import available

    with _LOCK:
        if _HELD["depth"] == 0:
            _HELD["torch"], _HELD["cores"] = torch.get_num_threads(), available()
            torch.set_num_threads(1)
        _HELD["depth"] += 1
        cores = _HELD["cores"]
    token = _THREADS.set(cores)
    try:
        yield cores
    finally:
        _THREADS.reset(token)
        with _LOCK:
            _HELD["depth"] -= 1
            if _HELD["depth"] == 0:
                torch.set_num_threads(_HELD["torch"])


def _pair_work(n_k: np.ndarray, b: int, sampler: int) -> np.ndarray:
    """Rows read per step by pairs of clients with ``n_k`` samples (their relative cost)."""
    if sampler == FULL_BATCH:
        return n_k
    if sampler == WITHOUT_REPLACEMENT:
        return np.minimum(n_k, b)
    return np.full_like(n_k, b)


def _balanced_runs(order: np.ndarray, work: np.ndarray, runs: int) -> list[np.ndarray]:
    """``order`` cut into at most ``runs`` consecutive non-empty runs of about equal total
    ``work`` (one run, maybe empty, when ``order`` has fewer than two entries)."""
    if runs <= 1 or order.size < 2:
        return [order]
    cumulative = np.cumsum(work, dtype=np.float64)
    targets = cumulative[-1] * np.arange(1, runs) / runs
    cuts = np.unique(np.searchsorted(cumulative, targets, side="right").clip(1, order.size))
    return [run for run in np.split(order, cuts) if run.size]
