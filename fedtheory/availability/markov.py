r"""Independent two-state Markov availability (CA-Fed, Rodio et al., Assumption 1, §3.5;
FedAU, Wang & Ji, the authors' code's ``markov-a``).

Client :math:`k` follows a two-state chain (states off = 0, on = 1) with stationary
availability :math:`\pi_k` and second eigenvalue :math:`\lambda_k` (the lag-1
autocorrelation of the on/off indicator). The initial state is drawn from the stationary
law, so every round has marginal :math:`\pi_k`. The product chain
:math:`P=\bigotimes_kP_k` has :math:`\lambda(P)=\max_k(1+|\lambda_k|)/2`.

Paths are drawn by dyadic bridges (:func:`_bridge_sample`), so that a window of rounds
``[start, start + T)`` costs :math:`O(T+\log_2\text{start})` draws and equals the same rows
of any longer sample.
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.compiled import njit
from fedtheory.constraints import Array, Real, declare
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

MAX_KRON_CLIENTS = 12
"""``chain()`` builds the full ``2^N x 2^N`` product matrix only up to this many clients."""

BRIDGE_ROUNDS = 1 << 12
"""A window is drawn in chunks of this many rounds (each one's bridges from the states the
previous chunk drew after it: the same numbers), so that the bookkeeping of the bridges
stays bounded whatever the window's length."""

HORIZON_BITS = 62
HORIZON = 1 << HORIZON_BITS
"""The chains are sampled on rounds ``0 .. HORIZON`` (dyadic bridges, see ``_bridge_sample``)."""


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

    @declare(
        pi=Array(ndim=1, low=0.0, high=1.0, low_open=True, high_open=True),
        lam=Array(like="pi"),
    )
    def __init__(self, pi, lam) -> None:
        self.p_on_on, self.p_off_on = two_state_transitions(pi, lam, "TwoStateMarkov")
        self.pi, self.lam = pi, lam
        self.num_clients = pi.size
        # States drawn after the last sampled window (a memo of a pure function of the seed:
        # ``simulate`` samples adjacent windows, which share most of their coarse rounds).
        self._after_last_window: tuple[tuple[int, int] | None, dict] = (None, {})

    @classmethod
    @declare(
        p_on_on=Array(ndim=1, low=0.0, high=1.0, high_open=True),
        p_off_on=Array(ndim=1, low=0.0, high=1.0, low_open=True, shape=("p_on_on[0]",)),
    )
    def from_transitions(cls, p_on_on, p_off_on) -> TwoStateMarkov:
        r"""Chains given by :math:`a=P(\text{on}\to\text{on})` and
        :math:`P(\text{off}\to\text{on})` (arrays [N]); ``(pi, lam)`` by the exact inverse map."""
        return cls(*two_state_parameters(p_on_on, p_off_on))

    @classmethod
    @declare(
        p=Array(ndim=1, low=0.0, high=1.0, low_open=True, high_open=True),
        off_on=Real(0.0, 1.0, low_open=True),
    )
    def fedau(cls, p, off_on: float = 0.05) -> TwoStateMarkov:
        r"""FedAU's Markov participation (the authors' code): :math:`P(\text{off}\to\text{on})=a`,
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
        if start + rounds > HORIZON:
            raise ParameterError(
                f"The 'start' parameter of TwoStateMarkov.sample must be in "
                f"[0, 2^{HORIZON_BITS} - rounds] (the chains are defined on rounds "
                f"0 .. 2^{HORIZON_BITS}). Got {start} instead."
            )
        key, known = self._after_last_window
        if key != (seed, replicates):
            known = {}
        out = np.empty((replicates, rounds, self.num_clients), dtype=bool)
        for t0 in range(0, rounds, BRIDGE_ROUNDS):  # the bridges' bookkeeping a chunk at a time
            part = min(BRIDGE_ROUNDS, rounds - t0)
            window, known = _bridge_sample(
                self.pi, self.lam, start + t0, part, replicates, seed, known
            )
            out[:, t0 : t0 + part] = window
        self._after_last_window = ((seed, replicates), known)
        return out

    def _sample_bytes(self, replicates: int, rounds: int, num_clients: int) -> int:
        """The mask, and a chunk of :data:`BRIDGE_ROUNDS` rounds with its bookkeeping (about
        2 KiB a round measured with ``tracemalloc``: the rounds' states and sets of Python
        integers) and the :data:`HORIZON_BITS` levels' states ``[R, N]`` around it."""
        r, t, n = replicates, rounds, num_clients
        chunk = min(t, BRIDGE_ROUNDS)
        return r * t * n + chunk * (2 * r * n + 2048) + 4 * HORIZON_BITS * (r * n + 128)

    def __repr__(self) -> str:
        return f"TwoStateMarkov(N={self.num_clients})"


def _lowest_bit(t: np.ndarray) -> np.ndarray:
    """``2^v`` with ``v`` the index of the lowest set bit of each ``t > 0`` (int64)."""
    return t & -t


def _needed_rounds(window: np.ndarray, known) -> list[int]:
    """Rounds to draw so that the states of ``window`` are fixed: the window and,
    recursively, the two ends ``t - h``, ``t + h`` of the dyadic interval that each round
    ``0 < t < HORIZON`` is the midpoint of (``h`` its lowest set bit), stopping at rounds in
    ``known``. Outside the window at most two rounds per level are added, so there are
    ``len(window) + O(HORIZON_BITS)`` of them."""
    needed = set(window.tolist())
    frontier = window
    while frontier.size:
        inner = frontier[(frontier > 0) & (frontier < HORIZON)]
        h = _lowest_bit(inner)
        parents = np.unique(np.concatenate([inner - h, inner + h])).tolist()
        fresh = [t for t in parents if t not in needed and t not in known]
        needed.update(fresh)
        frontier = np.array(fresh, dtype=np.int64)
    return sorted(needed - known.keys())


def _level(t: int) -> int:
    """Level of round ``t`` in the dyadic construction: ``log2`` of its lowest set bit;
    rounds 0 and ``HORIZON`` come first."""
    return HORIZON_BITS if t in (0, HORIZON) else (t & -t).bit_length() - 1


def _bridge_table(pi: np.ndarray, lam_h: np.ndarray) -> np.ndarray:
    r"""``[4, N]``: row ``2i + k`` is :math:`P(X_t=1\mid X_{t-h}=i, X_{t+h}=k)` for a
    two-state chain with :math:`P^h=\Pi+\lambda^h(I-\Pi)`, i.e.
    :math:`P^h_{i1}P^h_{1k}/\sum_jP^h_{ij}P^h_{jk}` (0 for the impossible pairs, whose
    denominator is 0)."""
    on = np.stack([pi * (1.0 - lam_h), pi + (1.0 - pi) * lam_h])  # P^h[i, 1], [2, N]
    ph = np.stack([1.0 - on, on], axis=1)  # P^h[i, j], [2, 2, N]
    num = ph[:, 1, None, :] * ph[None, 1, :, :]  # P^h[i,1] P^h[1,k], [2, 2, N]
    den = num + ph[:, 0, None, :] * ph[None, 0, :, :]
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0).reshape(4, -1)


@njit
def _bridge_draw(u, left, right, table, out) -> None:  # pragma: no cover - compiled
    """``out[r, k] = u[r, k] < table[2 left[r, k] + right[r, k], k]`` (all ``[R, N]``)."""
    for r in range(u.shape[0]):
        for k in range(u.shape[1]):
            row = (2 if left[r, k] else 0) + (1 if right[r, k] else 0)
            out[r, k] = u[r, k] < table[row, k]


def _bridge_sample(
    pi: np.ndarray,
    lam: np.ndarray,
    start: int,
    rounds: int,
    replicates: int,
    seed: int,
    known: dict[int, np.ndarray],
) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    r"""States ``[R, T, N]`` of independent two-state chains on rounds
    ``start .. start + rounds - 1``, and the states ``{t: [R, N]}`` of the rounds after the
    window that were drawn (an adjacent later window needs most of them: pass them back
    as ``known``, whose entries are taken as drawn with the same ``seed``).

    The path on rounds :math:`0..H` (:math:`H=2^{62}`) is built by dyadic bridges:
    :math:`X_0` from the stationary law (stream ``INITIAL_STATE``), :math:`X_H` from
    :math:`P^H` given :math:`X_0`, and every other round :math:`t`, the midpoint of
    :math:`[t-h, t+h]` with :math:`h` the lowest set bit of :math:`t`, from the bridge law
    given its two ends. Each round's uniform comes from ``numpy_rng(seed, t, AVAILABILITY)``,
    so the state of round :math:`t` does not depend on the window asked for (restart
    property) and the path has exactly the Markov law. A window of :math:`T` rounds costs
    :math:`O(T + \log H)` draws of ``[R, N]`` whatever its start (a round-by-round sampler
    costs :math:`O(\text{start} + T)`)."""
    shape = (replicates, pi.size)
    out = np.empty((replicates, rounds, pi.size), dtype=bool)
    states = dict(known)
    for i in range(rounds):  # window rows are views into `out` (copied from `known` if there)
        if start + i in known:
            out[:, i] = known[start + i]
        states[start + i] = out[:, i]
    todo = _needed_rounds(np.arange(start, start + rounds), known)
    for t in todo:
        if t not in states:
            states[t] = np.empty(shape, dtype=bool)
    powers = np.empty((HORIZON_BITS + 1, pi.size))  # lambda^(2^b), exact signs
    powers[0] = lam
    for b in range(1, HORIZON_BITS + 1):
        powers[b] = powers[b - 1] ** 2
    u = np.empty(shape)
    if 0 in todo:
        rng.numpy_rng(seed, 0, rng.INITIAL_STATE).random(out=u)
        np.less(u, pi, out=states[0])
    if HORIZON in todo:  # X_H | X_0: on with probability P^H[X_0, 1]
        lam_h = powers[HORIZON_BITS]
        rng.numpy_rng(seed, HORIZON, rng.AVAILABILITY).random(out=u)
        np.less(
            u, np.where(states[0], pi + (1 - pi) * lam_h, pi * (1 - lam_h)), out=states[HORIZON]
        )
    todo = [t for t in todo if 0 < t < HORIZON]
    todo.sort(key=_level, reverse=True)  # coarse to fine: both ends are drawn before a midpoint
    table, level = None, -1
    for t in todo:
        if _level(t) != level:
            level = _level(t)
            table = _bridge_table(pi, powers[level])
        h = 1 << level
        rng.numpy_rng(seed, t, rng.AVAILABILITY).random(out=u)
        _bridge_draw(u, states[t - h], states[t + h], table, states[t])
    end = start + rounds
    return out, {t: x for t, x in states.items() if t >= end}
