r"""Plain reference implementations: one replicate, one client at a time, NumPy loops.

These are the algorithms written the way the papers state them, for reading, teaching and
debugging; the vectorised classes of :mod:`fedtheory.sim` must agree with them (tested in
float64 on deterministic gradients). They read their hyperparameters from the same
configuration objects but share no update code with the vectorised path.

Each loop lives beside its algorithm (``fedtheory/sim/<paper>.py``), registered with
:func:`reference_loop`; this module holds the shared steps (:func:`local_update`,
:func:`server_update`, :func:`fedau_omega`) and
``run(problem, algorithm, mask [T, N], w0 [d]) -> iterates [T+1, d]``. With stochastic
gradients, pass ``generator(t)``; the draws then differ from the vectorised path (which
draws for all participants at once), so only the distribution is the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from fedtheory.constraints import Array, Function, Instance, Integer, MappingOf, Mask, Size, declare
from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import LocalTraining
from fedtheory.sim.divergence import algorithm_label
from fedtheory.sim.schedules import PerStep

__all__ = ["examples", "fedau_omega", "local_update", "reference_loop", "run", "server_update"]
# local_step, step_rate, server_step: the plain loops' steps (arguments built by the loop)

GeneratorFn = Callable[[int], torch.Generator | None]


@declare(mask=Mask(ndim=2), cutoff=Size(infinite=True))
def fedau_omega(mask: np.ndarray, cutoff: float) -> np.ndarray:
    r"""FedAU Algorithm 2 written literally: weights :math:`\omega_t^n` ``[T, N]`` from the
    participation ``mask [T, N]`` (row ``t`` uses rows ``< t`` only); ``cutoff`` is
    :math:`K` (``inf``: none)."""
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


@declare(
    "t",
    "generator",
    problem=Instance(FederatedProblem),
    alg=Instance(LocalTraining),
    w=Array(shape=("problem.dim",)),
    k=Integer(0, "problem.num_clients", high_open=True),
)
def local_update(
    problem: FederatedProblem,
    alg: LocalTraining,
    w: np.ndarray,
    k: int,
    t: int,
    generator: torch.Generator | None,
) -> np.ndarray:
    r"""Client ``k``'s update :math:`\Delta=y_E-w` after ``alg.local_steps`` SGD steps from a
    finite ``w [d]`` in round ``t`` (DivergenceError if the steps overflow)."""
    return local_step(problem, alg, w, k, t, generator)


def local_step(problem, alg, w, k, t, generator, *, replicate: int = 0) -> np.ndarray:
    """:func:`local_update` inside a plain loop (arguments built by the loop): a non-finite
    update is reported where it first appears, as the divergence of round ``t``."""
    y = w.copy()
    with np.errstate(over="ignore", invalid="ignore"):  # reported just below
        for j in range(alg.local_steps):
            lr = step_rate(alg, t, j)
            g = problem.grad(torch.from_numpy(y)[None], torch.tensor([k]), generator)[0].numpy()
            y = y - lr * (g + alg.prox * (y - w))
        delta = y - w
    if not np.isfinite(delta).all():
        raise DivergenceError(algorithm_label(alg), t, replicate, f"client {k}'s update")
    return delta


def step_rate(alg: LocalTraining, t: int, j: int) -> float:
    r"""The client rate of local step ``j`` of round ``t``, as written: a schedule of the round
    gives every step :math:`\eta_t`; a :class:`~fedtheory.sim.schedules.PerStep` schedule
    is read at the global SGD step :math:`tE+j` (or at :math:`(t,j)`)."""
    lr = alg.client_lr
    return lr.rate(t, j, alg.local_steps) if isinstance(lr, PerStep) else lr(t)


@declare("t", alg=Instance(LocalTraining), w=Array(ndim=1), v=Array(shape=("w[0]",)))
def server_update(alg: LocalTraining, w: np.ndarray, v: np.ndarray, t: int) -> np.ndarray:
    """``w + eta_s(t) v`` for finite ``w, v [d]``, projected onto the ball of radius
    ``alg.radius`` if set (DivergenceError if the step overflows)."""
    return server_step(alg, w, v, t)


def server_step(alg, w, v, t, *, replicate: int = 0) -> np.ndarray:
    """:func:`server_update` inside a plain loop: a non-finite model is reported where it
    first appears, as the divergence of round ``t``."""
    with np.errstate(over="ignore", invalid="ignore"):  # reported just below
        w = w + alg.server_rate(t) * v
        norm = np.linalg.norm(w)
    if not np.isfinite(w).all():
        raise DivergenceError(algorithm_label(alg), t, replicate, "the model w")
    if alg.radius is not None and norm > alg.radius:
        w = w * (alg.radius / norm)
    return w


_REFERENCES: dict[type, Callable] = {}
"""Algorithm class -> its plain loop ``(problem, alg, mask [T, N], w0 [d], generator) -> [T+1]``
iterates, registered beside the algorithm by :func:`reference_loop`."""

_EXAMPLES: dict[str, tuple[type, dict]] = {}
"""Name -> (algorithm class, keyword arguments): the configurations registered with the
plain loops, which the agreement tests (``tests/test_sim_algorithms.py``) run."""


@declare(algorithm=Instance(type), examples=MappingOf(MappingOf(), plural="keyword mappings"))
def reference_loop(
    algorithm: type, *, examples: dict | None = None
) -> Callable[[Callable], Callable]:
    """Register the decorated function as the plain loop of ``algorithm`` (a class): the loop
    lives beside the vectorised algorithm, and :func:`run` and the agreement tests find it
    here. ``examples`` maps a name to the keyword arguments of a configuration the
    agreement tests run against the loop (:func:`examples`), e.g. each variant."""
    if not all(callable(getattr(algorithm, m, None)) for m in ("init", "step")):
        raise ParameterError(
            "The 'algorithm' parameter of reference_loop must be an algorithm class (with "
            f"init and step, fedtheory.sim.algorithm.Algorithm). Got {algorithm!r} instead."
        )
    examples = {} if examples is None else examples
    if not isinstance(examples, dict) or not all(
        isinstance(k, str) and isinstance(v, dict) for k, v in examples.items()
    ):
        raise ParameterError(
            "The 'examples' parameter of reference_loop must map names to keyword-argument "
            f"dicts. Got {examples!r} instead."
        )

    def register(loop: Callable) -> Callable:
        _REFERENCES[algorithm] = loop
        _EXAMPLES.update({name: (algorithm, kwargs) for name, kwargs in examples.items()})
        return loop

    return register


def examples() -> dict[str, LocalTraining]:
    """A fresh instance of every configuration registered with a plain loop
    (:func:`reference_loop`), by name."""
    return {name: algorithm(**kwargs) for name, (algorithm, kwargs) in _EXAMPLES.items()}


@declare(
    problem=Instance(FederatedProblem),
    algorithm=Instance(LocalTraining, among=_REFERENCES),
    mask=Mask(shape=(None, "problem.num_clients"), min_size=1),
    w0=Array(shape=("problem.dim",)),
    generator=Function(none=True),
)
def run(
    problem: FederatedProblem,
    algorithm: LocalTraining,
    mask: np.ndarray,
    w0: np.ndarray,
    *,
    generator: GeneratorFn | None = None,
) -> np.ndarray:
    """Iterates ``[T+1, d]`` of ``algorithm`` (a class with a plain loop) on one replicate
    with availability ``mask [T, N]`` from ``w0 [d]``, one client at a time."""
    if algorithm.full_first_round and mask.shape[0] > 0:
        mask[0] = True
    gen = generator if generator is not None else (lambda t: None)
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite iterates are reported
        out = np.array(_REFERENCES[type(algorithm)](problem, algorithm, mask, w0, gen))
    bad = ~np.isfinite(out).all(axis=-1)
    if bad.any():
        raise DivergenceError(algorithm_label(algorithm), int(np.argmax(bad)) - 1, 0, "the model w")
    return out
