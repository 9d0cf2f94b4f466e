"""Every public module is on an API page: each module of ``fedtheory/`` and ``validation/``
whose name has no leading underscore appears in an ``automodule`` directive of
docs/api/*.md or of a registered paper's generated page (``Paper.api_page``), once, so a
new module cannot be left out of the reference."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = {"fedtheory": ROOT / "fedtheory", "fedtheory.validation": ROOT / "validation"}
NOT_REFERENCE = {
    "fedtheory": "the package root (its version; the API index introduces the packages)",
    "fedtheory.__main__": "`python -m fedtheory`: the command line",
    "fedtheory.validation.errata.__main__": "`python -m fedtheory.validation.errata`",
    "fedtheory.bounds.errata": "deprecated forwarding module (fedtheory.validation.errata)",
    "fedtheory.params": "deprecated (removed in 0.3.0): the kinds of fedtheory.constraints",
    **{
        f"fedtheory.papers.{m.stem}": "a paper's record (data: the module names of its page)"
        for m in (ROOT / "fedtheory" / "papers").glob("[!_]*.py")
    },
    **{
        f"fedtheory.validation.papers.{m.name}": "a paper's folder (its modules are on its page)"
        for m in (ROOT / "validation" / "papers").iterdir()
        if (m / "__init__.py").is_file()
    },
    **{
        f"fedtheory.cli{m}": "command-line handlers: `fedtheory --help` and the guide pages"
        for m in (
            "",
            ".catalogue",
            ".pep",
            ".sweep",
            ".theorem",
            ".tightness",
            ".user_code",
            ".validate",
        )  # fmt: skip
    },
}
"""Modules without an API section, and why."""


def public_modules() -> set[str]:
    names = set()
    for prefix, folder in TREES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(p.startswith("_") and p != "__main__" for p in parts):
                continue
            names.add(".".join((prefix, *parts)))
    return names


def automodules() -> list[str]:
    """The modules of every ``automodule`` directive: the hand-written pages', then the
    papers' generated pages'."""
    from fedtheory.papers import discover

    pages = [p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "api").glob("*.md")]
    pages += [paper.api_page() for paper in discover().values()]
    return re.findall(r"^\.\. automodule:: ([\w.]+)", "".join(pages), flags=re.M)


def documented() -> set[str]:
    return set(automodules())


def test_every_public_module_is_on_an_api_page():
    missing = sorted(public_modules() - documented() - set(NOT_REFERENCE))
    assert not missing, f"add an automodule section to docs/api/*.md for {missing}"


def test_every_api_section_names_an_existing_module():
    stale = sorted(documented() - public_modules())
    assert not stale, f"docs/api/*.md documents modules that do not exist: {stale}"


def test_every_module_has_one_api_section():
    """Sphinx refuses an object documented twice: a paper's module is on its paper's page
    only, not also on a package's page."""
    names = automodules()
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"documented on more than one API page: {twice}"
