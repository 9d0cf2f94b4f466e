r"""Exact worst cases of FL methods by performance estimation (PEP).

For a deterministic method of :mod:`fedtheory.sim` (FedAvg with the papers' weightings,
MIFA, and the papers' methods their records name: :mod:`fedtheory.pep.registry`) under a
participation pattern, :func:`worst_case` solves the PEP
(Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017) with PEPit over a class of client
functions, reports the certificate's checks, and :func:`replay` runs the attaining instance
in the simulator. Interchangeable clients are reduced to one representative and their mean
(:mod:`fedtheory.pep._symmetry`), which gives the same value with a PEP whose size does not
grow with them. PEPit is the optional extra ``fedtheory[pep]``.
"""

from fedtheory.pep.catalogue import exact_worst_case_for
from fedtheory.pep.classes import (
    Isotropic,
    Quadratic,
    SmoothConvex,
    SmoothNonconvex,
    SmoothStronglyConvex,
)
from fedtheory.pep.heterogeneity import AtOptimum, Dissimilarity
from fedtheory.pep.initial import Initial
from fedtheory.pep.participation import Participation
from fedtheory.pep.replay import replay
from fedtheory.pep.sampling import SampledLaw, sampled_law
from fedtheory.pep.solve import PepResult, worst_case

__all__ = [
    "AtOptimum",
    "Dissimilarity",
    "Initial",
    "Isotropic",
    "Participation",
    "PepResult",
    "Quadratic",
    "SampledLaw",
    "SmoothConvex",
    "SmoothNonconvex",
    "SmoothStronglyConvex",
    "exact_worst_case_for",
    "replay",
    "sampled_law",
    "worst_case",
]
