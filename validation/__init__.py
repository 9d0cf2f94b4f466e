"""The validation suite: one module per claim family, each registered in ``CHECKS``.

A check computes its data (no plotting), judges it (verdict rows with measured and bound
side by side) and plots it; ``validation.machinery.runner`` saves, resumes and writes the report.
Modules are imported in the order of the report: each registered paper's validations (the
``validations`` of its record, :mod:`fedtheory.papers`; :data:`PAPER_OF` says which paper's
modules registered each check), then the checks across papers. Your own statement gets the
same machinery through :func:`theorem_check` (``custom.py``).
"""

# ruff: noqa: I001, F401, E402  (import order = report order; imports register the checks)
from importlib import import_module

from fedtheory import papers as _papers
from fedtheory.validation.machinery.registry import CHECKS

PAPER_OF: dict[str, str] = {}
"""The key of the paper whose ``validations`` registered each check, by check name (checks
across papers and the user's are not in it)."""


def _load(paper: _papers.Paper) -> None:
    before = set(CHECKS)
    for name in paper.validations:
        import_module(name)
    PAPER_OF.update({name: paper.key for name in CHECKS if name not in before})


_papers.on_register(_load)
from fedtheory.validation import errata
from fedtheory.validation import tightness
from fedtheory.validation import pep_exact
from fedtheory.validation.machinery.registry import Check, register
from fedtheory.validation.custom import load_checks, theorem_check

__all__ = ["CHECKS", "PAPER_OF", "Check", "load_checks", "register", "theorem_check"]
