"""The validation suite: one module per claim family, each registered in ``CHECKS``.

A check computes its data (no plotting), judges it (verdict rows with measured and bound
side by side) and plots it; ``validation.runner`` saves, resumes and writes the report.
Modules are imported in the order of the report (SPEC §8 / issue 7 item 1).
"""

# ruff: noqa: I001, F401  (import order = report order; imports register the checks)
from validation import example1_fedavg, example1_algorithms
from validation import cafed_decomposition
from validation import cafed_theorem2
from validation import cafed_weights
from validation import fedau_weights
from validation import e3cs_regret
from validation import mimic_dropout
from validation import cafed_appf
from validation import errata
from validation.registry import CHECKS, Check

__all__ = ["CHECKS", "Check"]
