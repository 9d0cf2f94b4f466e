r"""The server's client samplers of the FedAvg literature: which clients work in a round and
with which aggregation weights, drawn among the clients an availability process makes
available (:math:`A_t`; every client under full availability).

With :math:`p` the objective's weights (:math:`F=\sum_kp_kF_k`), :math:`n=|A_t|` and
:math:`m=\min(K,n)`:

* :class:`SampleWithReplacement` (Li et al., ICLR 2020, §3.3 Scheme I): :math:`K` indices
  drawn i.i.d. from :math:`p` restricted to :math:`A_t` (renormalised), weights
  :math:`q_k=c_k/K` with :math:`c_k` the number of times :math:`k` was drawn; exact
  inclusion :math:`1-(1-p_k/p(A_t))^K`, :math:`\mathbb E q_k=p_k/p(A_t)`;
* :class:`SampleWithoutReplacement` (Scheme II): :math:`m` distinct clients uniformly from
  :math:`A_t`, weights :math:`q_k=p_kn/m` (:math:`p_kN/K` under full availability);
  inclusion :math:`m/n`, :math:`\mathbb Eq_k=p_k`;
* :class:`SampleUniform`: :math:`m` distinct clients uniformly, weights :math:`1/m` (the plain
  average of the sampled); inclusion :math:`m/n`, :math:`\mathbb Eq_k=1/n`;
* :class:`SampleBernoulli`: client :math:`k\in A_t` independently with known probability
  :math:`\pi_k`, weights :math:`p_k/\pi_k` (unbiased); inclusion :math:`\pi_k`,
  :math:`\mathbb Eq_k=p_k`.

Round :math:`t`'s draw reads only the uniform numbers :meth:`uniforms` takes from the
round's generator (:func:`fedtheory.rng.numpy_rng` ``(seed, t, SELECTION)``): ``[R, K]``
for draws with replacement, ``[R, N]`` keys otherwise (the :math:`m` available clients of
smallest key, or those with key below :math:`\pi_k`). The plain loop
(:func:`fedtheory.sim.sampled.run_sampled`) reads the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Generator, Mask, Probabilities, Size, Text, declare

__all__ = [
    "Sample",
    "SampleBernoulli",
    "SampleUniform",
    "SampleWithReplacement",
    "SampleWithoutReplacement",
    "Sampler",
]


class Sample(NamedTuple):
    """The clients of one round and their aggregation weights."""

    selected: np.ndarray  # [R, N] bool, sampled at least once (a subset of the available)
    weights: np.ndarray  # [R, N] float64, q_k (0 where not sampled)


@runtime_checkable
class Sampler(Protocol):
    name: str

    def uniforms(self, replicates: int, num_clients: int, generator) -> np.ndarray:
        """The uniform numbers of one round, ``[R, K]`` or ``[R, N]``."""
        ...

    def draw(self, available: np.ndarray, u: np.ndarray) -> Sample:
        """The sample among ``available [R, N]`` from the numbers ``u`` of :meth:`uniforms`."""
        ...

    def inclusion(self, available: np.ndarray) -> np.ndarray:
        """Exact :math:`P(k\\text{ sampled}\\mid A)` ``[..., N]``."""
        ...

    def expected_weights(self, available: np.ndarray) -> np.ndarray:
        """Exact :math:`\\mathbb E[q_k\\mid A]` ``[..., N]``."""
        ...


AVAILABLE = Mask(shape=(..., None))
"""The available clients ``[..., N]`` (bool)."""
WITH_P = Mask(shape=(..., "self.p[0]"))
"""The available clients ``[..., N]`` of a sampler with objective weights ``p [N]``."""


def _check_budget(replicates: int, columns: int, owner: str) -> None:
    check_bytes(8 * replicates * columns, owner, what=f"uniform numbers [{replicates}, {columns}]",
                fixes="fewer replicates or clients")  # fmt: skip


def _smallest_keys(available: np.ndarray, u: np.ndarray, k: int) -> np.ndarray:
    """``[R, N]`` bool: the ``min(k, n)`` available clients of smallest key ``u [R, N]``."""
    keys = np.where(available, u, np.inf)
    rank = np.argsort(np.argsort(keys, axis=-1, kind="stable"), axis=-1, kind="stable")
    return available & (rank < k)


def _uniform_inclusion(available: np.ndarray, k: int) -> np.ndarray:
    """:math:`m/n` on the available clients, 0 elsewhere."""
    n = available.sum(-1, keepdims=True)
    return np.where(available, np.minimum(k, n) / np.maximum(n, 1), 0.0)


class _Keys:
    """Samplers reading one key per client, ``[R, N]``."""

    @declare("replicates", "num_clients", generator=Generator(numpy=True))
    def uniforms(self, replicates: int, num_clients: int, generator) -> np.ndarray:
        """``[R, N]`` keys uniform on [0, 1)."""
        _check_budget(replicates, num_clients, f"{type(self).__name__}.uniforms")
        return generator.random((replicates, num_clients))


@declare(k=Size(), p=Probabilities(), name=Text())
@dataclass(frozen=True, eq=False)
class SampleWithReplacement:
    r"""Li et al. (ICLR 2020) §3.3 Scheme I: :math:`K` clients drawn with replacement with
    probabilities :math:`p_k` (renormalised on the available), averaged with weights
    :math:`1/K` per draw.

    Examples
    --------
    >>> s = SampleWithReplacement(2, [0.5, 0.25, 0.25])
    >>> s.draw(np.ones((1, 3), bool), np.array([[0.1, 0.6]])).weights.tolist()
    [[0.5, 0.5, 0.0]]
    """

    k: int
    p: np.ndarray
    name: str = "scheme-I"

    @declare("replicates", "num_clients", generator=Generator(numpy=True))
    def uniforms(self, replicates: int, num_clients: int, generator) -> np.ndarray:
        """``[R, K]`` uniform numbers on [0, 1), one per draw."""
        _check_budget(replicates, self.k, "SampleWithReplacement.uniforms")
        return generator.random((replicates, self.k))

    @declare(available=Mask(shape=(None, "self.p[0]")), u=Array(shape=("available[0]", "self.k"),
             low=0.0, high=1.0, high_open=True))  # fmt: skip
    def draw(self, available: np.ndarray, u: np.ndarray) -> Sample:
        r"""Draw :math:`j` is the first client whose cumulative mass :math:`\sum_{i\le k}
        p_ia_i` exceeds :math:`u_jp(A)` (the last client of positive mass if rounding leaves
        none; nobody when :math:`p(A)=0`)."""
        mass = self.p * available
        cum = np.cumsum(mass, axis=-1)  # [R, N]
        total = cum[:, -1:]  # [R, 1]
        target = u * total  # [R, K]
        rows = [np.searchsorted(c, x, side="right") for c, x in zip(cum, target, strict=True)]
        index = np.array(rows, dtype=np.int64).reshape(target.shape)  # [R, K] in [0, N]
        last = mass.shape[-1] - 1 - np.argmax(mass[:, ::-1] > 0, axis=-1)  # u p(A) rounded up
        index = np.where(total > 0, np.minimum(index, last[:, None]), index)
        counts = np.zeros((*available.shape[:-1], available.shape[-1] + 1))
        np.add.at(counts, (np.arange(len(index))[:, None], index), 1.0)
        counts = np.where(total > 0, counts[:, :-1], 0.0)
        return Sample(counts > 0, counts / self.k)

    @declare(available=WITH_P)
    def inclusion(self, available: np.ndarray) -> np.ndarray:
        r""":math:`1-(1-p_k/p(A))^K` on the available clients, 0 elsewhere."""
        share = self._share(available)
        return 1.0 - (1.0 - share) ** self.k

    @declare(available=WITH_P)
    def expected_weights(self, available: np.ndarray) -> np.ndarray:
        r""":math:`p_k/p(A)` on the available clients (the expected count over :math:`K`)."""
        return self._share(available)

    def _share(self, available: np.ndarray) -> np.ndarray:
        mass = self.p * available
        total = mass.sum(-1, keepdims=True)
        return np.where(total > 0, mass / np.where(total > 0, total, 1.0), 0.0)

    def __repr__(self) -> str:
        return f"SampleWithReplacement(k={self.k}, N={self.p.size})"


@declare(k=Size(), p=Probabilities(), name=Text())
@dataclass(frozen=True, eq=False)
class SampleWithoutReplacement(_Keys):
    r"""Li et al. (ICLR 2020) §3.3 Scheme II: :math:`m=\min(K,n)` distinct clients uniformly
    among the :math:`n` available, weights :math:`p_kn/m` (:math:`p_kN/K` when all are).

    Examples
    --------
    >>> s = SampleWithoutReplacement(2, [0.5, 0.25, 0.25])
    >>> s.draw(np.ones((1, 3), bool), np.array([[0.9, 0.2, 0.4]])).weights.tolist()
    [[0.0, 0.375, 0.375]]
    """

    k: int
    p: np.ndarray
    name: str = "scheme-II"

    @declare(available=Mask(shape=(None, "self.p[0]")), u=Array(shape=("available[0]", "self.p[0]"),
             low=0.0, high=1.0, high_open=True))  # fmt: skip
    def draw(self, available: np.ndarray, u: np.ndarray) -> Sample:
        """The ``min(k, n)`` available clients of smallest key."""
        chosen = _smallest_keys(available, u, self.k)
        n = available.sum(-1, keepdims=True)
        scale = n / np.maximum(np.minimum(self.k, n), 1)
        return Sample(chosen, np.where(chosen, self.p * scale, 0.0))

    @declare(available=WITH_P)
    def inclusion(self, available: np.ndarray) -> np.ndarray:
        """:math:`m/n` on the available clients, 0 elsewhere."""
        return _uniform_inclusion(available, self.k)

    @declare(available=WITH_P)
    def expected_weights(self, available: np.ndarray) -> np.ndarray:
        """:math:`p_k` on the available clients."""
        return np.where(available, self.p, 0.0)

    def __repr__(self) -> str:
        return f"SampleWithoutReplacement(k={self.k}, N={self.p.size})"


@declare(k=Size(), name=Text())
@dataclass(frozen=True, eq=False)
class SampleUniform(_Keys):
    r""":math:`m=\min(K,n)` distinct clients uniformly among the :math:`n` available, averaged
    with weights :math:`1/m` (FedAvg's default sampling with a plain average).

    Examples
    --------
    >>> SampleUniform(2).draw(np.ones((1, 3), bool), np.array([[0.9, 0.2, 0.4]])).weights.tolist()
    [[0.0, 0.5, 0.5]]
    """

    k: int
    name: str = "uniform"

    @declare(available=Mask(ndim=2), u=Array(shape=("available[0]", "available[1]"), low=0.0,
             high=1.0, high_open=True))  # fmt: skip
    def draw(self, available: np.ndarray, u: np.ndarray) -> Sample:
        """The ``min(k, n)`` available clients of smallest key."""
        chosen = _smallest_keys(available, u, self.k)
        m = np.minimum(self.k, available.sum(-1, keepdims=True))
        return Sample(chosen, np.where(chosen, 1.0 / np.maximum(m, 1), 0.0))

    @declare(available=AVAILABLE)
    def inclusion(self, available: np.ndarray) -> np.ndarray:
        """:math:`m/n` on the available clients, 0 elsewhere."""
        return _uniform_inclusion(available, self.k)

    @declare(available=AVAILABLE)
    def expected_weights(self, available: np.ndarray) -> np.ndarray:
        """:math:`1/n` on the available clients."""
        n = available.sum(-1, keepdims=True)
        return np.where(available, 1.0 / np.maximum(n, 1), 0.0)

    def __repr__(self) -> str:
        return f"SampleUniform(k={self.k})"


@declare(pi=Array(ndim=1, low=0.0, high=1.0, low_open=True), p=Probabilities(size="pi[0]"),
         name=Text())  # fmt: skip
@dataclass(frozen=True, eq=False)
class SampleBernoulli(_Keys):
    r"""Client :math:`k` (if available) independently with known probability :math:`\pi_k`,
    weights :math:`p_k/\pi_k` (unbiased: :math:`\mathbb Eq_k=p_k`).

    Examples
    --------
    >>> s = SampleBernoulli([0.5, 1.0], [0.5, 0.5])
    >>> s.draw(np.ones((1, 2), bool), np.array([[0.7, 0.7]])).weights.tolist()
    [[0.0, 0.5]]
    """

    pi: np.ndarray
    p: np.ndarray
    name: str = "bernoulli"

    @declare(available=Mask(shape=(None, "self.p[0]")), u=Array(shape=("available[0]", "self.p[0]"),
             low=0.0, high=1.0, high_open=True))  # fmt: skip
    def draw(self, available: np.ndarray, u: np.ndarray) -> Sample:
        r"""The available clients with key :math:`u_k<\pi_k`."""
        chosen = available & (u < self.pi)
        return Sample(chosen, np.where(chosen, self.p / self.pi, 0.0))

    @declare(available=WITH_P)
    def inclusion(self, available: np.ndarray) -> np.ndarray:
        r""":math:`\pi_k` on the available clients, 0 elsewhere."""
        return np.where(available, self.pi, 0.0)

    @declare(available=WITH_P)
    def expected_weights(self, available: np.ndarray) -> np.ndarray:
        """:math:`p_k` on the available clients."""
        return np.where(available, self.p, 0.0)

    def __repr__(self) -> str:
        return f"SampleBernoulli(N={self.p.size})"
