"""Client availability processes: boolean masks ``[replicates, rounds, clients]``."""

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.availability.bernoulli import Bernoulli
from fedtheory.availability.blocks import AlternatingBlocks
from fedtheory.availability.clusters import Clustered
from fedtheory.availability.cyclic import Cyclic
from fedtheory.availability.diurnal import Diurnal
from fedtheory.availability.dropout import BoundedDropout
from fedtheory.availability.markov import TwoStateMarkov
from fedtheory.availability.nonstationary import NonStationary
from fedtheory.availability.time_varying import TimeVaryingParticipation
from fedtheory.availability.trace import TraceReplay

__all__ = [
    "AlternatingBlocks",
    "AvailabilityProcess",
    "Bernoulli",
    "BoundedDropout",
    "Clustered",
    "Cyclic",
    "Diurnal",
    "NonStationary",
    "TimeVaryingParticipation",
    "TraceReplay",
    "TwoStateMarkov",
]
