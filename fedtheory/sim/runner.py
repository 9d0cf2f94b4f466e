r"""``simulate`` wires a problem, an availability process and an algorithm together.

It only orchestrates: the availability mask ``[R, T, N]`` is sampled once, each round
calls ``algorithm.step`` on all replicates at once, and the record gets the iterates and
the target-objective gap :math:`F(w_t)-F^*`.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory import rng
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.errors import DivergenceError, ParameterError
from fedtheory.params import check_array, check_int, check_seed
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import Algorithm
from fedtheory.sim.record import RunRecord


def simulate(
    problem: FederatedProblem,
    availability: AvailabilityProcess,
    algorithm: Algorithm,
    *,
    rounds: int,
    replicates: int = 1,
    seed: int = 0,
    w0=None,
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
    rounds = check_int(rounds, "rounds", owner, low=1)
    replicates = check_int(replicates, "replicates", owner, low=1)
    seed = check_seed(seed, owner)
    if availability.num_clients != problem.num_clients:
        raise ParameterError(
            f"The 'availability' parameter of {owner} must have N={problem.num_clients} "
            f"clients like the problem. Got {availability.num_clients} instead."
        )
    start = (
        np.zeros(problem.dim) if w0 is None else check_array(w0, "w0", owner, shape=(problem.dim,))
    )
    mask = availability.sample(rounds, replicates=replicates, seed=seed)  # [R, T, N]
    state = algorithm.init(problem, torch.from_numpy(start).expand(replicates, -1).clone())
    iterates = torch.empty(replicates, rounds + 1, problem.dim, dtype=torch.float64)
    iterates[:, 0] = state.w
    name = getattr(algorithm, "name", type(algorithm).__name__)
    for t in range(rounds):
        gen = rng.torch_generator(seed, t, rng.GRADIENT_NOISE)
        state = algorithm.step(problem, state, mask[:, t], t, gen)
        bad = ~torch.isfinite(state.w).all(dim=-1)
        if bad.any():
            r = int(bad.nonzero()[0, 0])
            raise DivergenceError(
                f"{name} diverged in round {t} of replicate {r}: the model is not finite."
            )
        iterates[:, t + 1] = state.w
    it = iterates.numpy()
    _, f_star = problem.optimum()
    config = {
        "problem": repr(problem),
        "availability": repr(availability),
        "algorithm": repr(algorithm),
        "rounds": rounds,
        "replicates": replicates,
        "seed": seed,
        "w0": start.tolist(),
    }
    return RunRecord(it, mask.numpy(), {"gap": problem.loss(it) - f_star}, config)
