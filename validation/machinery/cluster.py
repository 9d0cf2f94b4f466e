r"""The local Dask cluster of ``fedtheory validate --workers N``: workers that start warm
and take one validation at a time.

* **Forked workers** (Linux): a worker process spawned afresh imports torch, the
  simulator and the validations again before its first task, about 7 s of CPU time each
  (``python -X importtime``), on the critical path of a report; a worker forked from the
  command's process, which imported them to find the validations and has computed
  nothing yet, starts with them loaded. A process forked after OpenMP ran a parallel
  region hangs in its own first parallel region (GNU OpenMP is not fork-safe), so every
  worker runs torch (and the fused kernel, which takes torch's threads) on
  its own thread count, one per task slot, set by :func:`dask_setup` before its first
  task: the count a spawned worker gets from Dask's ``OMP_NUM_THREADS=1``. The numbers do
  not depend on the thread count (:mod:`fedtheory.threads`). A user's file of checks
  (``--module``) may have run parallel code of its own (numba's, say) when imported: then
  the workers are spawned.
* **One task per worker**: a worker holds no queued validation
  (``worker-saturation`` 1.0), so that they start in the order the runner submits them
  (:func:`fedtheory.validation.machinery.runner.longest_first`) on whichever worker is free.

Elsewhere (macOS, Windows: fork is unsafe or absent) workers are spawned as before.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from fedtheory.constraints import Bool, Exemplified, Having, declare

__all__ = ["dask_setup", "local_cluster"]

WORKER = Exemplified(
    Having("state"),
    lambda args: SimpleNamespace(state=SimpleNamespace(nthreads=_threads())),
)
"""A Dask worker (what :func:`dask_setup` reads of it: ``state.nthreads``)."""


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def settings(*, fork: bool = True) -> dict[str, object]:
    """The Dask configuration of :func:`local_cluster` on this platform."""
    config: dict[str, object] = {"distributed.scheduler.worker-saturation": 1.0}
    if fork and sys.platform == "linux":
        config["distributed.worker.multiprocessing-method"] = "fork"
        config["distributed.worker.preload"] = [__name__]
    return config


@declare(fork=Bool())
@contextmanager
def local_cluster(*, fork: bool = True) -> Iterator[None]:
    """Within the block, a local cluster that :func:`fedtheory.sweep.open_executor` starts
    has single-task workers, forked from this process (``fork``, on Linux) or spawned
    (module docstring)."""
    try:
        import dask
    except ImportError:  # open_executor's own message says what to install
        yield
        return
    with dask.config.set(settings(fork=fork)):
        yield


@declare(worker=WORKER)
def dask_setup(worker) -> None:
    """Dask's preload hook, run in each worker before its first task: torch on as many
    threads as the worker has task slots (``worker.state.nthreads``)."""
    import torch

    torch.set_num_threads(worker.state.nthreads)
