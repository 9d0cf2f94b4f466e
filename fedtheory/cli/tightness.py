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


def _out(args) -> Path:
    """Where the result is written: ``--out``, else :data:`DEFAULT_OUT` for the key."""
    if args.out:
        return Path(args.out)
    suffix = "" if args.scale == 1.0 else f"-x{args.scale:g}"
    return Path(DEFAULT_OUT.format(key=f"{args.key}{suffix}"))


def _tightness(args) -> int:
    from fedtheory.errors import ParameterError
    from fedtheory.io import writable_file

    try:  # the output path first: a bad one is refused before any work (and heavy import)
        out = writable_file(_out(args), "--out", "fedtheory tightness")
    except ParameterError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
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
    too_few = cex is None and result.measured_too_few(args.min_measured)
    if too_few:
        print(
            f"NOTHING MEASURED: {result.measured} of {result.evaluations} points measured "
            f"(--min-measured {args.min_measured:g}); the search proves nothing"
        )
    for line in result.counterexample_lines() or (
        [] if too_few else ["no counterexample: the bound held at every instance measured"]
    ):
        print(line)
    print(f"saved: {result.save(out)} (replay: fedtheory.tightness.reproduce)")
    if cex is not None:
        return ExitStatus.VIOLATED
    if result.failures:
        return ExitStatus.USER_FUNCTION_FAILED
    return ExitStatus.NOTHING_MEASURED if too_few else ExitStatus.HOLDS


def _share(text: str) -> float:
    """``--min-measured``: a share in [0, 1]."""
    import argparse

    try:
        share = float(text)
    except ValueError:
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a share in [0, 1]; got {text!r}")
    return share


DEFAULT_BUDGET = 400  # = fedtheory.tightness.DEFAULT_BUDGET (a test checks; no heavy import)
DEFAULT_OUT = "results/tightness/{key}.json"
"""Where the result goes without ``--out``, relative to the working folder."""


def _keys() -> str:
    """The catalogue's family keys, for ``--help``."""
    from fedtheory.tightness.families import CATALOGUE_KEYS

    return ", ".join(sorted(CATALOGUE_KEYS))


def add_parsers(sub) -> None:
    t = sub.add_parser(
        "tightness",
        help="search for the instance maximising measured / bound of an upper bound "
        "(exit 0: no counterexample, 1: counterexample, 2: bad input, 3: your function "
        "failed at some points, 4: nothing measured)",
    )
    plain_help = t.format_help

    def format_help() -> str:  # the family keys: imported only when the help is shown
        t.description = (
            f"Search a family for its worst measured / bound. Families: {_keys()}; or one "
            "that a --module file registers. Exit status 0: no counterexample; 1: a "
            "counterexample; 2: bad input; 3: your function failed at some points; 4: too "
            "few points measured (--min-measured)."
        )
        return plain_help()

    t.format_help = format_help
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
    t.add_argument(
        "--out",
        help=f"JSON file for the result (default {DEFAULT_OUT.format(key='KEY')} in the "
        "working folder, KEY-xSCALE.json with --scale); checked before the search",
    )
    t.add_argument(
        "--min-measured",
        type=_share,
        default=0.0,
        metavar="SHARE",
        help="exit 4 (nothing measured) unless at least this share of the points was measured "
        "(inside the hypotheses, a number); default 0: at least one point",
    )
    t.set_defaults(func=_tightness)
