"""E3CS's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "e3cs",
    "E3CS (Huang et al., IEEE Internet of Things Journal 2022)",
    statements=("fedtheory.bounds.e3cs",),
    tightness=("fedtheory.tightness.e3cs",),
    validations=(
        "fedtheory.validation.papers.e3cs.regret",
        "fedtheory.validation.papers.e3cs.statements",
    ),
    errata=("fedtheory.validation.papers.e3cs.errata",),
)
