"""Lazy access to PEPit (optional extra ``fedtheory[pep]``)."""

from __future__ import annotations

from types import ModuleType

MISSING = "fedtheory.pep needs PEPit: pip install 'fedtheory[pep]' (or pip install pepit)."


def pepit() -> ModuleType:
    """The ``PEPit`` module, or ImportError with the one-line install hint."""
    try:
        import PEPit
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(MISSING) from err
    return PEPit


def functions() -> ModuleType:
    """``PEPit.functions`` (the interpolable function classes)."""
    pepit()
    import PEPit.functions

    return PEPit.functions
