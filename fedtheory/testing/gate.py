r"""Exit statuses for a CI job that runs a property check.

:func:`exit_status` runs a check (:func:`fedtheory.testing.check_theorem`, or anything that
raises ``AssertionError`` on a refutation) and maps its outcome to the statuses of
``fedtheory tightness`` and ``fedtheory validate --module``
(:class:`fedtheory.errors.ExitStatus`):

* ``0`` -- no example and no search point was *violated* (inconclusive Monte-Carlo examples
  are in the message; ``fail_on_inconclusive=True`` turns them into ``1``);
* ``1`` -- a counterexample: the check raised ``AssertionError``;
* ``2`` -- bad input: a :class:`~fedtheory.errors.ParameterError` (a bad argument of the
  check);
* ``3`` -- the user's function failed: it raised, or returned a non-number or a non-finite
  value, at some examples or search points (recorded in the result, or raised as
  :class:`fedtheory.bounds.judgement.MeasureError` with ``fail_on_error=True``);
* ``4`` -- nothing measured: no example judged, or fewer search points measured than
  ``min_measured`` asks (:class:`fedtheory.errors.NothingMeasured`).

A script for CI::

    import sys
    from functools import partial
    from fedtheory.testing import check_theorem, exit_status

    status, message = exit_status(partial(check_theorem, my_theorem, my_measure))
    print(message)
    sys.exit(status)
"""

from __future__ import annotations

from collections.abc import Callable

from fedtheory.constraints import Function, declare
from fedtheory.errors import ExitStatus, NothingMeasured, ParameterError

__all__ = ["exit_status"]


@declare(check=Function())
def exit_status(check: Callable[[], object]) -> tuple[ExitStatus, str]:
    """Run ``check()`` and return its exit status (module docstring) and what to print:
    the result's ``repr``, or the error's message. Any other exception propagates (a bug, not
    an outcome)."""
    from fedtheory.bounds.judgement import MeasureError

    try:
        result = check()
    except AssertionError as err:
        return ExitStatus.VIOLATED, f"violated: {err}"
    except MeasureError as err:
        return ExitStatus.USER_FUNCTION_FAILED, f"your function failed: {err}"
    except ParameterError as err:
        return ExitStatus.BAD_INPUT, f"bad input: {err}"
    except NothingMeasured as err:
        return ExitStatus.NOTHING_MEASURED, f"nothing measured: {err}"
    if getattr(result, "outcome", None) == "failed":
        return ExitStatus.USER_FUNCTION_FAILED, f"your function failed: {result!r}"
    return ExitStatus.HOLDS, repr(result)
