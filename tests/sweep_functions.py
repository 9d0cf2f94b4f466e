"""Functions swept by tests/test_sweep.py, in a module of their own: Dask workers import
it to unpickle them, and it imports nothing heavy (numpy only)."""

from __future__ import annotations

import os
import signal

import numpy as np


def noisy(settings: dict, seed: int) -> dict:
    """A cheap random measurement: draws from ``seed`` only."""
    g = np.random.default_rng(seed)
    x = settings["x"] + g.normal(size=settings["n"])
    return {"mean": x.mean(), "max": x.max(), "positive": bool(x.mean() > 0)}


def vectorised(settings: dict, seed: int) -> dict:
    """Several rows per call (replicates vectorised inside the call)."""
    g = np.random.default_rng(seed)
    return {"y": settings["x"] + g.normal(size=3), "bound": 10.0}


def killer(settings: dict, seed: int) -> dict:
    """:func:`noisy`, but the first call at x == 1 kills its own worker process (SIGKILL,
    as the out-of-memory killer would); the marker file makes later calls compute."""
    if settings["x"] == 1.0 and seed == settings["victim_seed"]:
        try:
            fd = os.open(settings["marker"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return noisy(settings, seed)


def counted(settings: dict, seed: int) -> dict:
    """:func:`noisy`, appending one line per call to the file ``settings["calls"]``."""
    with open(settings["calls"], "a") as f:
        f.write(f"{settings['x']} {seed}\n")
    return noisy(settings, seed)


def slow(settings: dict, seed: int) -> dict:
    """:func:`noisy` after ``settings["sleep"]`` seconds (for interrupting a run)."""
    import time

    time.sleep(settings["sleep"])
    return noisy(settings, seed)
