r"""Markov-chain tools used by availability processes and by the bounds.

Two-state chains follow CA-Fed's parametrisation (SPEC §3.5): with stationary
availability :math:`\pi` and second eigenvalue :math:`\lambda`,

.. math:: a=P(\text{on}\to\text{on})=\lambda+(1-\lambda)\pi,\qquad
          P(\text{off}\to\text{on})=(1-\lambda)\pi,

feasible iff :math:`1-1/\max(\pi,1-\pi)\le\lambda\le1`.
"""

from __future__ import annotations

import numpy as np

from fedtheory.errors import ParameterError
from fedtheory.params import check_array

__all__ = ["lambda_feasible_range", "two_state_transitions"]


def lambda_feasible_range(pi) -> tuple[np.ndarray, np.ndarray]:
    r"""Feasible :math:`[\lambda_{\min},1]` for stationary probability ``pi`` in (0, 1)."""
    pi = check_array(
        pi, "pi", "lambda_feasible_range", low=0.0, high=1.0, low_open=True, high_open=True
    )
    return 1.0 - 1.0 / np.maximum(pi, 1.0 - pi), np.ones_like(pi)


def two_state_transitions(pi, lam, owner: str = "two_state_transitions"):
    r"""Return ``(p_on_on, p_off_on)`` of two-state chains with stationary ``pi`` and second
    eigenvalue ``lam`` (arrays broadcast together). Infeasible pairs raise, never clip."""
    pi = check_array(pi, "pi", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    lam = check_array(lam, "lam", owner, low=-1.0, high=1.0)
    pi, lam = np.broadcast_arrays(pi, lam)
    low, _ = lambda_feasible_range(pi)
    bad = lam < low - 1e-12
    if np.any(bad):
        i = np.flatnonzero(bad.ravel())[0]
        raise ParameterError(
            f"The 'lam' parameter of {owner} must be in [1 - 1/max(pi, 1-pi), 1] = "
            f"[{low.ravel()[i]:.6g}, 1] for pi={pi.ravel()[i]:.6g}. "
            f"Got {lam.ravel()[i]:.6g} instead."
        )
    p_off_on = (1.0 - lam) * pi
    p_on_on = lam + p_off_on
    return np.clip(p_on_on, 0.0, 1.0), np.clip(p_off_on, 0.0, 1.0)  # rounding only (1e-16)
