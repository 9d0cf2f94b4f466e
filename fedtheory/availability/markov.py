r"""Independent two-state Markov availability (CA-Fed, Rodio et al., Assumption 1, §3.5).

Client :math:`k` follows a two-state chain with stationary availability :math:`\pi_k` and
second eigenvalue :math:`\lambda_k` (lag-1 autocorrelation of the on/off indicator).
The initial state is drawn from the stationary law, so every round has marginal
:math:`\pi_k`. The product chain has :math:`\lambda(P)=\max_k(1+|\lambda_k|)/2`.
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.markov import two_state_transitions
from fedtheory.params import check_array


class TwoStateMarkov(AvailabilityProcess):
    r"""Independent two-state chains in CA-Fed's :math:`(\pi,\lambda)` parametrisation.

    Parameters
    ----------
    pi : array [N]
        Stationary availability probabilities in (0, 1).
    lam : array [N] or float
        Second eigenvalues, each in :math:`[1-1/\max(\pi,1-\pi),1]`.

    Examples
    --------
    >>> proc = TwoStateMarkov([0.9, 0.1], 0.5)
    >>> proc.sample(1000, seed=1).float().mean(dim=(0, 1)).round(decimals=1).tolist()
    [0.9, 0.1]
    """

    def __init__(self, pi, lam) -> None:
        owner = "TwoStateMarkov"
        pi = check_array(pi, "pi", owner, ndim=1, low=0.0, high=1.0, low_open=True, high_open=True)
        lam = np.broadcast_to(check_array(lam, "lam", owner), pi.shape).copy()
        self.p_on_on, self.p_off_on = two_state_transitions(pi, lam, owner)
        self.pi, self.lam = pi, lam
        self.num_clients = pi.size

    @property
    def marginals(self) -> np.ndarray:
        return self.pi.copy()

    def _sample(self, rounds, replicates, seed, start):
        shape = (replicates, self.num_clients)
        state = rng.numpy_rng(seed, 0, rng.INITIAL_STATE).random(shape) < self.pi
        out = np.empty((replicates, rounds, self.num_clients), dtype=bool)
        for t in range(start + rounds):
            if t > 0:
                u = rng.numpy_rng(seed, t, rng.AVAILABILITY).random(shape)
                state = u < np.where(state, self.p_on_on, self.p_off_on)
            if t >= start:
                out[:, t - start] = state
        return out

    def __repr__(self) -> str:
        return f"TwoStateMarkov(N={self.num_clients})"
