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

from tests.conftest import paper_marks

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


def _shown(name: str, *values) -> pytest.param:
    """An example as a test parameter, marked for the papers it names (``paper_marks``)."""
    return pytest.param(*values, id=name, marks=paper_marks(" ".join(map(str, values))))


PYTHON = [(n, c) for n, c in _blocks("python") if not c.lstrip().startswith(">>>")]
PYCON = _doctests()
CONSOLE = _blocks("console")


def test_the_readme_shows_outputs_that_are_checked():
    readme = [name for name, _ in PYCON + CONSOLE if name.startswith("README.md")]
    assert len(readme) >= 2


@pytest.mark.parametrize("code", [_shown(n, c) for n, c in PYTHON])
def test_example_runs(code):
    exec(compile(code, "<example>", "exec"), {})


@pytest.mark.parametrize("code", [_shown(n, c) for n, c in PYCON])
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


@pytest.mark.parametrize("block", [_shown(n, c) for n, c in CONSOLE])
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


COMMAND_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
COMMAND_PAGES = [p for p in COMMAND_PAGES if not {"_build", "theorems", "notebooks"} & set(p.parts)]
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(\.[a-z]+)?")  # KEY, N, FILE.py, CONFIG.toml
RUN = {"list", "show", "eval", "pep"}  # subcommands that finish in seconds: run, not only parsed


def _shown_commands() -> list[tuple[str, str, bool]]:
    """``(where, command, complete)`` of every ``fedtheory`` or ``./scripts`` command the
    pages show: each line of a shell block (continuations joined, comments dropped;
    complete) and each inline code span starting with ``fedtheory `` (maybe a fragment
    of a sentence, e.g. ``fedtheory validate --module``)."""
    found = []
    for page in COMMAND_PAGES:
        text = page.read_text(encoding="utf-8")
        where = str(page.relative_to(ROOT))
        for code in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, flags=re.S):
            for line in code.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if words and (words[0] == "fedtheory" or words[0].startswith("./scripts/")):
                    found.append((where, shlex.join(words), True))
        outside = re.sub(r"```.*?```", "", text, flags=re.S)
        for span in re.findall(r"`(fedtheory [^`]+)`", outside):
            found.append((where, span, False))
    return found


COMMANDS = _shown_commands()


class _Refused(Exception):
    """argparse refused the command line (its message)."""


def _parse(args: list[str]):
    """The CLI's own parser on ``args``; :class:`_Refused` with argparse's message."""
    from fedtheory.cli import build_parser

    parser = build_parser()

    def refuse(message):
        raise _Refused(message)

    subparsers = parser._subparsers._group_actions[0].choices.values()
    for p in (parser, *subparsers):
        p.error = refuse
    try:  # as fedtheory.cli.main: only a command with options of its own takes more
        parsed, rest = parser.parse_known_args(args)
        if rest and not hasattr(parsed, "rest"):
            refuse(f"unrecognized arguments: {' '.join(rest)}")
        return parsed
    except SystemExit as stop:  # --version, --help
        assert stop.code == 0
        return None


def test_every_page_shows_commands_that_are_checked():
    assert len([c for c in COMMANDS if c[2]]) >= 20 and len(COMMANDS) >= 40


@pytest.mark.parametrize(
    "where, command, complete", [_shown(f"{c[0]}:{c[1]}", *c) for c in COMMANDS]
)
def test_every_shown_command_is_one_the_code_accepts(where, command, complete, capsys):
    """A command a page shows parses with the CLI's own parser (subcommand, options, choices),
    names what exists (catalogue keys, validations, tightness families, files of the
    repository), and a quick one (list, show, eval, pep, --version) runs with exit status 0.
    An inline span may be a fragment (``fedtheory validate --module``: only a missing value
    is excused) or hold placeholders (``KEY``, ``N``, ``FILE.py``: errors about them are)."""
    args = [a.strip("[]") for a in shlex.split(command)]
    if args[0].startswith("./scripts/"):
        assert (ROOT / args[0]).is_file(), f"{where}: no script {args[0]}"
        return
    placeholders = [a for a in args[1:] if PLACEHOLDER.fullmatch(a)]
    try:
        parsed = _parse(args[1:])
    except _Refused as err:
        message = str(err)
        fragment = not complete and (
            "arguments are required" in message or "expected one argument" in message
        )
        about_placeholder = any(f"'{p}'" in message for p in placeholders)
        assert fragment or about_placeholder, f"{where}: `{command}`: {message}"
        return
    if parsed is None or placeholders:
        return
    from fedtheory.bounds import CATALOGUE
    from fedtheory.tightness import FAMILIES
    from fedtheory.validation.machinery.registry import CHECKS

    if parsed.command in ("show", "eval"):
        assert parsed.key in CATALOGUE, f"{where}: `{command}`: no theorem {parsed.key}"
    modules = getattr(parsed, "module", None) or []
    modules = [modules] if isinstance(modules, str) else modules
    if parsed.command == "validate" and not modules:
        unknown = set(parsed.check or ()) - set(CHECKS)
        assert not unknown, f"{where}: `{command}`: no validation {sorted(unknown)}"
    if parsed.command == "tightness" and not modules:
        assert parsed.key in FAMILIES, f"{where}: `{command}`: no tightness family {parsed.key}"
    for path in (*modules, getattr(parsed, "config", None)):
        if path and (ROOT / Path(path).parts[0]).is_dir():  # a file of the repository
            assert (ROOT / path).is_file(), f"{where}: `{command}`: no file {path}"
    if complete and parsed.command in RUN:
        from fedtheory.cli import main

        status = main(args[1:])
        assert status == 0, f"{where}: `{command}` exited with {status}: {capsys.readouterr()}"
