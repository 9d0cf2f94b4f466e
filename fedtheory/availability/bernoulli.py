r"""Independent Bernoulli availability (FedAU, Wang & Ji, the authors' code's ``bernoulli``;
MimiC, Sun et al., Sec. 7, pattern 2 ``static``).

Client :math:`k` is available in round :math:`t` with probability :math:`p_k`, independently
across clients and rounds: :math:`u^t_k\sim\mathcal U[0,1)`, available iff :math:`u^t_k<p_k`.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.constraints import Array, declare
from fedtheory.device import PerDevice


class Bernoulli(AvailabilityProcess):
    r"""I.i.d. Bernoulli(:math:`p_k`) availability in every round.

    Parameters
    ----------
    p : array [N]
        Availability probabilities in [0, 1].

    Examples
    --------
    >>> Bernoulli([1.0, 0.0]).sample(3)[0].int().tolist()
    [[1, 0], [1, 0], [1, 0]]
    """

    @declare(p=Array(ndim=1, low=0.0, high=1.0))
    def __init__(self, p) -> None:
        self.p = p
        self.num_clients = self.p.size
        self._p = PerDevice(torch.from_numpy(self.p))

    @property
    def marginals(self) -> np.ndarray:
        return self.p.copy()

    def _sample(self, rounds, replicates, seed, start):
        prob = np.broadcast_to(self.p, (rounds, self.num_clients))  # [T, N]
        return self._draw_below(prob, replicates, seed, start)

    def _sample_on(self, rounds, replicates, seed, start, device):
        prob = self._p.on(device).expand(rounds, -1)  # [T, N]
        return self._draw_below_on(prob, replicates, seed, start, device)

    def __repr__(self) -> str:
        return f"Bernoulli(N={self.num_clients})"
