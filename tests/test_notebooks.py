"""Every notebook under notebooks/ runs from top to bottom in a real Jupyter kernel and is
stored with the outputs it prints now.

The notebooks are ``.ipynb`` files stored with their outputs (``scripts/notebooks`` executes
and writes them); nbclient executes each one again with the ``python3`` kernel of this
environment (ipykernel), as a user's Jupyter would, and its text outputs must equal the
stored ones (memory addresses aside) and its figures be stored. Each plot must be shown
inline (an image output), no cell may print a matplotlib object's repr such as
``<matplotlib.legend.Legend at 0x...>``, a warning or a temporary folder.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip(
    "nbformat", reason="the notebooks extra: pip install -e .[notebooks]"
)
pytest.importorskip("nbclient", reason="the notebooks extra")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import notebook_runner as runner  # noqa: E402  (scripts/notebook_runner.py)

from tests.conftest import paper_marks  # noqa: E402

FOLDER = ROOT / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
OBJECT_REPR = re.compile(r"<matplotlib\.[\w.]+ (at|object at) 0x")
NOISE = re.compile(r"\w+Warning\b|/tmp/|/var/folders/|ipykernel_\d+")
"""No output shows a warning (a notebook calls fedtheory's current API) or a temporary
folder (its outputs are the same on every machine)."""
PLOTS = re.compile(r"\bplt\.show\(\)")


def test_the_notebooks_exist():
    assert {"classroom", "paper_review"} <= {p.stem for p in NOTEBOOKS}


def _notebook(path: Path) -> pytest.param:
    """A notebook as a test parameter, marked for the papers its code names."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return pytest.param(path, id=path.stem, marks=paper_marks(code))


@pytest.mark.parametrize("path", [_notebook(p) for p in NOTEBOOKS])
def test_notebook_runs_in_a_jupyter_kernel_and_is_stored_with_its_outputs(path):
    stored = nbformat.read(path, as_version=4)
    nb = runner.execute(path)
    assert runner.shown(nb) == runner.shown(stored), f"stale outputs: run scripts/notebooks {path}"
    assert nb.metadata == stored.metadata  # no volatile metadata stored
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        texts = [o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs]
        assert not any(OBJECT_REPR.search(t) for t in texts), cell.source
        shown = [str(v) for o in cell.outputs for k, v in o.get("data", {}).items() if "text" in k]
        shown += [o.get("text", "") for o in cell.outputs]  # streams, warnings included
        assert not [m.group() for t in shown for m in NOISE.finditer(t)], (cell.source, shown)
        if PLOTS.search(cell.source):  # the figure is shown inline
            assert any("image/png" in o.get("data", {}) for o in cell.outputs), cell.source
