"""E3CS's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "e3cs",
    "E3CS (Huang et al., IEEE Internet of Things Journal 2022)",
    statements=("fedtheory.bounds.e3cs",),
    tightness=("fedtheory.tightness.e3cs",),
    validations=("fedtheory.validation.e3cs_regret", "fedtheory.validation.e3cs_statements"),
    errata=("fedtheory.validation.errata.e3cs",),
)
