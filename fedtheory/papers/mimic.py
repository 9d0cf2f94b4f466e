"""MimiC's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "mimic",
    "MimiC (Sun et al., IEEE TMC 2024)",
    statements=("fedtheory.bounds.mimic",),
    algorithms=("fedtheory.sim.mimic",),
    validations=("fedtheory.validation.papers.mimic.dropout",),
    errata=("fedtheory.validation.papers.mimic.errata",),
)
