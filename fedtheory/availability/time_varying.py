r"""Time-varying participation with ratio :math:`P` (MimiC, Sun et al., Sec. 7, pattern 3).

Every round each client draws a weight :math:`w^t_i\sim\mathcal U(w_{\rm low},w_{\rm high})`
(MimiC's code: :math:`\mathcal U(0.1,1)`), and :math:`m=\lfloor NP\rfloor` clients are
sampled without replacement:

* ``sampler="successive"``: one at a time with probability proportional to the remaining
  weights, as the authors' ``np.random.choice(N, m, replace=False, p=w)``; the inclusion
  probabilities given :math:`w^t` are **not** proportional to :math:`w^t`;
* ``sampler="exact"``: inclusion probabilities given :math:`w^t` exactly
  :math:`\min(1,c\,w^t_i)` with :math:`\sum_i=m` (systematic sampling, see
  :mod:`fedtheory.availability.sampling`).

Exactly :math:`m` clients are active per round. Since the weights are i.i.d. across
clients, both samplers have the same per-round marginal :math:`m/N` for every client.
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.availability.base import BUDGETED, AvailabilityProcess
from fedtheory.availability.sampling import (
    capped_inclusion_probabilities,
    successive_sample,
    systematic_sample,
)
from fedtheory.budget import check_bytes, check_seconds, seconds
from fedtheory.constraints import Interval, Option, Real, declare
from fedtheory.errors import ParameterError

SAMPLERS = ("successive", "exact")


class TimeVaryingParticipation(AvailabilityProcess):
    r"""MimiC's pattern 3: :math:`\lfloor NP\rfloor` clients per round, drawn with fresh
    random weights.

    Parameters
    ----------
    num_clients : int
        :math:`N`.
    ratio : float
        Participation ratio :math:`P\in(0,1]` with :math:`\lfloor NP\rfloor\ge1`.
    sampler : {"successive", "exact"}
        Successive weighted sampling (authors' code) or exact inclusion probabilities.
    weight_range : (float, float)
        :math:`(w_{\rm low},w_{\rm high})`, with :math:`0<w_{\rm low}\le w_{\rm high}`.

    Examples
    --------
    >>> proc = TimeVaryingParticipation(10, 0.3, sampler="exact")
    >>> proc.sample(5, seed=0)[0].sum(dim=1).tolist()
    [3, 3, 3, 3, 3]
    """

    @declare(
        "num_clients",
        ratio=Real(0.0, 1.0, low_open=True),
        sampler=Option(*SAMPLERS),
        weight_range=Interval(0.0, low_open=True),
    )
    def __init__(
        self,
        num_clients: int,
        ratio: float,
        *,
        sampler: str = "successive",
        weight_range: tuple[float, float] = (0.1, 1.0),
    ) -> None:
        owner = "TimeVaryingParticipation"
        if ratio < 1.0 / num_clients:  # at least one client per round
            raise ParameterError(
                f"The 'ratio' parameter of {owner} must be in [1/N, 1] = [{1 / num_clients:g}, "
                f"1] (at least one client per round). Got {ratio!r} instead."
            )
        self.num_clients, self.ratio, self.sampler = num_clients, ratio, sampler
        self.low, self.high = weight_range
        self.m = int(self.num_clients * self.ratio)

    @property
    def marginals(self) -> np.ndarray:
        return np.full(self.num_clients, self.m / self.num_clients)

    def _weights(self, generator: np.random.Generator, replicates: int) -> np.ndarray:
        return generator.uniform(self.low, self.high, (replicates, self.num_clients))

    @declare(**BUDGETED)
    def inclusion_probabilities(
        self,
        rounds: int,
        *,
        replicates: int = 1,
        seed: int = 0,
        start: int = 0,
        max_seconds: float | None = None,
    ) -> np.ndarray:
        r"""Conditional inclusion probabilities ``[R, T, N]`` of the exact sampler given each
        round's weights, :math:`\min(1,c\,w^t_i)` (the weights of the rounds ``sample``
        draws with the same arguments)."""
        owner, n = "TimeVaryingParticipation.inclusion_probabilities", self.num_clients
        what = f"an array [{replicates}, {rounds}, {n}]"
        # the result, and a round's weights [R, N] with the sampler's temporaries of their
        # size (sorted copies, cumulative sums, the capped probabilities: about 10 of them)
        check_bytes(8 * replicates * n * (rounds + 10), owner, what=what,
                    fixes="fewer rounds or replicates")  # fmt: skip
        check_seconds(seconds(rounds=rounds, cells=replicates * rounds * n), owner,
                      what=f"{rounds} rounds", fixes="fewer rounds",
                      max_seconds=max_seconds)  # fmt: skip
        out = np.empty((replicates, rounds, self.num_clients))
        for i, t in enumerate(range(start, start + rounds)):
            w = self._weights(rng.numpy_rng(seed, t, rng.AVAILABILITY), replicates)
            out[:, i] = capped_inclusion_probabilities(w, self.m)
        return out

    def _sample(self, rounds, replicates, seed, start):
        out = np.empty((replicates, rounds, self.num_clients), dtype=bool)
        for i, t in enumerate(range(start, start + rounds)):
            gen = rng.numpy_rng(seed, t, rng.AVAILABILITY)
            w = self._weights(gen, replicates)  # [R, N]
            if self.sampler == "successive":
                out[:, i] = successive_sample(w, self.m, gen)
            else:
                p = capped_inclusion_probabilities(w, self.m)  # [R, N]
                out[:, i] = systematic_sample(p, self.m, gen)
        return out

    def __repr__(self) -> str:
        return f"TimeVaryingParticipation(N={self.num_clients}, m={self.m}, {self.sampler})"
