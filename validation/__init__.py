"""The validation suite: one module per claim family, each registered in ``CHECKS``.

A check computes its data (no plotting), judges it (verdict rows with measured and bound
side by side) and plots it; ``validation.runner`` saves, resumes and writes the report.
Modules are imported in the order of the report. Your own
statement gets the same machinery through :func:`theorem_check` (``custom.py``).
"""

# ruff: noqa: I001, F401  (import order = report order; imports register the checks)
from fedtheory.validation import example1_fedavg, example1_algorithms
from fedtheory.validation import cafed_decomposition
from fedtheory.validation import cafed_theorem2
from fedtheory.validation import cafed_weights
from fedtheory.validation import fedau_weights
from fedtheory.validation import e3cs_regret
from fedtheory.validation import mimic_dropout
from fedtheory.validation import cafed_appf
from fedtheory.validation import fedawe_statements, fedawe_convergence, fedawe_auxiliary
from fedtheory.validation import fedawe_example1, fedawe_table2
from fedtheory.validation import statements
from fedtheory.validation import errata
from fedtheory.validation import tightness
from fedtheory.validation import pep_exact
from fedtheory.validation.registry import CHECKS, Check, register
from fedtheory.validation.custom import load_checks, theorem_check

__all__ = ["CHECKS", "Check", "load_checks", "register", "theorem_check"]
