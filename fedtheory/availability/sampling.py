r"""Sampling exactly ``m`` of ``N`` clients: successive weighted sampling and exact inclusion
probabilities.

* :func:`successive_sample` draws without replacement with probabilities proportional to
  the remaining weights, one after the other, as ``numpy.random.choice(N, m,
  replace=False, p=w)`` does (MimiC's code, SPEC §1.5 pattern 3). Its inclusion
  probabilities are **not** proportional to ``w`` (SPEC §7.1).
* :func:`capped_inclusion_probabilities` gives :math:`p_i=\min(1,c\,w_i)` with
  :math:`\sum_ip_i=m`, and :func:`systematic_sample` draws exactly ``m`` clients with
  inclusion probabilities exactly :math:`p_i` (systematic sampling in a random order).

All functions are vectorised over leading dimensions ``[R, N]`` and take a numpy
generator, so that availability processes draw them from the round's counter-based stream.
(``fedtheory.sim.selection`` has torch versions of the same two samplers for E3CS.)
"""

from __future__ import annotations

import numpy as np

from fedtheory.params import check_array, check_int

__all__ = ["capped_inclusion_probabilities", "successive_sample", "systematic_sample"]


def successive_sample(weights: np.ndarray, m: int, generator: np.random.Generator) -> np.ndarray:
    r"""Successive weighted sampling of ``m`` clients without replacement, ``bool [R, N]``.

    Exponential race (Efraimidis & Spirakis 2006): with :math:`E_i\sim\mathrm{Exp}(1)`, the
    ``m`` smallest :math:`E_i/w_i` have the law of drawing one client at a time with
    probability :math:`w_i/\sum_{\text{remaining}}w` (exact).

    Parameters
    ----------
    weights : array [R, N]
        Positive weights (need not be normalised).
    m : int
        Number of clients per row, in [1, N].
    generator : numpy Generator
        Source of randomness (one call of ``standard_exponential``).
    """
    owner = "successive_sample"
    w = check_array(weights, "weights", owner, ndim=2, low=0.0, low_open=True)
    m = check_int(m, "m", owner, low=1, high=w.shape[1])
    keys = generator.standard_exponential(w.shape) / w  # [R, N]
    chosen = np.argpartition(keys, m - 1, axis=1)[:, :m]  # [R, m]
    mask = np.zeros(w.shape, dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


def capped_inclusion_probabilities(weights: np.ndarray, m: int) -> np.ndarray:
    r"""Inclusion probabilities :math:`p_i=\min(1,c\,w_i)` with :math:`\sum_ip_i=m`, ``[R, N]``.

    The ``k`` largest weights are capped at 1, with ``k`` the smallest integer such that
    :math:`(m-k)\,w_{(k)}\le\sum_{j\ge k}w_{(j)}` (weights sorted decreasingly, 0-based);
    then :math:`c=(m-k)/\sum_{j\ge k}w_{(j)}` (exact).
    """
    owner = "capped_inclusion_probabilities"
    w = check_array(weights, "weights", owner, ndim=2, low=0.0, low_open=True)
    m = check_int(m, "m", owner, low=1, high=w.shape[1])
    ordered = -np.sort(-w, axis=1)  # [R, N] decreasing
    tail = np.cumsum(ordered[:, ::-1], axis=1)[:, ::-1]  # [R, N] sum_{j >= k}
    k = np.arange(w.shape[1])
    fits = ((m - k) * ordered <= tail * (1 + 1e-12)) | (k >= m)  # [R, N]
    first = np.argmax(fits, axis=1)  # [R]
    c = (m - first) / np.take_along_axis(tail, first[:, None], axis=1)[:, 0]  # [R]
    return np.minimum(1.0, c[:, None] * w)


def systematic_sample(inclusion: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    r"""Exactly :math:`m=\sum_ip_i` clients per row with inclusion probabilities exactly
    :math:`p_i`, ``bool [R, N]``.

    Clients are put in a uniformly random order; client ``i`` is chosen iff one of the
    points :math:`U,U+1,\dots,U+m-1` (:math:`U\sim\mathcal U[0,1)`) falls in its interval
    :math:`[C_{i-1},C_i)` of the cumulative sums. Each interval has length :math:`p_i\le1`,
    so :math:`P(i\text{ chosen})=p_i` (exact).

    Parameters
    ----------
    inclusion : array [R, N]
        Probabilities in [0, 1] whose row sums are integers.
    generator : numpy Generator
        Source of randomness (the random order, then ``U``).
    """
    owner = "systematic_sample"
    p = check_array(inclusion, "inclusion", owner, ndim=2, low=0.0, high=1.0)
    order = np.argsort(generator.random(p.shape), axis=1)  # [R, N] random permutation
    u = generator.random((p.shape[0], 1))  # [R, 1]
    upper = np.cumsum(np.take_along_axis(p, order, axis=1), axis=1)  # [R, N]
    upper[:, -1] = np.round(upper[:, -1])  # the total is the integer m, whatever the rounding
    lower = np.concatenate([np.zeros_like(u), upper[:, :-1]], axis=1)  # [R, N]
    hit = np.ceil(upper - u) > np.ceil(lower - u)  # [R, N] in the random order
    mask = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(mask, order, hit, axis=1)
    return mask
