"""The validation suite: one module per claim family, each registered in ``CHECKS``.

A check computes its data (no plotting), judges it (verdict rows with measured and bound
side by side) and plots it; ``validation.runner`` saves, resumes and writes the report.
"""

from validation import (  # noqa: F401  (registration)
    cafed_decomposition,
    example1_algorithms,
    example1_fedavg,
    fedau_weights,
)
from validation.registry import CHECKS, Check

__all__ = ["CHECKS", "Check"]
