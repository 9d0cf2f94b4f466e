"""CA-Fed's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "cafed",
    "CA-Fed (Rodio et al., IEEE INFOCOM 2023)",
    statements=("fedtheory.bounds.cafed",),
    algorithms=("fedtheory.sim.cafed",),
    tightness=("fedtheory.tightness.cafed",),
    validations=(
        "fedtheory.validation.cafed_decomposition",
        "fedtheory.validation.cafed_theorem2",
        "fedtheory.validation.cafed_weights",
        "fedtheory.validation.cafed_appf",
        "fedtheory.validation.cafed_statements",
    ),
    errata=("fedtheory.validation.errata.cafed", "fedtheory.validation.errata.cafed_experiments"),
)
