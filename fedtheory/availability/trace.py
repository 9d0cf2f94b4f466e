r"""Replay of a recorded availability trace.

A trace lists, for each round, the ids of the clients that were available. It is given as
a boolean array ``[T, N]``, as a sequence of id lists, or as a file:

* JSON: a list of lists of integer ids, ``[[0, 3], [], [1, 2, 3]]``;
* CSV: one line per round with comma-separated ids (an empty line is a round with no
  available client).

Replay is deterministic (every replicate sees the trace; the seed is unused). Past the end
the trace either raises or, with ``cyclic=True``, starts again. Marginals are the trace's
empirical availability frequencies.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.budget import check_bytes
from fedtheory.constraints import Bool, BoolArray, Location, Size, Text, declare
from fedtheory.errors import ParameterError
from fedtheory.io import read_json, read_text


class TraceReplay(AvailabilityProcess):
    r"""Replay a per-round availability trace.

    Parameters
    ----------
    trace : bool array [T, N] or sequence of T sequences of client ids
        Which clients are available in each round.
    num_clients : int, optional
        :math:`N`; required for id lists, checked against the array width otherwise.
    cyclic : bool
        Wrap around at the end of the trace instead of raising.

    Examples
    --------
    >>> proc = TraceReplay([[0, 2], [], [1]], num_clients=3, cyclic=True)
    >>> proc.sample(4)[0].int().tolist()
    [[1, 0, 1], [0, 0, 0], [0, 1, 0], [1, 0, 1]]
    """

    @declare(num_clients=Size(none=True), cyclic=Bool())
    def __init__(self, trace, *, num_clients: int | None = None, cyclic: bool = False) -> None:
        """``trace``: a mask ``[T, N]`` or per-round lists of client ids (checked here: one
        of two forms)."""
        owner = "TraceReplay"
        if isinstance(trace, np.ndarray) and trace.ndim == 2:
            mask = BoolArray(ndim=2).check(trace, "trace", owner, {})
            if num_clients is not None:
                n = num_clients
                if n != mask.shape[1]:
                    raise ParameterError(
                        f"The 'num_clients' parameter of {owner} must equal the trace's width "
                        f"{mask.shape[1]}. Got {n} instead."
                    )
        else:
            if num_clients is None:
                raise ParameterError(
                    f"The 'num_clients' parameter of {owner} must be an integer in [1, inf) "
                    "when the trace is a list of client ids. Got None instead."
                )
            mask = ids_to_mask(trace, num_clients, owner)
        if mask.shape[0] == 0:
            raise ParameterError(
                f"The 'trace' parameter of {owner} must have at least one round. "
                "Got 0 rounds instead."
            )
        self.trace = mask  # [T, N]
        self.cyclic = cyclic
        self.num_clients = mask.shape[1]

    @classmethod
    @declare(
        path=Location(suffixes=(".json", ".csv"), exists=True), num_clients=Size(), cyclic=Bool()
    )
    def from_file(cls, path: str | Path, *, num_clients: int, cyclic: bool = False) -> TraceReplay:
        """Read a trace from a ``.json`` (list of id lists) or ``.csv`` (one line per round)."""
        owner = "TraceReplay.from_file"
        if path.suffix == ".json":
            rounds = read_json(path, "path", owner)
        else:
            text = read_text(path, "path", owner)
            rounds = [
                [_parse_id(x, path) for x in line.split(",") if x.strip()]
                for line in text.splitlines()
            ]
        return cls(rounds, num_clients=num_clients, cyclic=cyclic)

    @property
    def marginals(self) -> np.ndarray:
        return self.trace.mean(axis=0)

    def _sample(self, rounds, replicates, seed, start):
        length = self.trace.shape[0]
        if not self.cyclic and start + rounds > length:
            raise ParameterError(
                f"The 'rounds' parameter of TraceReplay.sample must be in "
                f"[1, {length - start}] (the trace has {length} rounds; pass cyclic=True to "
                f"wrap around). Got {rounds} instead."
            )
        rows = self.trace[np.arange(start, start + rounds) % length]  # [T, N]
        return np.broadcast_to(rows, (replicates, rounds, self.num_clients)).copy()

    def __repr__(self) -> str:
        return f"TraceReplay(T={self.trace.shape[0]}, N={self.num_clients})"


def _parse_id(text: str, path: Path) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise ParameterError(
            f"The 'path' parameter of TraceReplay.from_file must name a CSV of integer client "
            f"ids. Got {text.strip()!r} in {path.name} instead."
        ) from None


@declare(num_clients=Size(), owner=Text())
def ids_to_mask(trace: Sequence[Sequence[int]], num_clients: int, owner: str) -> np.ndarray:
    """Boolean mask ``[T, N]`` from per-round lists of ids in ``[0, num_clients - 1]``."""
    if (
        not isinstance(trace, Sequence)
        or isinstance(trace, str)
        or not all(
            isinstance(ids, Sequence | np.ndarray) and not isinstance(ids, str) for ids in trace
        )
    ):
        raise ParameterError(
            f"The 'trace' parameter of {owner} must be a sequence of per-round sequences of "
            f"client ids. Got {type(trace).__name__} instead."
        )
    check_bytes(2 * len(trace) * num_clients, owner, what=f"a mask [{len(trace)}, {num_clients}]",
                fixes="fewer clients or rounds")  # fmt: skip
    mask = np.zeros((len(trace), num_clients), dtype=bool)
    for t, ids in enumerate(trace):
        for k in ids:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
                raise ParameterError(
                    f"The 'trace' parameter of {owner} must list integer client ids. "
                    f"Got {k!r} in round {t} instead."
                )
            if not 0 <= k < num_clients:
                raise ParameterError(
                    f"The 'trace' parameter of {owner} must contain client ids in "
                    f"[0, {num_clients - 1}]. Got id {k} in round {t} instead."
                )
            mask[t, k] = True
    return mask
