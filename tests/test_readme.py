"""The README and the documentation pages cannot go stale.

* every ``python`` block of the README and of ``docs/`` runs;
* every ``pycon`` block (or ``python`` block written with ``>>>`` prompts) is a doctest:
  each ``>>>`` line's output must be what the code prints;
* every ``console`` block is a list of ``$ fedtheory ...`` commands, each followed by its
  output: the command is run again and must print exactly that.

Pages generated at build time (``fedtheory-output`` directives, theorem pages) need no check
here: they are produced from the current code.
"""

from __future__ import annotations

import doctest
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
PAGES = [p for p in PAGES if "_build" not in p.parts and "theorems" not in p.parts]
OWN_TEST = {"tightness.md": "tests/test_tightness_docs.py"}  # pages whose examples chain files
PAGES = [p for p in PAGES if p.name not in OWN_TEST]


def _blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for i, code in enumerate(re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)):
            found.append((f"{page.relative_to(ROOT)}:{language}{i}", code))
    return found


def _doctests() -> list[tuple[str, str]]:
    """Per page, its ``pycon`` blocks and its ``python`` blocks written with ``>>>`` prompts,
    in page order, as one doctest (the blocks of a page share their names)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        blocks = re.findall(r"```(?:pycon|python)\n(.*?)```", text, flags=re.S)
        prompts = [b for b in blocks if b.lstrip().startswith(">>>")]
        if prompts:
            found.append((f"{page.relative_to(ROOT)}:doctest", "\n".join(prompts)))
    return found


PYTHON = [(n, c) for n, c in _blocks("python") if not c.lstrip().startswith(">>>")]
PYCON = _doctests()
CONSOLE = _blocks("console")


def test_the_readme_shows_outputs_that_are_checked():
    readme = [name for name, _ in PYCON + CONSOLE if name.startswith("README.md")]
    assert len(readme) >= 2


@pytest.mark.parametrize("code", [c for _, c in PYTHON], ids=[n for n, _ in PYTHON])
def test_example_runs(code):
    exec(compile(code, "<example>", "exec"), {})


@pytest.mark.parametrize("code", [c for _, c in PYCON], ids=[n for n, _ in PYCON])
def test_shown_python_output_is_what_the_code_prints(code):
    test = doctest.DocTestParser().get_doctest(code, {}, "example", "<example>", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    lines: list[str] = []
    runner.run(test, out=lines.append)
    assert runner.failures == 0, "".join(lines)


def _commands(block: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    pairs: list[tuple[str, str]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], ""))
        elif pairs:
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + line + "\n")
    return pairs


@pytest.mark.parametrize("block", [c for _, c in CONSOLE], ids=[n for n, _ in CONSOLE])
def test_shown_command_output_is_what_the_command_prints(block):
    pairs = _commands(block)
    assert pairs, "a console block shows at least one `$ fedtheory ...` command"
    for command, expected in pairs:
        args = shlex.split(command)
        assert args[0] == "fedtheory", command
        done = subprocess.run(
            [sys.executable, "-m", "fedtheory", *args[1:]],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
            check=False,
        )
        assert done.stdout.rstrip() == expected.rstrip(), command
