r"""Participation patterns: one boolean mask ``[T, N]`` or a finite distribution of masks.

A PEP is deterministic: random participation is covered only by enumerating masks. A
:class:`Participation` holds ``K`` masks ``[K, T, N]`` with probabilities ``[K]``; the
worst case is then taken of the *expected* criterion
:math:`\sum_kp_k\,c(x^{(k)}_{0..T})` over the same clients' functions and the same
:math:`x_0` (the functions are chosen before the masks are drawn), which is linear in the
PEP's Gram matrix and therefore exact.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from fedtheory.errors import ParameterError
from fedtheory.params import check_bool_array, check_simplex, check_size


@dataclass(frozen=True, eq=False)
class Participation:
    r"""Masks ``masks [K, T, N]`` (bool) with probabilities ``probs [K]`` on the simplex.

    Examples
    --------
    >>> Participation.alternating(4, 2).masks[0].astype(int).tolist()
    [[1, 0], [0, 1], [1, 0], [0, 1]]
    """

    masks: np.ndarray
    probs: np.ndarray

    def __post_init__(self) -> None:
        owner = "Participation"
        masks = check_bool_array(self.masks, "masks", owner, ndim=3)
        if min(masks.shape) < 1:
            raise ParameterError(
                f"The 'masks' parameter of {owner} must have shape (K, T, N) with K, T, N >= 1. "
                f"Got shape {masks.shape} instead."
            )
        probs = check_simplex(self.probs, "probs", owner, size=masks.shape[0])
        object.__setattr__(self, "masks", masks)
        object.__setattr__(self, "probs", probs)

    @classmethod
    def fixed(cls, mask) -> Participation:
        """One deterministic pattern ``mask [T, N]`` (e.g. one replicate of an availability
        process's ``sample``)."""
        m = check_bool_array(mask, "mask", "Participation.fixed", ndim=2)
        return cls(m[None], np.ones(1))

    @classmethod
    def alternating(cls, rounds: int, num_clients: int, *, blocks=None) -> Participation:
        """Client ``i`` alone for ``blocks[i]`` rounds, in turn (FedLaAvg's Example 1 with
        ``blocks = (t1, t2)``; default one round each)."""
        owner = "Participation.alternating"
        T, n = check_size(rounds, "rounds", owner), check_size(num_clients, "num_clients", owner)
        blocks = [1] * n if blocks is None else [check_size(b, "blocks", owner) for b in blocks]
        if len(blocks) != n:
            raise ParameterError(
                f"The 'blocks' parameter of {owner} must have num_clients={n} entries. "
                f"Got {len(blocks)} instead."
            )
        owner_of_round = np.repeat(np.arange(n), blocks)
        who = owner_of_round[np.arange(T) % len(owner_of_round)]
        return cls.fixed(np.arange(n)[None, :] == who[:, None])

    @classmethod
    def full(cls, rounds: int, num_clients: int) -> Participation:
        """Every client in every round."""
        owner = "Participation.full"
        T, n = check_size(rounds, "rounds", owner), check_size(num_clients, "num_clients", owner)
        return cls.fixed(np.ones((T, n), bool))

    @classmethod
    def bernoulli(cls, rounds: int, p) -> Participation:
        r"""Independent Bernoulli(:math:`p_i`) participation, all :math:`2^{NT}` masks
        enumerated exactly (:math:`NT\le12`)."""
        owner = "Participation.bernoulli"
        T = check_size(rounds, "rounds", owner)
        p = np.asarray(p, float)
        if p.ndim != 1 or p.size < 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
            raise ParameterError(
                f"The 'p' parameter of {owner} must be a 1-d array of probabilities in [0, 1]. "
                f"Got {p!r} instead."
            )
        if T * p.size > 12:
            raise ParameterError(
                f"The 'rounds' parameter of {owner} must satisfy rounds * N <= 12 (2^(NT) "
                f"masks are enumerated). Got rounds={T}, N={p.size} instead."
            )
        cells = np.array(list(itertools.product((False, True), repeat=T * p.size)))
        masks = cells.reshape(-1, T, p.size)
        probs = np.prod(np.where(masks, p, 1 - p), axis=(1, 2))
        keep = probs > 0
        return cls(masks[keep], probs[keep] / probs[keep].sum())

    @classmethod
    def independent(cls, probabilities) -> Participation:
        r"""Client :math:`i` active in round :math:`t` with probability
        ``probabilities[t, i]`` = :math:`p_i^t`, independently (FedAWE's Assumption 1 with
        non-stationary :math:`p_i^t`, e.g. ``NonStationary.probabilities(T)``), all
        :math:`2^{NT}` masks enumerated exactly (:math:`NT\le12`)."""
        owner = "Participation.independent"
        p = np.asarray(probabilities, float)
        if p.ndim != 2 or p.size < 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
            raise ParameterError(
                f"The 'probabilities' parameter of {owner} must be a 2-d array [T, N] of "
                f"probabilities in [0, 1]. Got {probabilities!r} instead."
            )
        if p.size > 12:
            raise ParameterError(
                f"The 'probabilities' parameter of {owner} must have T * N <= 12 entries (2^(NT) "
                f"masks are enumerated). Got shape {p.shape} instead."
            )
        cells = np.array(list(itertools.product((False, True), repeat=p.size)))
        masks = cells.reshape(-1, *p.shape)
        probs = np.prod(np.where(masks, p, 1 - p), axis=(1, 2))
        keep = probs > 0
        return cls(masks[keep], probs[keep] / probs[keep].sum())

    @property
    def rounds(self) -> int:
        return self.masks.shape[1]

    @property
    def num_clients(self) -> int:
        return self.masks.shape[2]

    def __repr__(self) -> str:
        return f"Participation(K={self.masks.shape[0]}, T={self.rounds}, N={self.num_clients})"
