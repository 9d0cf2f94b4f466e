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

import math
from collections.abc import Callable

import numpy as np
import torch

from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.params import check_array, check_bool_array, check_instance, check_int, check_size
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import LocalTraining
from fedtheory.sim.divergence import algorithm_label

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


_REFERENCES: dict[type, Callable] = {}
"""Algorithm class -> its plain loop ``(problem, alg, mask [T, N], w0 [d], generator) -> [T+1]``
iterates, registered beside the algorithm by :func:`reference_loop`."""

_EXAMPLES: dict[str, tuple[type, dict]] = {}
"""Name -> (algorithm class, keyword arguments): the configurations registered with the
plain loops, which the agreement tests (``tests/test_sim_algorithms.py``) run."""


def reference_loop(
    algorithm: type, *, examples: dict | None = None
) -> Callable[[Callable], Callable]:
    """Register the decorated function as the plain loop of ``algorithm`` (a class): the loop
    lives beside the vectorised algorithm, and :func:`run` and the agreement tests find it
    here. ``examples`` maps a name to the keyword arguments of a configuration the
    agreement tests run against the loop (:func:`examples`), e.g. each variant."""
    if not isinstance(algorithm, type) or not all(
        callable(getattr(algorithm, m, None)) for m in ("init", "step")
    ):
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
