"""``fedtheory tightness KEY``: worst measured / bound of an upper bound, and counterexamples."""

from __future__ import annotations

import sys
from pathlib import Path

from fedtheory.cli.user_code import user_frame
from fedtheory.errors import ExitStatus


def _constants(point) -> dict:
    """The instance's constants not already printed among its integers."""
    return {k: v for k, v in point.evaluation.constants.items() if k not in point.integers}


def _family(args):
    """The family named on the command line, after loading ``--module`` if given."""
    from fedtheory.tightness import FAMILIES, load_families, scaled

    if args.module:
        load_families(args.module)
    if args.key not in FAMILIES:
        where = f" (nor registered by {args.module})" if args.module else ""
        print(
            f"fedtheory: no tightness family for {args.key!r}{where}; choose from "
            f"{sorted(FAMILIES)}, or register yours in a file given to --module",
            file=sys.stderr,
        )
        return None
    family = FAMILIES[args.key]
    return family if args.scale == 1.0 else scaled(family, args.scale)


def _tightness(args) -> int:
    from fedtheory.errors import ParameterError
    from fedtheory.tightness import search
    from fedtheory.tightness.engine import format_values

    try:
        family = _family(args)
        if family is None:
            return ExitStatus.BAD_INPUT
        result = search(family, budget=args.budget, seed=args.seed)
    except ParameterError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    except Exception as err:  # the user's file raised (imported or searched), or a bug of ours
        where = user_frame(err, [args.module] if args.module else [])
        if where is None:
            raise
        print(f"fedtheory: {args.module} failed at {where}: {type(err).__name__}: {err}",
              file=sys.stderr)  # fmt: skip
        return ExitStatus.USER_FUNCTION_FAILED
    worst = result.worst
    scale = "" if args.scale == 1.0 else f" x {args.scale:g} (deliberately changed bound)"
    print(f"{result.title}{scale}: {result.reference}")
    print(f"instances: {result.description}")
    print(f"search: seed {result.seed}, budget {result.budget}, {result.evaluations} evaluations")
    ev = worst.evaluation
    what = "upper 95% confidence limit of the mean" if result.monte_carlo else "measured"
    print(
        f"worst ratio ({what} / bound): {ev.ratio_text()}  "
        f"(measured {ev.measured:.6g}, bound {ev.bound:.6g})"
    )
    if result.confirmation is not None:
        print(
            f"  re-measured with independent replicates: ratio {result.confirmation.ratio_text()}"
        )
    print(f"  instance: {format_values(result.worst_instance)}")
    print(f"  constants: {format_values(_constants(worst))}")
    if result.supremum is not None or result.attained:  # else it repeats the worst ratio
        print(result.summary())
    for line in result.point_lines():
        print(line)
    print(f"known: {result.tightness}")
    cex = result.counterexample
    for line in result.counterexample_lines() or [
        "no counterexample: the bound held at every instance evaluated"
    ]:
        print(line)
    suffix = "" if args.scale == 1.0 else f"-x{args.scale:g}"
    out = Path(args.out) if args.out else Path("results", "tightness", f"{args.key}{suffix}.json")
    print(f"saved: {result.save(out)} (replay: fedtheory.tightness.reproduce)")
    if cex is not None:
        return ExitStatus.VIOLATED
    return ExitStatus.USER_FUNCTION_FAILED if result.failures else ExitStatus.HOLDS


DEFAULT_BUDGET = 400  # = fedtheory.tightness.DEFAULT_BUDGET (a test checks; no heavy import)


def add_parsers(sub) -> None:
    t = sub.add_parser(
        "tightness",
        help="search for the instance maximising measured / bound of an upper bound "
        "(exit 0: no counterexample, 1: counterexample, 2: bad input, 3: your function "
        "failed at some points)",
    )
    t.add_argument("key", help="family key, e.g. cafed.theorem1 (or one --module registers)")
    t.add_argument(
        "--module",
        help="a Python file that registers families (fedtheory.tightness.register); its "
        "folder is on sys.path while it is imported",
    )
    t.add_argument(
        "--budget",
        type=int,
        default=DEFAULT_BUDGET,
        help=f"evaluations of the measured side (default {DEFAULT_BUDGET})",
    )
    t.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    t.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply the bound by this factor (e.g. 0.1: a deliberately false statement)",
    )
    t.add_argument("--out", help="JSON file for the result (default results/tightness/KEY.json)")
    t.set_defaults(func=_tightness)
