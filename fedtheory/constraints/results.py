"""Non-finite results: :func:`refuse_non_finite` refuses a result holding NaN or inf
computed from finite inputs, naming the inputs by magnitude (:func:`overflow`), so an
overflow is never returned as a number."""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real as _Real
from typing import Any

import numpy as np

from fedtheory.errors import ParameterError


def _non_finite(result: object, depth: int = 0) -> bool:
    """Whether a result (a number, an array, a CPU tensor, a tuple, a NamedTuple, a mapping
    or a dataclass record of them) holds NaN or inf. A tensor on an accelerator is not
    read (no host sync)."""
    if isinstance(result, (bool, np.bool_)):
        return False
    if isinstance(result, (float, np.floating)):
        return not math.isfinite(result)
    if isinstance(result, np.ndarray):
        return result.dtype.kind in "fc" and not bool(np.isfinite(result).all())
    if type(result).__module__ == "torch" and hasattr(result, "is_floating_point"):
        if result.device.type != "cpu" or not result.is_floating_point():
            return False
        return not bool(result.isfinite().all())
    if depth < 3 and isinstance(result, (tuple, list)):
        return any(_non_finite(v, depth + 1) for v in result)
    if depth < 3 and isinstance(result, Mapping):
        return any(_non_finite(v, depth + 1) for v in result.values())
    if depth < 3 and hasattr(result, "__dataclass_fields__") and not isinstance(result, type):
        return any(_non_finite(getattr(result, f), depth + 1) for f in result.__dataclass_fields__)
    return False


def _magnitude(value: object) -> float:
    """The largest absolute entry of a number, an array or a tensor (0 for anything else)."""
    if type(value).__module__ == "torch" and hasattr(value, "is_floating_point"):
        value = value.detach().cpu().double().numpy() if value.numel() else 0.0
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (_Real, np.ndarray)):
        return 0.0
    a = np.abs(np.asarray(value, dtype=np.float64))
    return float(a.max(initial=0.0))


def overflow(owner: str, values: Mapping[str, Any]) -> ParameterError:
    """The error of a non-finite result from accepted (finite) input: it names the numeric
    argument of largest magnitude, which is too large for the result to be finite."""
    sizes = {k: _magnitude(v) for k, v in values.items() if k != "self"}
    name = max(sizes, key=sizes.get)
    return ParameterError(
        f"The '{name}' parameter of {owner} must keep the result finite (it is NaN or inf: an "
        f"overflow, or a zero denominator). Got the largest magnitude, {sizes[name]:g}, there."
    )


def refuse_non_finite(result: object, owner: str, inputs: Mapping[str, Any]) -> None:
    """Refuse a result holding NaN or inf computed from accepted ``inputs`` (the check of
    ``declare(..., finite_result=True)`` for a body that computes its result in parts):
    the error names the input of largest magnitude (:func:`overflow`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        bad = _non_finite(result)
    if bad:
        raise overflow(owner, inputs)
