r"""scikit-learn's handwritten digits (1797 images 8x8, 10 classes), read from the files
shipped inside the scikit-learn package: nothing is downloaded.

Features are pixel intensities scaled from :math:`\{0..16\}` to :math:`[0,1]` (64 values),
plus a constant 1 when ``intercept`` is set.
"""

from __future__ import annotations

import numpy as np

from fedtheory import rng
from fedtheory.constraints import Bool, Integer, Option, Real, declare
from fedtheory.data.federated import FederatedDataset
from fedtheory.data.splits import (
    DIRICHLET_PER,
    dirichlet_label_split,
    one_label_per_client_split,
    partition,
    primary_label_split,
)
from fedtheory.errors import ParameterError

__all__ = ["DIGITS_SPLITS", "load_digits", "load_digits_federated"]

DIGITS_SPLITS = ("dirichlet", "one_label", "primary_label", "iid")


@declare(intercept=Bool())
def load_digits(*, intercept: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Features ``[1797, 64 (+1)]`` in [0, 1] and labels ``[1797]`` (0..9, float64)."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as err:  # pragma: no cover - scikit-learn is a dependency
        raise ImportError("load_digits needs scikit-learn: pip install scikit-learn") from err
    bunch = sklearn_digits()
    X = bunch.data / 16.0
    if intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return X, bunch.target.astype(np.float64)


@declare(num_clients=Integer(1, 1797), split=Option(*DIGITS_SPLITS),
         concentration=Real(0.0, low_open=True), per=Option(*DIRICHLET_PER),
         min_size=Integer(0), intercept=Bool(), seed=Integer(0))  # fmt: skip
def load_digits_federated(
    num_clients: int,
    *,
    split: str = "dirichlet",
    concentration: float = 0.5,
    per: str = "label",
    min_size: int = 1,
    intercept: bool = True,
    seed: int = 0,
) -> FederatedDataset:
    r"""The digits spread over ``num_clients`` clients.

    ``split``: ``"dirichlet"`` (:func:`~fedtheory.data.splits.dirichlet_label_split` with
    ``concentration``, ``per`` and ``min_size``; ``per="client"``, ``min_size=2`` is FedAWE's
    split with every client holding a training and a test sample), ``"one_label"``
    (FedLaAvg: ``num_clients`` must be a multiple of 10, client :math:`k` holds digit
    :math:`\lfloor 10k/N\rfloor`), ``"primary_label"`` (E3CS:
    :math:`\lfloor 1797/(2N)\rfloor` samples per client, 80% of digit :math:`k\bmod10`;
    half the data is used so that every digit keeps enough samples for its primary clients),
    or ``"iid"`` (a random permutation cut into near-equal parts).

    Examples
    --------
    >>> ds = load_digits_federated(20, split="one_label")
    >>> ds.num_clients, ds.num_classes, np.unique(ds.client(19)[1]).tolist()
    (20, 10, [9.0])
    """
    owner = "load_digits_federated"
    n = num_clients
    X, y = load_digits(intercept=intercept)
    if split == "dirichlet":
        parts = dirichlet_label_split(y, n, concentration, per=per, min_size=min_size, seed=seed)
    elif split == "one_label":
        if n % 10:
            raise ParameterError(
                f"The 'num_clients' parameter of {owner} must be a multiple of 10 for the "
                f"one-label split. Got {n} instead."
            )
        parts = one_label_per_client_split(y, n // 10, seed=seed)
    elif split == "primary_label":
        parts = primary_label_split(y, n, len(y) // (2 * n), seed=seed)
    else:  # "iid"
        perm = rng.numpy_rng(seed, 0, rng.DATA).permutation(len(y))
        parts = np.array_split(perm, n)
    return partition(X, y, parts, num_classes=10)
