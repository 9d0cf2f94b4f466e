"""FedLaAvg's record: its modules, layer by layer (:mod:`fedtheory.papers`)."""

from fedtheory.papers import Paper

PAPER = Paper(
    "fedlaavg",
    "FedLaAvg (Yan et al., arXiv 2002.07399)",
    statements=("fedtheory.bounds.fedlaavg",),
    algorithms=("fedtheory.sim.fedlaavg",),
    tightness=("fedtheory.tightness.fedlaavg",),
    pep=("fedtheory.pep.fedlaavg",),
    validations=(
        "fedtheory.validation.example1_fedavg",
        "fedtheory.validation.example1_algorithms",
        "fedtheory.validation.fedlaavg_staleness",
    ),
    errata=("fedtheory.validation.errata.fedlaavg",),
)
