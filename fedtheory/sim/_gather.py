r"""Participants gathered to a fixed capacity: rounds with static shapes and no host sync.

The plain round gathers the participating (replicate, client) pairs of ``mask [R, N]`` with
``mask.nonzero()``: their number :math:`M` sets every later shape, so the host waits for
the device each round and no round can be captured (a CUDA graph replays fixed shapes).
A static round gathers exactly ``capacity`` :math:`C\ge M` pairs instead: the participants
first, in the order of ``nonzero`` (replicate-major), then non-participating pairs as
padding, each pair at most once. Padding rows train like any client (they read a real
client's data at a finite model) and are dropped by :func:`where_valid` before anything is
summed or stored: zeroed before a sum, and before a write into per-client state (a memory
table, a correction, a last-seen round, an optimiser buffer) replaced by the client's
stored value, so that the write leaves it as it was. They change no number.

The capacity of a round is fixed by :func:`capacity` from its availability count, which
the runner copies to the host once per chunk of rounds, so that no participant is ever
dropped: algorithms whose participants are a subset of the available clients fit by
construction, a forced full round gathers every pair (:func:`pairs` with ``everyone``), and
any other excess is flagged on the device and makes the runner rerun the chunk, those
rounds with every pair gathered.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import torch

_ROUND: contextvars.ContextVar[StaticRound | None] = contextvars.ContextVar(
    "fedtheory_static_round", default=None
)


@dataclass
class StaticRound:
    """The capacity of the current static round and where its excess is flagged."""

    capacity: int  # C, pairs gathered in this round
    overflow: torch.Tensor  # [] bool on the device: this round had more than C participants


class Pairs(NamedTuple):
    """The gathered (replicate, client) pairs of one round."""

    rep: torch.Tensor  # [M] or [C] int64 replicate of each row
    cli: torch.Tensor  # [M] or [C] int64 client of each row
    valid: torch.Tensor | None  # [C] bool: a participant (None: every row participates)


def capacity(count: int, pairs: int) -> int:
    r"""The capacity of a round with ``count`` available pairs (all replicates) out of
    ``pairs`` :math:`=RN`: ``count`` rounded up to an eighth of its leading power of two
    (at most :math:`1/8` padding, and few distinct shapes over a run), at most ``pairs``.
    A function of the round's own count, so that a round's random numbers depend only on
    its ``(seed, t)``."""
    if count <= 8:
        return min(count, pairs)
    step = 1 << (count.bit_length() - 4)
    return min(-(-count // step) * step, pairs)


@contextlib.contextmanager
def static(size: int, overflow: torch.Tensor) -> Iterator[StaticRound]:
    """Within the block, :func:`pairs` gathers ``size`` pairs (static shapes) and sets the
    device flag ``overflow`` ``[]`` (bool) if the round needed more."""
    token = _ROUND.set(StaticRound(size, overflow))
    try:
        yield _ROUND.get()
    finally:
        _ROUND.reset(token)


def pairs(mask: torch.Tensor, *, everyone: bool = False) -> Pairs:
    """The pairs of ``mask [R, N]`` (bool): by ``nonzero`` outside :func:`static`; inside,
    ``capacity`` pairs with participants first (all :math:`RN` pairs when ``everyone``, for
    a round that may make every client work), without reading anything back from the
    device."""
    static_state = _ROUND.get()
    if static_state is None:
        rep, cli = mask.nonzero(as_tuple=True)
        return Pairs(rep, cli, None)
    flat, n = mask.reshape(-1), mask.shape[-1]
    size = flat.numel() if everyone else static_state.capacity
    order = _participants_first(flat)[:size]
    if not everyone:
        static_state.overflow.logical_or_(flat.sum() > size)
    return Pairs(order // n, order % n, flat[order])


def _participants_first(flat: torch.Tensor) -> torch.Tensor:
    """A permutation of ``range(len(flat))``: the indices where ``flat`` is True in
    increasing order, then the others in increasing order (a stable counting sort of the
    bool keys: O(len), deterministic, no host sync)."""
    taken = flat.to(torch.int64)
    before = taken.cumsum(0) - taken  # participants before each position
    position = torch.where(
        flat, before, taken.sum() + torch.arange(flat.numel(), device=flat.device) - before
    )
    return torch.empty_like(taken).scatter_(
        0, position, torch.arange(flat.numel(), device=flat.device)
    )


def where_valid(
    values: torch.Tensor, gathered: Pairs, other: torch.Tensor | None = None
) -> torch.Tensor:
    """``values [rows, ...]`` with the padding rows of ``gathered`` set to zero, or to the
    rows of ``other [rows, ...]`` (a client's stored value, so that writing the rows back
    leaves a padding client's state as it was); by selection, not multiplication: a padding
    row's inf or NaN does not leak. ``values`` itself where every row participates."""
    if gathered.valid is None:
        return values
    valid = gathered.valid.reshape(-1, *([1] * (values.dim() - 1)))
    if other is None:
        other = torch.zeros((), dtype=values.dtype, device=values.device)
    return torch.where(valid, values, other)


def active() -> bool:
    """Whether rounds gather to a fixed capacity here (inside :func:`static`)."""
    return _ROUND.get() is not None
