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
        "fedtheory.validation.fedawe_statements",
        "fedtheory.validation.fedawe_convergence",
        "fedtheory.validation.fedawe_auxiliary",
        "fedtheory.validation.fedawe_example1",
        "fedtheory.validation.fedawe_table2",
    ),
)
