r"""Tightness and counterexample search for the catalogue's upper bounds.

For an upper bound and a family of instances inside its hypotheses (``FAMILIES``, one per
catalogue key whose measured side is cheap), :func:`search` looks for the instance that
maximises measured / bound (hypothesis-guided draws, then Nelder-Mead over the instance's
reals) and returns a :class:`SearchResult`: the worst ratio, the instance attaining it and,
if the ratio exceeds 1 inside the hypotheses, a shrunk counterexample; ``save`` writes it
as a reproducible JSON and :func:`reproduce` re-evaluates it. :func:`scaled` multiplies a
bound by a factor (a deliberately false statement to test the search on).

Command line: ``fedtheory tightness KEY [--budget N] [--seed S] [--scale F] [--out FILE]``.
"""

from fedtheory.tightness.engine import DEFAULT_BUDGET, Point, SearchResult, reproduce, search
from fedtheory.tightness.families import FAMILIES
from fedtheory.tightness.family import Evaluation, Family, Integer, Real, scaled

__all__ = [
    "DEFAULT_BUDGET",
    "FAMILIES",
    "Evaluation",
    "Family",
    "Integer",
    "Point",
    "Real",
    "SearchResult",
    "reproduce",
    "scaled",
    "search",
]
