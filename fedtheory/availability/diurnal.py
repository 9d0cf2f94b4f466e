r"""Diurnal availability: independent Bernoulli with a sine-modulated probability
(F3AST-style, Ribero, Vikalo & de Veciana 2022; periodic day/night availability).

.. math:: p_k(t)=\bar p_k+a_k\sin\!\Big(\frac{2\pi t}{\text{period}}+\phi_k\Big),

available iff :math:`u^t_k<p_k(t)`, independently across clients and rounds. The
parameters must keep :math:`p_k(t)` in [0, 1] for every phase (:math:`a_k\le\bar p_k` and
:math:`\bar p_k+a_k\le1`); nothing is clipped. For an integer period :math:`\ge2` the sine
sums to zero over a period, so the long-run availability is :math:`\bar p_k` (exact).
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.constraints import Array, Size, declare
from fedtheory.errors import ParameterError


class Diurnal(AvailabilityProcess):
    r"""Bernoulli availability with probability :math:`\bar p_k+a_k\sin(2\pi t/T+\phi_k)`.

    Parameters
    ----------
    mean : array [N]
        :math:`\bar p_k\in[0,1]`.
    amplitude : array [N] or float
        :math:`a_k\ge0` with :math:`\bar p_k-a_k\ge0` and :math:`\bar p_k+a_k\le1`.
    period : int
        Rounds per day (>= 2).
    phase : array [N] or float
        :math:`\phi_k` in radians (e.g. time zones).

    Examples
    --------
    >>> proc = Diurnal([0.5, 0.5], 0.5, period=4, phase=[0.0, np.pi])
    >>> proc.probabilities(np.arange(4)).round(6).tolist()
    [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    """

    @declare(
        mean=Array(ndim=1, low=0.0, high=1.0),
        amplitude=Array(low=0.0, like="mean"),
        period=Size(2),
        phase=Array(like="mean"),
    )
    def __init__(self, mean, amplitude, *, period: int = 24, phase=0.0) -> None:
        owner = "Diurnal"
        self.mean, amp = mean, amplitude
        bad = (self.mean - amp < 0.0) | (self.mean + amp > 1.0)
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise ParameterError(
                f"The 'amplitude' parameter of {owner} must be in [0, min(mean, 1 - mean)] = "
                f"[0, {min(self.mean[k], 1 - self.mean[k]):g}] for client {k}. "
                f"Got {amp[k]:g} instead."
            )
        self.amplitude, self.phase, self.period = amp, phase, period
        self.num_clients = self.mean.size

    @property
    def marginals(self) -> np.ndarray:
        return self.mean.copy()

    @declare(rounds=Array(ndim=1, integer=True, low=0.0, min_size=0))
    def probabilities(self, rounds: np.ndarray) -> np.ndarray:
        """Availability probabilities ``[T, N]`` at the given rounds ``[T]``."""
        angle = 2 * np.pi * np.asarray(rounds)[:, None] / self.period + self.phase
        return np.clip(self.mean + self.amplitude * np.sin(angle), 0.0, 1.0)  # rounding only

    def _sample(self, rounds, replicates, seed, start):
        prob = self.probabilities(np.arange(start, start + rounds))  # [T, N]
        return self._draw_below(prob, replicates, seed, start)

    def __repr__(self) -> str:
        return f"Diurnal(N={self.num_clients}, period={self.period})"
