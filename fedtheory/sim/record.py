"""The record of a simulated run: per-round iterates and metrics, configuration, seed and
library versions, so that the run can be reproduced, saved and tabulated."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fedtheory.constraints import Array, Finite, Location, MappingOf, Mask, Text, declare
from fedtheory.errors import ParameterError
from fedtheory.io import DamagedFileError, load_npz, save_npz


def library_versions() -> dict[str, str]:
    """Versions of Python and the numerical libraries a result depends on."""
    import cvxpy
    import scipy
    import sympy
    import torch

    import fedtheory

    return {
        "python": platform.python_version(),
        "fedtheory": fedtheory.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sympy": sympy.__version__,
        "torch": torch.__version__,
        "cvxpy": cvxpy.__version__,
    }


_OPTIONAL = ("participation", "eval_rounds", "participants", "available", "effective_weights")
_RECORDED = "recorded_"  # prefix of the caller's recorded arrays in a saved record


REPLICATES = "iterates[0]"
"""The replicate dimension ``R`` of a record's arrays."""


@declare(
    iterates=Array(ndim=3, copy=False),
    participation=Mask(shape=(REPLICATES, None, None), copy=False, none=True),
    metrics=MappingOf(Array(shape=(REPLICATES, None), copy=False), "arrays [R, K]"),
    config=MappingOf(Finite(), "values without NaN or inf"),
    versions=MappingOf(Text(), "version strings"),
    eval_rounds=Array(ndim=1, integer=True, low=0, none=True),
    participants=Array(shape=(REPLICATES, None), integer=True, low=0, none=True),
    available=Array(shape=(REPLICATES, None), integer=True, low=0, none=True),
    effective_weights=Array(shape=(REPLICATES, None), low=0.0, high=1.0, none=True),
    recorded=MappingOf(Finite(), "values without NaN or inf"),
)
@dataclass
class RunRecord:
    r"""Result of :func:`fedtheory.sim.simulate`.

    Attributes
    ----------
    iterates : ndarray [R, T+1, d]
        Server models :math:`w_0,\dots,w_T` for every replicate.
    participation : ndarray [R, T, N] or None
        Availability mask that was used (``None`` if the run did not keep it).
    metrics : dict of ndarray [R, K]
        Metrics at rounds ``eval_rounds``: ``"gap"`` = :math:`F(w_t)-F^*`, and when
        available ``"gap_B"`` = :math:`F_B(w_t)-F_B^*`, ``"grad_sq"`` =
        :math:`\|\nabla F(w_t)\|^2`, ``"accuracy"``.
    config : dict
        Everything needed to rerun (algorithm, process, sizes, seed).
    versions : dict
        Library versions.
    eval_rounds : ndarray [K] of int, optional
        Rounds at which ``metrics`` were evaluated (default every round ``0..T``).
    participants, available : ndarray [R, T] of int, optional
        Per round, the number of clients that did local work and that were available.
    effective_weights : ndarray [R, N], optional
        Empirical effective weights :math:`\hat p_k=\sum_tq_{t,k}/\sum_{t,h}q_{t,h}` of
        weight-based algorithms, the measured counterpart of CA-Fed (4)'s
        :math:`\pi_kq_k/\sum_h\pi_hq_h`.
    recorded : dict of ndarray [R, T, ...]
        What the caller asked ``simulate`` to record after every round (``record=``).
    """

    iterates: np.ndarray
    participation: np.ndarray | None
    metrics: dict[str, np.ndarray]
    config: dict
    versions: dict[str, str] = field(default_factory=library_versions)
    eval_rounds: np.ndarray | None = None
    participants: np.ndarray | None = None
    available: np.ndarray | None = None
    effective_weights: np.ndarray | None = None
    recorded: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.eval_rounds is None:
            self.eval_rounds = np.arange(self.iterates.shape[1])

    def to_pandas(self):
        """One row per (replicate, metric round): the metrics and the participation counts
        of that round (NaN for the final round ``T``, which has no step).

        Requires pandas (an optional dependency)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "RunRecord.to_pandas needs pandas, an optional dependency of fedtheory: "
                "install it with `pip install pandas`."
            ) from None
        reps, rounds = self.iterates.shape[0], self.eval_rounds
        columns = {
            "replicate": np.repeat(np.arange(reps), rounds.size),
            "round": np.tile(rounds, reps),
        }
        columns.update({k: v.reshape(-1) for k, v in self.metrics.items()})
        for name in ("participants", "available"):
            counts = getattr(self, name)
            if counts is not None:
                padded = np.concatenate([counts, np.full((reps, 1), np.nan)], axis=1)
                columns[name] = padded[:, rounds].reshape(-1)
        return pd.DataFrame(columns)

    @declare(path=Location(writable=True))
    def save(self, path: str | Path) -> None:
        """Write the record to one ``.npz`` file (atomically, with a checksum:
        :func:`fedtheory.io.save_npz`)."""
        arrays = {"iterates": self.iterates}
        arrays.update({k: getattr(self, k) for k in _OPTIONAL if getattr(self, k) is not None})
        arrays.update({f"metric_{k}": v for k, v in self.metrics.items()})
        arrays.update({f"{_RECORDED}{k}": v for k, v in self.recorded.items()})
        meta = json.dumps({"config": self.config, "versions": self.versions})
        save_npz(path, {"meta": np.array(meta), **arrays})

    @classmethod
    @declare(path=Location(exists=True))
    def load(cls, path: str | Path) -> RunRecord:
        """Read a record written by :meth:`save`; a damaged or edited file raises
        :class:`fedtheory.io.DamagedFileError`."""
        z = load_npz(path)
        try:
            meta = json.loads(str(z["meta"]))
            config, versions, iterates = meta["config"], meta["versions"], z["iterates"]
            metrics = {k[7:]: z[k] for k in z if k.startswith("metric_")}
            optional = {k: z[k] for k in _OPTIONAL if k in z}
            participation = optional.pop("participation", None)
            recorded = {k[len(_RECORDED) :]: z[k] for k in z if k.startswith(_RECORDED)}
            return cls(iterates, participation, metrics, config, versions, **optional,
                       recorded=recorded)  # fmt: skip
        except (KeyError, ValueError, TypeError, ParameterError) as err:
            raise DamagedFileError(path, f"not a run record ({err!r})") from None
