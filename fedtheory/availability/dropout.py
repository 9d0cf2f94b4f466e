r"""Bounded consecutive dropout (MimiC, Sun et al., Sec. 7, pattern 1).

Client :math:`i` is active in round :math:`t` iff :math:`t\bmod\tau_i=0`, and in every round
when :math:`\tau_i\in\{0,1\}`; so it is never inactive for more than :math:`\tau_i-1`
consecutive rounds. The long-run availability is :math:`1/\max(\tau_i,1)`. The periods are
drawn once:

* ``uniform``: the paper, ":math:`\tau` uniform" (its range was lost in conversion); here
  :math:`\tau_i\sim\mathcal U\{1,\dots,\tau_{\max}\}`.
* ``half_normal``: the authors' code (``dropout.py``, mode ``tau``),
  :math:`\tau_i=\min(\mathrm{round}(|Z_i|),\tau_{\max})`, :math:`|Z_i|` half-normal with
  scale 3. The clip at :math:`\tau_{\max}` is part of that definition, not a safeguard.

Not modelled: the code's rule forcing two random clients active when fewer than two are.
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability.base import AvailabilityProcess, population_rng
from fedtheory.budget import check_bytes
from fedtheory.constraints import MAX_SIZE, Array, Integer, Real, Size, declare


class BoundedDropout(AvailabilityProcess):
    r"""Client :math:`i` active iff :math:`t\bmod\tau_i=0` (always if :math:`\tau_i\le1`).

    The process is deterministic given :math:`\tau`; the sampling seed is unused.

    Parameters
    ----------
    tau : int array [N]
        Periods :math:`\tau_i\ge0`.

    Examples
    --------
    >>> BoundedDropout([1, 3]).sample(4)[0].int().tolist()
    [[1, 1], [1, 0], [1, 0], [1, 1]]
    """

    @declare(tau=Array(ndim=1, low=0.0, high=MAX_SIZE, integer=True))
    def __init__(self, tau) -> None:
        self.tau = tau
        self.num_clients = self.tau.size

    @classmethod
    @declare(num_clients=Size(), tau_max=Size(), seed=Integer(0))
    def uniform(cls, num_clients: int, tau_max: int, *, seed: int = 0) -> BoundedDropout:
        r"""MimiC paper: :math:`\tau_i` uniform in :math:`\{1,\dots,\tau_{\max}\}`."""
        _check_clients(num_clients, "BoundedDropout.uniform")
        return cls(population_rng(seed).integers(1, tau_max + 1, num_clients))

    @classmethod
    @declare(num_clients=Size(), tau_max=Size(), scale=Real(0.0, low_open=True), seed=Integer(0))
    def half_normal(
        cls, num_clients: int, tau_max: int, *, scale: float = 3.0, seed: int = 0
    ) -> BoundedDropout:
        r"""MimiC code: :math:`\tau_i=\min(\mathrm{round}(|Z_i|),\tau_{\max})`,
        :math:`Z_i\sim\mathcal N(0,\text{scale}^2)`."""
        _check_clients(num_clients, "BoundedDropout.half_normal")
        z = np.abs(population_rng(seed).normal(0.0, scale, num_clients))
        return cls(np.minimum(np.round(z), tau_max))

    @property
    def marginals(self) -> np.ndarray:
        return 1.0 / np.maximum(self.tau, 1)

    def _sample(self, rounds, replicates, seed, start):
        t = np.arange(start, start + rounds)[:, None]  # [T, 1]
        mask = t % np.maximum(self.tau, 1) == 0  # [T, N]
        return np.broadcast_to(mask, (replicates, rounds, self.num_clients)).copy()

    def __repr__(self) -> str:
        return f"BoundedDropout(N={self.num_clients}, tau_max={self.tau.max()})"


def _check_clients(num_clients: int, owner: str) -> None:
    """The drawn delays and their copies (about 32 bytes a client) fit the memory budget."""
    check_bytes(32 * num_clients, owner, what=f"delays of {num_clients} clients",
                fixes="fewer clients")  # fmt: skip
