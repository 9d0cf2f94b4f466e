r"""Synthetic federated data.

:func:`cafed_clustered` -- CA-Fed's clustered logistic data (Rodio et al., INFOCOM 2023,
App. F).
A common :math:`w^\star\sim\mathcal N(0,I_d)`; client :math:`k` draws
:math:`x^{(j)}\sim\mathcal N(0,I_d)` for :math:`j=1..n` and, with
:math:`s=\sigma(\langle w^\star,x\rangle)`,

* group 0: :math:`y\sim\mathrm{Bern}(s)`;
* group 1: :math:`y\sim\mathrm{Bern}\big((1-h)s+h(1-s)\big)` with ``hetero`` :math:`h=0.2`
  (the labels of group 1 are flipped with probability :math:`h`).

:func:`gaussian_linear` -- heterogeneous linear regression (no paper: a generic instance
for least squares): client :math:`k` has :math:`w_k=w^\star+s\,\zeta_k`,
:math:`x\sim\mathcal N(0,I_d)`, :math:`y=\langle w_k,x\rangle+\epsilon` with
:math:`\zeta_k\sim\mathcal N(0,I_d)`, :math:`\epsilon\sim\mathcal N(0,\text{noise}^2)`.
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.budget import check_bytes
from fedtheory.constraints import Bool, Integer, Real, Size, declare
from fedtheory.data.federated import FederatedDataset

__all__ = ["cafed_clustered", "gaussian_linear"]


@declare(num_clients=Size(), dim=Size(), samples=Size(), hetero=Real(0.0, 1.0),
         random_groups=Bool(), seed=Integer(0))  # fmt: skip
def cafed_clustered(
    num_clients: int = 24,
    dim: int = 10,
    samples: int = 150,
    *,
    hetero: float = 0.2,
    random_groups: bool = False,
    seed: int = 0,
) -> FederatedDataset:
    r"""CA-Fed App. F clustered binary data set (two groups of clients).

    Parameters
    ----------
    num_clients, dim, samples : int
        :math:`N` (paper: 24), :math:`d` (code: 10), samples per client (code default 150;
        ``full_experiment.sh`` uses 50 train + 150 test: draw 200 and ``split``).
    hetero : float
        Label-flip probability :math:`h\in[0,1]` of group 1 (``hetero_param``, 0.2).
    random_groups : bool
        ``False`` (the code): the first :math:`\lfloor N/2\rfloor` clients form group 0, the
        others group 1. ``True`` (the paper): group ids i.i.d. Bernoulli(1/2).
    seed : int
        All draws come from ``fedtheory.rng.numpy_rng(seed, 0, DATA)``; :math:`w^\star` is
        its first draw (``.standard_normal(dim)``).

    Returns
    -------
    FederatedDataset
        Labels in {0, 1}; ``groups [N]`` holds the group ids.

    Examples
    --------
    >>> ds = cafed_clustered(4, 3, 5, seed=1)
    >>> ds.features.shape, ds.groups.tolist()
    ((4, 5, 3), [0, 0, 1, 1])
    """
    owner, n, d, m, h = "cafed_clustered", num_clients, dim, samples, hetero
    check_bytes(8 * n * m * (2 * d + 8), owner,
                what=f"features [{n}, {m}, {d}], twice, labels and their draws",
                fixes="fewer clients, samples or dimensions")  # fmt: skip
    gen = rng.numpy_rng(seed, 0, rng.DATA)
    w_star = gen.standard_normal(d)
    if random_groups:
        groups = (gen.random(n) < 0.5).astype(np.int64)
    else:
        groups = (np.arange(n) >= n // 2).astype(np.int64)
    x = gen.standard_normal((n, m, d))  # [N, n, d]
    s = 1.0 / (1.0 + np.exp(-(x @ w_star)))  # [N, n]
    prob = np.where(groups[:, None] == 1, (1 - h) * s + h * (1 - s), s)
    y = (gen.random((n, m)) < prob).astype(np.float64)
    return FederatedDataset(x, y, np.full(n, m, dtype=np.int64), None, groups)


@declare(num_clients=Size(), dim=Size(), samples=Size(), heterogeneity=Real(0.0, 1e6),
         noise=Real(0.0, 1e6), seed=Integer(0))  # fmt: skip
def gaussian_linear(
    num_clients: int,
    dim: int,
    samples: int,
    *,
    heterogeneity: float = 1.0,
    noise: float = 0.1,
    seed: int = 0,
) -> FederatedDataset:
    r"""Heterogeneous Gaussian linear-regression data (module docstring).

    Examples
    --------
    >>> gaussian_linear(3, 2, 4, seed=0).features.shape
    (3, 4, 2)
    """
    owner, n, d, m = "gaussian_linear", num_clients, dim, samples
    check_bytes(8 * n * m * (2 * d + 4) + 16 * n * d, owner,
                what=f"features [{n}, {m}, {d}], twice, and labels",
                fixes="fewer clients, samples or dimensions")  # fmt: skip
    s, sd = heterogeneity, noise
    gen = rng.numpy_rng(seed, 0, rng.DATA)
    w_k = gen.standard_normal(d) + s * gen.standard_normal((n, d))  # [N, d]
    x = gen.standard_normal((n, m, d))
    y = np.einsum("nsd,nd->ns", x, w_k) + sd * gen.standard_normal((n, m))
    return FederatedDataset(x, y, np.full(n, m, dtype=np.int64))
