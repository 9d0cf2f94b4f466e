"""The tightness outputs that README.md and docs/tightness.md show are the ones the current
code prints: each block marked ``<!-- tightness-output: COMMAND -->`` is compared with the
output of ``COMMAND`` run now, and the Python examples of docs/tightness.md run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from fedtheory.cli import main
from tests.conftest import paper_marks

ROOT = Path(__file__).resolve().parents[1]
MARKED = re.compile(
    r"<!-- tightness-output: (?P<command>.*?) -->\n```text\n(?P<text>.*?)```\n"
    r"<!-- end tightness-output -->",
    flags=re.S,
)
BLOCKS = [
    pytest.param(path.name, m["command"], m["text"], id=f"{path.name}:{m['command']}",
                 marks=paper_marks(m["command"]))
    for path in (ROOT / "README.md", ROOT / "docs" / "tightness.md")
    for m in MARKED.finditer(path.read_text())
]  # fmt: skip
PYTHON = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "tightness.md").read_text(), re.S)
"""docs/tightness.md's Python examples, run after ``fedtheory tightness cafed.theorem1``."""


def test_the_readme_and_the_docs_have_marked_outputs():
    # the README is a landing page: the tightness outputs are shown in docs/tightness.md
    assert "tightness.md" in {block.values[0] for block in BLOCKS}


@pytest.mark.parametrize("where, command, text", BLOCKS)
def test_a_shown_output_is_what_the_code_prints(
    where, command, text, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)  # the default --out path is relative
    args = shlex.split(command)
    assert args[0] == "fedtheory"
    main(args[1:])
    assert capsys.readouterr().out == text


@pytest.mark.parametrize(
    "blocks", [pytest.param(PYTHON, marks=paper_marks("cafed " + "".join(PYTHON)), id="python")]
)
def test_the_docs_python_examples_run(blocks, tmp_path, monkeypatch):
    from fedtheory.tightness import FAMILIES

    monkeypatch.chdir(tmp_path)
    assert main(["tightness", "cafed.theorem1", "--scale", "0.5"]) == 1  # the replayed JSON
    namespace: dict = {}
    try:
        for code in blocks:  # in order, in one namespace, as a reader would
            exec(compile(code, "docs/tightness.md", "exec"), namespace)
    finally:
        FAMILIES.pop("mine.fedau_half", None)
