r"""Every erratum check, in the order of ``validation/ERRATA.md``, and its text forms.

Each check takes its instance as keyword arguments, so that it can be re-run on a second,
independent instance. Print them all with ``python -m fedtheory.validation.errata``
(``--markdown``: the details section of ``validation/ERRATA.md``).
"""

from __future__ import annotations

from collections.abc import Callable

from fedtheory.validation.errata.cafed import (
    cafed_chi_square_not_convex_in_q,
    cafed_code_oracle_minima,
    cafed_convex_in_y_s,
    cafed_eq21_reversed,
    cafed_lambda_estimator_limit,
    cafed_lemma3_monotone_steps,
    cafed_proof_step23,
    cafed_theorem2_step_size,
    cafed_theorem2_versus_its_proof,
    cafed_upsilon_uses_w_star,
    cafed_water_filling_needs_equal_A,
)
from fedtheory.validation.errata.cafed_experiments import (
    cafed_code_optimiser,
    cafed_code_population,
    cafed_table1_gap,
)
from fedtheory.validation.errata.e3cs import (
    e3cs_fact8,
    e3cs_static_regret,
    e3cs_successive_sampling,
)
from fedtheory.validation.errata.fedau import fedau_step_size_constant
from fedtheory.validation.errata.fedlaavg import fedlaavg_equal_blocks, fedlaavg_missing_one_over_n
from fedtheory.validation.errata.mimic import mimic_equal_dropout
from fedtheory.validation.errata.record import Erratum, format_erratum, hypotheses_text

ERRATA: tuple[Callable[[], Erratum], ...] = (
    cafed_chi_square_not_convex_in_q,
    cafed_convex_in_y_s,
    cafed_water_filling_needs_equal_A,
    cafed_upsilon_uses_w_star,
    cafed_theorem2_versus_its_proof,
    cafed_theorem2_step_size,
    cafed_lemma3_monotone_steps,
    cafed_eq21_reversed,
    cafed_lambda_estimator_limit,
    cafed_code_oracle_minima,
    cafed_proof_step23,
    cafed_table1_gap,
    cafed_code_population,
    cafed_code_optimiser,
    e3cs_fact8,
    e3cs_successive_sampling,
    e3cs_static_regret,
    fedlaavg_equal_blocks,
    fedlaavg_missing_one_over_n,
    fedau_step_size_constant,
    mimic_equal_dropout,
)


def run_all() -> list[Erratum]:
    """Run every erratum check."""
    return [check() for check in ERRATA]


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


def main(argv: list[str] | None = None) -> None:
    """Print every erratum (``--markdown``: the details section of ``validation/ERRATA.md``)."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    for check in ERRATA:
        text = markdown_entry(check) if "--markdown" in args else format_erratum(check())
        print(text)  # noqa: T201 (command-line entry point)
