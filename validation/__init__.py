"""The validation suite: one module per claim family, each registered in ``CHECKS``.

A check computes its data (no plotting), judges it (verdict rows with measured and bound
side by side) and plots it; ``validation.runner`` saves, resumes and writes the report.
Modules are imported in the order of the report: each registered paper's validations (the
``validations`` of its record, :mod:`fedtheory.papers`), then the checks across papers. Your own
statement gets the same machinery through :func:`theorem_check` (``custom.py``).
"""

# ruff: noqa: I001, F401, E402  (import order = report order; imports register the checks)
from importlib import import_module

from fedtheory import papers as _papers

_papers.on_register(lambda paper: [import_module(name) for name in paper.validations])
from fedtheory.validation import statements
from fedtheory.validation import errata
from fedtheory.validation import tightness
from fedtheory.validation import pep_exact
from fedtheory.validation.registry import CHECKS, Check, register
from fedtheory.validation.custom import load_checks, theorem_check

__all__ = ["CHECKS", "Check", "load_checks", "register", "theorem_check"]
