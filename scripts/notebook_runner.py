"""Execute the notebooks and store each with its outputs (run by ``scripts/notebooks``).

Each notebook runs top to bottom in the ``python3`` Jupyter kernel (nbclient), in a fresh
temporary folder (files it writes do not land in the repository), and is written back with
its outputs so that a reader on GitHub sees them. Only what is the same on every run is
stored: no execution times, no kernel or language version, a stream's writes as one output;
the notebooks fix their seeds and print what their computation certifies (not the last
digits, which depend on the BLAS kernel).
``tests/test_notebooks.py`` executes them again and compares (:func:`shown`), so a stored
output cannot go stale. Arguments: notebook paths (default: every notebook).
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import nbclient
import nbformat

FOLDER = Path(__file__).resolve().parents[1] / "notebooks"
TEXT_KINDS = ("text/plain", "text/markdown", "text/html", "text/latex")
VOLATILE = (
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "0x..."),  # a memory address: <object at 0x7f...>
    (re.compile(r"Compute time: \d+\.\d s\b"), "Compute time: ... s"),  # a report's wall time
)
"""What differs between two runs of the same code: replaced before outputs are compared."""


def execute(path: Path) -> nbformat.NotebookNode:
    """The notebook at ``path`` executed in a fresh kernel, with only stable metadata."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as folder:
        client = nbclient.NotebookClient(
            nb,
            kernel_name="python3",
            timeout=600,
            record_timing=False,
            resources={"metadata": {"path": folder}},
        )
        client.execute()  # raises CellExecutionError naming the failing cell
    nb.metadata = nbformat.from_dict({"kernelspec": nb.metadata.get("kernelspec", {})})
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = _merged_streams(cell.outputs)
    return nb


def _merged_streams(outputs: list) -> list:
    """Consecutive writes to one stream as one output: how a kernel splits them depends on
    when it flushes."""
    merged = []
    for out in outputs:
        last = merged[-1] if merged else None
        if out.output_type == "stream" and last and last.output_type == "stream":
            if last.name == out.name:
                last.text += out.text
                continue
        merged.append(out)
    return merged


def shown(nb: nbformat.NotebookNode) -> list[list[str]]:
    """Per code cell, the text its outputs show (streams, results, errors), with the
    :data:`VOLATILE` parts replaced; a figure counts as ``<image/png>`` (its pixels are not
    compared)."""
    cells = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        texts = []
        for out in cell.outputs:
            if out.output_type == "stream":
                texts.append(f"{out.name}: {out.text}")
            elif out.output_type == "error":
                texts.append(f"error: {out.ename}: {out.evalue}")
            else:
                data = out.get("data", {})
                texts += [f"{k}: {data[k]}" for k in TEXT_KINDS if k in data]
                texts += ["<image/png>"] * ("image/png" in data)
        for pattern, stands_for in VOLATILE:
            texts = [pattern.sub(stands_for, t) for t in texts]
        cells.append(texts)
    return cells


def main(paths: list[str]) -> None:
    for path in [Path(p) for p in paths] or sorted(FOLDER.glob("*.ipynb")):
        nbformat.write(execute(path), path)
        print(f"{path}: executed, stored with its outputs", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
