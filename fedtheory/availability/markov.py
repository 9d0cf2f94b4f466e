r"""Independent two-state Markov availability (CA-Fed, Rodio et al., Assumption 1, §3.5;
FedAU, Wang & Ji, SPEC §5.4 ``markov-a``).

Client :math:`k` follows a two-state chain (states off = 0, on = 1) with stationary
availability :math:`\pi_k` and second eigenvalue :math:`\lambda_k` (the lag-1
autocorrelation of the on/off indicator). The initial state is drawn from the stationary
law, so every round has marginal :math:`\pi_k`. The product chain
:math:`P=\bigotimes_kP_k` has :math:`\lambda(P)=\max_k(1+|\lambda_k|)/2`.
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.errors import ParameterError
from fedtheory.markov import (
    MixingConstants,
    fedau_two_state,
    kron_chain,
    product_mixing_constants,
    two_state_matrix,
    two_state_parameters,
    two_state_transitions,
)
from fedtheory.params import check_array, check_like

MAX_KRON_CLIENTS = 12
"""``chain()`` builds the full ``2^N x 2^N`` product matrix only up to this many clients."""


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
    >>> proc.sample(1000, seed=1).double().mean(dim=(0, 1)).round(decimals=1).tolist()
    [0.9, 0.1]
    >>> proc.transition_matrices[0].round(2).tolist()  # rows: from off, from on
    [[0.55, 0.45], [0.05, 0.95]]
    """

    def __init__(self, pi, lam) -> None:
        owner = "TwoStateMarkov"
        pi = check_array(pi, "pi", owner, ndim=1, low=0.0, high=1.0, low_open=True, high_open=True)
        lam = check_like(check_array(lam, "lam", owner), pi.shape, "lam", owner, like="pi")
        self.p_on_on, self.p_off_on = two_state_transitions(pi, lam, owner)
        self.pi, self.lam = pi, lam
        self.num_clients = pi.size

    @classmethod
    def from_transitions(cls, p_on_on, p_off_on) -> TwoStateMarkov:
        r"""Chains given by :math:`a=P(\text{on}\to\text{on})` and
        :math:`P(\text{off}\to\text{on})` (arrays [N]); ``(pi, lam)`` by the exact inverse map."""
        return cls(*two_state_parameters(p_on_on, p_off_on))

    @classmethod
    def fedau(cls, p, off_on: float = 0.05) -> TwoStateMarkov:
        r"""FedAU's Markov participation (SPEC §5.4): :math:`P(\text{off}\to\text{on})=a`,
        stationary :math:`p`, with FedAU's rule :math:`a\leftarrow a/b,\ b\leftarrow 1` when
        :math:`b=a(1/p-1)>1`. See :func:`fedtheory.markov.fedau_two_state`."""
        return cls.from_transitions(*fedau_two_state(p, off_on))

    @property
    def marginals(self) -> np.ndarray:
        return self.pi.copy()

    @property
    def transition_matrices(self) -> np.ndarray:
        """Per-client transition matrices ``[N, 2, 2]`` (rows: from off, from on)."""
        return two_state_matrix(self.pi, self.lam)

    @property
    def stationary_laws(self) -> np.ndarray:
        r"""Per-client stationary laws ``[N, 2]``: :math:`(1-\pi_k,\pi_k)`."""
        return np.stack([1.0 - self.pi, self.pi], axis=-1)

    def mixing_constants(self) -> MixingConstants:
        r""":math:`\lambda(P)`, :math:`C_P`, :math:`T_P` of the product chain (closed form,
        :func:`fedtheory.markov.product_mixing_constants`)."""
        return product_mixing_constants(self.pi, self.lam)

    def chain(self) -> np.ndarray:
        r"""The product transition matrix :math:`\bigotimes_kP_k`, ``[2^N, 2^N]`` (client 0 is
        the most significant bit of the state index); at most ``MAX_KRON_CLIENTS`` clients."""
        if self.num_clients > MAX_KRON_CLIENTS:
            raise ParameterError(
                f"The 'num_clients' parameter of TwoStateMarkov.chain must be in "
                f"[1, {MAX_KRON_CLIENTS}] (the product has 2^N states). "
                f"Got {self.num_clients} instead."
            )
        return kron_chain(self.transition_matrices)

    def _sample(self, rounds, replicates, seed, start):
        shape = (replicates, self.num_clients)
        state = rng.numpy_rng(seed, 0, rng.INITIAL_STATE).random(shape) < self.pi
        u = np.empty(shape)  # [R, N] reused buffer
        out = np.empty((replicates, rounds, self.num_clients), dtype=bool)
        for t in range(start + rounds):
            if t > 0:
                rng.numpy_rng(seed, t, rng.AVAILABILITY).random(out=u)
                state = u < np.where(state, self.p_on_on, self.p_off_on)
            if t >= start:
                out[:, t - start] = state
        return out

    def __repr__(self) -> str:
        return f"TwoStateMarkov(N={self.num_clients})"
