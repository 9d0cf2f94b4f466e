r"""Availability populations of the papers' experiments.

* :func:`cafed_population` -- CA-Fed's experimental population (Rodio et al., §VI and
  Sec. V-A), in the paper's version and in the authors' code's version.
* :func:`fedau_participation_probabilities` -- FedAU's participation probabilities
  (Wang & Ji, the authors' ``util/util.py``), to feed :class:`Bernoulli`,
  :meth:`TwoStateMarkov.fedau` or
  :class:`Cyclic`.
* :func:`mimic_static_probabilities` -- MimiC's code's five probability levels (Sec. 7,
  pattern 2), to feed :class:`Bernoulli`.

Random population parameters are drawn once from :func:`base.population_rng` (``seed``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.availability.base import population_rng
from fedtheory.availability.markov import TwoStateMarkov
from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Option, Probabilities, Real, Size, declare
from fedtheory.errors import ParameterError
from fedtheory.markov import lambda_feasible_range

__all__ = [
    "CaFedPopulation",
    "cafed_population",
    "fedau_participation_probabilities",
    "mimic_static_probabilities",
]

CODE_CLIP_MARGIN = 1e-8
"""CA-Fed's code clips lambda to [lambda_min + 1e-8, 1] (``activity_simulator.py``)."""


@dataclass(frozen=True)
class CaFedPopulation:
    r"""CA-Fed's population: the availability process and the labels of each client.

    Attributes
    ----------
    process : TwoStateMarkov
        Independent two-state chains with the clients' :math:`(\pi_k,\lambda_k)`.
    group : int array [N]
        Data group (0 or 1), 12 + 12 for :math:`N=24`.
    more_available : bool array [N]
        True for :math:`\pi_k=1/2+g`, False for :math:`\pi_k=1/2-g`.
    correlated : bool array [N]
        True for :math:`\lambda_k=\nu` ("stable"), False for weakly correlated ("shifting").
    """

    process: TwoStateMarkov
    group: np.ndarray
    more_available: np.ndarray
    correlated: np.ndarray


POPULATION_BYTES = 160
"""Peak bytes per client of :func:`cafed_population`: ids, groups, classes, the
probabilities, the noise, the masks and the chain's checked copies (measured with
``tracemalloc``: ``tests/test_budget_peaks.py``)."""


@declare(
    "seed",
    variant=Option("paper", "code"),
    num_clients=Size(8, multiple=8),
    g=Real(0.0, 0.5, high_open=True),
    nu=Real(-1.0, 1.0),
    eps=Real(0.0),
)
def cafed_population(
    *,
    variant: str = "paper",
    num_clients: int = 24,
    g: float = 0.4,
    nu: float = 0.9,
    eps: float = 1e-2,
    seed: int = 0,
) -> CaFedPopulation:
    r"""CA-Fed's experimental availability population (Rodio et al., Sec. V-A).

    Clients are ordered by data group (first half group 0), then by availability class
    (first half of a group more available, :math:`\pi=1/2+g`; then :math:`\pi=1/2-g`).

    * ``variant="paper"``: in every (group, class) cell, the first half of the clients is
      correlated (:math:`\lambda=\nu`), the rest weakly correlated,
      :math:`\lambda\sim\mathcal N(0,\varepsilon^2)`; ``num_clients`` must be a multiple of 8.
    * ``variant="code"`` (``data/constants.py``, ``data/utils.py``): more-available clients
      are all "shifting"; less-available ones are half "stable"
      (:math:`\lambda=\max(\nu,\lambda_{\min}+10^{-8})`) and half "shifting"; shifting
      clients have :math:`\lambda=\mathrm{clip}(\frac12(\mathcal N(0,\varepsilon^2)+\varepsilon))`
      with the code's clip to :math:`[\lambda_{\min}+10^{-8},1]` (part of the code's
      definition). The code draws the stable/shifting types with these probabilities; here
      the expected proportions are assigned deterministically (first half of a cell stable).

    An infeasible :math:`(\pi,\lambda)` in the paper variant raises (no clipping).
    """
    n = num_clients  # a multiple of 8: 2 groups x 2 classes x 2 types
    check_bytes(POPULATION_BYTES * n, "cafed_population", what=f"the parameters of {n} clients",
                fixes="fewer clients")  # fmt: skip
    gen = population_rng(seed)
    k = np.arange(n)
    group = k // (n // 2)
    more_available = (k % (n // 2)) < n // 4
    first_half_of_cell = (k % (n // 4)) < n // 8
    pi = np.where(more_available, 0.5 + g, 0.5 - g)
    noise = gen.normal(0.0, eps, n) if eps > 0 else np.zeros(n)
    if variant == "paper":
        correlated = first_half_of_cell
        lam = np.where(correlated, nu, noise)
    else:
        correlated = ~more_available & first_half_of_cell
        low = lambda_feasible_range(pi)[0] + CODE_CLIP_MARGIN
        shifting = np.clip(0.5 * (noise + eps), low, 1.0)
        lam = np.where(correlated, np.maximum(nu, low), shifting)
    return CaFedPopulation(TwoStateMarkov(pi, lam), group, more_available, correlated)


@declare(
    "seed",
    label_counts=Array(ndim=2, low=0.0),
    mean=Real(0.0, 1.0, low_open=True),
    minimum=Real(0.0, 1.0),
    q=Probabilities(size="label_counts[1]", none=True),
    above_one=Option("raise", "cap"),
)
def fedau_participation_probabilities(
    label_counts,
    *,
    mean: float = 0.1,
    minimum: float = 0.02,
    q=None,
    seed: int = 0,
    above_one: str = "raise",
) -> np.ndarray:
    r"""FedAU's participation probabilities (from the authors' code ``util/util.py``).

    .. math:: p_n=\max\{p_{\min},\ C\,\bar p\,\langle\kappa_n,q\rangle\},

    with :math:`\kappa_n` client :math:`n`'s empirical label distribution, :math:`C` the number
    of classes and :math:`q\sim\mathrm{Dir}(0.1\cdot\mathbf 1_C)` drawn once.

    FedAU's code has no upper clip, so :math:`p_n>1` can occur when :math:`C\bar p>1` (e.g.
    CIFAR-100: :math:`C\bar p=10`), where its ``np.random.binomial`` would fail. Decision:
    ``above_one="raise"`` (default) raises a ParameterError naming ``mean`` and the largest
    value that keeps every :math:`p_n\le1`; ``above_one="cap"`` returns
    :math:`\min(1,p_n)` explicitly (the mean participation is then below :math:`\bar p`).

    Parameters
    ----------
    label_counts : array [N, C]
        Non-negative label counts (or distributions) per client, positive row sums.
    mean, minimum : float
        :math:`\bar p` in (0, 1] and :math:`p_{\min}` in [0, 1].
    q : array [C], optional
        The class weights; drawn from :math:`\mathrm{Dir}(0.1)` with ``seed`` if omitted.
    above_one : {"raise", "cap"}
        What to do with probabilities above 1.

    Returns
    -------
    p : array [N]
    """
    owner = "fedau_participation_probabilities"
    top = label_counts.max(axis=1, keepdims=True)  # rows scaled first: no overflow in the sum
    counts = label_counts / np.where(top > 0, top, 1.0)
    totals = counts.sum(axis=1, keepdims=True)
    if counts.size == 0 or np.any(totals <= 0):
        raise ParameterError(
            f"The 'label_counts' parameter of {owner} must have a positive sum in every row. "
            f"Got {int(np.sum(totals <= 0))} empty row(s) of {counts.shape[0]} instead."
        )
    classes = counts.shape[1]
    if q is None:
        q = population_rng(seed).dirichlet(np.full(classes, 0.1))
    affinity = (counts / totals) @ q  # [N]
    p = np.maximum(minimum, classes * mean * affinity)
    if np.any(p > 1.0) and above_one == "raise":
        limit = 1.0 / (classes * affinity.max())
        raise ParameterError(
            f"The 'mean' parameter of {owner} must be in (0, {limit:.6g}] so that every "
            f"p_n = max(p_min, C mean <kappa_n, q>) <= 1 (or pass above_one='cap'). "
            f"Got {mean:g} instead."
        )
    return np.minimum(p, 1.0)


@declare("num_clients", minimum=Real(0.0, 1.0))
def mimic_static_probabilities(num_clients: int, minimum: float) -> np.ndarray:
    r"""MimiC code's ``static`` levels (Sec. 7, pattern 2):
    :math:`p_i=s+(i\bmod5)(1-s)/4`, five levels from ``minimum`` :math:`s` up to 1.
    (The paper instead gives every client the same :math:`p`: use ``Bernoulli`` directly.)
    Not modelled: the code's rule forcing two clients active when fewer are."""
    check_bytes(16 * num_clients, "mimic_static_probabilities", what=f"{num_clients} levels",
                fixes="fewer clients")  # fmt: skip
    return minimum + (np.arange(num_clients) % 5) * (1.0 - minimum) / 4.0
