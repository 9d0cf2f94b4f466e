r"""A federated data set: per-client samples stored as zero-padded tensors.

Client :math:`k` holds :math:`n_k\ge1` samples :math:`(x_i, y_i)`. They are stored in
``features [N, n_max, p]`` and ``labels [N, n_max]`` with ``n_max = max_k n_k``; entries
past ``counts[k]`` are zero padding, marked by :attr:`FederatedDataset.valid`. Padding lets
problems gather a mini-batch for any batch of (point, client) pairs with one indexing
operation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fedtheory import rng
from fedtheory.constraints import Array, Integer, Real, declare, record
from fedtheory.errors import ParameterError

__all__ = ["FederatedDataset"]

_OWNER = "FederatedDataset"


@record(features=Array(ndim=3), labels=Array(ndim=2), counts=Array(ndim=1, integer=True),
        num_classes=Integer(2, none=True),
        groups=Array(ndim=1, integer=True, low=0, none=True))  # fmt: skip
@dataclass(frozen=True, eq=False)
class FederatedDataset:
    r"""Per-client samples, zero-padded to a common length.

    Attributes
    ----------
    features : array [N, n_max, p]
        Feature vectors (zero past ``counts[k]``).
    labels : array [N, n_max]
        Targets: real values (regression), 0/1 (binary) or class ids stored as float64
        (multiclass, ``num_classes`` set); zero past ``counts[k]``.
    counts : int array [N]
        Number of samples :math:`n_k\ge1` of each client.
    num_classes : int or None
        Number of classes of a multiclass data set.
    groups : int array [N] or None
        Cluster of each client where the generator has one (CA-Fed App. F).

    Examples
    --------
    >>> ds = FederatedDataset.from_clients([np.ones((2, 3)), np.zeros((1, 3))], [[0, 1], [1]])
    >>> ds.features.shape, ds.counts.tolist()
    ((2, 2, 3), [2, 1])
    """

    features: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    num_classes: int | None = None
    groups: np.ndarray | None = None

    @classmethod
    @declare(num_classes=Integer(2, none=True))
    def from_clients(
        cls,
        features: Sequence[np.ndarray],
        labels: Sequence[np.ndarray],
        *,
        num_classes: int | None = None,
        groups=None,
    ) -> FederatedDataset:
        """Pad per-client arrays ``features[k] [n_k, p]`` and ``labels[k] [n_k]``."""
        owner = f"{_OWNER}.from_clients"
        for name, value in (("features", features), ("labels", labels)):
            if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
                raise ParameterError(
                    f"The '{name}' parameter of {owner} must be a sequence of per-client "
                    f"arrays. Got {value!r:.60} instead."
                )
        if len(features) < 1 or len(features) != len(labels):
            raise ParameterError(
                f"The 'labels' parameter of {owner} must have one entry per client "
                f"(N={len(features)} >= 1). Got {len(labels)} entries instead."
            )
        xs = [Array(ndim=2, min_size=0).check(x, "features", owner, {}) for x in features]
        ys = [Array(ndim=1, min_size=0).check(y, "labels", owner, {}) for y in labels]
        p = xs[0].shape[1]
        counts = np.array([x.shape[0] for x in xs], dtype=np.int64)
        for x, y in zip(xs, ys, strict=True):
            if x.shape[1] != p or x.shape[0] != y.shape[0] or x.shape[0] < 1:
                raise ParameterError(
                    f"The 'features' parameter of {owner} must hold arrays [n_k, {p}] with "
                    f"n_k >= 1 matching the labels. Got shape {x.shape} with {y.shape[0]} "
                    "labels instead."
                )
        n, n_max = len(xs), int(counts.max())
        X = np.zeros((n, n_max, p))
        Y = np.zeros((n, n_max))
        for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
            X[k, : len(x)], Y[k, : len(y)] = x, y
        return cls(X, Y, counts, num_classes, None if groups is None else np.asarray(groups))

    def __post_init__(self) -> None:
        """The declared fields agree: shapes, counts within the padding, class ids."""
        n, n_max = self.labels.shape
        if self.features.shape[:2] != (n, n_max) or self.counts.shape != (n,):
            raise ParameterError(
                f"The 'features' parameter of {_OWNER} must have shape (N, n_max, p) matching "
                f"labels {self.labels.shape}. Got shape {self.features.shape} instead."
            )
        if self.counts.min() < 1 or self.counts.max() != n_max:
            raise ParameterError(
                f"The 'counts' parameter of {_OWNER} must be in [1, n_max] with max n_max="
                f"{n_max}. Got {self.counts.min()}..{self.counts.max()} instead."
            )
        if self.groups is not None and self.groups.shape != (n,):
            raise ParameterError(
                f"The 'groups' parameter of {_OWNER} must hold one group id per client "
                f"(N={n}). Got shape {self.groups.shape} instead."
            )
        if self.num_classes is not None:
            y = self.labels[self.valid]
            if np.any((y != np.round(y)) | (y < 0) | (y >= self.num_classes)):
                raise ParameterError(
                    f"The 'labels' parameter of {_OWNER} must be class ids in "
                    f"[0, {self.num_classes - 1}]. Got values in [{y.min():g}, {y.max():g}] "
                    "instead."
                )

    @property
    def num_clients(self) -> int:
        return int(self.counts.shape[0])

    @property
    def num_features(self) -> int:
        return int(self.features.shape[2])

    @property
    def valid(self) -> np.ndarray:
        """Boolean mask ``[N, n_max]`` of real (non-padding) samples."""
        return np.arange(self.labels.shape[1]) < self.counts[:, None]

    def label_distribution(self) -> np.ndarray:
        r"""Empirical label distribution :math:`\kappa_k` of every client ``[N, C]`` (FedAU's
        participation probabilities :math:`p_n=\max\{p_{\min},C\bar p\langle\kappa_n,q
        \rangle\}` use it, the FedAU authors' ``util/util.py``)."""
        if self.num_classes is None:
            raise ParameterError(
                f"The 'self' parameter of {_OWNER}.label_distribution must have num_classes "
                "set. Got None instead."
            )
        onehot = np.eye(self.num_classes)[self.labels.astype(np.int64)] * self.valid[..., None]
        return onehot.sum(1) / self.counts[:, None]

    @declare(k=Integer(0))
    def client(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Samples of client ``k``: ``features [n_k, p]``, ``labels [n_k]``."""
        if k >= self.num_clients:  # the upper end depends on the instance
            raise ParameterError(
                f"The 'k' parameter of {_OWNER}.client must be an integer in "
                f"[0, {self.num_clients - 1}]. Got {k} instead."
            )
        n = self.counts[k]
        return self.features[k, :n], self.labels[k, :n]

    @declare(test_fraction=Real(0.0, 1.0, low_open=True, high_open=True), seed=Integer(0))
    def split(
        self, test_fraction: float, *, seed: int = 0
    ) -> tuple[FederatedDataset, FederatedDataset]:
        r"""Random per-client train/test split: client :math:`k` gets
        :math:`\mathrm{round}(f\,n_k)` test samples, clipped to :math:`[1, n_k-1]` so that both
        parts are non-empty (every client needs :math:`n_k\ge2`)."""
        owner = f"{_OWNER}.split"
        f = test_fraction
        if self.counts.min() < 2:
            raise ParameterError(
                f"The 'self' parameter of {owner} must have n_k >= 2 for every client. "
                f"Got min n_k = {self.counts.min()} instead."
            )
        gen = rng.numpy_rng(seed, 0, rng.DATA)
        train, test = [], []
        for k in range(self.num_clients):
            x, y = self.client(k)
            n_test = int(np.clip(np.round(f * len(y)), 1, len(y) - 1))
            perm = gen.permutation(len(y))
            test.append(perm[:n_test])
            train.append(perm[n_test:])

        def build(idx):
            xs = [self.client(k)[0][i] for k, i in enumerate(idx)]
            ys = [self.client(k)[1][i] for k, i in enumerate(idx)]
            return FederatedDataset.from_clients(
                xs, ys, num_classes=self.num_classes, groups=self.groups
            )

        return build(train), build(test)
