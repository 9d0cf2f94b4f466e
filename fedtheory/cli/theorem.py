"""``fedtheory show KEY`` and ``fedtheory eval KEY NAME=VALUE ...``: one theorem of the
catalogue, its statement and its value at given constants (imports only
``fedtheory.bounds``)."""

from __future__ import annotations

import difflib
import json
import sys
import warnings

import numpy as np


def _theorem(key: str):
    """The catalogue theorem ``key``, or None after a message naming close keys."""
    from fedtheory.bounds import CATALOGUE

    if key in CATALOGUE:
        return CATALOGUE[key]
    close = difflib.get_close_matches(key, CATALOGUE, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "; see fedtheory list"
    print(f"fedtheory: unknown theorem {key!r}{hint}", file=sys.stderr)
    return None


def _domain(entry) -> str:
    from fedtheory.constraints import interval

    where = interval(entry.low, entry.high, low_open=entry.low_open, high_open=entry.high_open)
    return ("integer in " if entry.integer else "") + where


_LATEX_REL = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "!=": r"\ne"}


def _show(args) -> int:
    import sympy as sp

    thm = _theorem(args.key)
    if thm is None:
        return 2
    if args.latex:
        print(f"% {thm.title} ({thm.kind}); {thm.reference}")
        print(thm.latex())
        for c in thm.conditions:
            rel = _LATEX_REL[c.rel]
            print(
                f"% hypothesis: {sp.latex(sp.sympify(c.lhs))} {rel} {sp.latex(sp.sympify(c.rhs))}"
            )
        for p, n in thm.notation.items():
            print(f"% {p}: ${sp.latex(n.symbol)}$ -- {n.meaning}")
        return 0
    print(f"{thm.key}: {thm.title}")
    print(f"  kind:       {thm.kind}")
    print(f"  reference:  {thm.reference}")
    if thm.statement:
        print(f"  statement:  {thm.statement}")
    # plain text throughout, one notation (^ for powers, as the statement and hypotheses
    # write them): the terms over the parameters' keywords (LaTeX: --latex)
    plain = {n.symbol: sp.Symbol(p) for p, n in thm.notation.items()}
    print("  terms (the value is their sum; LaTeX: fedtheory show KEY --latex):")
    for name, expr in thm.terms.items():
        print(f"    {name} = {sp.sstr(expr.xreplace(plain)).replace('**', '^')}")
    print("  hypotheses:" + ("" if thm.conditions else " none beyond the parameters' domains"))
    for c in thm.conditions:
        print(f"    {c.text}")
    print("  parameters (fedtheory eval KEY NAME=VALUE ...):")
    width = max(len(p) for p in thm.parameters) if thm.parameters else 0
    for p, n in thm.notation.items():
        print(f"    {p:{width}s}  {_domain(n)}: {n.meaning}")
    return 0


def _parse_values(pairs: list[str]) -> dict[str, float] | None:
    values = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            values[name] = float(text)
        except ValueError:
            print(f"fedtheory: expected NAME=NUMBER, got {pair!r}", file=sys.stderr)
            return None
    return values


def _eval(args) -> int:
    import sympy as sp

    from fedtheory.bounds.symbols import RENAMED
    from fedtheory.errors import ParameterError

    thm = _theorem(args.key)
    values = _parse_values(args.values)
    if thm is None or values is None:
        return 2
    # a name typed on the command line that the theorem does not take is a typo: refused
    # (Theorem.evaluate ignores other keys, for a dict of constants shared by theorems)
    unknown = [n for n in values if n not in thm.notation and RENAMED.get(n) not in thm.notation]
    if unknown:
        from fedtheory.bounds.base import _nearest

        hints = "".join(f" {n!r}: did you mean {near[0]!r}?" for n in unknown
                        if (near := _nearest(n, thm.parameters)))  # fmt: skip
        print(f"fedtheory: {thm.title} takes the parameters {', '.join(thm.parameters)}; "
              f"unknown: {unknown}.{hints}", file=sys.stderr)  # fmt: skip
        return 2
    try:
        with warnings.catch_warnings():  # a renamed keyword's warning is shown (CHANGELOG.md)
            warnings.simplefilter("always", DeprecationWarning)
            result = thm.evaluate(strict=False, **values)
    except ParameterError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return 2
    values = {p if p in thm.notation else RENAMED[p]: v for p, v in values.items()}
    subs = {thm.notation[p].symbol: v for p, v in values.items()}
    hypotheses = []
    for c in thm.conditions:
        lhs = float(sp.sympify(c.lhs).subs(subs))
        rhs = float(sp.sympify(c.rhs).subs(subs))
        holds = bool({"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs,
                      "!=": lhs != rhs}[c.rel])  # fmt: skip
        hypotheses.append({"hypothesis": c.text, "left": lhs, "right": rhs, "holds": holds})
    terms = {k: float(np.asarray(v)) for k, v in result.terms.items()}
    total = float(np.asarray(result.total))
    if args.json:
        print(
            json.dumps(
                {
                    "key": thm.key,
                    "title": thm.title,
                    "reference": thm.reference,
                    "kind": thm.kind,
                    "values": values,
                    "hypotheses": hypotheses,
                    "valid": result.valid,
                    "terms": terms,
                    "total": total,
                },
                indent=2,
            )
        )
    else:
        print(f"{thm.title} ({thm.kind}; {thm.reference})")
        for h in hypotheses:
            verdict = "holds" if h["holds"] else "FAILS"
            print(
                f"  hypothesis {h['hypothesis']}: {h['left']:.6g} vs {h['right']:.6g} -> {verdict}"
            )
        width = max(len(k) for k in [*terms, "total"])
        for k, v in terms.items():
            print(f"  {k:{width}s} = {v:.10g}")
        print(f"  {'total':{width}s} = {total:.10g}")
        if not result.valid:
            print(f"  NOT VALID: {result.reason}")
    return 0 if result.valid else 1


def add_parsers(sub) -> None:
    s = sub.add_parser("show", help="a theorem: statement, hypotheses, parameters, reference")
    s.add_argument("key", help="catalogue key, e.g. cafed.theorem1 (fedtheory list)")
    s.add_argument("--latex", action="store_true", help="print the formula in LaTeX")
    s.set_defaults(func=_show)
    e = sub.add_parser(
        "eval",
        help="evaluate a theorem: check its hypotheses, print every term and the total "
        "(exit 1 when a hypothesis fails)",
    )
    e.add_argument("key", help="catalogue key, e.g. cafed.theorem1")
    e.add_argument("values", nargs="*", metavar="NAME=VALUE", help="every parameter's value")
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    e.set_defaults(func=_eval)
