"""``fedtheory tightness KEY``: worst measured / bound of an upper bound, and counterexamples."""

from __future__ import annotations

import sys
from pathlib import Path


def _fmt(values) -> str:
    return ", ".join(
        f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()
    )


def _constants(point) -> dict:
    """The instance's constants not already printed among its integers."""
    return {k: v for k, v in point.evaluation.constants.items() if k not in point.integers}


def _tightness(args) -> int:
    from fedtheory.errors import ParameterError
    from fedtheory.tightness import FAMILIES, scaled, search

    if args.key not in FAMILIES:
        print(
            f"fedtheory: no tightness family for {args.key!r}; choose from {sorted(FAMILIES)}",
            file=sys.stderr,
        )
        return 2
    try:
        family = FAMILIES[args.key] if args.scale == 1.0 else scaled(FAMILIES[args.key], args.scale)
        result = search(family, budget=args.budget, seed=args.seed)
    except ParameterError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return 2
    worst = result.worst
    scale = "" if args.scale == 1.0 else f" x {args.scale:g} (deliberately changed bound)"
    print(f"{result.title}{scale}: {result.reference}")
    print(f"instances: {result.description}")
    print(f"search: seed {result.seed}, budget {result.budget}, {result.evaluations} evaluations")
    ev = worst.evaluation
    what = "upper 95% confidence limit of the mean" if result.monte_carlo else "measured"
    print(
        f"worst ratio ({what} / bound): {worst.ratio:.6g}  "
        f"(measured {ev.measured:.6g}, bound {ev.bound:.6g})"
    )
    if result.confirmation is not None:
        print(f"  re-measured with independent replicates: ratio {result.confirmation.ratio:.6g}")
    print(f"  instance: {_fmt(worst.integers)}; {_fmt(_constants(worst))}")
    print(f"  parameters: {_fmt(worst.reals)}")
    print(f"known: {result.tightness}")
    cex = result.counterexample
    if cex is None:
        print("no counterexample: the bound held at every instance evaluated")
    else:
        c = cex.evaluation
        print(
            f"COUNTEREXAMPLE (shrunk): measured {c.measured:.6g} > bound {c.bound:.6g} "
            f"(ratio {cex.ratio:.6g})"
        )
        print(f"  instance: {_fmt(cex.integers)}; {_fmt(_constants(cex))}")
        print(f"  parameters: {_fmt(cex.reals)}")
    suffix = "" if args.scale == 1.0 else f"-x{args.scale:g}"
    out = Path(args.out) if args.out else Path("results", "tightness", f"{args.key}{suffix}.json")
    print(f"saved: {result.save(out)}")
    return 0 if cex is None else 1


DEFAULT_BUDGET = 400  # = fedtheory.tightness.DEFAULT_BUDGET (a test checks; no heavy import)


def add_parsers(sub) -> None:
    t = sub.add_parser(
        "tightness",
        help="search for the instance maximising measured / bound of an upper bound "
        "(exit 1 on a counterexample)",
    )
    t.add_argument("key", help="catalogue key, e.g. cafed.theorem1")
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
