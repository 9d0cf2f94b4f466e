r"""Errata as checks: each suspected error in a *statement* of a paper, on a concrete instance.

One module per paper (:mod:`~fedtheory.validation.errata.cafed`, ``e3cs``, ``fedlaavg``,
``fedau``, ``mimic``); every check returns a frozen :class:`Erratum` through the one
constructor :func:`erratum` (:mod:`~fedtheory.validation.errata.record`); :data:`ERRATA`
lists them in the order of ``validation/ERRATA.md`` (``catalogue``); the validation
``errata`` recomputes every entry against what ``ERRATA.md`` records (``check``). Print
them with ``python -m fedtheory.validation.errata`` (``--markdown``: the details section
of ``validation/ERRATA.md``).
"""

# ruff: noqa: F401  (the package's public names)
from fedtheory.validation.errata.cafed import SOLVER, SOLVER_TOL
from fedtheory.validation.errata.catalogue import (
    ERRATA,
    cafed_chi_square_not_convex_in_q,
    cafed_code_optimiser,
    cafed_code_oracle_minima,
    cafed_code_population,
    cafed_convex_in_y_s,
    cafed_eq21_reversed,
    cafed_lambda_estimator_limit,
    cafed_lemma3_monotone_steps,
    cafed_proof_step23,
    cafed_table1_gap,
    cafed_theorem2_step_size,
    cafed_theorem2_versus_its_proof,
    cafed_upsilon_uses_w_star,
    cafed_water_filling_needs_equal_A,
    e3cs_fact8,
    e3cs_static_regret,
    e3cs_successive_sampling,
    fedau_step_size_constant,
    fedlaavg_equal_blocks,
    fedlaavg_missing_one_over_n,
    main,
    markdown_entry,
    mimic_equal_dropout,
    run_all,
)
from fedtheory.validation.errata.check import (
    CODES,
    ERRATA_MD,
    NAME,
    TABLE_ANCHOR,
    TABLE_HEADER,
    class_counts,
    recorded_classes,
    recorded_verdicts,
    table_rows,
)
from fedtheory.validation.errata.e3cs import successive_sampling_inclusion
from fedtheory.validation.errata.record import (
    CAVEATS,
    CLASS_MEANINGS,
    CLASSES,
    RELATIONS,
    VERDICTS,
    Erratum,
    erratum,
    format_erratum,
)
