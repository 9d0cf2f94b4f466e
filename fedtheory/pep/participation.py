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

from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Mask, Probabilities, Size, declare
from fedtheory.errors import ParameterError


@declare(
    masks=Mask(shape=(None, None, None), min_size=1),
    probs=Probabilities(size="masks[0]"),
)
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

    @classmethod
    @declare(mask=Mask(ndim=2, min_size=1))
    def fixed(cls, mask) -> Participation:
        """One deterministic pattern ``mask [T, N]`` (e.g. one replicate of an availability
        process's ``sample``)."""
        return cls(mask[None], np.ones(1))

    @classmethod
    @declare(
        rounds=Size(),
        num_clients=Size(),
        blocks=Array(shape=("num_clients",), low=1.0, integer=True, none=True),
    )
    def alternating(cls, rounds: int, num_clients: int, *, blocks=None) -> Participation:
        """Client ``i`` alone for ``blocks[i]`` rounds, in turn (FedLaAvg's Example 1 with
        ``blocks = (t1, t2)``; default one round each)."""
        owner = "Participation.alternating"
        T, n = rounds, num_clients
        check_bytes(3 * T * n + 40 * T + 24 * n, owner, what=f"a mask [{T}, {n}]",
                    fixes="fewer rounds or clients")  # fmt: skip
        # a block longer than T shows as T rounds in rounds 0..T-1 (the same pattern there):
        # the period is at most n T, its cumulative sums never overflow, nothing is
        # allocated in proportion to a block's length
        blocks = np.ones(n, dtype=np.int64) if blocks is None else np.minimum(blocks, T)
        ends = np.cumsum(blocks)  # [n] the end of each client's block in a period
        who = np.searchsorted(ends, np.arange(T) % ends[-1], side="right")  # [T]
        return cls.fixed(np.arange(n)[None, :] == who[:, None])

    @classmethod
    @declare(rounds=Size(), num_clients=Size())
    def full(cls, rounds: int, num_clients: int) -> Participation:
        """Every client in every round."""
        T, n = rounds, num_clients
        check_bytes(2 * T * n, "Participation.full", what=f"a mask [{T}, {n}]",
                    fixes="fewer rounds or clients")  # fmt: skip
        return cls.fixed(np.ones((T, n), bool))

    @classmethod
    @declare(rounds=Size(), p=Array(ndim=1, low=0.0, high=1.0))
    def bernoulli(cls, rounds: int, p) -> Participation:
        r"""Independent Bernoulli(:math:`p_i`) participation, all :math:`2^{NT}` masks
        enumerated exactly (:math:`NT\le12`)."""
        owner = "Participation.bernoulli"
        T = rounds
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
    @declare(probabilities=Array(ndim=2, low=0.0, high=1.0))
    def independent(cls, probabilities) -> Participation:
        r"""Client :math:`i` active in round :math:`t` with probability
        ``probabilities[t, i]`` = :math:`p_i^t`, independently (FedAWE's Assumption 1 with
        non-stationary :math:`p_i^t`, e.g. ``NonStationary.probabilities(T)``), all
        :math:`2^{NT}` masks enumerated exactly (:math:`NT\le12`)."""
        owner = "Participation.independent"
        p = probabilities
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
