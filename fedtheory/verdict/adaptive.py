r"""Adaptive replication: replicates added in doubling looks until a row is decided, with
Bonferroni over the planned looks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from fedtheory.constraints import Function, Integer, declare, shown
from fedtheory.errors import ParameterError
from fedtheory.verdict.intervals import LEVEL
from fedtheory.verdict.rows import Comparison, Verdict

AUTO_START = 64
"""First batch of :func:`replicate_until_decided` (then doubling up to the cap)."""


@declare(
    cap=Integer(2),
    start=Integer(2, "cap"),
    confidence=LEVEL,
)
def adaptive_looks(
    cap: int, *, start: int = AUTO_START, confidence: float = 0.95
) -> tuple[list[int], float]:
    """The planned looks of adaptive replication, ``[start, 2 start, 4 start, ..., cap]``
    replicates, and the confidence of each look, ``1 - (1 - confidence)/L`` for ``L``
    looks (Bonferroni: family-wise ``confidence`` over the looks).

    Examples
    --------
    >>> adaptive_looks(1000)
    ([64, 128, 256, 512, 1000], 0.99)
    """
    sizes = [start]
    while sizes[-1] < cap:
        sizes.append(min(2 * sizes[-1], cap))
    return sizes, 1.0 - (1.0 - confidence) / len(sizes)


@declare(
    draw=Function(),
    judge=Function(),
    cap=Integer(2),
    start=Integer(2, "cap"),
    confidence=LEVEL,
)
def replicate_until_decided(
    draw: Callable[[int, int], np.ndarray],
    judge: Callable[[np.ndarray, float], Comparison],
    *,
    cap: int,
    start: int = AUTO_START,
    confidence: float = 0.95,
) -> tuple[Comparison, np.ndarray]:
    r"""Adaptive replication: add replicates until the verdict is decided or ``cap`` is
    reached.

    The looks are at ``start, 2 start, 4 start, ...`` replicates, the last at ``cap``;
    ``draw(batch, size)`` returns the ``size`` new replicates ``[size, ...]`` of look
    ``batch`` (their seed a pure function of the caller's seed and ``batch``, so the result
    is deterministic) and ``judge(samples, level)`` the row from all replicates so far at
    confidence ``level``. Every look is at ``1 - (1 - confidence)/L`` for the ``L`` planned
    looks (Bonferroni), so the family-wise confidence over the looks is ``confidence``.
    Returns the row (its detail says how many replicates and looks) and the replicates.
    """
    owner = "replicate_until_decided"
    sizes, level = adaptive_looks(cap, start=start, confidence=confidence)
    parts: list[np.ndarray] = []
    for k, total in enumerate(sizes):
        size = total - sum(len(p) for p in parts)
        parts.append(_drawn(draw(k, size), size, parts, owner))
        samples = np.concatenate(parts, axis=0)
        row = judge(samples, level)
        if not isinstance(row, Comparison):
            raise ParameterError(
                f"The 'judge' parameter of {owner} must return a Comparison (a verdict row). "
                f"Got {type(row).__name__} instead."
            )
        if row.verdict is not Verdict.INCONCLUSIVE:
            break
    note = (
        f"; adaptive replication: {len(samples)} replicates after {k + 1} of {len(sizes)} "
        f"planned looks (cap {cap}; each look at confidence {level:.4g})"
    )
    return replace(row, detail=row.detail + note), samples


def _drawn(batch: object, size: int, parts: list[np.ndarray], owner: str) -> np.ndarray:
    """``draw``'s batch as a float array ``[size, ...]`` shaped like the batches before it
    (finite or not: the judge's rule reads NaN as a failed measurement)."""
    try:
        x = np.asarray(batch, dtype=float)
    except (TypeError, ValueError):
        x = None
    if x is None or x.ndim == 0 or len(x) != size or (parts and x.shape[1:] != parts[0].shape[1:]):
        raise ParameterError(
            f"The 'draw' parameter of {owner} must return {size} replicates [size, ...] shaped "
            f"like the earlier batches. Got {shown(batch)} instead."
        )
    return x
