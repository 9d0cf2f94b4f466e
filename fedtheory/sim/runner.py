r"""``simulate`` wires a problem, an availability process and an algorithm together.

It only orchestrates: the availability mask ``[R, T, N]`` is sampled in chunks of rounds
(so that ``10^5`` clients fit in memory), each round calls ``algorithm.step`` on all
replicates at once, and the record gets the iterates, the participation counts, the
empirical effective weights and the metrics (:math:`F(w_t)-F^*`, and when the problem or
the caller offers them :math:`F_B(w_t)-F_B^*`, :math:`\|\nabla F(w_t)\|^2`, accuracy).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping

import numpy as np
import torch

from fedtheory import rng, threads
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.budget import check_bytes, check_seconds, seconds
from fedtheory.constraints import (
    Array,
    Bool,
    Function,
    Instance,
    Integer,
    MappingOf,
    Probabilities,
    declare,
    trusted,
)
from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.problems import fused
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _capture as capture
from fedtheory.sim import _gather as gather
from fedtheory.sim import footprint
from fedtheory.sim.algorithm import Algorithm, AlgorithmState
from fedtheory.sim.divergence import (
    algorithm_label,
    finite_state,
    non_finite_metric,
    non_finite_state,
)
from fedtheory.sim.record import RunRecord

__all__ = ["CHUNK_ELEMENTS", "Recorder", "evaluate_metrics", "simulate"]
# finished_record: the rounds' end (the divergence report of a run and of a step)

CHUNK_ELEMENTS = 1 << 24
"""Availability is sampled (and exact gradients evaluated) in chunks of about this many
cells, so that memory stays bounded for large N."""


@declare(
    "device",
    problem=Instance(FederatedProblem),
    w=Array(shape=(..., "problem.dim")),
    biased_weights=Probabilities(size="problem.num_clients", none=True),
)
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
    dev = device
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


Recorder = Callable[[AlgorithmState, torch.Tensor], torch.Tensor]
"""What to record each round: ``recorder(state, mask) -> [R, ...]`` of the state after round
``t`` and that round's availability ``mask [R, N]`` (e.g. ``lambda s, m: s.x`` for FedAWE's
client models ``[R, N, d]``, ``lambda s, m: s.echo`` for its echo factors)."""


@declare(
    "rounds",
    "replicates",
    "seed",
    "device",
    "max_seconds",
    problem=Instance(FederatedProblem),
    availability=Instance(AvailabilityProcess),
    algorithm=Instance(Algorithm),
    w0=Array(shape=("problem.dim",), none=True),
    biased_weights=Probabilities(size="problem.num_clients", none=True),
    eval_every=Integer(1),
    keep_masks=Bool(),
    static_shapes=Bool(),
    record=MappingOf(Function(), plural="callables recorder(state, mask) -> tensor [R, ...]"),
)
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
    record: Mapping[str, Recorder] | None = None,
    max_memory: int | str | None = None,
    max_seconds: float | None = None,
    device: torch.device | str | None = None,
    static_shapes: bool = False,
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
    record : dict of str to Recorder, optional
        What else to record after every round: ``name -> recorder(state, mask) -> [R, ...]``
        (:data:`Recorder`); the record's ``recorded[name]`` is ``[R, T, ...]`` on the CPU
        (entry ``t``: after round ``t``), counted in the memory budget.
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
    static_shapes : bool
        Rounds with static shapes and no host synchronisation in the steady state (meant
        for GPUs; docs/guide/simulator.md): the participants are gathered to a capacity
        fixed by the round's availability count (padding rows change no number), the
        finiteness checks are read back once per chunk of rounds, and the local steps are
        batched torch operations (never the fused CPU kernel). Every algorithm's round is
        static (FedAvg with any aggregator, MIFA, FedVARP, FedLaAvg, MimiC, FedAWE, CA-Fed,
        the selection algorithms, the optimiser of ``LocalTraining.training``): padding
        rows write nothing into per-client state. Same law and same per-``(seed, t)``
        determinism as the default; the same numbers when the problem draws no random
        numbers or every pair participates. Still read back each round, by design: CA-Fed's
        weights (the greedy exclusion of its Algorithm 1 runs a data-dependent number of
        passes, its availability estimates are NumPy), the selectors' policies (E3CS,
        Pow-d: NumPy generators and state on the host) and a recorder's value
        (``record``). On CUDA, the rounds of
        FedAvg, MIFA, FedVARP and MimiC with constant step sizes and plain SGD are replayed
        from a CUDA graph recorded once per capacity (the generator reseeded per round: the
        same numbers).
    max_seconds : float, optional
        Time cap of the run in seconds; default: the environment variable
        ``FEDTHEORY_MAX_SECONDS``, else 10 minutes. A run whose optimistic estimate
        (rounds x replicates x clients x dimension x local steps, :mod:`fedtheory.budget`)
        is above it is refused before its first round, with the estimate.

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
    ...                FedAvg(AverageParticipating(), lr=0.1), rounds=8,
    ...                record={"worked": lambda state, mask: state.participants})
    >>> rec.iterates.shape, rec.recorded["worked"].shape
    ((1, 9, 1), (1, 8, 2))
    """
    run, state = _setup(problem, availability, algorithm, rounds=rounds, replicates=replicates,
                        seed=seed, w0=w0, biased_weights=biased_weights, eval_every=eval_every,
                        keep_masks=keep_masks, record=record, max_memory=max_memory,
                        max_seconds=max_seconds, device=device,
                        static_shapes=static_shapes)  # fmt: skip
    kernel = getattr(problem, "fused", False) and run.device.type == "cpu"
    with fused.owns_the_cores() if kernel else contextlib.nullcontext(), trusted():
        _loop(run, state, problem, availability, algorithm)  # arguments checked above
    return finished_record(run.label, run, rounds)


def _setup(problem, availability, algorithm, *, rounds, replicates, seed, w0, biased_weights,
           eval_every, keep_masks, record, max_memory, max_seconds,
           device, static_shapes) -> tuple[_Run, AlgorithmState]:  # fmt: skip
    """Check the arguments, build the initial state and the run's buffers."""
    owner = "simulate"  # the arguments are declared (simulate); their relations checked here
    recorders = record
    n = problem.num_clients
    if availability.num_clients != n:
        raise ParameterError(
            f"The 'availability' parameter of {owner} must have N={n} "
            f"clients like the problem. Got {availability.num_clients} instead."
        )
    check_bytes(8 * replicates * (problem.dim + n), owner,
                what=f"{replicates} initial models and a mask row of {n} clients",
                fixes="fewer replicates")  # fmt: skip
    p_biased = biased_weights
    start = np.zeros(problem.dim) if w0 is None else w0
    state = algorithm.init(
        problem, torch.from_numpy(start).to(device).expand(replicates, -1).clone()
    )
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
    steps = getattr(algorithm, "local_steps", 1)  # local steps of every client in a round
    check_seconds(seconds(rounds=rounds * (1 + steps), cells=replicates * rounds * n * problem.dim
                          * steps), owner, what=f"{rounds} rounds x {replicates} replicates x "
                  f"{n} clients x {problem.dim} dimensions x {steps} local steps",
                  fixes="fewer rounds, replicates or clients",
                  max_seconds=max_seconds)  # fmt: skip
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
        "static_shapes": static_shapes,
    }
    run = _Run(problem, state, config, algorithm_label(algorithm), device, p_biased, recorders,
               max_memory, keep_masks, static_shapes)  # fmt: skip
    run.iterates[:, 0] = state.w
    return run, state


def _loop(run: _Run, state, problem, availability, algorithm) -> None:
    """The rounds: masks sampled in chunks, one ``algorithm.step`` per round on every
    replicate with round ``t``'s generator, the finiteness check, then the record."""
    seed, (replicates, rounds) = run.config["seed"], run.participants.shape
    chunk = max(1, min(rounds, CHUNK_ELEMENTS // (replicates * problem.num_clients)))
    for t0 in range(0, rounds, chunk):
        mask = availability.sample(
            min(chunk, rounds - t0), replicates=replicates, seed=seed, start=t0, device=run.device
        )  # [R, chunk, N] on the device; the record keeps CPU copies
        run.add_masks(t0, mask)
        if run.static:
            state = _static_rounds(run, state, problem, algorithm, mask, t0)
            continue
        for t in range(t0, t0 + mask.shape[1]):
            state = _round(run, state, problem, algorithm, mask[:, t - t0], t)


def _round(run: _Run, state, problem, algorithm, mask: torch.Tensor, t: int, checked=True):
    """Round ``t`` with availability ``mask [R, N]``, recorded; ``checked``: its finiteness
    check reads the state back (a non-finite state raises the DivergenceError)."""
    gen = rng.torch_generator(run.config["seed"], t, rng.GRADIENT_NOISE, run.device)
    state = algorithm.step(problem, state, mask, t, gen)
    bad = non_finite_state(state, run.config["replicates"]) if checked else None
    if bad is not None:
        finished_record(run.label, run, t, (t, bad.replicate, bad.quantity))
    run.add(t, state, mask)
    return state


def _static_rounds(run: _Run, state, problem, algorithm, mask: torch.Tensor, t0: int):
    """The rounds of a chunk ``mask [R, T, N]`` with static shapes (:mod:`fedtheory.sim.
    _gather`): each round's capacity from its availability count (on the host already;
    at most the algorithm's ``_most_workers``, e.g. FedLaAvg's :math:`K` per replicate),
    its finiteness and overflow flags kept on the device and read back once for the chunk.
    If a round overflowed or diverged, the chunk is rerun from its first state, with
    every pair gathered in the rounds that overflowed and the checks of :func:`_round`
    (the same numbers, so the same DivergenceError as a run checked every round)."""
    replicates, rounds, n = mask.shape
    counts = run.available[:, t0 : t0 + rounds].sum(0).tolist()  # [T] on the host
    most = getattr(algorithm, "_most_workers", lambda r: None)(replicates)  # e.g. FedLaAvg's K
    if most is not None:  # (a forced full first round gathers every pair whatever its size)
        counts = [min(c, most) for c in counts]
    sizes = [gather.capacity(c, replicates * n) for c in counts]
    replaying = capture.replayable(algorithm, run.device, t0 + 1)
    start, weight_sum = capture.copied(state) if replaying else state, run.weight_sum
    overflow = torch.zeros(rounds, dtype=torch.bool, device=run.device)
    finite = []
    for j in range(rounds):
        replay = _replayed(run, state, problem, algorithm, mask[:, j], sizes[j], t0 + j)
        if replay is None:
            with gather.static(sizes[j], overflow[j]):
                state = _round(run, state, problem, algorithm, mask[:, j], t0 + j, checked=False)
        else:
            seed = rng.torch_generator(run.config["seed"], t0 + j, rng.GRADIENT_NOISE, run.device)
            state, flag = replay(state, mask[:, j], seed.initial_seed())
            overflow[j].logical_or_(flag)
            run.add(t0 + j, state, mask[:, j])
        finite.append(finite_state(state))
    flags = torch.stack([overflow.any(), ~torch.stack(finite).all()]).cpu()  # one read-back
    if not bool(flags.any()):
        return state
    state, run.weight_sum = start, weight_sum
    full = overflow.cpu().tolist()
    for j in range(rounds):
        with gather.static(replicates * n if full[j] else sizes[j], overflow[j]):
            state = _round(run, state, problem, algorithm, mask[:, j], t0 + j)
    return state


def _replayed(run: _Run, state, problem, algorithm, mask, size: int, t: int):
    """The recorded round of capacity ``size`` (:mod:`fedtheory.sim._capture`), recorded
    now if new, or None where round ``t`` is run eagerly (not replayable, or a state whose
    structure differs from the recorded one)."""
    if not capture.replayable(algorithm, run.device, t):
        return None
    if size not in run.replays:
        gen = torch.Generator(device=run.device)
        step = capture.recorded_step(algorithm, problem, size, t, gen)
        run.replays[size] = capture.ReplayedRound(step, state, mask, gen)
    replay = run.replays[size]
    return replay if replay.fits(state) else None


def _worked(state, mask: torch.Tensor) -> torch.Tensor:
    """``[R, N]`` bool: the clients that did local work (``state.participants``; the
    available ones in a round where the algorithm leaves it unset)."""
    return mask if state.participants is None else state.participants


def _available(state, mask: torch.Tensor) -> torch.Tensor:
    """``[R, N]`` bool: the available clients (a state without ``participants``)."""
    return mask


def _applied(state, mask: torch.Tensor) -> torch.Tensor | None:
    """``[R, N]``: the aggregation weights :math:`q_{t,k}` applied in the round."""
    return state.weights


class _Run:
    """What a run keeps while it goes: iterates, masks and counts, the applied weights'
    running sum, the caller's recorded values; :meth:`record` builds the ``RunRecord``
    of the first rounds."""

    def __init__(self, problem, state, config, label, device, p_biased, recorders, max_memory,
                 keep_masks, static) -> None:  # fmt: skip
        reps, rounds, n = config["replicates"], config["rounds"], problem.num_clients
        self.problem, self.config, self.label, self.device = problem, config, label, device
        self.static = static
        self.replays: dict[int, capture.ReplayedRound] = {}  # capacity -> recorded round
        self.p_biased, self.recorders, self.max_memory = p_biased, recorders, max_memory
        self.iterates = torch.empty(reps, rounds + 1, problem.dim, dtype=torch.float64,
                                    device=device)  # fmt: skip
        self.masks = torch.empty(reps, rounds, n, dtype=torch.bool) if keep_masks else None
        self.available = torch.empty(reps, rounds, dtype=torch.int64)
        # counted where the rounds run in a static run (read back by record), else on the CPU
        self.participants = torch.empty(reps, rounds, dtype=torch.int64,
                                        device=device if static else None)  # fmt: skip
        self.weight_sum = None  # [R, N] sum_t q_{t,k}, for algorithms that apply weights
        self.recorded: dict[str, torch.Tensor] = {}  # name -> [R, T, ...] on the CPU
        # what the run record itself keeps, from the fields the state's type declares
        fields = getattr(type(state), "_fields", ())
        self.worked = _worked if "participants" in fields else _available
        self.applied = _applied if "weights" in fields else None

    def add_masks(self, t0: int, mask: torch.Tensor) -> None:
        """Keep the masks ``[R, chunk, N]`` of rounds ``t0..`` and their available counts."""
        if self.masks is not None:
            self.masks[:, t0 : t0 + mask.shape[1]] = mask.cpu()
        self.available[:, t0 : t0 + mask.shape[1]] = mask.sum(-1).cpu()

    def add(self, t: int, state, mask: torch.Tensor) -> None:
        """Record round ``t``: the model, who worked, the applied weights where the
        algorithm applies any, and every recorder's value."""
        self.iterates[:, t + 1] = state.w
        self.participants[:, t] = self.worked(state, mask).sum(-1)
        q = None if self.applied is None else self.applied(state, mask)
        if q is not None:
            self.weight_sum = q.clone() if self.weight_sum is None else self.weight_sum + q
        for name, recorder in self.recorders.items():
            value = recorder(state, mask)
            if name not in self.recorded:
                self.recorded[name] = self._buffer(name, value)
            self.recorded[name][:, t] = value.cpu()

    def _buffer(self, name: str, value: torch.Tensor) -> torch.Tensor:
        """A CPU buffer ``[R, T, ...]`` for the recorder ``name``, within the memory budget."""
        reps, rounds = self.participants.shape
        if not isinstance(value, torch.Tensor) or value.shape[:1] != (reps,):
            raise ParameterError(
                f"The 'record' parameter of simulate must map {name!r} to a recorder returning "
                f"a tensor [R={reps}, ...]. Got {type(value).__name__} "
                f"{tuple(getattr(value, 'shape', ()))} instead."
            )
        shape = (reps, rounds, *value.shape[1:])
        check_bytes(math.prod(shape) * value.element_size(), "simulate",
                    what=f"the recorded {name!r} {list(shape)}",
                    fixes="fewer rounds, replicates or recorded values",
                    max_memory=self.max_memory)  # fmt: skip
        return torch.empty(shape, dtype=value.dtype)

    def metrics(self, done: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The evaluation rounds ``[K]`` of the first ``done`` rounds and the metrics
        ``[R, K]`` there, NaN or inf where the run diverged (:func:`finished_record` reports
        them): the problem's declared metric methods run trusted, as in the rounds."""
        every = self.config["eval_every"]
        eval_rounds = np.unique(np.append(np.arange(0, done + 1, every), done))
        with np.errstate(over="ignore", invalid="ignore"), trusted():
            if self.static and hasattr(self.problem, "_exact_metric_sums"):
                return eval_rounds, _summed_metrics(
                    self.problem, self.iterates[:, eval_rounds], self.p_biased
                )
            points = self.iterates[:, eval_rounds].cpu().numpy()
            return eval_rounds, evaluate_metrics(
                self.problem, points, biased_weights=self.p_biased, device=self.device
            )

    def record(self, done: int, eval_rounds: np.ndarray, metrics: dict) -> RunRecord:
        """The record of the first ``done`` rounds, with their finite ``metrics``."""
        effective = None
        if self.weight_sum is not None:
            total = self.weight_sum.sum(-1, keepdim=True).clamp_min(1e-300)
            effective = (self.weight_sum / total).cpu().numpy()
        return RunRecord(
            self.iterates[:, : done + 1].cpu().numpy(),
            None if self.masks is None else self.masks[:, :done].numpy(),
            metrics,
            {**self.config, "rounds": done},
            eval_rounds=eval_rounds,
            participants=self.participants[:, :done].cpu().numpy(),
            available=self.available[:, :done].numpy(),
            effective_weights=effective,
            recorded={k: v[:, :done].numpy() for k, v in self.recorded.items()},
        )


def _summed_metrics(problem, points: torch.Tensor, biased_weights) -> dict[str, np.ndarray]:
    """:func:`evaluate_metrics` of the models ``points [..., d]`` where they are (the run's
    device): the per-client terms reduced there in one pass, read back once."""
    weights = [problem.alpha] + ([] if biased_weights is None else [biased_weights])
    sums = problem._exact_metric_sums(
        points.reshape(-1, points.shape[-1]), torch.from_numpy(np.stack(weights)).to(points.device)
    )
    sums = sums.cpu().numpy().reshape(*points.shape[:-1], -1)  # the one read-back
    out = {"gap": sums[..., 0] - problem.optimum()[1]}
    if biased_weights is not None:
        out["gap_B"] = sums[..., 1] - problem.optimum(biased_weights)[1]
    out["grad_sq"] = sums[..., len(weights)]
    if sums.shape[-1] > len(weights) + 1:
        out["accuracy"] = sums[..., -1]
    return out


def finished_record(
    label: str, run: _Run, done: int, failure: tuple[int, int, str] | None = None
) -> RunRecord:
    """The run's record of its first ``done`` rounds if their metrics are finite and no
    ``failure`` (round, replicate, quantity) was found; else raise
    :class:`~fedtheory.errors.DivergenceError` for the earliest non-finite quantity, with the
    record of the rounds before it as ``partial``.

    A non-finite metric of :math:`w_k` is a failure of round :math:`k-1`."""
    partial: RunRecord | None = None
    while done >= 0:
        eval_rounds, metrics = run.metrics(done)
        bad = non_finite_metric(metrics)
        if bad is None:
            partial = run.record(done, eval_rounds, metrics)
            break
        k = int(eval_rounds[bad.index])
        failure = (k - 1, bad.replicate, f"the metric '{bad.metric}'")
        done = k - 1
    if failure is not None:
        raise DivergenceError(label, *failure, partial=partial)
    return partial
