r"""Base class of availability processes.

A process samples a boolean mask ``[R, T, N]`` (replicates, rounds, clients) where
``mask[r, t, k]`` says that client ``k`` is available in round ``start + t`` of replicate
``r``. The randomness of round ``t`` is a pure function of ``(seed, t)``, so sampling
from ``start = t0`` gives exactly rows ``t0:`` of a sample from ``start = 0``.
``marginals`` are the long-run availability probabilities :math:`\pi_k` the theory uses.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod

import numpy as np
import torch

from fedtheory import rng
from fedtheory.budget import check_bytes, check_seconds, marginal_seconds, seconds
from fedtheory.constraints import VOCABULARY, Device, Integer, Size, declare, trusted


@declare("seed")
def population_rng(seed: int) -> np.random.Generator:
    """Generator for a population's fixed parameters (periods, correlations, ...), drawn once
    when a process is built; independent of the per-round sampling streams."""
    return rng.numpy_rng(seed, 0, rng.POPULATION)


WINDOW = dict(rounds=Size(), replicates=Size(), seed=Integer(0), start=Integer(0))
"""The declared window of a sample: rounds ``start .. start+rounds-1`` of ``replicates``
independent runs from ``seed``."""
BUDGETED = dict(**WINDOW, max_seconds=VOCABULARY["max_seconds"])
"""A window and the time cap of the call that draws it (:mod:`fedtheory.budget`)."""


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

    @declare(**BUDGETED, device=Device())
    def sample(
        self,
        rounds: int,
        *,
        replicates: int = 1,
        seed: int = 0,
        start: int = 0,
        device=None,
        max_seconds: float | None = None,
    ) -> torch.Tensor:
        """Sample the availability mask ``[replicates, rounds, num_clients]`` (torch.bool) on
        ``device`` (default CPU). Processes that can draw on a non-CPU device do it there
        (:class:`~fedtheory.availability.Bernoulli`: same law, other numbers than on the
        CPU); the others sample on the CPU and move the mask.

        The mask (one byte a cell), the per-round probabilities ``[T, N]`` and the uniforms
        ``[R, N]`` (8 bytes a value) are checked against the memory budget
        (``FEDTHEORY_MAX_MEMORY``, :mod:`fedtheory.budget`), and the rounds and cells against
        the time budget (``max_seconds``, else ``FEDTHEORY_MAX_SECONDS``), before anything
        is drawn."""
        owner = f"{type(self).__name__}.sample"
        args = rounds, replicates, seed, start
        r, t, n = replicates, rounds, self.num_clients
        check_bytes(self._sample_bytes(r, t, n), owner,
                    what=f"a mask [{r}, {t}, {n}] and its draws",
                    fixes="fewer rounds or replicates (sample a window with start=)")  # fmt: skip
        check_seconds(seconds(rounds=t, cells=r * t * n), owner,
                      what=f"{t} rounds of a mask [{r}, {t}, {n}]",
                      fixes="fewer rounds or replicates (sample a window with start=)",
                      max_seconds=max_seconds, units=t, unit="round",
                      probe=lambda: self._round_seconds(r, n))  # fmt: skip
        with trusted():  # the window was checked above: the per-round draws are not re-checked
            if device.type == "cpu":
                return torch.from_numpy(self._sample(*args))
            return self._sample_on(*args, device)

    def _sample_bytes(self, replicates: int, rounds: int, num_clients: int) -> int:
        """Peak bytes of :meth:`_sample` of a window ``[R, T, N]``: the mask (a byte a cell),
        the per-round probabilities ``[T, N]`` and the uniforms ``[R, N]`` (8 bytes a value;
        1.3 to 4.5 times the peak measured with ``tracemalloc``)."""
        r, t, n = replicates, rounds, num_clients
        return r * t * n + 8 * t * n + 16 * r * n

    def _round_seconds(self, replicates: int, num_clients: int) -> float:
        """Seconds a round of :meth:`_sample` takes on this machine now (a window of up to
        256 rounds and about ``2^18`` cells, drawn by a copy of the process: one caching its
        last window keeps its own cache)."""
        probe = copy.copy(self)
        rounds = max(1, min(256, (1 << 18) // (replicates * num_clients)))
        with trusted():
            return marginal_seconds(lambda t: probe._sample(t, replicates, 0, 0), rounds)

    def _sample_on(
        self, rounds: int, replicates: int, seed: int, start: int, device: torch.device
    ) -> torch.Tensor:
        """``_sample`` on ``device``; processes that can draw there override this."""
        return torch.from_numpy(self._sample(rounds, replicates, seed, start)).to(device)

    def _draw_below_on(
        self, prob: torch.Tensor, replicates: int, seed: int, start: int, device: torch.device
    ) -> torch.Tensor:
        """:meth:`_draw_below` on ``device`` with ``prob [T, N]`` there: the uniforms of round
        ``start + i`` come from that round's ``AVAILABILITY`` stream drawn by a ``device``
        generator (:func:`fedtheory.rng.torch_generator`)."""
        out = torch.empty((replicates, prob.shape[0], self.num_clients), dtype=torch.bool,
                          device=device)  # fmt: skip
        for i in range(prob.shape[0]):
            gen = rng.torch_generator(seed, start + i, rng.AVAILABILITY, device)
            u = torch.rand((replicates, self.num_clients), generator=gen, dtype=prob.dtype,
                           device=device)  # fmt: skip
            out[:, i] = u < prob[i]
        return out

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
