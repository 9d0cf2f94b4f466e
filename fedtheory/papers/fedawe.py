"""FedAWE's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "fedawe",
    "FedAWE (Xiang et al., NeurIPS 2024)",
    statements=("fedtheory.bounds.fedawe",),
    availability=("fedtheory.availability.nonstationary",),
    algorithms=("fedtheory.sim.fedawe",),
    tightness=("fedtheory.tightness.fedawe",),
    pep=("fedtheory.pep.fedawe",),
    validations=(
        "fedtheory.validation.papers.fedawe.statements",
        "fedtheory.validation.papers.fedawe.convergence",
        "fedtheory.validation.papers.fedawe.auxiliary",
        "fedtheory.validation.papers.fedawe.example1",
        "fedtheory.validation.papers.fedawe.table2",
    ),
)
