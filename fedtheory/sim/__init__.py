"""Vectorised federated simulator: clients and replicate seeds are tensor dimensions.

A paper's algorithms (``algorithms`` of its :class:`fedtheory.papers.Paper`) are imported
here and the names in each module's ``EXPORTS`` re-exported (``fedtheory.sim.FedAWE``,
``fedtheory.sim.CaFed``): no module of this package names a paper's."""

from fedtheory import papers as _papers
from fedtheory.sim import reference
from fedtheory.sim.aggregation import (
    AverageAll,
    AverageParticipating,
    FedAU,
    FedAUState,
    FixedWeights,
    StatefulAggregator,
    average_all,
    average_participating,
    fedau_init,
    fedau_update,
    fedau_weights,
    unbiased_weights,
)
from fedtheory.sim.algorithm import Algorithm, LocalTraining
from fedtheory.sim.fedavg import FedAvg, FedAvgState
from fedtheory.sim.fedvarp import FedVARP, FedVARPState
from fedtheory.sim.local import local_sgd, project_ball
from fedtheory.sim.mifa import MIFA, MIFAState
from fedtheory.sim.record import RunRecord
from fedtheory.sim.runner import evaluate_metrics, simulate
from fedtheory.sim.sampled import SampledFedAvg, SampledFedAvgState, run_sampled
from fedtheory.sim.samplers import (
    SampleBernoulli,
    SampleUniform,
    SampleWithoutReplacement,
    SampleWithReplacement,
)
from fedtheory.sim.schedules import Constant, ExponentialDecay, InverseTime, PerStep
from fedtheory.sim.selection.fedavg import SelectedFedAvg
from fedtheory.sim.selection.policies import E3CS, FedCS, PowD, RandomSelection
from fedtheory.sim.selection.runner import SelectionRecord, run_selection

__all__ = [
    "MIFA",
    "Algorithm",
    "AverageAll",
    "AverageParticipating",
    "Constant",
    "ExponentialDecay",
    "FedAU",
    "FedAUState",
    "FedAvg",
    "FedAvgState",
    "FedVARP",
    "FedVARPState",
    "FixedWeights",
    "InverseTime",
    "LocalTraining",
    "PerStep",
    "MIFAState",
    "RunRecord",
    "SampleBernoulli",
    "SampleUniform",
    "SampleWithReplacement",
    "SampleWithoutReplacement",
    "SampledFedAvg",
    "SampledFedAvgState",
    "StatefulAggregator",
    "average_all",
    "average_participating",
    "evaluate_metrics",
    "fedau_init",
    "fedau_update",
    "fedau_weights",
    "local_sgd",
    "project_ball",
    "run_sampled",
    "reference",
    "E3CS",
    "FedCS",
    "PowD",
    "RandomSelection",
    "SelectedFedAvg",
    "SelectionRecord",
    "run_selection",
    "simulate",
    "unbiased_weights",
]


_papers.on_register(lambda paper: _papers.export(paper, "algorithms", globals()))
