r"""Threads on a machine that other work shares: never slower than one thread.

fedtheory's CPU work runs on torch's OpenMP threads (``torch.get_num_threads()``, by default
one per core) and on the fused kernel's pool (:mod:`fedtheory.problems.fused`). Both assume
the cores are free. When other processes are busy (a notebook, a test suite, a sweep's
other workers), two things went wrong on a 2-core machine, measured with
``benchmarks/bench_sim.py``:

* OpenMP's workers spin-wait after each parallel operation (libgomp's default) on a core
  another process holds, and a parallel operation waits for its slowest worker, which the
  scheduler may have parked for a whole time slice. With one competing busy process
  (load average 4.7 from other work besides), the exact metrics of the benchmark run took
  1.65 s on two threads against 0.11 s on one (medians of 7); with
  ``OMP_WAIT_POLICY=PASSIVE``, 0.03 s against 0.15 s;
* more threads than idle cores still turn a parallel operation into a wait for the
  slowest: at load 6, passive waiting, the metrics took 1.2x longer on two threads.

So fedtheory (i) asks OpenMP to wait passively (``OMP_WAIT_POLICY=PASSIVE``), when torch is
not loaded yet and the user has not chosen a policy (:func:`prefer_passive_waiting`, called
when ``fedtheory`` is imported); and (ii) gives its work no more threads than the machine has
idle cores (:func:`available`): the cores this process may run on
(``os.sched_getaffinity``) less the threads of other processes that are runnable now
(``/proc/loadavg``'s running count, less this process's own running threads). The
simulator (:func:`fedtheory.sim.simulate`) and each validation's compute run inside
:func:`fitted_to_load`. The simulator's iterates do not depend on the thread count (the kernel is
bit-identical for any count; tested).

Within :func:`regardless_of_load` the load is ignored: ``torch.get_num_threads()`` threads
are used as before (the benchmark's 2-core/1-core ratio is measured so).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

__all__ = [
    "available",
    "fitted_to_load",
    "idle_cores",
    "prefer_passive_waiting",
    "regardless_of_load",
]

_IGNORE_LOAD: ContextVar[bool] = ContextVar("fedtheory_ignore_load", default=False)
_LOCK = threading.Lock()
_HELD = {"depth": 0, "torch": 1}  # open fitted_to_load blocks, torch's threads to restore


def prefer_passive_waiting() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the user set it or torch (and with it OpenMP,
    which reads the variable once when it loads) is already imported; ``True`` if set.

    Passive workers sleep as soon as an operation ends instead of spinning on a core that
    another process (or the fused kernel's second thread) needs."""
    if "OMP_WAIT_POLICY" in os.environ or "torch" in sys.modules:
        return False
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True


def _cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _own_running_threads() -> int:
    """This process's threads that are runnable now (state ``R`` in ``/proc/self/task``)."""
    running = 0
    for stat in Path("/proc/self/task").glob("*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # the thread ended meanwhile
            continue
        running += fields[0] == "R"
    return running


def idle_cores() -> int:
    r"""Cores of this process's affinity that other processes' runnable threads leave idle
    now, at least 1: :math:`\max(1,\ c-(r-r_{\rm own}))` with :math:`c` the affinity's
    cores, :math:`r` the runnable threads of the machine (``/proc/loadavg``) and
    :math:`r_{\rm own}` this process's. Without ``/proc`` (not Linux): :math:`c`."""
    cores, running = _cores(), _runnable()
    if running is None:
        return cores
    return max(1, cores - max(0, running - _own_running_threads()))


def _runnable() -> int | None:
    """Runnable threads of the whole machine now (``/proc/loadavg``), None without it."""
    try:
        return int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def available() -> int:
    """Threads fedtheory's CPU work uses now: ``torch.get_num_threads()`` capped by
    :func:`idle_cores` (not capped inside :func:`regardless_of_load`)."""
    import torch

    wanted = torch.get_num_threads()
    return wanted if _IGNORE_LOAD.get() or wanted == 1 else min(wanted, idle_cores())


@contextmanager
def fitted_to_load() -> Iterator[int]:
    """Within the block torch runs on :func:`available` threads (restored on exit, also on
    errors; blocks may nest or overlap in several Python threads: the outermost fixes the
    count and the last one out restores it). Yields the count."""
    import torch

    with _LOCK:
        if _HELD["depth"] == 0:
            _HELD["torch"] = torch.get_num_threads()
            torch.set_num_threads(available())
        _HELD["depth"] += 1
        count = torch.get_num_threads()
    try:
        yield count
    finally:
        with _LOCK:
            _HELD["depth"] -= 1
            if _HELD["depth"] == 0:
                torch.set_num_threads(_HELD["torch"])


@contextmanager
def regardless_of_load() -> Iterator[None]:
    """Within the block (in this thread or task), fedtheory uses ``torch.get_num_threads()``
    threads whatever the machine's load."""
    token = _IGNORE_LOAD.set(True)
    try:
        yield
    finally:
        _IGNORE_LOAD.reset(token)
