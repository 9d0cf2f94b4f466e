"""Vectorised federated simulator: clients and replicate seeds are tensor dimensions."""

from fedtheory.sim.aggregation import AverageParticipating, FixedWeights, unbiased_weights
from fedtheory.sim.fedavg import FedAvg
from fedtheory.sim.record import RunRecord
from fedtheory.sim.runner import simulate

__all__ = [
    "AverageParticipating",
    "FedAvg",
    "FixedWeights",
    "RunRecord",
    "simulate",
    "unbiased_weights",
]
