r"""Spatially correlated availability: the clients of a cluster share one availability path.

A base process over ``C`` clusters (e.g. a :class:`TwoStateMarkov` with one chain per
cluster) is sampled once, and client :math:`k` copies the path of its cluster
:math:`c(k)`: :math:`A^t_k=B^t_{c(k)}`. Clients of one cluster are perfectly correlated,
clusters keep the base process's law. Marginals: :math:`\pi_k=\pi^{\rm base}_{c(k)}`. The
chain of the joint availability is the base process's chain (``self.base``).
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability.base import AvailabilityProcess
from fedtheory.constraints import Array, Instance, declare


class Clustered(AvailabilityProcess):
    r"""Clients of a cluster share the path of one unit of a base process.

    Parameters
    ----------
    base : AvailabilityProcess
        Process over ``C`` clusters.
    clusters : int array [N]
        Cluster label of each client, in ``[0, C-1]``.

    Examples
    --------
    >>> from fedtheory.availability import TwoStateMarkov
    >>> proc = Clustered(TwoStateMarkov([0.8, 0.2], 0.9), [0, 0, 1])
    >>> mask = proc.sample(50, seed=0)[0]
    >>> bool((mask[:, 0] == mask[:, 1]).all()), proc.marginals.tolist()
    (True, [0.8, 0.8, 0.2])
    """

    @declare(
        base=Instance(AvailabilityProcess),
        clusters=Array(ndim=1, integer=True, low=0.0, high="base.num_clients", high_open=True),
    )
    def __init__(self, base: AvailabilityProcess, clusters) -> None:
        labels = clusters
        self.base, self.clusters = base, labels
        self.num_clients = labels.size

    @property
    def marginals(self) -> np.ndarray:
        return self.base.marginals[self.clusters]

    def _sample(self, rounds, replicates, seed, start):
        return self.base._sample(rounds, replicates, seed, start)[:, :, self.clusters]

    def __repr__(self) -> str:
        return f"Clustered({self.base!r}, N={self.num_clients})"
