r"""Where independent tasks run: in this process, one after another (the default), or on a
Dask cluster (``dask.distributed``): a local one of ``workers`` processes, or an existing one
given by its scheduler's address.

Every executor has the same ``map(fn, items, submitted=None)``: it yields ``(i, fn(items[i]))``
as tasks finish (in any order on a cluster) and calls ``submitted(i)`` when task ``i`` is
handed over. A task's exception is raised in the caller, after the tasks finished before it
were yielded. A worker lost while running a task (killed, out of memory) is replaced by
Dask and the task rerun elsewhere, so callers whose tasks are pure functions of their input
get the same results whatever happens to the workers. A scheduler that cannot be reached
or is lost raises :class:`ClusterLostError` naming its address. A local cluster gets at
most one worker per core this process may use (a warning says when fewer than asked), its
workers leave Ctrl-C to this process, and it is shut down quietly.

Dask is optional: ``pip install "fedtheory[dask]"``.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from fedtheory.constraints import Function, Having, Instance, SequenceOf, Size, Text, declare
from fedtheory.errors import FedTheoryError, ParameterError

__all__ = ["ClusterLostError", "DaskExecutor", "Executor", "Sequential", "open_executor"]

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a scheduler given by its address before giving up."""


class ClusterLostError(FedTheoryError):
    """The Dask scheduler cannot be reached, or was lost during a run."""


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


DASK_MISSING = (
    "running on a Dask cluster needs dask.distributed, an optional dependency of fedtheory: "
    'pip install "fedtheory[dask]" (or pip install "dask[distributed]")'
)


class _Workers(Size):
    """A number of worker processes, or ``None``: above the cores this process may use it
    is lowered to them with a warning (:func:`check_where`). No edge value for generated
    tests: any number starts a cluster of processes (seconds, not a unit test's work)."""

    def edges(self, valid):
        return []


WORKERS = _Workers(none=True)
SCHEDULER = Text(none=True)
"""``workers=`` and ``scheduler=`` of :func:`open_executor` and of the sweeps."""
MAP = {"fn": Function(), "items": SequenceOf(), "submitted": Function(none=True)}
"""The arguments of every executor's ``map``: a function, a list or tuple of items, and an
optional callback."""


class Executor(Protocol):
    """Runs independent tasks; see the module docstring."""

    description: str
    dashboard: str | None  # the Dask dashboard's address, if any

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Sequence,
        submitted: Callable[[int], None] | None = None,
    ) -> Iterator[tuple[int, Any]]: ...


class Sequential:
    """Tasks one after another in this process, in order."""

    description = "this process (sequential)"
    dashboard = None

    @declare(**MAP)
    def map(self, fn, items, submitted=None):
        for i, item in enumerate(items):
            if submitted is not None:
                submitted(i)
            yield i, fn(item)

    def __repr__(self) -> str:
        return "Sequential()"


class DaskExecutor:
    """Tasks on the Dask cluster of ``client`` (a ``distributed.Client``), as they finish.

    Unfinished tasks are cancelled when the caller stops iterating (an exception, an
    interrupt), so nothing keeps running on the cluster for a sweep that has stopped.
    """

    @declare(client=Having("scheduler", "dashboard_link", "scheduler_info", "map", "cancel"))
    def __init__(self, client) -> None:
        self.client = client
        self.address = client.scheduler.address
        self.dashboard = client.dashboard_link
        workers = len(client.scheduler_info().get("workers", {}))
        self.description = f"Dask cluster {self.address} ({workers} workers)"

    @declare(error=Instance(BaseException))
    def lost(self, error: BaseException) -> ClusterLostError:
        """The error saying that the cluster was lost (``error``: what Dask raised)."""
        what = type(error).__name__
        return ClusterLostError(f"lost the Dask scheduler at {self.address} ({what})")

    @declare(**MAP)
    def map(self, fn, items, submitted=None):
        from distributed import as_completed
        from distributed.client import FutureCancelledError

        try:
            futures = self.client.map(fn, list(items), pure=False)
        except (OSError, TimeoutError) as error:
            raise self.lost(error) from None
        index = {f.key: i for i, f in enumerate(futures)}
        if submitted is not None:
            for i in range(len(futures)):
                submitted(i)
        try:
            for future, result in as_completed(futures, with_results=True, raise_errors=False):
                if future.status == "cancelled" or isinstance(result, FutureCancelledError):
                    raise self.lost(FutureCancelledError(future.key, "cancelled"))
                if future.status == "error":
                    future.result()  # raises the task's own exception here
                yield index[future.key], result
        except (OSError, TimeoutError) as error:  # CommClosedError is an OSError
            raise self.lost(error) from None
        finally:
            try:
                self.client.cancel([f for f in futures if not f.done()])
            except (OSError, TimeoutError):  # the scheduler is gone: nothing to cancel
                pass

    def __repr__(self) -> str:
        return f"DaskExecutor({self.description})"


def _distributed():
    try:
        import distributed
    except ImportError as error:
        raise ImportError(DASK_MISSING) from error
    return distributed


@declare(workers=WORKERS, scheduler=SCHEDULER)
def open_executor(*, workers: int | None = None, scheduler: str | None = None):
    """The executor for ``workers`` / ``scheduler`` (at most one of them), as a context
    manager that closes it on exit.

    Parameters
    ----------
    workers : int, optional
        Start a ``distributed.LocalCluster`` of this many worker processes (one thread
        each) on this machine, and shut it down on exit.
    scheduler : str, optional
        Address of a running Dask scheduler (``"tcp://host:8786"``, as printed by
        ``dask scheduler``); the cluster is left running on exit.

    With neither, tasks run sequentially in this process.

    Examples
    --------
    >>> with open_executor() as ex:
    ...     sorted(ex.map(lambda x: x * x, [1, 2, 3]))
    [(0, 1), (1, 4), (2, 9)]
    """
    return _open(*check_where(workers, scheduler))


def check_where(workers: object, scheduler: object) -> tuple[int | None, str | None]:
    """``(workers, scheduler)`` of :func:`open_executor` (declared :data:`WORKERS` and
    :data:`SCHEDULER`) after checking that they are exclusive; ``workers`` above the cores
    this process may use is lowered to them, with a warning."""
    if workers is not None and scheduler is not None:
        raise ParameterError(
            "The 'workers' parameter of open_executor must be None when a scheduler is "
            f"given (they are exclusive). Got workers={workers!r} and scheduler="
            f"{scheduler!r} instead."
        )
    if workers is not None:
        if workers > (cores := available_cores()):
            warnings.warn(
                f"workers={workers} is more than the {cores} core(s) this process may use; "
                f"starting {cores} (the results do not depend on the number of workers)",
                stacklevel=4,  # the caller of open_executor or run_sweep (declared)
            )
            workers = cores
    return workers, scheduler


@contextmanager
def _open(workers: int | None, scheduler: str | None):
    if workers is None and scheduler is None:
        yield Sequential()
        return
    distributed = _distributed()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
        except ValueError:  # not an address Dask can parse
            raise ParameterError(
                "The 'scheduler' parameter of open_executor must be an address such as "
                f"'tcp://host:8786'. Got {scheduler!r} instead."
            ) from None
        except (OSError, TimeoutError) as error:
            raise ClusterLostError(
                f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT:g} s "
                f"({type(error).__name__}); is it running (dask scheduler)?"
            ) from None
        with client:
            yield DaskExecutor(client)
        return
    with _workers_ignore_ctrl_c():
        cluster = distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.CRITICAL,  # no "still alive, killing" or heartbeat errors
        )
    with cluster, distributed.Client(cluster) as client:
        yield DaskExecutor(client)


@contextmanager
def _workers_ignore_ctrl_c():
    """Start worker processes with SIGINT ignored (inherited; Python then leaves it so), so
    that Ctrl-C in a terminal, sent to the whole process group, reaches this process alone:
    it stops the run and shuts the cluster down, without a traceback from each worker."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
