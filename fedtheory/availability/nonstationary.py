r"""FedAWE's availability dynamics (Xiang et al. 2024, §7 and App. J.3): independent
Bernoulli availability with probability :math:`p_i^t=p_i\,f_i(t)`.

* ``"stationary"``: :math:`f_i(t)=1`;
* ``"staircase"``: :math:`f_i(t)=1` on the first half of each period of :math:`P` rounds,
  :math:`0.4` on the second (:math:`t-t_0<P/2` with :math:`t_0\in\{0,P,2P,\dots\}`);
* ``"sine"``: :math:`f_i(t)=g(t)=\gamma\sin(2\pi t/P)+(1-\gamma)`;
* ``"interleaved_sine"``: :math:`f_i(t)=g(t)\,\mathbb 1\{p_i\,g(t)\ge\delta_0\}` (the sine
  cut to 0 where :math:`p_i^t` would fall below :math:`\delta_0`; clients with different
  :math:`p_i` are cut at different rounds). Assumption 1 (:math:`p_i^t\ge\delta>0`) fails.

The paper runs :math:`\gamma=0.3`, :math:`P=20`, :math:`\delta_0=0.1` (the defaults) with
:math:`p_i=\langle\nu_i,\phi\rangle` (:func:`class_probabilities`). Client :math:`i` is
available in round :math:`t` iff its uniform of that round is below :math:`p_i^t`
(round :math:`t` counted from 0), so a window from ``start`` reproduces the rows of a run
from 0. ``marginals`` is the exact average of :math:`p_i^t` over one period; ``delta`` and
``delta_max`` are :math:`\min` and :math:`\max` of :math:`p_i^t` over the first ``T``
rounds (the largest :math:`\delta` of Assumption 1 and the paper's :math:`\delta_{\max}`).
"""

from __future__ import annotations

import numpy as np

from fedtheory.availability.base import AvailabilityProcess, population_rng
from fedtheory.constraints import Array, Option, Real, Size, StochasticMatrix, declare

DYNAMICS = ("stationary", "staircase", "sine", "interleaved_sine")
STAIRCASE_LOW = 0.4
"""Value of the staircase on the second half of a period (App. J.3)."""


class NonStationary(AvailabilityProcess):
    r"""Bernoulli availability with FedAWE's time-varying probabilities
    :math:`p_i^t=p_i f_i(t)` (module docstring).

    Parameters
    ----------
    p : array [N]
        Base probabilities :math:`p_i\in[0,1]`.
    dynamics : {"stationary", "staircase", "sine", "interleaved_sine"}
    period : int
        :math:`P\ge2` rounds.
    gamma : float
        Degree of non-stationarity :math:`\gamma\in[0,1/2]` (keeps :math:`g\ge0`).
    cutoff : float
        :math:`\delta_0\in[0,1]` of the interleaved sine.

    Examples
    --------
    >>> proc = NonStationary([0.5, 0.2], dynamics="interleaved_sine", period=4)
    >>> proc.probabilities(np.arange(4)).round(3).tolist()
    [[0.35, 0.14], [0.5, 0.2], [0.35, 0.14], [0.2, 0.0]]
    >>> float(proc.delta(4)), float(proc.delta_max(4))
    (0.0, 0.5)
    """

    @declare(
        p=Array(ndim=1, low=0.0, high=1.0),
        dynamics=Option(*DYNAMICS),
        period=Size(2),
        gamma=Real(0.0, 0.5),
        cutoff=Real(0.0, 1.0),
    )
    def __init__(
        self,
        p,
        *,
        dynamics: str = "stationary",
        period: int = 20,
        gamma: float = 0.3,
        cutoff: float = 0.1,
    ) -> None:
        self.p, self.dynamics, self.period = p, dynamics, period
        self.gamma, self.cutoff = gamma, cutoff
        self.num_clients = self.p.size

    @declare(rounds=Array(ndim=1, integer=True, low=0.0, min_size=0))
    def probabilities(self, rounds) -> np.ndarray:
        """Exact :math:`p_i^t` ``[T, N]`` at the rounds ``[T]`` (integers >= 0)."""
        t = rounds[:, None]
        if self.dynamics == "stationary":
            f = np.ones((t.size, 1))
        elif self.dynamics == "staircase":
            f = np.where(2 * (t % self.period) < self.period, 1.0, STAIRCASE_LOW)
        else:
            f = self.gamma * np.sin(2 * np.pi * t / self.period) + (1 - self.gamma)
        prob = np.clip(self.p * f, 0.0, 1.0)  # rounding only: 0 <= p f <= 1 by construction
        if self.dynamics == "interleaved_sine":
            prob = np.where(prob >= self.cutoff, prob, 0.0)
        return prob

    @property
    def marginals(self) -> np.ndarray:
        """Average of :math:`p_i^t` over one period (the long-run availability)."""
        return self.probabilities(np.arange(self.period)).mean(axis=0)

    @declare("rounds")
    def delta(self, rounds: int) -> float:
        r""":math:`\min_{i,\,t<T}p_i^t` for ``rounds`` :math:`=T` (Assumption 1 holds with
        this :math:`\delta` iff it is positive)."""
        return float(self.probabilities(np.arange(min(rounds, self.period))).min())

    @declare("rounds")
    def delta_max(self, rounds: int) -> float:
        r""":math:`\delta_{\max}=\max_{i,\,t<T}p_i^t` for ``rounds`` :math:`=T`."""
        return float(self.probabilities(np.arange(min(rounds, self.period))).max())

    def _sample(self, rounds, replicates, seed, start):
        prob = self.probabilities(np.arange(start, start + rounds))  # [T, N]
        return self._draw_below(prob, replicates, seed, start)

    def __repr__(self) -> str:
        return f"NonStationary(N={self.num_clients}, {self.dynamics}, P={self.period})"


@declare(
    "seed",
    class_distribution=StochasticMatrix(square=False),
    caps=Array(shape=("class_distribution[1]",), low=0.0, high=1.0, none=True),
)
def class_probabilities(class_distribution, *, caps=None, seed: int = 0) -> np.ndarray:
    r"""FedAWE's base probabilities :math:`p_i=\langle\nu_i,\phi\rangle` (Xiang et al. 2024,
    §7 and App. J.3): ``class_distribution [N, C]`` holds each client's class proportions
    :math:`\nu_i` (rows on the simplex), :math:`[\phi]_c\sim\mathcal U(0,\Phi_c)` drawn once
    from ``seed`` (:func:`~fedtheory.availability.base.population_rng`), with ``caps``
    :math:`\Phi` ``[C]`` (default: 1 for the first half of the classes, 0.5 for the rest, the
    paper's choice for 10 classes).

    Examples
    --------
    >>> class_probabilities(np.eye(2), caps=[1.0, 0.5], seed=0).shape
    (2,)
    """
    nu = class_distribution
    c = nu.shape[1]
    phi_max = np.where(np.arange(c) < (c + 1) // 2, 1.0, 0.5) if caps is None else caps
    phi = population_rng(seed).uniform(0.0, 1.0, c) * phi_max
    return nu @ phi


EXPORTS = ("NonStationary",)
"""Re-exported by :mod:`fedtheory.availability` (the paper's record, :mod:`fedtheory.papers`)."""
EXAMPLES = (
    *(NonStationary([0.9, 0.5, 0.2], dynamics=d, period=6) for d in ("staircase", "sine")),
    NonStationary([0.9, 0.5, 0.2], dynamics="interleaved_sine", period=6, gamma=0.5),
)
"""Instances the availability tests run (restart, determinism, marginals, the plain loop)."""
