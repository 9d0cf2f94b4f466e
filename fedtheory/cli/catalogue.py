"""``fedtheory list``: the theorem catalogue (filtered by paper and kind) and, with
``--validations``, the validations.

Listing theorems imports only ``fedtheory.bounds``; the validations (which import the
simulator) are listed on request."""

from __future__ import annotations

import sys
import textwrap

KINDS = ("upper bound", "exact", "limit", "order")  # = fedtheory.bounds.base.KINDS (a test checks)
WIDTH = 100
"""Columns ``fedtheory list`` fits its lines in (longer texts wrap under their column)."""


def _line(head: str, text: str, indent: int | None = None) -> str:
    """``head`` then ``text``, wrapped at :data:`WIDTH`, continuation lines under ``text``
    (or ``indent`` spaces)."""
    pad = " " * (len(head) if indent is None else indent)
    return textwrap.fill(text, WIDTH, initial_indent=head, subsequent_indent=pad,
                         break_on_hyphens=False)  # fmt: skip


def _list(args) -> int:
    from fedtheory.bounds import CATALOGUE, NOT_CHECKABLE

    papers = sorted({key.split(".")[0] for key in CATALOGUE})
    if args.paper is not None and args.paper not in papers:
        print(f"fedtheory: unknown paper {args.paper!r}; choose from {papers}", file=sys.stderr)
        return 2
    theorems = [
        (key, thm)
        for key, thm in CATALOGUE.items()
        if (args.paper is None or key.split(".")[0] == args.paper)
        and (args.kind is None or thm.kind == args.kind)
    ]
    width = max((len(key) for key, _ in theorems), default=0)
    print("Theorems (fedtheory.bounds.CATALOGUE; fedtheory show KEY):")
    for key, thm in theorems:
        print(_line(f"  {key:{width}s} {thm.kind:12s} ", thm.reference))
    if not theorems:
        print("  (none)")
    if args.kind is None:
        print("\nNot in the catalogue (no recoverable or explicit constants), with why:")
        for name, why in NOT_CHECKABLE:
            if args.paper is None or name.lower().startswith(args.paper):
                print(_line(f"  {name}: ", why, indent=4))
    if not args.validations:
        print("\nValidations: fedtheory list --validations")
        return 0
    from fedtheory.validation import CHECKS, PAPER_OF

    width = max(len(name) for name in CHECKS)
    print("\nValidations (fedtheory validate --check NAME):")
    for name, check in CHECKS.items():  # a paper's: those its record's modules registered
        if args.paper is None or PAPER_OF.get(name) == args.paper:
            print(_line(f"  {name:{width}s} ", check.title))
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("list", help="list theorems (filter by paper and kind) and validations")
    p.add_argument("--paper", help="only this paper (its key: the prefix of its theorems' keys)")
    p.add_argument("--kind", choices=KINDS, help="only statements of this kind")
    p.add_argument(
        "--validations",
        action="store_true",
        help="also list the validations (imports the simulator)",
    )
    p.set_defaults(func=_list)
