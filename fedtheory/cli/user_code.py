"""Whose code raised: the user's file (exit status 3) or fedtheory (a bug, status 70).

``fedtheory validate --module FILE.py`` and ``fedtheory tightness --module FILE.py`` run
code of the user's file inside fedtheory's. An exception that is not a fedtheory error is
*the user's function failed* (:attr:`~fedtheory.errors.ExitStatus.USER_FUNCTION_FAILED`)
only when its traceback, or that of an exception it was raised from, passes through the
user's code: a file in the folder of a ``--module`` file (the file itself or a sibling it
imports) outside the fedtheory package, or a ``SyntaxError`` of such a file. Otherwise it
is fedtheory's own failure and propagates to the command line's last line of defence
(:attr:`~fedtheory.errors.ExitStatus.INTERNAL_ERROR`).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from pathlib import Path

import fedtheory

_PACKAGE = Path(fedtheory.__file__).resolve().parent


def _is_user_file(filename: str, folders: list[Path]) -> bool:
    path = Path(filename).resolve()
    if path.is_relative_to(_PACKAGE):
        return False
    return any(path.is_relative_to(folder) for folder in folders)


def user_frame(err: BaseException, modules: Iterable[str]) -> str | None:
    """``"FILE:LINE in FUNCTION"``, the deepest frame of the user's code in the traceback
    of ``err`` or of its causes (module docstring), or None when none is the user's."""
    folders = [Path(m).resolve().parent for m in modules]
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        found = None
        if isinstance(err, SyntaxError) and _is_user_file(err.filename or "", folders):
            found = f"{Path(err.filename).name}:{err.lineno}"  # the file does not compile
        for frame, line in traceback.walk_tb(err.__traceback__):
            if _is_user_file(frame.f_code.co_filename, folders):
                found = f"{Path(frame.f_code.co_filename).name}:{line} in {frame.f_code.co_name}"
        if found is not None:
            return found
        err = err.__cause__ or err.__context__
    return None
