r"""``simulate`` wires a problem, an availability process and an algorithm together.

It only orchestrates: the availability mask ``[R, T, N]`` is sampled in chunks of rounds
(so that ``10^5`` clients fit in memory), each round calls ``algorithm.step`` on all
replicates at once, and the record gets the iterates, the participation counts, the
empirical effective weights and the metrics (:math:`F(w_t)-F^*`, and when the problem or
the caller offers them :math:`F_B(w_t)-F_B^*`, :math:`\|\nabla F(w_t)\|^2`, accuracy).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np
import torch

from fedtheory import rng, threads
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.device import check_device
from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.params import (
    check_array,
    check_bool,
    check_instance,
    check_int,
    check_seed,
    check_simplex,
    check_size,
)
from fedtheory.problems import fused
from fedtheory.problems.base import FederatedProblem, check_points
from fedtheory.sim import footprint
from fedtheory.sim.algorithm import Algorithm
from fedtheory.sim.divergence import algorithm_label, non_finite_metric, non_finite_state
from fedtheory.sim.record import RunRecord

CHUNK_ELEMENTS = 1 << 24
"""Availability is sampled (and exact gradients evaluated) in chunks of about this many
cells, so that memory stays bounded for large N."""


@threads.fitted_to_load()  # torch on no more threads than idle cores
def evaluate_metrics(
    problem: FederatedProblem,
    w: np.ndarray,
    *,
    biased_weights: np.ndarray | None = None,
    device: torch.device | str | None = None,
) -> dict[str, np.ndarray]:
    r"""Metrics of models ``w [..., d]``, each ``[...]``.

    ``gap`` = :math:`F(w)-F^*`; ``gap_B`` = :math:`F_B(w)-F_B^*` with
    :math:`F_B=\sum_kp_kF_k` for ``biased_weights`` :math:`p` (CA-Fed (4)); ``grad_sq`` =
    :math:`\|\sum_k\alpha_k\nabla F_k(w)\|^2` if the problem has exact
    ``client_grads(w [..., d]) -> [..., N, d]``; ``accuracy`` if it has
    ``accuracy(w [..., d]) -> [...]``. Problems with ``exact_metrics`` (one pass over their
    data) give all of them at once, computed on ``device`` (default CPU). Points are taken
    in chunks of ``[chunk, N, d]``."""
    owner = "evaluate_metrics"
    check_instance(problem, FederatedProblem, "problem", owner)
    w = check_points(w, problem.dim, owner)
    if biased_weights is not None:
        biased_weights = check_simplex(
            biased_weights, "biased_weights", owner, size=problem.num_clients
        )
    dev = check_device(device, "device", owner)
    points = w.reshape(-1, w.shape[-1])
    chunk = max(1, CHUNK_ELEMENTS // (problem.num_clients * w.shape[-1]))
    parts = [
        _point_metrics(problem, x, biased_weights, dev)
        for x in np.array_split(points, range(chunk, len(points), chunk))
    ]
    return {key: np.concatenate([p[key] for p in parts]).reshape(w.shape[:-1]) for key in parts[0]}


def _point_metrics(problem, points: np.ndarray, biased_weights, device) -> dict[str, np.ndarray]:
    """:func:`evaluate_metrics` of ``points [P, d]``."""
    if hasattr(problem, "exact_metrics"):
        on_device = {} if device.type == "cpu" else {"device": device}
        exact = problem.exact_metrics(points, **on_device)
    else:
        exact = {"client_losses": problem.client_losses(points)}
        if hasattr(problem, "client_grads"):
            exact["client_grads"] = problem.client_grads(points)
        if hasattr(problem, "accuracy"):
            exact["accuracy"] = problem.accuracy(points)
    losses = exact["client_losses"]  # [P, N]; loss(w, p) is client_losses(w) @ p
    out = {"gap": losses @ problem.alpha - problem.optimum()[1]}
    if biased_weights is not None:
        out["gap_B"] = losses @ biased_weights - problem.optimum(biased_weights)[1]
    if "client_grads" in exact:
        grad = np.einsum("n,pnd->pd", problem.alpha, exact["client_grads"])
        out["grad_sq"] = np.sum(np.square(grad), -1)
    if "accuracy" in exact:
        out["accuracy"] = np.asarray(exact["accuracy"])
    return out


@threads.fitted_to_load()  # torch and the fused kernel on no more threads than idle cores
def simulate(
    problem: FederatedProblem,
    availability: AvailabilityProcess,
    algorithm: Algorithm,
    *,
    rounds: int,
    replicates: int = 1,
    seed: int = 0,
    w0=None,
    biased_weights=None,
    eval_every: int = 1,
    keep_masks: bool = True,
    max_memory: int | str | None = None,
    device: torch.device | str | None = None,
) -> RunRecord:
    """Run ``algorithm`` for ``rounds`` rounds on ``replicates`` independent replicates.

    Parameters
    ----------
    problem : FederatedProblem
    availability : AvailabilityProcess
        Must have ``problem.num_clients`` clients.
    algorithm : Algorithm
        ``init``/``step`` protocol of :mod:`fedtheory.sim.algorithm`.
    rounds, replicates : int
    seed : int
        Same seed, same numbers: availability and gradient noise of round ``t`` depend only
        on ``(seed, t)``.
    w0 : array [d], optional
        Initial model (default zeros).
    biased_weights : array [N], optional
        Weights :math:`p` of the biased objective :math:`F_B` (metric ``gap_B``).
    eval_every : int
        Evaluate the metrics every this many rounds (and at the last round).
    keep_masks : bool
        Keep the availability mask ``[R, T, N]`` in the record (set False for huge N).
    device : torch.device or str, optional
        Where the run happens (default CPU; e.g. ``"cuda"``): models, per-client state,
        masks, local training and the exact metrics (:mod:`fedtheory.device`). On the CPU,
        problems with a fused kernel use it (``fused=False`` steps with batched torch
        operations instead); elsewhere local steps are batched torch operations, in the
        problem's ``compute_dtype``. Randomness is drawn on the device: same seed and
        device, same numbers; across devices, the same law.
    max_memory : int or str, optional
        Memory cap of the run in bytes (or ``"8G"``); default: the environment variable
        ``FEDTHEORY_MAX_MEMORY``, else the available memory. What the run keeps is
        estimated before its first round (:mod:`fedtheory.sim.footprint`) and a run over the
        cap raises a ParameterError naming ``keep_masks``/``eval_every``.

    Raises
    ------
    DivergenceError
        After the first round whose model, per-client state or metric is NaN or inf
        (:mod:`fedtheory.sim.divergence`), naming the algorithm with its aggregator, the
        round, the replicate and the quantity; ``err.partial`` is the record of the rounds
        before it.

    Examples
    --------
    >>> from fedtheory.problems import QuadraticProblem
    >>> from fedtheory.availability import AlternatingBlocks
    >>> from fedtheory.sim import FedAvg, AverageParticipating
    >>> rec = simulate(QuadraticProblem.example1(0.0, 1.0), AlternatingBlocks(3, 1),
    ...                FedAvg(AverageParticipating(), lr=0.1), rounds=8)
    >>> rec.iterates.shape
    (1, 9, 1)
    """
    owner = "simulate"
    check_instance(problem, FederatedProblem, "problem", owner)
    check_instance(availability, AvailabilityProcess, "availability", owner)
    check_instance(algorithm, Algorithm, "algorithm", owner)
    rounds = check_size(rounds, "rounds", owner)
    replicates = check_size(replicates, "replicates", owner)
    seed = check_seed(seed, owner)
    eval_every = check_int(eval_every, "eval_every", owner, low=1)
    keep_masks = check_bool(keep_masks, "keep_masks", owner)
    device = check_device(device, "device", owner)
    n = problem.num_clients
    if availability.num_clients != n:
        raise ParameterError(
            f"The 'availability' parameter of {owner} must have N={n} "
            f"clients like the problem. Got {availability.num_clients} instead."
        )
    p_biased = None
    if biased_weights is not None:
        p_biased = check_simplex(biased_weights, "biased_weights", owner, size=n)
    start = (
        np.zeros(problem.dim) if w0 is None else check_array(w0, "w0", owner, shape=(problem.dim,))
    )
    w0_all = torch.from_numpy(start).to(device).expand(replicates, -1).clone()
    state = algorithm.init(problem, w0_all)
    footprint.check(
        footprint.estimate(
            replicates=replicates,
            rounds=rounds,
            num_clients=n,
            dim=problem.dim,
            eval_every=eval_every,
            keep_masks=keep_masks,
            state=state,
            chunk_elements=CHUNK_ELEMENTS,
        ),
        max_memory,
        owner,
    )
    iterates = torch.empty(replicates, rounds + 1, problem.dim, dtype=torch.float64, device=device)
    iterates[:, 0] = state.w
    masks = torch.empty(replicates, rounds, n, dtype=torch.bool) if keep_masks else None
    available = torch.empty(replicates, rounds, dtype=torch.int64)
    participants = torch.empty(replicates, rounds, dtype=torch.int64)
    weight_sum = None
    label = algorithm_label(algorithm)
    config = {
        "problem": repr(problem),
        "availability": repr(availability),
        "algorithm": repr(algorithm),
        "rounds": rounds,
        "replicates": replicates,
        "seed": seed,
        "w0": start.tolist(),
        "biased_weights": None if p_biased is None else p_biased.tolist(),
        "eval_every": eval_every,
        "device": str(device),
    }

    def record(done: int) -> RunRecord:
        """The record of the first ``done`` rounds."""
        it = iterates[:, : done + 1].cpu().numpy()
        eval_rounds = np.unique(np.append(np.arange(0, done + 1, eval_every), done))
        effective = None
        if weight_sum is not None:
            effective = weight_sum / weight_sum.sum(-1, keepdim=True).clamp_min(1e-300)
            effective = effective.cpu().numpy()
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values are reported
            metrics = evaluate_metrics(
                problem, it[:, eval_rounds], biased_weights=p_biased, device=device
            )
        return RunRecord(
            it,
            None if masks is None else masks[:, :done].numpy(),
            metrics,
            {**config, "rounds": done},
            eval_rounds=eval_rounds,
            participants=participants[:, :done].numpy(),
            available=available[:, :done].numpy(),
            effective_weights=effective,
        )

    chunk = max(1, min(rounds, CHUNK_ELEMENTS // (replicates * n)))
    kernel = getattr(problem, "fused", False) and device.type == "cpu"
    with fused.owns_the_cores() if kernel else contextlib.nullcontext():
        for t0 in range(0, rounds, chunk):
            mask = availability.sample(
                min(chunk, rounds - t0), replicates=replicates, seed=seed, start=t0, device=device
            )  # [R, chunk, N] on the device; the record keeps CPU copies
            if masks is not None:
                masks[:, t0 : t0 + mask.shape[1]] = mask.cpu()
            available[:, t0 : t0 + mask.shape[1]] = mask.sum(-1).cpu()
            for t in range(t0, t0 + mask.shape[1]):
                gen = rng.torch_generator(seed, t, rng.GRADIENT_NOISE, device)
                state = algorithm.step(problem, state, mask[:, t - t0], t, gen)
                bad = non_finite_state(state, replicates)
                if bad is not None:
                    finished_record(label, record, t, (t, bad.replicate, bad.quantity))
                iterates[:, t + 1] = state.w
                worked = getattr(state, "participants", None)
                participants[:, t] = (mask[:, t - t0] if worked is None else worked).sum(-1).cpu()
                q = getattr(state, "weights", None)
                if q is not None:
                    weight_sum = q if weight_sum is None else weight_sum + q
    return finished_record(label, record, rounds)


def finished_record(
    label: str,
    record: Callable[[int], RunRecord],
    done: int,
    failure: tuple[int, int, str] | None = None,
) -> RunRecord:
    """``record(done)`` if its metrics are finite and no ``failure`` (round, replicate,
    quantity) was found; else raise :class:`~fedtheory.errors.DivergenceError` for the
    earliest non-finite quantity, with the record of the rounds before it as ``partial``.

    A non-finite metric of :math:`w_k` is a failure of round :math:`k-1`."""
    partial: RunRecord | None = None
    while done >= 0:
        partial = record(done)
        bad = non_finite_metric(partial.metrics)
        if bad is None:
            break
        k = int(partial.eval_rounds[bad.index])
        failure = (k - 1, bad.replicate, f"the metric '{bad.metric}'")
        done, partial = k - 1, None
    if failure is not None:
        raise DivergenceError(label, *failure, partial=partial)
    return partial
