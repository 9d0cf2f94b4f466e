"""Deprecated: the errata checks moved above the simulator, to
:mod:`fedtheory.validation.errata` (one module per paper). Every name still resolves here,
with a ``DeprecationWarning``, in 0.2.x; **this module is removed in 0.3.0**."""

from __future__ import annotations

import warnings


def __getattr__(name: str):
    if name.startswith("__"):  # module attributes (__all__, __path__): not forwarded
        raise AttributeError(name)
    from fedtheory.validation import errata  # deprecated path: the one upward import

    warnings.warn(
        f"fedtheory.bounds.errata.{name} moved to fedtheory.validation.errata.{name}; "
        "the old path is removed in 0.3.0",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(errata, name)
