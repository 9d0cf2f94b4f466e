"""Vectorised federated simulator: clients and replicate seeds are tensor dimensions."""

from fedtheory.sim.aggregation import AverageParticipating, FixedWeights, unbiased_weights
from fedtheory.sim.fedavg import FedAvg
from fedtheory.sim.record import RunRecord
from fedtheory.sim.runner import simulate
from fedtheory.sim.selection_fedavg import SelectedFedAvg
from fedtheory.sim.selection_policies import E3CS, FedCS, PowD, RandomSelection
from fedtheory.sim.selection_runner import SelectionRecord, run_selection

__all__ = [
    "AverageParticipating",
    "E3CS",
    "FedAvg",
    "FedCS",
    "FixedWeights",
    "PowD",
    "RandomSelection",
    "RunRecord",
    "SelectedFedAvg",
    "SelectionRecord",
    "run_selection",
    "simulate",
    "unbiased_weights",
]
