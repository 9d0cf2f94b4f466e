r"""Drawing exactly ``m`` of ``N`` clients: successive weighted sampling, systematic sampling
with exact inclusion probabilities, and the inclusion probabilities of both.

* :func:`successive_sample` draws one client at a time with probability proportional to the
  remaining weights, as MimiC's code (``numpy.random.choice(N, m, replace=False, p=w)``,
  Sec. 7, pattern 3) and E3CS's code (``torch.multinomial(p, k, replacement=False)``,
  E3CS §V-C) do. ⚠ Its inclusion probabilities are **not** proportional to the weights
  (erratum ``e3cs.sampler``); :func:`successive_inclusion_probabilities` gives them exactly.
* :func:`capped_inclusion_probabilities` gives :math:`p_i=\min(1,c\,w_i)` with
  :math:`\sum_ip_i=m`, and :func:`systematic_sample` draws exactly ``m`` clients with
  inclusion probabilities exactly :math:`p_i` (what E3CS's analysis assumes, Fact 5).

The samplers are vectorised over the rows of ``[R, N]`` and take a numpy generator, so that
callers draw them from a round's counter-based stream (``fedtheory.rng.numpy_rng``):
availability processes from ``AVAILABILITY``, client selectors from ``SELECTION``.
"""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Array, Generator, Integer, declare
from fedtheory.errors import ParameterError

__all__ = [
    "capped_inclusion_probabilities",
    "successive_inclusion_probabilities",
    "successive_sample",
    "systematic_sample",
]

PROB_ATOL = 1e-9
"""Rounding slack accepted by :func:`systematic_sample` on ``p <= 1`` and ``sum(p) = m``."""

MAX_ENUMERATED_CLIENTS = 16
"""Largest ``N`` for the subset enumeration of :func:`successive_inclusion_probabilities`."""


def _check_positive(w: np.ndarray, m: int, owner: str) -> None:
    """``m`` (declared in ``[1, N]``) is at most the fewest positive weights of a row."""
    fewest = int(np.min(np.count_nonzero(w, axis=-1), initial=w.shape[-1]))
    if m > fewest:
        raise ParameterError(
            f"The 'm' parameter of {owner} must be at most the fewest positive weights of a "
            f"row ({fewest}). Got {m} instead."
        )


def _scaled(weights: np.ndarray) -> np.ndarray:
    """Weights divided by their row's largest (the laws here depend only on ratios): no
    overflow or underflow from weights near the ends of float64 (1e308, denormals)."""
    top = weights.max(axis=-1, keepdims=True)
    return weights / np.where(top > 0, top, 1.0)


@declare(
    weights=Array(ndim=2, low=0.0),
    m=Integer(1, "weights[1]"),
    generator=Generator(numpy=True),
)
def successive_sample(weights: object, m: int, generator: np.random.Generator) -> np.ndarray:
    r"""Successive weighted sampling of ``m`` clients without replacement, ``bool [R, N]``.

    Draw client :math:`i` with probability :math:`w_i/\sum_{\text{remaining}}w`, remove it,
    repeat ``m`` times. Implemented as an exponential race (Efraimidis & Spirakis 2006): with
    :math:`E_i\sim\mathrm{Exp}(1)`, the ``m`` smallest :math:`E_i/w_i` have exactly that law.
    Clients of weight 0 are never drawn. Uniform weights give a uniformly random
    ``m``-subset. Inclusion probabilities: :func:`successive_inclusion_probabilities`.

    Parameters
    ----------
    weights : array [R, N]
        Non-negative weights (need not be normalised), at least ``m`` positive per row.
    m : int
        Number of clients per row.
    generator : numpy Generator
        Source of randomness (one ``standard_exponential`` of shape ``[R, N]``).
    """
    _check_positive(weights, m, "successive_sample")
    w = _scaled(weights)
    race = generator.standard_exponential(w.shape)  # [R, N]
    keys = np.divide(race, w, out=np.full(w.shape, np.inf), where=w > 0)  # [R, N]
    chosen = np.argpartition(keys, m - 1, axis=1)[:, :m]  # [R, m]
    mask = np.zeros(w.shape, dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


@declare(
    weights=Array(shape=(None,), low=0.0, min_size=1),
    m=Integer(1, "weights[0]"),
)
def successive_inclusion_probabilities(weights: object, m: int) -> np.ndarray:
    r"""Exact inclusion probabilities of :func:`successive_sample`, ``[N]``, by enumeration.

    The law of the drawn set after :math:`j` draws depends only on the set :math:`S`:
    :math:`\Pr[S\cup\{i\}]\mathrel{+}=\Pr[S]\,w_i/(\sum_hw_h-\sum_{h\in S}w_h)`. Summing
    :math:`\Pr[S]` over the sets of size :math:`m` that contain :math:`i` gives
    :math:`\Pr[i\text{ drawn}]`. Exact (dynamic programming over the :math:`2^N` subsets),
    for :math:`N\le16`.

    Parameters
    ----------
    weights : array [N]
        Non-negative weights, at least ``m`` positive.
    m : int
        Number of clients drawn.

    Examples
    --------
    >>> successive_inclusion_probabilities([0.9, 0.6, 0.3, 0.2], 2).round(4)
    array([0.7723, 0.6317, 0.3537, 0.2423])
    """
    owner, w = "successive_inclusion_probabilities", _scaled(weights)
    _check_positive(w, m, owner)
    num_clients = Integer(low=1, high=MAX_ENUMERATED_CLIENTS).check(
        w.size, "len(weights)", owner, {}
    )
    members = (np.arange(1 << num_clients)[:, None] >> np.arange(num_clients)) & 1  # [2^N, N]
    size, mass = members.sum(axis=1), members @ w  # [2^N]
    prob = np.zeros(1 << num_clients)
    prob[0] = 1.0
    for s in np.flatnonzero(size < m):  # increasing order: every s is final when reached
        rest = w.sum() - mass[s]
        for i in np.flatnonzero(members[s] == 0):
            prob[s | 1 << i] += prob[s] * w[i] / rest
    return (prob * (size == m)) @ members


@declare(weights=Array(ndim=2, low=0.0, low_open=True), m=Integer(1, "weights[1]"))
def capped_inclusion_probabilities(weights: object, m: int) -> np.ndarray:
    r"""Inclusion probabilities :math:`p_i=\min(1,c\,w_i)` with :math:`\sum_ip_i=m`, ``[R, N]``.

    The ``k`` largest weights are capped at 1, with ``k`` the smallest integer such that
    :math:`(m-k)\,w_{(k)}\le\sum_{j\ge k}w_{(j)}` (weights sorted decreasingly, 0-based);
    then :math:`c=(m-k)/\sum_{j\ge k}w_{(j)}` (exact).
    """
    w = _scaled(weights)
    ordered = -np.sort(-w, axis=1)  # [R, N] decreasing
    tail = np.cumsum(ordered[:, ::-1], axis=1)[:, ::-1]  # [R, N] sum_{j >= k}
    k = np.arange(w.shape[1])
    fits = ((m - k) * ordered <= tail * (1 + 1e-12)) | (k >= m)  # [R, N]
    first = np.argmax(fits, axis=1)  # [R]
    c = (m - first) / np.take_along_axis(tail, first[:, None], axis=1)[:, 0]  # [R]
    return np.minimum(1.0, c[:, None] * w)


@declare(
    inclusion=Array(ndim=2, low=0.0, high=1.0 + PROB_ATOL),
    m=Integer(1, "inclusion[1]"),
    generator=Generator(numpy=True),
)
def systematic_sample(inclusion: object, m: int, generator: np.random.Generator) -> np.ndarray:
    r"""Exactly ``m`` clients per row with inclusion probabilities exactly :math:`p_i`,
    ``bool [R, N]``.

    Systematic sampling over a random permutation (Madow 1949): clients are put in a uniformly
    random order, :math:`C_j` are the cumulative sums of :math:`p` in that order
    (:math:`C_N=m`), one :math:`U\sim\mathcal U[0,1)` is drawn and client :math:`j` is chosen
    iff one of the points :math:`U,U+1,\dots,U+m-1` falls in :math:`[C_{j-1},C_j)`. Each
    interval has length :math:`p_j\le1`, so :math:`\Pr[j\text{ chosen}]=p_j` exactly and
    exactly ``m`` are chosen. This is the sampler E3CS's analysis needs (Fact 5,
    :math:`\mathbb E[\mathbb 1_{i\in A_t}]=p_{i,t}`), which :func:`successive_sample` (its
    code's) does not provide.

    Parameters
    ----------
    inclusion : array [R, N]
        Probabilities in [0, 1], every row summing to ``m`` (up to :data:`PROB_ATOL`).
    m : int
        Number of clients per row.
    generator : numpy Generator
        Source of randomness (``random`` of shape ``[R, N]`` for the order, then ``[R, 1]``).
    """
    owner = "systematic_sample"
    p = inclusion
    rows = p.sum(axis=1)
    if np.any(np.abs(rows - m) > PROB_ATOL * p.shape[1]):
        raise ParameterError(
            f"The 'inclusion' parameter of {owner} must have entries in [0, 1] and rows "
            f"summing to m={m}. Got row sums in [{rows.min():g}, {rows.max():g}] and largest "
            f"entry {p.max():g} instead."
        )
    order = np.argsort(generator.random(p.shape), axis=1)  # [R, N] random permutation
    u = generator.random((p.shape[0], 1))  # [R, 1]
    upper = np.cumsum(np.take_along_axis(p, order, axis=1), axis=1)  # [R, N]
    upper[:, -1] = m  # the total is exactly m, whatever the rounding of the partial sums
    lower = np.concatenate([np.zeros_like(u), upper[:, :-1]], axis=1)  # [R, N]
    hit = np.ceil(upper - u) > np.ceil(lower - u)  # [R, N] in the random order
    mask = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(mask, order, hit, axis=1)
    return mask
