"""The validation suite: one module per claim family, each registered in ``CHECKS``.

A check computes its data (no plotting), judges it (verdict rows with measured and bound
side by side) and plots it; ``validation.runner`` saves, resumes and writes the report.
"""

from validation import cafed_decomposition, example1_fedavg  # noqa: F401  (registration)
from validation.registry import CHECKS, Check

__all__ = ["CHECKS", "Check"]
