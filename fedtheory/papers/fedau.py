"""FedAU's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "fedau",
    "FedAU (Wang and Ji, ICLR 2024)",
    statements=("fedtheory.bounds.fedau",),
    tightness=("fedtheory.tightness.fedau",),
    validations=("fedtheory.validation.papers.fedau.weights",),
    errata=("fedtheory.validation.papers.fedau.errata",),
)
