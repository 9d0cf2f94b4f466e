r"""FedAvg whose server samples the round's clients among the available ones
(:mod:`fedtheory.sim.samplers`: Li et al., ICLR 2020, §3.3 Schemes I and II, uniform,
Bernoulli).

Round :math:`t`: the availability process gives :math:`A_t`; the sampler draws
:math:`S_t\subseteq A_t` and weights :math:`q_{t,k}` from round :math:`t`'s SELECTION
generator (independent of the gradient noise); the clients of :math:`S_t` run :math:`E`
local steps from :math:`w_t` and the server applies

.. math:: w_{t+1}=\mathrm{Proj}_W\Big(w_t+\eta_s\sum_{k\in S_t}q_{t,k}\Delta_t^k\Big),

which for Scheme I is Li et al.'s :math:`w_{t+1}=\frac1K\sum_{j=1}^Kw^{(j)}` (a client
drawn twice counts twice) and for Scheme II :math:`w_{t+1}=w_t+\sum_{k\in S_t}p_k\frac NK
(w^k-w_t)` when every client is available (:math:`\eta_s=1`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory import rng
from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import (
    Array,
    BoolArray,
    Exemplified,
    Having,
    Instance,
    Option,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.optimizer import TrainingState
from fedtheory.sim.reference import local_step, reference_loop, server_step
from fedtheory.sim.samplers import (
    Sampler,
    SampleUniform,
    SampleWithoutReplacement,
    SampleWithReplacement,
)

__all__ = ["SampledFedAvg", "SampledFedAvgState", "run_sampled"]


class SampledFedAvgState(NamedTuple):
    w: torch.Tensor  # [R, d]
    participants: torch.Tensor | None = None  # [R, N] bool, sampled in the last round
    weights: torch.Tensor | None = None  # [R, N] float64, q_{t,k} applied in the last round
    optimizer: TrainingState | None = None  # momentum buffers (LocalTraining.training)


SAMPLER = Exemplified(
    Having("uniforms", "draw", "inclusion", "expected_weights"), lambda args: SampleUniform(1)
)
"""A sampler of :mod:`fedtheory.sim.samplers`."""


@declare("seed", **{**LOCAL_TRAINING, "full_first_round": Option(False)}, sampler=SAMPLER)
@dataclass(frozen=True)
class SampledFedAvg(LocalTraining):
    r"""FedAvg with the server's ``sampler`` (:mod:`fedtheory.sim.samplers`) drawing among
    the available clients; round ``t``'s draw reads ``rng.numpy_rng(seed, t, SELECTION)``
    (``full_first_round`` is False: the sampler draws round 0's clients too).

    Examples
    --------
    >>> from fedtheory.sim.samplers import SampleWithReplacement
    >>> SampledFedAvg(SampleWithReplacement(2, [0.5, 0.5]), local_steps=3).name
    'fedavg[scheme-I]'
    """

    sampler: Sampler
    seed: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.name:
            object.__setattr__(self, "name", f"fedavg[{self.sampler.name}]")

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> SampledFedAvgState:
        p = getattr(self.sampler, "p", None)
        if p is not None and p.size != problem.num_clients:
            raise ParameterError(
                f"The 'sampler' parameter of SampledFedAvg must have one weight p_k per client "
                f"of the problem (N={problem.num_clients}). Got {p.size} weights instead."
            )
        return SampledFedAvgState(w0, optimizer=self.training_init(problem, w0))

    @declare(**round_arguments(SampledFedAvgState))
    def step(
        self,
        problem: FederatedProblem,
        state: SampledFedAvgState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> SampledFedAvgState:
        """Round ``t``: sample among ``mask [R, N]`` (on the CPU, NumPy randomness), then the
        sampled clients train and the server averages with the sampler's weights."""
        w = state.w
        available = mask.cpu().numpy()
        gen = rng.numpy_rng(self.seed, t, rng.SELECTION)
        u = self.sampler.uniforms(*available.shape, gen)
        sample = self.sampler.draw(available, u)
        selected = torch.from_numpy(sample.selected).to(w.device)
        q = torch.from_numpy(sample.weights).to(w.device)
        w_next, opt = self.trained_round(problem, w, q, selected, t, generator, state.optimizer)
        return SampledFedAvgState(w_next, selected, q, opt)


# --- the plain loop (one replicate, one client at a time) --------------------
def _plain_sample(sampler, available: list[bool], u: np.ndarray) -> dict[int, float]:
    """Client -> weight of one replicate's round, written as the samplers are stated."""
    n_clients = len(available)
    avail = [i for i in range(n_clients) if available[i]]
    weights: dict[int, float] = {}
    if isinstance(sampler, SampleWithReplacement):
        total = 0.0
        for i in range(n_clients):
            total += sampler.p[i] * available[i]
        if total == 0:
            return weights
        positive = [i for i in avail if sampler.p[i] > 0]
        for uj in u:  # one draw per number: the first client whose cumulative mass exceeds u p(A)
            acc, chosen = 0.0, positive[-1]
            for i in range(n_clients):
                acc += sampler.p[i] * available[i]
                if uj * total < acc:
                    chosen = i
                    break
            weights[chosen] = weights.get(chosen, 0.0) + 1.0 / sampler.k
        return weights
    if isinstance(sampler, SampleWithoutReplacement | SampleUniform):
        m = min(sampler.k, len(avail))
        for i in sorted(avail, key=lambda i: u[i])[:m]:
            if isinstance(sampler, SampleUniform):
                weights[i] = 1.0 / m
            else:
                weights[i] = sampler.p[i] * (len(avail) / m)
        return weights
    for i in avail:  # SampleBernoulli
        if u[i] < sampler.pi[i]:
            weights[i] = sampler.p[i] / sampler.pi[i]
    return weights


def _plain(problem, alg: SampledFedAvg, mask, w, gen, *, replicate: int, replicates: int):
    """Iterates ``[T+1]`` of replicate ``replicate`` of ``replicates``: the same uniform
    numbers as the vectorised sampler (row ``replicate``), the selection written out."""
    out = [w]
    n = mask.shape[-1]
    for t, m in enumerate(mask):
        u = alg.sampler.uniforms(replicates, n, rng.numpy_rng(alg.seed, t, rng.SELECTION))
        v = np.zeros_like(w)
        for k, q in sorted(_plain_sample(alg.sampler, list(m), u[replicate]).items()):
            v += q * local_step(problem, alg, w, k, t, gen(t), replicate=replicate)
        w = server_step(alg, w, v, t, replicate=replicate)
        out.append(w)
    return out


@reference_loop(SampledFedAvg)
def _reference(problem, alg: SampledFedAvg, mask, w, gen):
    """One replicate (of one): :func:`run_sampled`'s loop."""
    return _plain(problem, alg, mask, w, gen, replicate=0, replicates=1)


@declare(
    problem=Instance(FederatedProblem),
    algorithm=Instance(SampledFedAvg),
    mask=BoolArray(shape=(None, None, "problem.num_clients")),
    w0=Array(shape=("problem.dim",)),
    finite_result=True,
)
def run_sampled(problem: FederatedProblem, algorithm: SampledFedAvg, mask, w0) -> np.ndarray:
    """Iterates ``[R, T+1, d]`` of ``algorithm`` on the availability ``mask [R, T, N]``
    from ``w0 [d]``, one replicate and one client at a time (deterministic gradients: the
    vectorised path draws the noise of all participants at once)."""
    reps, rounds, n = mask.shape
    work = reps * rounds * n * algorithm.local_steps
    check_seconds(seconds(rounds=work, cells=work * len(w0)), "run_sampled",
                  what=f"{work} client steps, one at a time",
                  fixes="fewer rounds or replicates")  # fmt: skip
    return np.array(
        [
            _plain(
                problem,
                algorithm,
                mask[r],
                np.array(w0, float),
                lambda t: None,
                replicate=r,
                replicates=reps,
            )  # fmt: skip
            for r in range(reps)
        ]
    )
