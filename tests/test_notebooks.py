"""Every notebook under notebooks/ runs from top to bottom in a real Jupyter kernel.

The notebooks are ``.ipynb`` files stored without outputs; nbclient executes each one with
the ``python3`` kernel of this environment (ipykernel), as a user's Jupyter would. Each
plot must be shown inline (an image output), no cell may print a matplotlib object's
repr such as ``<matplotlib.legend.Legend at 0x...>``, a warning or a temporary folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="the notebooks extra: pip install -e .[notebooks]"
)
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra")

FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
OBJECT_REPR = re.compile(r"<matplotlib\.[\w.]+ (at|object at) 0x")
NOISE = re.compile(r"\w+Warning\b|/tmp/|/var/folders/|ipykernel_\d+")
"""No output shows a warning (a notebook calls fedtheory's current API) or a temporary
folder (its outputs are the same on every machine)."""
PLOTS = re.compile(r"\bplt\.show\(\)")


def test_the_notebooks_exist():
    assert {"classroom", "paper_review"} <= {p.stem for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_a_jupyter_kernel(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},  # files it writes go to tmp_path
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        texts = [o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs]
        assert not any(OBJECT_REPR.search(t) for t in texts), cell.source
        shown = [str(v) for o in cell.outputs for k, v in o.get("data", {}).items() if "text" in k]
        shown += [o.get("text", "") for o in cell.outputs]  # streams, warnings included
        assert not [m.group() for t in shown for m in NOISE.finditer(t)], (cell.source, shown)
        if PLOTS.search(cell.source):  # the figure is shown inline
            assert any("image/png" in o.get("data", {}) for o in cell.outputs), cell.source
