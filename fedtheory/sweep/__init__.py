r"""Sweeps: a function of ``(settings, seed)`` over a design (a grid or a list of points
times replicate seeds), run sequentially, on a local Dask cluster or on an existing one,
with results as a table (CSV or Parquet) that resumes after an interruption.

* :mod:`~fedtheory.sweep.design` -- :func:`grid`, :func:`points`, :func:`point_seed`;
* :mod:`~fedtheory.sweep.executor` -- where tasks run (:func:`open_executor`);
* :mod:`~fedtheory.sweep.store` -- per-task files and the table;
* :mod:`~fedtheory.sweep.runner` -- :func:`run_sweep`;
* :mod:`~fedtheory.sweep.summary` -- per-point means, bounds and tightness ratios, and
  their heatmap or line plot.
"""

from fedtheory.sweep.design import Design, grid, point_seed, points
from fedtheory.sweep.executor import open_executor
from fedtheory.sweep.runner import SweepProgress, run_sweep
from fedtheory.sweep.store import read_table, write_table

__all__ = [
    "Design",
    "SweepProgress",
    "grid",
    "open_executor",
    "point_seed",
    "points",
    "read_table",
    "run_sweep",
    "write_table",
]
