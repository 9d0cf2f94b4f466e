"""The repository without some papers: a copy of its tracked files from which each removed
paper's own modules (every module its record names) and its record are deleted, and the
suite run there.

    python -m tests.paper_copy mimic [fedau ...] [-- PYTEST ARGS]

runs the remaining suite in such a copy (``scripts/test-without`` calls it): ``fedtheory``
and ``fedtheory.validation`` are imported from the copy only (``PYTHONPATH``, and a
``sitecustomize`` that drops a development install's finder; the repository's
``validation/`` is reached as ``fedtheory/validation`` through a link), and
``FEDTHEORY_WITHOUT`` names the removed papers' modules, so that ``tests/conftest.py``
leaves out the tests that are the removed papers' own: a test file that imports one of their
modules or a name only they define, and a test marked ``paper(name)`` with a removed
``name``. Any other import error is reported, not left out.
Every other test runs and must pass: that is what "a paper is removable" means."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WITHOUT = "FEDTHEORY_WITHOUT"
"""The environment variable naming the removed papers' modules (comma-separated) in a
copy."""

WITHOUT_CHECKS = "FEDTHEORY_WITHOUT_CHECKS"
"""The environment variable naming the removed papers' validations (``paper:check``,
comma-separated) in a copy."""


SITECUSTOMIZE = '''"""Import fedtheory from this copy only: a development install's finder
(pip install -e) would reach the repository's files, the removed papers' modules included."""
import sys

sys.meta_path[:] = [f for f in sys.meta_path if not f.__module__.startswith("__editable__")]
'''
"""Run at every interpreter's start in the copy (it is first on ``PYTHONPATH``), the test
processes' subprocesses included."""


def own_modules(name: str) -> list[str]:
    """The modules of paper ``name``: its record and every module the record names."""
    from fedtheory.papers import PAPERS

    return [f"fedtheory.papers.{name}", *PAPERS[name].modules]


def own_files(name: str) -> list[Path]:
    """The files of paper ``name``'s modules in the repository's layout (a module of
    ``fedtheory.validation`` lies under ``validation/``)."""
    files = []
    for module in own_modules(name):
        parts = module.split(".")
        if parts[:2] == ["fedtheory", "validation"]:
            parts = ["validation", *parts[2:]]
        files.append(Path(*parts).with_suffix(".py"))
    return files


def build(removed: list[str], into: Path) -> Path:
    """A copy of the repository's files (tracked, or new and not ignored) at ``into`` without
    the papers ``removed``; ``fedtheory/validation`` links to the copy's ``validation/``."""
    listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(listed, cwd=ROOT, capture_output=True, check=True).stdout.decode()
    gone = {path for name in removed for path in own_files(name)}
    for name in filter(None, tracked.split("\0")):
        source = ROOT / name
        if Path(name) in gone or not source.is_file():
            continue
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, into / name)
    (into / "fedtheory" / "validation").symlink_to(Path("..", "validation"))
    (into / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return into


def removed_checks(removed: list[str]) -> str:
    """``paper:check,...`` for the validations the papers ``removed`` register (read here,
    where they are registered; in the copy their names are unknown)."""
    from fedtheory.validation import PAPER_OF

    return ",".join(f"{paper}:{name}" for name, paper in PAPER_OF.items() if paper in removed)


def environment(removed: list[str], copy: Path) -> dict[str, str]:
    """The environment of a run in the copy: its packages first on the path, the removed
    papers' modules and validations named."""
    path = os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")])
    modules = ",".join(m for name in removed for m in own_modules(name))
    checks = removed_checks(removed)
    return dict(os.environ, PYTHONPATH=path, **{WITHOUT: modules, WITHOUT_CHECKS: checks})


def run_in(copy: Path, removed: list[str], argv: list[str], *, env=None, **kwargs):
    """``python argv`` in the copy, with its environment and the variables ``env`` (a
    ``CompletedProcess``)."""
    env = environment(removed, copy) | (env or {})
    return subprocess.run([sys.executable, *argv], cwd=copy, env=env, check=False, **kwargs)


def main(argv: list[str]) -> int:
    from fedtheory.papers import PAPERS

    cut = argv.index("--") if "--" in argv else len(argv)
    removed, pytest_args = argv[:cut], argv[cut + 1 :]
    unknown = [name for name in removed if name not in PAPERS]
    if not removed or unknown:
        print(f"papers: name at least one of {', '.join(sorted(PAPERS))} (got {unknown or 'none'})",
              file=sys.stderr)  # fmt: skip
        return 2
    with tempfile.TemporaryDirectory(prefix="fedtheory-without-") as tmp:
        copy = build(removed, Path(tmp))
        print(f"fedtheory: the suite without {', '.join(removed)} in {copy}", file=sys.stderr)
        argv = ["-m", "pytest", "-p", "no:cacheprovider", *pytest_args]
        return run_in(copy, removed, argv).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
