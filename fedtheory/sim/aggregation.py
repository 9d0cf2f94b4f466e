r"""Aggregation weights :math:`q_k` applied by the server to participants' updates.

The server step is :math:`w_{t+1}=w_t+\eta_s\sum_{k\in A_t}q_{t,k}\Delta_t^k` (CA-Fed (3),
FedAU Algorithm 1). An aggregator maps the participation mask ``[R, N]`` of one round to
the weights ``[R, N]`` (zero for clients that do not participate). Stateless rules are
callables ``mask -> q``; rules with per-client state (FedAU here, CA-Fed in
:mod:`fedtheory.sim.cafed`) follow :class:`StatefulAggregator` and keep that state in an
explicit immutable record ``[R, N]`` per field.

FedAU's Algorithm 1 divides by :math:`N`: :math:`x_{t+1}=x_t+\frac\eta N\sum_n
\omega_t^n\mathbb I_t^n\Delta_t^n`, so its weights are :math:`q=\omega/N` (FedAU, Algorithm 1 and
the authors' ``main.py``):
average-all is :math:`\omega\equiv1`, known participation statistics is
:math:`\omega_n=1/p_n` (:func:`unbiased_weights` with uniform :math:`\alpha`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch

from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Instance, Mask, Probabilities, Size, Text, declare
from fedtheory.device import PerDevice
from fedtheory.errors import ParameterError

__all__ = [
    "AverageAll",
    "AverageParticipating",
    "FedAU",
    "FedAUState",
    "FixedWeights",
    "StatefulAggregator",
    "average_all",
    "average_participating",
    "fedau_init",
    "fedau_update",
    "fedau_weights",
    "unbiased_weights",
]  # check_mask, check_clients: the per-round checks of the aggregators' __call__

ROUND_MASK = Mask(tensor=True, shape=(..., None))
"""One round's participation ``[R, N]`` (or ``[..., N]``): a ``torch.bool`` tensor."""


def check_mask(mask: object, owner: str, *, shape: tuple[int, ...] | None = None) -> torch.Tensor:
    """``mask`` after checking it is a boolean torch tensor ``[..., N]`` (of ``shape``, if
    given); O(1): the entries are not scanned."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() < 1:
        got = (
            f"{type(mask).__name__} of dtype {mask.dtype}"
            if isinstance(mask, torch.Tensor)
            else repr(mask)
        )
        raise ParameterError(
            f"The 'mask' parameter of {owner} must be a boolean torch tensor [R, N]. "
            f"Got {got} instead."
        )
    if shape is not None and tuple(mask.shape) != tuple(shape):
        raise ParameterError(
            f"The 'mask' parameter of {owner} must have shape {tuple(shape)}. "
            f"Got shape {tuple(mask.shape)} instead."
        )
    return mask


def check_clients(weights: torch.Tensor, mask: torch.Tensor, name: str, owner: str) -> None:
    """Per-client weights ``[N]`` must match the run's ``N`` (the last axis of ``mask``)."""
    if weights.numel() != mask.shape[-1]:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must have length N={mask.shape[-1]} (one weight "
            f"per client of the run). Got length {weights.numel()} instead."
        )


def _sum_per_replicate(
    values: torch.Tensor, rep: torch.Tensor, cli: torch.Tensor, shape: tuple[int, int]
) -> torch.Tensor:
    r""":math:`\sum_{m:\,r_m=r}v_m` ``[R, d]`` of the rows ``values [M, d]`` of the distinct
    (replicate, client) pairs ``(rep [M], cli [M])``, ``shape = (R, N)``.

    The same numbers on every run: on the CPU ``index_add`` (sequential), elsewhere the rows
    are placed in a zero ``[R, N, d]`` table and summed over clients (CUDA's ``index_add``
    adds with atomics, in an order that changes from run to run)."""
    if values.device.type == "cpu":
        return values.new_zeros(shape[0], values.shape[-1]).index_add_(0, rep, values)
    return _table_sum(values, rep, cli, shape)


def _table_sum(values, rep, cli, shape: tuple[int, int]) -> torch.Tensor:
    """:func:`_sum_per_replicate` through a zero ``[R, N, d]`` table (any device)."""
    table = values.new_zeros(*shape, values.shape[-1])
    return table.index_put_((rep, cli), values).sum(1)


@declare(mask=ROUND_MASK)
def average_participating(mask: torch.Tensor) -> torch.Tensor:
    r""":math:`q_k=\mathbb 1_{k\in A_t}/|A_t|` (``0`` for everybody if nobody participates).

    ``mask [R, N]`` bool -> ``[R, N]`` float64."""
    m = mask.to(torch.float64)
    return m / m.sum(dim=-1, keepdim=True).clamp_min(1.0)


@declare(name=Text())
@dataclass(frozen=True)
class AverageParticipating:
    """Average over the clients that participate in the round (plain FedAvg)."""

    name: str = "avg-participating"

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        return average_participating(mask)


@declare(mask=ROUND_MASK)
def average_all(mask: torch.Tensor) -> torch.Tensor:
    r""":math:`q_k=\mathbb 1_{k\in A_t}/N` (FedAU baseline "average all" of the authors'
    ``main.py``).

    ``mask [R, N]`` bool -> ``[R, N]`` float64."""
    return mask.to(torch.float64) / mask.shape[-1]


@declare(name=Text())
@dataclass(frozen=True)
class AverageAll:
    """Participants' updates summed and divided by the number of all clients."""

    name: str = "avg-all"

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        return average_all(mask)


class FixedWeights:
    r"""Constant weights: :math:`q_{t,k}=q_k\mathbb 1_{k\in A_t}` (CA-Fed (3) with a fixed
    :math:`q`). FedAvg then minimises :math:`F_B` with :math:`p_k\propto\pi_kq_k` (CA-Fed (4))."""

    @declare(q=Array(ndim=1, low=0.0), name=Text())
    def __init__(self, q, *, name: str = "fixed") -> None:
        self.q = torch.from_numpy(q)
        self.name = name
        self._q = PerDevice(self.q)

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        check_clients(self.q, check_mask(mask, "FixedWeights"), "q", "FixedWeights")
        return mask.to(torch.float64) * self._q.on(mask.device)

    @declare(pi=Array(shape=("self.q[0]",), low=0.0, high=1.0, low_open=True))
    def effective_weights(self, pi) -> np.ndarray:
        r""":math:`p_k=\pi_kq_k/\sum_h\pi_hq_h` for availability ``pi`` (CA-Fed (4))."""
        q = self.q.numpy()
        mass = pi @ q
        if mass <= 0:
            raise ParameterError(
                "The 'q' parameter of FixedWeights must give pi^T q in (0, inf) for the 'pi' "
                "parameter of effective_weights. Got pi^T q = 0 instead."
            )
        return pi * q / mass

    def __repr__(self) -> str:
        return f"FixedWeights({self.name}, N={self.q.numel()})"


ALPHA_PI = dict(
    alpha=Probabilities(),
    pi=Array(shape=("alpha[0]",), low=0.0, high=1.0, low_open=True),
)
"""Target weights :math:`\alpha` (a simplex vector ``[N]``) and availabilities
:math:`\\pi\\in(0,1]^N` of the same length."""


@declare(**ALPHA_PI, finite_result=True)
def unbiased_weights(alpha, pi) -> FixedWeights:
    r"""CA-Fed's "Unbiased" rule / FedAU's known-:math:`p` rule: :math:`q_k=\alpha_k/\pi_k`,
    so that :math:`p=\alpha`."""
    return FixedWeights(alpha / pi, name="unbiased")


@runtime_checkable
class StatefulAggregator(Protocol):
    """An aggregation rule with explicit per-client state (all fields ``[R, N]``).

    Round ``t`` uses ``weights(state, mask)`` (computed from rounds ``< t`` only), then
    ``update(state, mask)`` records round ``t``'s participation."""

    name: str

    def init(self, replicates: int, num_clients: int) -> NamedTuple: ...

    def weights(self, state: NamedTuple, mask: torch.Tensor) -> torch.Tensor: ...

    def update(self, state: NamedTuple, mask: torch.Tensor) -> NamedTuple: ...


class FedAUState(NamedTuple):
    omega: torch.Tensor  # [R, N] float64: weight omega_t^n (running mean of the intervals)
    intervals: torch.Tensor  # [R, N] float64: M_n, number of intervals recorded
    gap: torch.Tensor  # [R, N] float64: S_n^diamond, rounds since the last record


@declare("replicates", "num_clients")
def fedau_init(replicates: int, num_clients: int) -> FedAUState:
    r"""FedAU Algorithm 2 initialisation: :math:`\omega_0^n=1`, :math:`M_n=0`,
    :math:`S_n^\diamond=0`."""
    shape = (replicates, num_clients)
    check_bytes(24 * replicates * num_clients, "fedau_init", what=f"a state [{replicates}, "
                f"{num_clients}] of 3 fields", fixes="fewer replicates or clients")  # fmt: skip
    ones = torch.ones(shape, dtype=torch.float64)
    return FedAUState(ones, torch.zeros(shape, dtype=torch.float64), torch.zeros_like(ones))


FEDAU_ROUND = dict(
    state=Instance(FedAUState), mask=Mask(tensor=True, shape=("state.omega[0]", "state.omega[1]"))
)
"""FedAU's state and one round's participation of the state's shape."""


@declare(**FEDAU_ROUND, cutoff=Size(none=True))
def fedau_update(state: FedAUState, mask: torch.Tensor, cutoff: int | None) -> FedAUState:
    r"""One iteration of FedAU Algorithm 2 (Wang & Ji 2024), from
    :math:`\omega_{t-1}` and :math:`\mathbb I_{t-1}` = ``mask [R, N]`` to :math:`\omega_t`:

    .. math::
        S^\diamond\leftarrow S^\diamond+1;\quad\text{if }\mathbb I_{t-1}=1\text{ or }
        S^\diamond=K:\ \omega_t=\begin{cases}S^\diamond&M=0\\
        \frac{M\omega_{t-1}+S^\diamond}{M+1}&M>0\end{cases},\ M\leftarrow M+1,\
        S^\diamond\leftarrow0;\ \text{else }\omega_t=\omega_{t-1}.

    ``cutoff`` is :math:`K\ge1` (``None`` for :math:`K\to\infty`, the code's default
    ``K = 100000``). :math:`\omega_t` is the mean of the recorded intervals
    :math:`\min(G,K)`, an estimate of :math:`\mathbb E\min(G,K)=(1-(1-p)^K)/p` (Theorem 3)."""
    gap = state.gap + 1.0
    record = mask if cutoff is None else mask | (gap >= cutoff)
    mean = (state.intervals * state.omega + gap) / (state.intervals + 1.0)
    omega = torch.where(record, mean, state.omega)
    intervals = state.intervals + record.to(torch.float64)
    return FedAUState(omega, intervals, torch.where(record, 0.0, gap))


@declare(**FEDAU_ROUND)
def fedau_weights(state: FedAUState, mask: torch.Tensor) -> torch.Tensor:
    r""":math:`q_t^n=\mathbb I_t^n\omega_t^n/N` (FedAU Algorithm 1): ``[R, N]``."""
    return mask.to(torch.float64) * state.omega / mask.shape[-1]


@declare(cutoff=Size(infinite=True), name=Text())
@dataclass(frozen=True)
class FedAU:
    r"""FedAU's online weights (Wang & Ji 2024, Algorithms 1-2) with cutoff :math:`K`.

    Examples
    --------
    >>> import torch
    >>> rule = FedAU(cutoff=math.inf)
    >>> s = rule.init(1, 1)
    >>> for seen in [False, True, False, False, True]:  # intervals 2, then 3
    ...     s = rule.update(s, torch.tensor([[seen]]))
    >>> s.omega.item()
    2.5
    """

    cutoff: float = math.inf
    name: str = "fedau"

    @declare("replicates", "num_clients")
    def init(self, replicates: int, num_clients: int) -> FedAUState:
        return fedau_init(replicates, num_clients)

    @declare(**FEDAU_ROUND)
    def weights(self, state: FedAUState, mask: torch.Tensor) -> torch.Tensor:
        return fedau_weights(state, mask)

    @declare(**FEDAU_ROUND)
    def update(self, state: FedAUState, mask: torch.Tensor) -> FedAUState:
        return fedau_update(state, mask, None if self.cutoff == math.inf else self.cutoff)
