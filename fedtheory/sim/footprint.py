r"""Memory a simulated run keeps, estimated before its first round.

:func:`fedtheory.sim.simulate` keeps, for ``R`` replicates, ``T`` rounds, ``N`` clients,
dimension ``d`` and ``K`` metric evaluations (``K = T/eval_every + 1``):

* the availability masks ``[R, T, N]`` (one byte a cell) if ``keep_masks``;
* the iterates ``[R, T+1, d]`` and the per-round counts ``[R, T]`` (8 bytes a value);
* the metrics ``[R, K]`` and the evaluated points ``[R, K, d]``;
* the algorithm's state (measured on the initial state; old and new during a step);
* one chunk of sampled availability and of exact per-client metrics (bounded by
  :data:`fedtheory.sim.runner.CHUNK_ELEMENTS`).

The budget is ``max_memory`` (an argument of ``simulate``), else the environment variable
``FEDTHEORY_MAX_MEMORY`` (bytes, or with a suffix ``K``, ``M``, ``G``, ``T``: ``"8G"``),
else the memory the operating system reports as available (Linux: ``MemAvailable`` and
the cgroup limit). A run whose estimate exceeds it stops before its first round with a
:class:`~fedtheory.errors.ParameterError` that names the estimate and what to change.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from fedtheory.budget import ENV, available_bytes, budget
from fedtheory.budget import size as _size
from fedtheory.constraints import Bool, Instance, Size, Text, declare
from fedtheory.errors import ParameterError

__all__ = ["ENV", "Footprint", "available_bytes", "check", "estimate"]

METRICS_PER_POINT = 4
"""At most four metrics per evaluated point (gap, gap_B, grad_sq, accuracy)."""


class Footprint(NamedTuple):
    """Estimated bytes a run keeps, by item."""

    masks: int  # [R, T, N] bool, 0 without keep_masks
    iterates: int  # [R, T+1, d] float64 and the [R, T] counts
    metrics: int  # [R, K] metrics and the [R, K, d] evaluated points
    state: int  # algorithm state, twice (old and new during a step)
    chunks: int  # one availability chunk and one chunk of exact metrics

    @property
    def total(self) -> int:
        return sum(self)


@declare(
    "replicates",
    "rounds",
    "num_clients",
    "dim",
    eval_every=Size(),
    keep_masks=Bool(),
    state=Instance(tuple),
    chunk_elements=Size(),
)
def estimate(
    *,
    replicates: int,
    rounds: int,
    num_clients: int,
    dim: int,
    eval_every: int,
    keep_masks: bool,
    state: object,
    chunk_elements: int,
) -> Footprint:
    """The :class:`Footprint` of a run (module docstring)."""
    r, t, n, d = replicates, rounds, num_clients, dim
    k = t // eval_every + 2
    state_bytes = sum(x.nbytes for x in _tensors(state))
    return Footprint(
        masks=r * t * n if keep_masks else 0,
        iterates=8 * (r * (t + 1) * d + 3 * r * t),
        metrics=8 * r * k * (METRICS_PER_POINT + d),
        state=2 * state_bytes,
        chunks=9 * min(chunk_elements, r * t * n) + 8 * chunk_elements,
    )


def _tensors(state: object) -> list[torch.Tensor]:
    out = []
    for value in state if isinstance(state, tuple) else ():
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif isinstance(value, tuple):
            out += _tensors(value)
    return out


@declare(footprint=Instance(Footprint), owner=Text())
def check(footprint: Footprint, max_memory: object, owner: str) -> None:
    """Raise a :class:`~fedtheory.errors.ParameterError` if the run would keep more than its
    budget; the message names the estimate, its largest items and the fixes."""
    limit, source = budget(max_memory, owner)
    if limit is None or footprint.total <= limit:
        return
    parts = ", ".join(f"{k} {_size(v)}" for k, v in footprint._asdict().items() if v)
    fixes = []
    if footprint.masks:
        fixes.append(f"keep_masks=False (saves {_size(footprint.masks)})")
    fixes.append(f"a larger eval_every (metrics take {_size(footprint.metrics)})")
    fixes.append("fewer rounds or replicates")
    raise ParameterError(
        f"{owner} would keep about {_size(footprint.total)} ({parts}), more than "
        f"{source} ({_size(limit)}). Use " + ", or ".join(fixes) + f", or raise {ENV} / "
        "max_memory."
    )
