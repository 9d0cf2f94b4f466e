r"""The server's samplers (:mod:`fedtheory.sim.samplers`) as PEP participation laws.

With every client available, a sampler draws each round independently of the past, so the
law of the sampled masks over :math:`T` rounds is the product of one round's law, a finite
distribution of masks (:class:`~fedtheory.pep.participation.Participation`), and a FedAvg
aggregator gives the sampler's weights from the mask:

* :class:`~fedtheory.sim.SampleUniform`: the :math:`\binom Nk` subsets of size :math:`k`,
  equally likely; weights :math:`1/k` (``AverageParticipating``);
* :class:`~fedtheory.sim.SampleWithoutReplacement` (Li et al., ICLR 2020, Scheme II): the
  same subsets; weights :math:`p_kN/k` (``FixedWeights``);
* :class:`~fedtheory.sim.SampleBernoulli`: client :math:`k` independently with
  :math:`\pi_k`; weights :math:`p_k/\pi_k` (``FixedWeights``).

Scheme I (:class:`~fedtheory.sim.SampleWithReplacement`) weighs a client by how often it
was drawn, :math:`c_k/K`, which its mask does not hold: it is not a law of masks with a
mask's weights, and is refused.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import Size, declare
from fedtheory.errors import ParameterError
from fedtheory.pep.participation import Participation
from fedtheory.sim.aggregation import AverageParticipating, FixedWeights
from fedtheory.sim.sampled import SAMPLER
from fedtheory.sim.samplers import SampleBernoulli, SampleUniform, SampleWithoutReplacement

MAX_MASKS = 4096
"""The most masks a law enumerates (as :meth:`Participation.bernoulli`: :math:`2^{12}`)."""


class SampledLaw(NamedTuple):
    """A sampler's masks over the rounds and the FedAvg aggregator of its weights."""

    participation: Participation
    aggregator: object  # mask [R, N] -> weights [R, N]


def _one_round(sampler, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One round's masks ``[M, N]`` and their probabilities ``[M]`` (all clients available)."""
    if isinstance(sampler, SampleBernoulli):
        masks = np.array(list(itertools.product((False, True), repeat=n)))
        probs = np.prod(np.where(masks, sampler.pi, 1 - sampler.pi), axis=1)
        return masks[probs > 0], probs[probs > 0]
    k = min(sampler.k, n)
    subsets = list(itertools.combinations(range(n), k))
    masks = np.zeros((len(subsets), n), dtype=bool)
    for row, subset in enumerate(subsets):
        masks[row, list(subset)] = True
    return masks, np.full(len(subsets), 1.0 / len(subsets))


@declare(sampler=SAMPLER, rounds=Size(), num_clients=Size())
def sampled_law(sampler, rounds: int, num_clients: int) -> SampledLaw:
    r"""The law of ``sampler``'s masks over ``rounds`` rounds of ``num_clients`` clients, all
    available, and the aggregator of its weights (run the PEP with
    ``FedAvg(law.aggregator, ...)`` under ``law.participation``).

    Examples
    --------
    >>> law = sampled_law(SampleUniform(1), rounds=2, num_clients=2)
    >>> law.participation.masks.shape, law.participation.probs.tolist()
    ((4, 2, 2), [0.25, 0.25, 0.25, 0.25])
    """
    owner = "sampled_law"
    if not isinstance(sampler, SampleUniform | SampleWithoutReplacement | SampleBernoulli):
        raise ParameterError(
            f"The 'sampler' parameter of {owner} must be SampleUniform, SampleWithoutReplacement "
            "or SampleBernoulli (Scheme I weighs a client by how often it is drawn, which a "
            f"mask does not hold). Got {sampler!r} instead."
        )
    p = getattr(sampler, "p", None)
    if p is not None and p.size != num_clients:
        raise ParameterError(
            f"The 'num_clients' parameter of {owner} must equal the sampler's {p.size} "
            f"weights p_k. Got {num_clients} instead."
        )
    n = num_clients
    if isinstance(sampler, SampleBernoulli):
        per_round = 2 ** min(n, 13)  # above 2^12 masks a round is refused anyway
    else:
        m, per_round = min(sampler.k, n), 1
        for i in range(min(m, n - m)):  # binomial(n, m), stopped once above MAX_MASKS
            per_round = per_round * (n - i) // (i + 1)
            if per_round > MAX_MASKS:
                break
    if per_round > MAX_MASKS:
        raise ParameterError(
            f"The 'num_clients' parameter of {owner} must keep one round's masks at most "
            f"{MAX_MASKS}. Got num_clients={n} ({sampler!r}) instead."
        )
    if per_round > 1 and rounds * math.log(per_round) > math.log(MAX_MASKS) + 1e-9:
        raise ParameterError(
            f"The 'rounds' parameter of {owner} must keep the masks enumerated at most "
            f"{MAX_MASKS} ({per_round} per round here). Got rounds={rounds} instead."
        )
    masks, probs = _one_round(sampler, n)
    check_bytes(len(probs) ** rounds * rounds * n, owner, what="the enumerated masks",
                fixes="fewer rounds or clients")  # fmt: skip
    picks = np.array(list(itertools.product(range(len(probs)), repeat=rounds)))  # [M^T, T]
    law = Participation(masks[picks], np.prod(probs[picks], axis=1))
    if isinstance(sampler, SampleUniform):
        return SampledLaw(law, AverageParticipating())
    if isinstance(sampler, SampleWithoutReplacement):
        return SampledLaw(law, FixedWeights(sampler.p * (n / min(sampler.k, n)), name="scheme-II"))
    return SampledLaw(law, FixedWeights(sampler.p / sampler.pi, name="unbiased"))
