"""Client availability processes: boolean masks ``[replicates, rounds, clients]``.

A paper's processes (``availability`` of its :class:`fedtheory.papers.Paper`) are imported
here and the names in each module's ``EXPORTS`` re-exported."""

from fedtheory import papers as _papers
from fedtheory.availability.base import AvailabilityProcess
from fedtheory.availability.bernoulli import Bernoulli
from fedtheory.availability.blocks import AlternatingBlocks
from fedtheory.availability.clusters import Clustered
from fedtheory.availability.cyclic import Cyclic
from fedtheory.availability.diurnal import Diurnal
from fedtheory.availability.dropout import BoundedDropout
from fedtheory.availability.markov import TwoStateMarkov
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
    "TimeVaryingParticipation",
    "TraceReplay",
    "TwoStateMarkov",
]


_papers.on_register(lambda paper: _papers.export(paper, "availability", globals()))
