r"""Alternating availability blocks (FedLaAvg, Yan et al., Example 1 and its experiments).

Time is cut into periods of :math:`t_1+t_2` rounds. Clients of group 1 are available in
the first :math:`t_1` rounds of every period, clients of group 2 in the next :math:`t_2`.
The process is deterministic: the seed is accepted for a uniform interface and unused.

FedLaAvg's MNIST day/night pattern (strategy ``number`` of the authors'
``train/prepare_clients.py``) is the case
:math:`t_1=t_2=E` where group 1 holds the clients of digits :math:`0..D-1`
(:meth:`AlternatingBlocks.fedlaavg_digits`).
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.budget import check_bytes
from fedtheory.constraints import Integer, Mask, Size, declare


class AlternatingBlocks(AvailabilityProcess):
    """Group 1 available for ``t1`` rounds, then group 2 for ``t2`` rounds, periodically.

    Parameters
    ----------
    t1, t2 : int
        Block lengths (>= 1).
    group1 : bool array [N], optional
        Which clients belong to group 1 (default: two clients, client 0 in group 1).

    Examples
    --------
    >>> AlternatingBlocks(2, 1).sample(4)[0].int().tolist()
    [[1, 0], [1, 0], [0, 1], [1, 0]]
    """

    @declare(t1=Size(), t2=Size(), group1=Mask(ndim=1, min_size=1, none=True))
    def __init__(self, t1: int, t2: int, *, group1=None) -> None:
        self.t1, self.t2 = t1, t2
        self.group1 = np.array([True, False]) if group1 is None else group1
        self.num_clients = self.group1.size

    @classmethod
    @declare(digits=Integer(1, 9), num_clients=Size(10, multiple=10), E=Size())
    def fedlaavg_digits(
        cls, digits: int, *, num_clients: int = 1000, E: int = 100
    ) -> AlternatingBlocks:
        r"""FedLaAvg's MNIST pattern (the authors' ``train/prepare_clients.py``): clients
        ``0 .. N/10*D - 1`` (digits
        :math:`0..D-1`, :math:`N/10` clients per digit) are available in rounds
        :math:`[0,E)` of every period :math:`2E`, the others in :math:`[E,2E)`."""
        n = num_clients  # a multiple of 10: N/10 clients per digit
        check_bytes(12 * n, "AlternatingBlocks.fedlaavg_digits", what=f"the groups of {n} clients",
                    fixes="fewer clients")  # fmt: skip
        return cls(E, E, group1=np.arange(n) < n // 10 * digits)

    @property
    def marginals(self) -> np.ndarray:
        period = self.t1 + self.t2
        return np.where(self.group1, self.t1 / period, self.t2 / period)

    def _sample(self, rounds, replicates, seed, start):
        t = np.arange(start, start + rounds) % (self.t1 + self.t2)
        first = (t < self.t1)[:, None]  # [T, 1]
        mask = np.where(first, self.group1[None, :], ~self.group1[None, :])
        return np.broadcast_to(mask, (replicates, rounds, self.num_clients)).copy()

    def __repr__(self) -> str:
        return f"AlternatingBlocks(t1={self.t1}, t2={self.t2}, N={self.num_clients})"
