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
from fedtheory.errors import ParameterError
from fedtheory.params import check_array, check_int, check_real, check_seed


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

    def __init__(self, tau) -> None:
        owner = "BoundedDropout"
        tau = check_array(tau, "tau", owner, ndim=1, low=0.0)
        if tau.size == 0 or np.any(tau != np.round(tau)):
            raise ParameterError(
                f"The 'tau' parameter of {owner} must be a non-empty array of integers in "
                f"[0, inf). Got {tau} instead."
            )
        self.tau = tau.astype(np.int64)
        self.num_clients = self.tau.size

    @classmethod
    def uniform(cls, num_clients: int, tau_max: int, *, seed: int = 0) -> BoundedDropout:
        r"""MimiC paper: :math:`\tau_i` uniform in :math:`\{1,\dots,\tau_{\max}\}`."""
        owner = "BoundedDropout.uniform"
        n = check_int(num_clients, "num_clients", owner, low=1)
        tau_max = check_int(tau_max, "tau_max", owner, low=1)
        return cls(population_rng(check_seed(seed, owner)).integers(1, tau_max + 1, n))

    @classmethod
    def half_normal(
        cls, num_clients: int, tau_max: int, *, scale: float = 3.0, seed: int = 0
    ) -> BoundedDropout:
        r"""MimiC code: :math:`\tau_i=\min(\mathrm{round}(|Z_i|),\tau_{\max})`,
        :math:`Z_i\sim\mathcal N(0,\text{scale}^2)`."""
        owner = "BoundedDropout.half_normal"
        n = check_int(num_clients, "num_clients", owner, low=1)
        tau_max = check_int(tau_max, "tau_max", owner, low=1)
        scale = check_real(scale, "scale", owner, low=0.0, low_open=True)
        z = np.abs(population_rng(check_seed(seed, owner)).normal(0.0, scale, n))
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
