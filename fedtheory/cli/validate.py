"""``fedtheory validate``: run validations and write the report."""

from __future__ import annotations

import sys
from pathlib import Path

SIZES = ("tiny", "quick", "full")  # = fedtheory.validation.registry.SIZES (a test checks)


def _validate(args) -> int:
    from fedtheory.sweep.executor import open_executor
    from fedtheory.validation import CHECKS
    from fedtheory.validation.runner import run

    names = args.check or list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        print(
            f"fedtheory: unknown validation(s) {unknown}; choose from {list(CHECKS)}",
            file=sys.stderr,
        )
        return 2
    out = Path(args.out)
    with open_executor(workers=args.workers, scheduler=args.scheduler) as executor:
        if executor.dashboard is not None:
            print(f"{executor.description}; dashboard: {executor.dashboard}", file=sys.stderr)
        outcomes = run(
            names,
            out,
            size=args.size,
            progress=lambda msg: print(msg, file=sys.stderr, flush=True),
            executor=executor,
        )
    violated = sum(r.verdict.value == "violated" for o in outcomes for r in o.rows)
    print(f"report: {out / 'report.md'} and {out / 'report.html'}  ({violated} violated)")
    return 0


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
        help="run only this validation (repeatable; default: all)",
    )
    v.add_argument("--out", default="results", help="output folder (default: results)")
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
