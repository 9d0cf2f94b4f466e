"""Command line: ``fedtheory COMMAND``. One module per command family; each exposes
``add_parsers(sub)``, which adds its subcommands with their handler as ``func``. Handlers
import what they need when they run, so ``fedtheory --help`` stays fast.

Every failure ends in one line on stderr, ``fedtheory: ...``: exit status 2 for bad input
(a :class:`~fedtheory.errors.ParameterError`, a theorem's hypothesis, a locked output
folder), 130 for Ctrl-C (after writing what finished), 1 for a failure fedtheory names (a
lost cluster, a missing optional dependency, named with the extra that installs it), and
:attr:`~fedtheory.errors.ExitStatus.INTERNAL_ERROR` (70, ``EX_SOFTWARE`` of ``sysexits.h``)
for an unexpected error, ``fedtheory: internal error: ... please report it`` -- a bug,
never the user's input.
``--debug`` or the environment variable ``FEDTHEORY_DEBUG=1`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from fedtheory import __version__
from fedtheory.cli import catalogue, pep, sweep, theorem, tightness, validate

COMMANDS = (catalogue, theorem, validate, tightness, sweep, pep)

DEBUG_ENV = "FEDTHEORY_DEBUG"
"""Environment variable: set to anything but ``0`` or empty to get tracebacks."""

EXTRAS = {
    "pandas": "sweep",
    "tqdm": "sweep",
    "dask": "dask",
    "distributed": "dask",
    "nbclient": "notebooks",
    "nbformat": "notebooks",
    "ipykernel": "notebooks",
}
"""The optional dependencies' modules and the extra of ``pyproject.toml`` installing each."""


def build_parser() -> argparse.ArgumentParser:
    """The ``fedtheory`` parser with every command's subparsers."""
    parser = argparse.ArgumentParser(
        prog="fedtheory", description="Check federated-learning theory against experiment."
    )
    parser.add_argument("--version", action="version", version=f"fedtheory {__version__}")
    debug = f"show the traceback of an error (or set {DEBUG_ENV}=1)"
    parser.add_argument("--debug", action="store_true", help=debug)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parsers(sub)
    for subparser in sub.choices.values():  # also accepted after the command
        subparser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                               help=debug)  # fmt: skip
    return parser


def _warn(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line, ``fedtheory: warning: ...``."""
    print(f"fedtheory: warning: {' '.join(str(message).split())}", file=sys.stderr)


def _fail(message: str, status: int) -> int:
    print(f"fedtheory: {' '.join(str(message).split())}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    """Run ``fedtheory`` with ``argv`` (default: the process arguments); returns the exit
    status (module docstring)."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and not hasattr(args, "rest"):  # only a command with options of its own takes more
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if rest:
        args.rest = rest
    with warnings.catch_warnings():  # restores the warning display on return
        warnings.showwarning = _warn
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """The command's handler, its failures as one line (module docstring)."""
    from fedtheory.errors import ExitStatus, FedTheoryError, HypothesisViolation, ParameterError
    from fedtheory.io import FolderLockedError

    if args.debug or os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        return args.func(args)
    hint = f" (rerun with --debug or {DEBUG_ENV}=1 for the traceback)"
    try:
        return args.func(args)
    except KeyboardInterrupt as err:
        return _fail(str(err) or "interrupted", 130)
    except (ParameterError, HypothesisViolation, FolderLockedError) as err:
        return _fail(str(err), 2)
    except FedTheoryError as err:
        return _fail(str(err), 1)
    except ModuleNotFoundError as err:
        extra = EXTRAS.get((err.name or "").partition(".")[0])
        if extra is None:
            return _fail(f"{err}{hint}", 1)
        return _fail(f'{err.name} is not installed: pip install "fedtheory[{extra}]"', 1)
    except ImportError as err:  # our own messages name what to install
        return _fail(str(err), 1)
    except Exception as err:  # noqa: BLE001 - the last line of defence, one line
        return _fail(
            f"internal error: {type(err).__name__}: {err}; this is a bug in fedtheory, please "
            f"report it with the command and its traceback{hint}",
            ExitStatus.INTERNAL_ERROR,
        )
