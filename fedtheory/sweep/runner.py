r"""Run a sweep: ``fn(settings, seed)`` at every task of a design, on any executor, with
results as a table that resumes after an interruption.

With an output file, the run holds the lock of its folder (a second run into the same
folder is refused, naming the holder), removes the temporary files a killed run left,
reuses only the task files whose checksum verifies (a damaged or edited one is reported
and recomputed), and on Ctrl-C writes the table of the finished tasks and raises
:class:`SweepInterrupted`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path

import numpy as np

from fedtheory.budget import check_seconds, task_seconds
from fedtheory.constraints import Function, Instance, JsonMapping, Location, declare
from fedtheory.errors import ParameterError
from fedtheory.io import DamagedFileError, folder_lock, remove_temporaries
from fedtheory.sweep import store
from fedtheory.sweep.design import RESERVED, Design, Task
from fedtheory.sweep.executor import (
    SCHEDULER,
    WORKERS,
    ClusterLostError,
    check_where,
    open_executor,
)

__all__ = ["SweepInterrupted", "SweepProgress", "run_sweep"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepProgress:
    """Where a sweep stands: ``done`` of ``total`` tasks finished, of which ``reused`` were
    read back from an earlier run; ``where`` describes the executor and ``dashboard`` is
    the Dask dashboard's address (``None`` for sequential runs); ``notes`` says what was
    found in the store before the run (damaged task files recomputed, temporary files
    removed)."""

    done: int
    total: int
    reused: int
    where: str
    dashboard: str | None
    notes: tuple[str, ...] = ()


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_sweep`: the finished tasks are saved (and, with an output
    file, their table written); ``table`` holds their rows; the message says how to
    resume."""

    def __init__(self, message: str, table) -> None:
        super().__init__(message)
        self.table = table


def _scalar(value: object) -> bool | int | float | str:
    if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0:
        value = value.item()
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    raise TypeError(type(value).__name__)


def _rows(out: object) -> list[dict]:
    """What ``fn`` returned as result rows: one row for a number or a dict of scalars;
    ``n`` rows (with ``sample`` = 0..n-1) for a dict holding 1-D arrays of length ``n``
    (scalars repeated on each row)."""
    out = out if isinstance(out, Mapping) else {"value": out}
    if "sample" in out:
        raise TypeError("'sample' is the row number of array results")
    lengths = {np.size(v) for v in out.values() if np.ndim(v) == 1}
    if not lengths:
        return [{str(k): _scalar(v) for k, v in out.items()}]
    if len(lengths) > 1 or any(np.ndim(v) > 1 for v in out.values()):
        raise TypeError("arrays of different lengths or dimensions")
    (n,) = lengths
    columns = {
        str(k): [_scalar(x) for x in v] if np.ndim(v) == 1 else [_scalar(v)] * n
        for k, v in out.items()
    }
    return [{"sample": i, **{k: c[i] for k, c in columns.items()}} for i in range(n)]


def _call(fn: Callable, task: Task) -> list[dict]:
    """``fn(task.settings, task.seed)`` as result rows (see :func:`_rows`). Runs where the
    executor runs it."""
    out = fn(task.settings, task.seed)
    try:
        return _rows(out)
    except TypeError as error:
        raise ParameterError(
            "The 'fn' parameter of run_sweep must return a number or a dict of numbers, "
            "bools, strings or 1-D arrays of one length. Got "
            f"{out!r} at {task.point}, replicate {task.replicate} instead."
        ) from error


def _task_rows(task: Task, results: list[dict]) -> list[dict]:
    clash = (set(results[0]) - {"sample"}) & (set(task.point) | set(RESERVED))
    if clash:
        raise ParameterError(
            "The 'fn' parameter of run_sweep must return names other than the settings and "
            f"{RESERVED}. Got {sorted(clash)} instead."
        )
    return [
        {**task.point, "replicate": task.replicate, "seed": task.seed, **result}
        for result in results
    ]


class _Call:
    """``_call(fn, task)`` as a picklable callable of the task alone."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, task: Task) -> list[dict]:
        return _call(self.fn, task)


@declare(
    "max_seconds",
    fn=store.FUNCTION,
    design=Instance(Design),
    fixed=JsonMapping(),
    out=Location(suffixes=store.FORMATS, writable=True, none=True),
    workers=WORKERS,
    scheduler=SCHEDULER,
    progress=Function(none=True),
)
def run_sweep(
    fn: Callable[[dict, int], Mapping | float],
    design: Design,
    *,
    fixed: Mapping | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[SweepProgress], None] | None = None,
    max_seconds: float | None = None,
):
    r"""Call ``fn(settings, seed)`` at every (point, replicate) of ``design`` and return the
    results as a ``pandas.DataFrame`` in design order: the swept settings, ``replicate``,
    ``seed``, then what ``fn`` returned. ``fn`` returns one row (a dict of numbers, bools or
    strings, or a bare number, the column ``value``) or, to vectorise replicates inside one
    call, ``n`` rows: a dict of 1-D arrays of length ``n`` (and scalars, repeated), rows
    numbered by the column ``sample``.

    Parameters
    ----------
    fn : function ``(settings: dict, seed: int) -> dict | float``
        A pure function of its arguments (no global random state: draw from ``seed``).
        It receives ``{**fixed, **point}``. On a cluster it is pickled (cloudpickle) to the
        workers, which must be able to import what it uses.
    design : Design
        From :func:`fedtheory.sweep.grid` or :func:`fedtheory.sweep.points`. Each task's
        seed is :func:`fedtheory.sweep.point_seed` of (design seed, point, replicate), so
        the table does not depend on the executor or the order in which tasks finish.
    fixed : dict, optional
        JSON-able settings passed to every call (not columns of the table).
    out : path ending in .csv or .parquet, optional
        Write the table there (atomically) and keep each finished task in
        ``<out>.parts/``; a rerun reuses the tasks finished with the same point, seed,
        fixed settings, code (fedtheory, fedtheory.validation and ``fn``'s source file)
        and library versions, so an interrupted sweep resumes where it stopped.
        Parquet needs pyarrow.
    workers : int, optional
        Run on a local Dask cluster of this many processes (``pip install
        "fedtheory[dask]"``).
    scheduler : str, optional
        Run on an existing Dask cluster, e.g. ``"tcp://10.0.0.5:8786"`` (exclusive with
        ``workers``).
    progress : callable, optional
        Called with a :class:`SweepProgress` once the tasks are handed over and after each
        finished task (the command line draws a progress bar and prints the dashboard).
    max_seconds : float, optional
        Time cap of the whole sweep (default ``FEDTHEORY_MAX_SECONDS``, else 10 minutes):
        the sum over its tasks of rounds x replicates x clients x dimension x local steps
        read from each task's settings (:func:`fedtheory.budget.task_seconds`) is
        refused above it before any task runs, with the estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from fedtheory.sweep import grid, run_sweep
    >>> def noisy_square(s, seed):
    ...     return {"y": s["x"] ** 2 + np.random.default_rng(seed).normal(scale=s["noise"])}
    >>> table = run_sweep(noisy_square, grid({"x": [1.0, 2.0]}, replicates=3), fixed={"noise": 0.1})
    >>> list(table.columns), len(table)
    (['x', 'replicate', 'seed', 'y'], 6)
    """
    try:
        import pandas  # noqa: F401
    except ImportError as error:
        raise ImportError(
            'sweeps return pandas tables: pip install "fedtheory[sweep]" (or pandas)'
        ) from error

    workers, scheduler = check_where(workers, scheduler)  # before any work
    tasks = list(design.tasks(fixed))
    check_seconds(sum(task_seconds(t.settings) for t in tasks), "run_sweep",
                  what=f"{len(tasks)} tasks: rounds x replicates x clients x dim summed over "
                  "the grid", fixes="a smaller grid, fewer seeds, rounds or replicates",
                  max_seconds=max_seconds)  # fmt: skip
    context = {"function": store.function_digest(fn)}
    if out is None:
        return _run(fn, design, fixed, context, None, workers, scheduler, progress)
    with folder_lock(out.parent):
        return _run(fn, design, fixed, context, out, workers, scheduler, progress)


def _reuse(tasks, fixed, context, out: Path | None, rows: list) -> tuple[list, list[str]]:
    """Fill ``rows`` with the verified saved results of ``tasks``; returns the resume keys
    and what was found (damaged files, removed temporaries)."""
    if out is None:
        return [], []
    from fedtheory.sim.record import library_versions

    context |= {"code": store.code_digest(), "versions": library_versions()}
    folder = store.parts_folder(out)
    notes = []
    if removed := [*remove_temporaries(out.parent, out.name), *remove_temporaries(folder)]:
        notes.append(f"removed {len(removed)} temporary file(s) left by an interrupted run")
    keys = [store.task_key(t, fixed, context) for t in tasks]
    for t, key in zip(tasks, keys, strict=True):
        try:
            saved = store.load_part(folder, key)
        except DamagedFileError as err:
            notes.append(f"{err} Recomputing that task.")
            err.path.unlink(missing_ok=True)
            continue
        if saved is not None:
            rows[t.index] = _task_rows(t, saved)
    for note in notes:
        logger.warning("sweep: %s", note)
    return keys, notes


def _run(fn, design, fixed, context, out, workers, scheduler, progress):
    """:func:`run_sweep` after its checks (and, with ``out``, under its folder's lock)."""
    import pandas as pd

    tasks = list(design.tasks(fixed))
    rows: list[list[dict] | None] = [None] * len(tasks)
    keys, notes = _reuse(tasks, fixed, context, out, rows)
    folder = None if out is None else store.parts_folder(out)

    def table():
        return pd.DataFrame.from_records([r for task_rows in rows if task_rows for r in task_rows])

    todo = [t for t in tasks if rows[t.index] is None]
    reused = len(tasks) - len(todo)
    where = {"workers": workers, "scheduler": scheduler} if todo else {}  # no cluster if done
    done = reused
    try:
        with open_executor(**where) as executor:
            logger.info("sweep: %d tasks (%d reused) on %s", len(tasks), reused,
                        executor.description)  # fmt: skip

            def report(done: int) -> None:
                if progress is not None:
                    where, dashboard = executor.description, executor.dashboard
                    progress(SweepProgress(done, len(tasks), reused, where, dashboard,
                                           tuple(notes)))  # fmt: skip

            report(reused)
            for done, (i, result) in enumerate(executor.map(_Call(fn), todo), reused + 1):
                task = todo[i]
                rows[task.index] = _task_rows(task, result)
                if folder is not None:
                    store.save_part(folder, keys[task.index], task, result)
                report(done)
    except KeyboardInterrupt:
        finished, saved_in = table(), ""
        if out is not None and len(finished):
            store.write_table(finished, out)
            saved_in = f"; their table is in {out}; rerun the same command to resume"
        raise SweepInterrupted(
            f"interrupted: {done} of {len(tasks)} tasks finished{saved_in}", finished
        ) from None
    except ClusterLostError as err:
        if folder is None:
            raise ClusterLostError(f"{err}; {done} of {len(tasks)} tasks had finished (with "
                                   "out= they are kept for a rerun)") from None  # fmt: skip
        raise ClusterLostError(f"{err}; {done} of {len(tasks)} tasks are saved in {folder}; "
                               "rerun the same command to resume") from None  # fmt: skip
    result = table()
    if out is not None:
        store.write_table(result, out)
    return result
