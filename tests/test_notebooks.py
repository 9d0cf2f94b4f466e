"""The notebooks (jupytext percent-format scripts) run from top to bottom.

They are stored as ``.py`` so that diffs are readable; Jupyter opens them through jupytext.
Running them as plain Python checks every cell without a Jupyter kernel in CI.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import matplotlib
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        namespace = runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
    assert namespace  # the notebook defined something: it really ran
