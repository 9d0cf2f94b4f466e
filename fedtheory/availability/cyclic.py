r"""Cyclic participation (FedAU, Wang & Ji, the authors' code's ``cyclic-period``).

Client :math:`k` repeats a cycle of :math:`\mathrm{off}_k` unavailable rounds followed by
:math:`\mathrm{on}_k` available rounds, with (FedAU's code)

.. math:: \mathrm{on}_k=\max(1,\mathrm{round}(\text{period}\cdot p_k)),\qquad
          \mathrm{off}_k=\max(1,\text{period}-\mathrm{on}_k).

Each replicate starts every client in its off phase at a random offset
:math:`o_k\sim\mathcal U\{0,\dots,\mathrm{off}_k-1\}`; client :math:`k` is available in round
:math:`t` iff :math:`(o_k+t)\bmod(\mathrm{on}_k+\mathrm{off}_k)\ge\mathrm{off}_k`. The
long-run availability is :math:`\mathrm{on}_k/(\mathrm{on}_k+\mathrm{off}_k)`, which differs
from :math:`p_k` by the rounding (and is not the per-round probability, since the phase is
not uniform over the cycle).
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Size, declare


class Cyclic(AvailabilityProcess):
    r"""FedAU's cyclic participation: off for :math:`\mathrm{off}_k` rounds, then on for
    :math:`\mathrm{on}_k` rounds, from a random offset in the off phase.

    Parameters
    ----------
    p : array [N]
        Target participation probabilities in [0, 1].
    period : int
        Nominal cycle length (FedAU uses 100).

    Examples
    --------
    >>> proc = Cyclic([0.5, 0.25], period=4)
    >>> proc.on.tolist(), proc.off.tolist(), proc.marginals.tolist()
    ([2, 1], [2, 3], [0.5, 0.25])
    """

    @declare(p=Array(ndim=1, low=0.0, high=1.0), period=Size(2))
    def __init__(self, p, *, period: int = 100) -> None:
        self.p, self.period = p, period
        self.on = np.maximum(1, np.round(self.period * self.p)).astype(np.int64)  # [N]
        self.off = np.maximum(1, self.period - self.on)  # [N]
        self.num_clients = self.p.size

    @property
    def marginals(self) -> np.ndarray:
        return self.on / (self.on + self.off)

    @declare("replicates", "seed")
    def offsets(self, replicates: int, seed: int) -> np.ndarray:
        """Random starting offsets ``[R, N]`` in ``{0, .., off_k - 1}`` (drawn once per run)."""
        check_bytes(16 * replicates * self.num_clients, "Cyclic.offsets",
                    what=f"offsets [{replicates}, {self.num_clients}]",
                    fixes="fewer replicates")  # fmt: skip
        u = rng.numpy_rng(seed, 0, rng.INITIAL_STATE).random((replicates, self.num_clients))
        return np.floor(u * self.off).astype(np.int64)

    def _sample(self, rounds, replicates, seed, start):
        t = np.arange(start, start + rounds)[None, :, None]  # [1, T, 1]
        phase = (self.offsets(replicates, seed)[:, None, :] + t) % (self.on + self.off)
        return phase >= self.off  # [R, T, N]

    def __repr__(self) -> str:
        return f"Cyclic(N={self.num_clients}, period={self.period})"
