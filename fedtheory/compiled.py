"""Compiled kernels (numba) with their on-disk cache outside the installed package.

numba's ``cache=True`` writes next to the source file by default, i.e. into
``site-packages/fedtheory/.../__pycache__``: ``pip uninstall`` leaves those files behind, and
the leftover folders then shadow a later editable install. fedtheory's kernels are cached in
the user's cache directory instead (numba's user-wide location, ``<user cache>/numba/...``),
or under ``NUMBA_CACHE_DIR`` when the user sets it. Kernels are declared with :func:`njit`.
"""

from __future__ import annotations

import os

import numba
from numba.core import caching

from fedtheory.constraints import Bool, Either, Function, Option, SequenceOf, declare
from fedtheory.errors import ParameterError

FAST_MATH = ("fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc")
"""LLVM's fast-math flags, which numba's ``fastmath`` takes as a set (or ``True``: all)."""

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _numba_name(name: str):
    """``caching.<name>``, or its underscored spelling in numba < 0.61."""
    return getattr(caching, name, None) or getattr(caching, f"_{name}")


_UserWide = _numba_name("UserWideCacheLocator")
_UserProvided = _numba_name("UserProvidedCacheLocator")


class _UserCacheLocator(_UserWide):
    """numba's user-wide cache location, for functions defined in fedtheory's sources only."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_PACKAGE):
            return None
        return super().from_function(py_func, py_file)


_locators = _numba_name("CacheImpl")._locator_classes
if _UserCacheLocator not in _locators:  # after NUMBA_CACHE_DIR, before the in-tree default
    _locators.insert(_locators.index(_UserProvided) + 1, _UserCacheLocator)


@declare(
    function=Function(none=True),
    boundscheck=Bool(none=True),
    nogil=Bool(),
    fastmath=Either(
        Bool(), SequenceOf(Option(*FAST_MATH), min_size=1, plural="LLVM fast-math flags")
    ),
    error_model=Option("python", "numpy"),
)
def njit(function=None, *, boundscheck=None, nogil=False, fastmath=False, error_model="python"):
    """``numba.njit(..., cache=True)`` with the cache in the user's cache directory: as
    ``@njit`` or ``@njit(nogil=True, ...)`` (numba's options of the same names: ``fastmath``
    a bool or a set of :data:`FAST_MATH` flags; ``boundscheck`` ``None`` follows
    ``NUMBA_BOUNDSCHECK``)."""
    flags = fastmath if isinstance(fastmath, bool) else set(fastmath)
    options = {"nogil": nogil, "fastmath": flags, "error_model": error_model}
    if boundscheck is not None:
        options["boundscheck"] = boundscheck
    compile_ = numba.njit(cache=True, **options)
    if function is None:
        return compile_
    try:
        return compile_(function)
    except RuntimeError as err:  # numba: "cannot cache function ...: no locator available"
        raise ParameterError(
            "The 'function' parameter of njit must be defined in a source file (its compiled "
            f"code is cached by file). Got {function!r} instead ({err})."
        ) from None
