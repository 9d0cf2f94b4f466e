"""The record of a simulated run: per-round iterates and metrics, configuration, seed and
library versions, so that the run can be reproduced and saved."""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fedtheory.io import atomic_write_bytes


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


@dataclass
class RunRecord:
    """Result of :func:`fedtheory.sim.simulate`.

    Attributes
    ----------
    iterates : ndarray [R, T+1, d]
        Server models :math:`w_0,\\dots,w_T` for every replicate.
    participation : ndarray [R, T, N]
        Availability mask that was used.
    metrics : dict of ndarray [R, T+1]
        Per-round metrics, e.g. ``"gap"`` = :math:`F(w_t)-F^*`.
    config : dict
        Everything needed to rerun (algorithm, process, sizes, seed).
    versions : dict
        Library versions.
    """

    iterates: np.ndarray
    participation: np.ndarray
    metrics: dict[str, np.ndarray]
    config: dict
    versions: dict[str, str] = field(default_factory=library_versions)

    def save(self, path: str | Path) -> None:
        """Write the record to one ``.npz`` file (atomically)."""
        arrays = {"iterates": self.iterates, "participation": self.participation}
        arrays.update({f"metric_{k}": v for k, v in self.metrics.items()})
        meta = json.dumps({"config": self.config, "versions": self.versions})
        import io

        buf = io.BytesIO()
        np.savez_compressed(buf, meta=np.array(meta), **arrays)
        atomic_write_bytes(Path(path), buf.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> RunRecord:
        """Read a record written by :meth:`save`."""
        with np.load(Path(path), allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            metrics = {k[7:]: z[k] for k in z.files if k.startswith("metric_")}
            return cls(z["iterates"], z["participation"], metrics, meta["config"], meta["versions"])
