r"""Divergence detection: the finiteness checks :func:`fedtheory.sim.simulate` runs after
every round (model and per-client state) and on the metrics, and the algorithm's label that
a :class:`~fedtheory.errors.DivergenceError` names.

A run diverges when a quantity it computes from finite inputs is NaN or :math:`\pm\infty`:
the server model :math:`w_{t+1}`, a per-client state field (stored updates, corrections,
weights), or a metric such as :math:`F(w_t)-F^*` (whose value can overflow before the model
does). The check is the same on every path (fused kernel, op-by-op gradients), because it
reads what the round returns, not how it was computed.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import Having, MappingOf, declare
from fedtheory.errors import ParameterError

__all__ = [
    "NonFinite",
    "NonFiniteMetric",
    "algorithm_label",
    "non_finite_metric",
    "non_finite_state",
]


@declare(algorithm=Having("init", "step"))
def algorithm_label(algorithm: object) -> str:
    """The name an algorithm is reported by: its ``name`` (FedAvg's includes its
    aggregator's, ``"fedavg[fedau]"``), else its class name."""
    return getattr(algorithm, "name", None) or type(algorithm).__name__


class NonFinite(NamedTuple):
    """Where a non-finite value was found: the quantity's description and the replicate."""

    quantity: str
    replicate: int


def _fields(state: object, prefix: str = "") -> list[tuple[str, torch.Tensor]]:
    """``(dotted name, tensor)`` of every floating-point tensor of a state record, nested
    records included."""
    out = []
    for key in getattr(state, "_fields", ()):
        value = getattr(state, key)
        name = f"{prefix}{key}"
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            out.append((name, value))
        elif hasattr(value, "_fields"):
            out += _fields(value, f"{name}.")
    return out


@declare("replicates", state=Having("_fields"))
def non_finite_state(state: object, replicates: int) -> NonFinite | None:
    """The first non-finite field of ``state`` (the model ``w`` first, then the per-client
    fields in declaration order) and its first bad replicate, or ``None``.

    Fields whose leading dimension is the ``replicates`` dimension ``R`` are located per
    replicate; other floating-point fields are checked whole (replicate 0 is named)."""
    for name, x in _fields(state):
        per_replicate = x.dim() >= 1 and x.shape[0] == replicates
        flat = x.reshape(replicates if per_replicate else 1, -1)
        # one pass: a sum is finite when every term is (the exact test runs only if not,
        # so that a sum that merely overflows is not reported)
        if bool(torch.isfinite(flat.sum(dim=-1)).all()):
            continue
        bad = ~torch.isfinite(flat).all(dim=-1)
        if not bad.any():
            continue
        if not per_replicate:
            return NonFinite(f"the state field '{name}'", 0)
        what = "the model w" if name == "w" else f"the per-client state '{name}'"
        return NonFinite(what, int(bad.nonzero()[0, 0]))
    return None


def finite_state(state: object) -> torch.Tensor:
    """``[]`` bool on the state's device: every floating-point field of ``state`` is finite
    (read back only where the caller chooses: a static round batches its checks)."""
    flags = [torch.isfinite(x).all() for _, x in _fields(state)]
    return torch.stack(flags).all()


class NonFiniteMetric(NamedTuple):
    """The first metric value that is not finite: metric name, position in ``eval_rounds``
    and replicate."""

    metric: str
    index: int
    replicate: int


@declare(metrics=MappingOf())
def non_finite_metric(metrics: dict[str, np.ndarray]) -> NonFiniteMetric | None:
    """The earliest evaluation (smallest index along the last axis of the ``[R, K]`` arrays)
    at which a metric is not finite, or ``None``."""
    first = None
    for key, values in metrics.items():
        try:
            bad = ~np.isfinite(np.asarray(values, dtype=np.float64))  # [R, K]
        except (TypeError, ValueError):
            raise ParameterError(
                f"The 'metrics' parameter of non_finite_metric must map names to real arrays. "
                f"Got {key!r}: {type(values).__name__} instead."
            ) from None
        if bad.ndim != 2:
            raise ParameterError(
                f"The 'metrics' parameter of non_finite_metric must hold arrays [R, K]. "
                f"Got {key!r} of shape {bad.shape} instead."
            )
        if bad.any():
            rep, idx = np.nonzero(bad)
            j = int(np.argmin(idx))
            if first is None or idx[j] < first.index:
                first = NonFiniteMetric(key, int(idx[j]), int(rep[j]))
    return first
