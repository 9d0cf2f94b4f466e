"""Federated data: the padded per-client container, synthetic generators, label splits and
a real data set shipped inside a PyPI package (scikit-learn's digits; never downloaded)."""

from fedtheory.data.digits import load_digits, load_digits_federated
from fedtheory.data.federated import FederatedDataset
from fedtheory.data.splits import (
    dirichlet_label_split,
    one_label_per_client_split,
    partition,
    primary_label_split,
)
from fedtheory.data.synthetic import cafed_clustered, gaussian_linear

__all__ = [
    "FederatedDataset",
    "cafed_clustered",
    "dirichlet_label_split",
    "gaussian_linear",
    "load_digits",
    "load_digits_federated",
    "one_label_per_client_split",
    "partition",
    "primary_label_split",
]
