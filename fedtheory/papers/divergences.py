"""The weight divergences' record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "divergences",
    "Divergences between target and effective weights (CA-Fed Theorems 1 and 3)",
    statements=("fedtheory.bounds.divergences",),
    tightness=("fedtheory.tightness.divergences",),
)
