r"""Every erratum check, in the records' order and each module's (the order of
``validation/ERRATA.md``), and its text forms.

Each check takes its instance as keyword arguments, so that it can be re-run on a second,
independent instance. A paper's checks are the ``ERRATA`` of the modules its record names
under ``errata`` (:mod:`fedtheory.papers`). Print them all with
``python -m fedtheory.validation.errata`` (``--markdown``: the details section of
``validation/ERRATA.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import import_module

from fedtheory import papers
from fedtheory.constraints import Constraint, Option, SequenceOf, declare
from fedtheory.validation.errata.record import Erratum, format_erratum, hypotheses_text

ERRATA: list[Callable[[], Erratum]] = []
"""Every registered paper's erratum checks (the ``ERRATA`` of its ``errata`` modules)."""
SIZES: dict[str, dict[str, dict]] = {}
"""``check name -> size -> keyword arguments`` the ``errata`` validation passes (the modules'
``SIZES``)."""
SECOND: dict[str, dict] = {}
"""``check name -> keyword arguments`` of a second instance, independent of the check's
default one (the modules' ``SECOND``): the hostile-reading tests run both."""


def _load(paper: papers.Paper) -> None:
    for module in map(import_module, paper.errata):
        ERRATA.extend(c for c in module.ERRATA if c not in ERRATA)
        SIZES.update(getattr(module, "SIZES", {}))
        SECOND.update(getattr(module, "SECOND", {}))


papers.on_register(_load)


def run_all() -> list[Erratum]:
    """Run every erratum check."""
    return [check() for check in ERRATA]


class _Check(Constraint):
    """A registered erratum check (one of :data:`ERRATA`, read at each call: a paper
    registered later adds its checks)."""

    none = False

    def describe(self, args):
        return "a registered erratum check (one of fedtheory.validation.errata.ERRATA)"

    def convert(self, value, args):
        return value if any(value is c for c in ERRATA) else None

    def hostile(self):
        return [*super().hostile(), ("number", 1.0), ("name", "cafed_eq21_reversed"),
                ("other function", len)]  # fmt: skip

    def example(self, args):
        return ERRATA[0]


@declare(check=_Check())
def markdown_entry(check: Callable[[], Erratum]) -> str:
    """Markdown block for ``validation/ERRATA.md``: the record and its reproduce command."""
    e = check()
    command = (
        'python -c "from fedtheory.validation import errata; '
        f'print(errata.format_erratum(errata.{check.__name__}()))"'
    )
    measured, relation, bound = e.compare
    return (
        f"### `{e.key}` — *{e.kind}*, **{e.verdict}**\n\n- **Statement**: {e.statement}\n"
        f"- **Where the paper states it**: {e.source}\n"
        f"- **Finding checked**: {e.finding}\n- **Instance**: {e.instance}\n"
        f"- **Hypotheses on the instance (computed)**: {hypotheses_text(e.hypotheses)}\n"
        f"- **fedtheory computes**: {e.computed} ({measured} = {e.measured:.6g} {relation} "
        f"{bound} = {e.bound:.6g})\n- **What a reader should do**: {e.advice}\n"
        f"- **Reproduce**: `{command}`\n"
    )


@declare(argv=SequenceOf(Option("--markdown"), plural="options"))
def main(argv: Sequence[str] = ()) -> None:
    """Print every erratum (``--markdown``: the details section of ``validation/ERRATA.md``)."""
    for check in ERRATA:
        text = markdown_entry(check) if "--markdown" in argv else format_erratum(check())
        print(text)  # noqa: T201 (command-line entry point)
