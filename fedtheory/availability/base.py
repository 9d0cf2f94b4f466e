r"""Base class of availability processes.

A process samples a boolean mask ``[R, T, N]`` (replicates, rounds, clients) where
``mask[r, t, k]`` says that client ``k`` is available in round ``start + t`` of replicate
``r``. The randomness of round ``t`` is a pure function of ``(seed, t)``, so sampling
from ``start = t0`` gives exactly rows ``t0:`` of a sample from ``start = 0``.
``marginals`` are the long-run availability probabilities :math:`\pi_k` the theory uses.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import torch

from fedtheory import rng
from fedtheory.params import check_int, check_seed, check_size


def population_rng(seed: int) -> np.random.Generator:
    """Generator for a population's fixed parameters (periods, correlations, ...), drawn once
    when a process is built; independent of the per-round sampling streams."""
    return rng.numpy_rng(check_seed(seed, "population_rng"), 0, rng.POPULATION)


class AvailabilityProcess(ABC):
    """Abstract availability process over ``num_clients`` clients."""

    num_clients: int

    @property
    @abstractmethod
    def marginals(self) -> np.ndarray:
        r"""Long-run probability :math:`\pi_k` that client ``k`` is available, ``[N]``."""

    @abstractmethod
    def _sample(self, rounds: int, replicates: int, seed: int, start: int) -> np.ndarray:
        """Boolean array ``[R, T, N]`` for rounds ``start .. start+rounds-1``."""

    def sample(
        self, rounds: int, *, replicates: int = 1, seed: int = 0, start: int = 0
    ) -> torch.Tensor:
        """Sample the availability mask ``[replicates, rounds, num_clients]`` (torch.bool)."""
        args = self._check_window(f"{type(self).__name__}.sample", rounds, replicates, seed, start)
        return torch.from_numpy(self._sample(*args))

    @staticmethod
    def _check_window(
        owner: str, rounds: int, replicates: int, seed: int, start: int
    ) -> tuple[int, int, int, int]:
        """The checked ``(rounds, replicates, seed, start)`` of a call to ``owner``."""
        rounds = check_size(rounds, "rounds", owner)
        replicates = check_int(replicates, "replicates", owner, low=1)
        seed = check_seed(seed, owner)
        start = check_int(start, "start", owner, low=0)
        return rounds, replicates, seed, start

    def _draw_below(self, prob: np.ndarray, replicates: int, seed: int, start: int) -> np.ndarray:
        """Independent draws ``[R, T, N]``: client ``k`` is available in round ``start + i``
        iff its uniform from that round's ``AVAILABILITY`` stream is below ``prob[i, k]``
        (``prob`` ``[T, N]``)."""
        u = np.empty((replicates, self.num_clients))  # [R, N] reused buffer
        out = np.empty((replicates, prob.shape[0], self.num_clients), dtype=bool)
        for i in range(prob.shape[0]):
            rng.numpy_rng(seed, start + i, rng.AVAILABILITY).random(out=u)
            np.less(u, prob[i], out=out[:, i])
        return out
