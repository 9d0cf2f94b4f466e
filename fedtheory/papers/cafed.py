"""CA-Fed's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "cafed",
    "CA-Fed (Rodio et al., IEEE INFOCOM 2023)",
    statements=("fedtheory.bounds.cafed",),
    algorithms=("fedtheory.sim.cafed",),
    tightness=("fedtheory.tightness.cafed",),
    validations=(
        "fedtheory.validation.papers.cafed.decomposition",
        "fedtheory.validation.papers.cafed.theorem2",
        "fedtheory.validation.papers.cafed.weights",
        "fedtheory.validation.papers.cafed.appf",
        "fedtheory.validation.papers.cafed.statements",
    ),
    errata=(
        "fedtheory.validation.papers.cafed.errata",
        "fedtheory.validation.papers.cafed.errata_experiments",
    ),
)
