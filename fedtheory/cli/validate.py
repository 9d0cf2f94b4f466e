"""``fedtheory validate``: run validations (the papers' and your own) and write the report."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from fedtheory.cli.user_code import user_frame
from fedtheory.errors import ExitStatus

SIZES = ("tiny", "quick", "full")  # = fedtheory.validation.machinery.registry.SIZES (a test checks)


def _validate(args) -> int:
    from fedtheory.bounds.judgement import MeasureError
    from fedtheory.errors import FedTheoryError, ParameterError
    from fedtheory.sweep.executor import open_executor
    from fedtheory.validation import CHECKS, load_checks
    from fedtheory.validation.machinery.cluster import local_cluster
    from fedtheory.validation.machinery.runner import Interrupted, run

    added = []
    for module in args.module or []:
        try:
            added += load_checks(module)
        except (ParameterError, KeyError) as err:  # KeyError: a name registered twice
            print(f"fedtheory: {module}: {err}", file=sys.stderr)
            return ExitStatus.BAD_INPUT
        except Exception as err:  # the user's file raised while imported, or a bug of ours
            where = user_frame(err, [module])
            if where is None:
                raise
            print(f"fedtheory: {module} failed at {where}: {type(err).__name__}: {err}",
                  file=sys.stderr)  # fmt: skip
            return ExitStatus.USER_FUNCTION_FAILED
    names = args.check or added or list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        print(
            f"fedtheory: unknown validation(s) {unknown}; choose from {list(CHECKS)}",
            file=sys.stderr,
        )
        return 2
    out = Path(args.out)
    local = args.workers is not None  # forked workers, unless a user's file ran code
    warm = local_cluster(fork=not args.module) if local else contextlib.nullcontext()
    try:
        with warm, open_executor(workers=args.workers, scheduler=args.scheduler) as executor:
            if executor.dashboard is not None:
                print(f"{executor.description}; dashboard: {executor.dashboard}", file=sys.stderr)
            outcomes = run(
                names,
                out,
                size=args.size,
                progress=lambda msg: print(msg, file=sys.stderr, flush=True),
                executor=executor,
            )
    except MeasureError as err:  # the user's measurement returned no finite numbers
        print(f"fedtheory: {err}", file=sys.stderr)
        return ExitStatus.USER_FUNCTION_FAILED
    except ParameterError as err:  # e.g. an output folder that cannot be written
        print(f"fedtheory: {err}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    except Interrupted as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return 130
    except Exception as err:  # a function of the user's file raised, or a bug of ours
        where = user_frame(err, args.module or [])
        if where is None or isinstance(err, FedTheoryError):
            raise
        print(f"fedtheory: a check of {', '.join(args.module)} failed at {where}: "
              f"{type(err).__name__}: {err}", file=sys.stderr)  # fmt: skip
        return ExitStatus.USER_FUNCTION_FAILED
    rows = [r for o in outcomes for r in o.rows]
    defects = sum(r.defect for r in rows)  # fedtheory's own consistency checks that fail
    violated = sum(r.verdict.value == "violated" for r in rows) - defects
    explained = violated + defects - sum(r.unexplained_violation for r in rows)
    note = f", {explained} the evidence of catalogued errata" if explained else ""
    note += f", {defects} defect(s) of fedtheory" if defects else ""
    print(f"report: {out / 'report.md'} and {out / 'report.html'}  ({violated} violated{note})")
    failing = violated + defects - (0 if args.strict else explained)
    gate = args.fail_on_violated or args.strict
    return ExitStatus.VIOLATED if gate and failing else ExitStatus.HOLDS


def add_executor_arguments(parser, what: str) -> None:
    """``--workers N`` / ``--scheduler ADDRESS`` (exclusive): where independent ``what``
    run (default: one after another in this process)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help=f"run independent {what} in parallel on a local Dask cluster of N processes "
        '(pip install "fedtheory[dask]")',
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=f"run independent {what} on an existing Dask cluster, e.g. tcp://host:8786",
    )


def add_parsers(sub) -> None:
    v = sub.add_parser("validate", help="run validations and write the report")
    v.add_argument(
        "--check",
        action="append",
        metavar="NAME",
        help="run only this validation (repeatable; default: all, or those of --module)",
    )
    v.add_argument(
        "--module",
        action="append",
        metavar="FILE.py",
        help="a Python file that registers your own checks (fedtheory.validation."
        "theorem_check + register); without --check, only its checks run (repeatable)",
    )
    v.add_argument("--out", default="results", help="output folder (default: results)")
    v.add_argument(
        "--fail-on-violated",
        action="store_true",
        help="exit with status 1 when a verdict row is violated and no catalogued erratum "
        "explains it (for CI jobs; 2: bad input, 3: a --module check's function failed)",
    )
    v.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 when any verdict row is violated, the evidence of "
        "catalogued errata included",
    )
    mode = v.add_mutually_exclusive_group()
    mode.add_argument(
        "--size",
        choices=SIZES,
        default="full",
        help="tiny (seconds, smoke test), quick (all within 5 minutes on 2 cores) or full "
        "(paper-scale, the default)",
    )
    mode.add_argument("--quick", dest="size", action="store_const", const="quick")
    mode.add_argument("--full", dest="size", action="store_const", const="full")
    add_executor_arguments(v, "validations")
    v.set_defaults(func=_validate)
