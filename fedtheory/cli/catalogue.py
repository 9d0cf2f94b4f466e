"""``fedtheory list``: the theorem catalogue and the validations."""

from __future__ import annotations


def _list(_args) -> int:
    from fedtheory.bounds import CATALOGUE, NOT_CHECKABLE
    from fedtheory.validation import CHECKS

    print("Theorems (fedtheory.bounds.CATALOGUE):")
    for key, thm in CATALOGUE.items():
        print(f"  {key:45s} {thm.kind:12s} {thm.reference}")
    print("\nNot in the catalogue (no recoverable constants):")
    for name, why in NOT_CHECKABLE:
        print(f"  {name}: {why}")
    print("\nValidations (fedtheory validate --check NAME):")
    for name, check in CHECKS.items():
        print(f"  {name:45s} {check.title}")
    return 0


def add_parsers(sub) -> None:
    sub.add_parser("list", help="list theorems and validations").set_defaults(func=_list)
