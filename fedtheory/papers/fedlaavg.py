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
        "fedtheory.validation.papers.fedlaavg.example1_fedavg",
        "fedtheory.validation.papers.fedlaavg.example1_algorithms",
        "fedtheory.validation.papers.fedlaavg.staleness",
    ),
    errata=("fedtheory.validation.papers.fedlaavg.errata",),
)
