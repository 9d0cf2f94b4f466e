"""Plotting helpers shared by the validations' ``plot`` functions."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from fedtheory.verdict import mean_confidence_interval


def confidence_bars(samples: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 95% confidence limits ``[P, 3]`` of each of ``P`` sample arrays, and the
    matching ``yerr [2, P]`` (distances below and above the mean) for ``Axes.errorbar``."""
    ci = np.array([mean_confidence_interval(v) for v in samples])  # [P, 3]
    return ci, np.abs(ci[:, 1:].T - ci[:, 0])
