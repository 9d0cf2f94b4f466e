"""Client availability processes: boolean masks ``[replicates, rounds, clients]``."""

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.availability.blocks import AlternatingBlocks
from fedtheory.availability.markov import TwoStateMarkov

__all__ = ["AlternatingBlocks", "AvailabilityProcess", "TwoStateMarkov"]
