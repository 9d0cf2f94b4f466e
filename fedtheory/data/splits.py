r"""Label-based splits of a centralised data set over clients.

* :func:`dirichlet_label_split` -- Dirichlet(:math:`a`) label heterogeneity, drawn one of
  two ways (smaller :math:`a` = more heterogeneous):

  - ``per="label"``: for every class :math:`c`, proportions
    :math:`(\theta_{c,1},\dots,\theta_{c,N})\sim\mathrm{Dir}(a\mathbf 1_N)` over clients,
    and the class's samples are cut in those proportions (FedAU's split, Wang & Ji 2024,
    code ``util/util.py``, :math:`a=0.1`);
  - ``per="client"``: for every client :math:`k`, a label distribution
    :math:`\lambda_k\sim\mathrm{Dir}(a\mathbf 1_C)`, and class :math:`c`'s samples are cut
    in the proportions :math:`\lambda_{k,c}/\sum_j\lambda_{j,c}` (FedAWE's split, Xiang et
    al. 2024, App. J.1, the authors' code ``util/util.py``, ``partition``; clients get
    comparable numbers of samples).
* :func:`one_label_per_client_split` -- every client holds samples of a single label, the
  clients ordered by label (FedLaAvg's MNIST set-up, Yan et al. 2020, §6: 100 clients per
  digit, the first :math:`N/10\cdot D` clients hold digits :math:`0..D-1`).
* :func:`primary_label_split` -- client :math:`k` holds a fraction :math:`f` (0.8) of
  samples of its primary label :math:`k\bmod C` and the rest drawn from the other labels
  (E3CS's non-IID set-up, Huang et al. 2022, §VI: :math:`|D_i|=500`, 80%/20%).
* :func:`partition` -- turn index lists into a :class:`FederatedDataset`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fedtheory import rng
from fedtheory.constraints import Array, Integer, Option, Real, Size, declare
from fedtheory.data.federated import FederatedDataset
from fedtheory.errors import ParameterError

__all__ = [
    "DIRICHLET_PER",
    "dirichlet_label_split",
    "one_label_per_client_split",
    "partition",
    "primary_label_split",
]

_MAX_DRAWS = 1000


LABELS = Array(ndim=1, low=0.0, integer=True)
"""Class ids: a non-empty vector of non-negative whole numbers (returned as int64)."""

DIRICHLET_PER = ("label", "client")


@declare(labels=LABELS, num_clients=Integer(1, "labels[0]"),
         concentration=Real(0.0, low_open=True), per=Option(*DIRICHLET_PER),
         min_size=Integer(0), seed=Integer(0))  # fmt: skip
def dirichlet_label_split(
    labels,
    num_clients: int,
    concentration: float,
    *,
    per: str = "label",
    min_size: int = 1,
    seed: int = 0,
) -> list[np.ndarray]:
    r"""Split sample indices over clients with Dirichlet(``concentration``) label proportions
    drawn ``per`` label (over the clients) or ``per`` client (over the labels; module
    docstring).

    **Minimum size.** Draws are repeated (up to 1000 times, draw :math:`j` from
    ``numpy_rng(seed, j, DATA)``) until every client has at least ``min_size`` samples, so
    the law is the Dirichlet split conditioned on that event. Neither FedAU's nor FedAWE's
    code redraws (on their data sets, hundreds of samples per client, a client with fewer
    than two samples does not arise); on a small data set a client with one sample cannot
    be split into training and test samples, and ``min_size=2`` is the rule that keeps the
    draw while excluding that case.

    Returns
    -------
    list of int arrays
        ``num_clients`` disjoint index arrays covering ``range(len(labels))``.

    Examples
    --------
    >>> parts = dirichlet_label_split([0, 0, 1, 1, 1, 2], 2, 1.0, seed=0)
    >>> sorted(np.concatenate(parts).tolist())
    [0, 1, 2, 3, 4, 5]
    >>> parts = dirichlet_label_split(np.repeat(np.arange(4), 6), 4, 0.1, per="client",
    ...                               min_size=2, seed=0)
    >>> min(len(p) for p in parts) >= 2
    True
    """
    owner = "dirichlet_label_split"
    y, n, a = labels, num_clients, concentration
    m = Integer(low=0, high=len(y) // n).check(min_size, "min_size", owner, {})  # relational end
    classes = np.unique(y)
    for attempt in range(_MAX_DRAWS):
        gen = rng.numpy_rng(seed, attempt, rng.DATA)
        if per == "client":
            weights = gen.dirichlet(np.full(len(classes), a), size=n)  # [N, C]
            shares = weights / weights.sum(0)  # column c: class c's share of each client
        owner_of = np.empty(len(y), dtype=np.int64)  # the client of every sample
        for i, c in enumerate(classes):
            idx = gen.permutation(np.flatnonzero(y == c))
            theta = gen.dirichlet(np.full(n, a)) if per == "label" else shares[:, i]
            cuts = np.round(np.cumsum(theta)[:-1] * len(idx)).astype(np.int64)
            owner_of[idx] = np.repeat(np.arange(n), np.diff(cuts, prepend=0, append=len(idx)))
        sizes = np.bincount(owner_of, minlength=n)
        if sizes.min() >= m:
            return np.split(np.argsort(owner_of, kind="stable"), np.cumsum(sizes)[:-1])
    raise ParameterError(
        f"The 'min_size' parameter of {owner} must be reachable with concentration {a:g}. "
        f"Got {m}, not met in {_MAX_DRAWS} draws, instead."
    )


@declare(labels=LABELS, clients_per_label=Integer(1), seed=Integer(0))
def one_label_per_client_split(
    labels, clients_per_label: int, *, seed: int = 0
) -> list[np.ndarray]:
    r"""Give every client samples of one label: the samples of label :math:`c` (in increasing
    label order) are shuffled and cut into ``clients_per_label`` near-equal parts, so client
    :math:`k` holds label number :math:`\lfloor k/\text{clients}\_\text{per}\_\text{label}\rfloor`.

    Examples
    --------
    >>> [p.tolist() for p in one_label_per_client_split([1, 0, 1, 0], 1)]
    [[1, 3], [0, 2]]
    """
    owner = "one_label_per_client_split"
    classes, sizes = np.unique(labels, return_counts=True)
    m = Integer(low=1, high=int(sizes.min())).check(
        clients_per_label, "clients_per_label", owner, {}
    )
    y = labels
    gen = rng.numpy_rng(seed, 0, rng.DATA)
    out = []
    for c in classes:
        idx = gen.permutation(np.flatnonzero(y == c))
        out.extend(np.sort(part) for part in np.array_split(idx, m))
    return out


@declare(labels=LABELS, num_clients=Size(), samples_per_client=Size(),
         primary_fraction=Real(0.0, 1.0), seed=Integer(0))  # fmt: skip
def primary_label_split(
    labels,
    num_clients: int,
    samples_per_client: int,
    *,
    primary_fraction: float = 0.8,
    seed: int = 0,
) -> list[np.ndarray]:
    r"""Disjoint clients of ``samples_per_client`` samples: :math:`\mathrm{round}(f\,m)` of
    label :math:`k\bmod C` (labels in increasing order), the others uniformly from the
    remaining samples of the other labels, all without replacement.

    Examples
    --------
    >>> parts = primary_label_split(np.repeat([0, 1], 10), 2, 5, seed=0)
    >>> [int(np.sum(np.repeat([0, 1], 10)[p] == k)) for k, p in enumerate(parts)]
    [4, 4]
    """
    owner = "primary_label_split"
    y, n, m, f = labels, num_clients, samples_per_client, primary_fraction
    gen = rng.numpy_rng(seed, 0, rng.DATA)
    classes = np.unique(y)
    free = np.ones(len(y), dtype=bool)
    out = []
    for k in range(n):
        primary = classes[k % len(classes)]
        n_primary = int(round(f * m))
        pools = (free & (y == primary), free & (y != primary))
        chosen = []
        for pool, size in zip(pools, (n_primary, m - n_primary), strict=True):
            idx = np.flatnonzero(pool)
            if len(idx) < size:
                raise ParameterError(
                    f"The 'samples_per_client' parameter of {owner} must fit the data "
                    f"({n} clients x {m} samples, fraction {f:g}). Got {m}: client {k} runs "
                    "out of samples instead."
                )
            chosen.append(gen.choice(idx, size=size, replace=False))
        part = np.sort(np.concatenate(chosen))
        free[part] = False
        out.append(part)
    return out


@declare(features=Array(ndim=2), labels=Array(shape=("features[0]",)),
         num_classes=Integer(2, none=True))  # fmt: skip
def partition(
    features, labels, parts: Sequence[np.ndarray], *, num_classes: int | None = None
) -> FederatedDataset:
    """Client ``k`` gets ``features[parts[k]] [n_k, p]`` and ``labels[parts[k]]``."""
    owner = "partition"
    X, y = features, labels
    if isinstance(parts, (str, bytes)) or not isinstance(parts, Sequence) or not parts:
        raise ParameterError(
            f"The 'parts' parameter of {owner} must be a non-empty sequence of index arrays. "
            f"Got {parts!r} instead."
        )
    idx = [
        Array(ndim=1, low=0, high=X.shape[0] - 1, integer=True, min_size=0)
        .check(p, f"parts[{k}]", owner, {})
        .astype(np.int64)
        for k, p in enumerate(parts)
    ]
    return FederatedDataset.from_clients(
        [X[i] for i in idx], [y[i] for i in idx], num_classes=num_classes
    )
