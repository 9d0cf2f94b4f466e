r"""F3AST (Ribero et al. 2022) estimating the availability online, as FedAWE's experiments run
it (Xiang et al. 2024, App. J.2: "We set :math:`\beta=0.001` for F3AST").

Every client keeps an estimate :math:`r_k` of its availability, updated each round with the
round's participation :math:`r_k\leftarrow(1-\beta)r_k+\beta\,\mathbb 1_{k\in A_t}`; among the
active clients the ``clients`` with the largest :math:`\alpha_k^2/r_k^2` are aggregated with
weights :math:`\alpha_k/r_k` (:func:`f3ast_weights`, the selection of CA-Fed's code, with the
updated estimate in place of its oracle :math:`\pi_k`). Neither paper gives :math:`r_k`'s
starting value: ``initial`` (default 1/2 for every client, or one value per
client) is a named option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.budget import check_bytes
from fedtheory.constraints import (
    Array,
    Instance,
    Integer,
    Mask,
    Probabilities,
    Real,
    Size,
    Tensor,
    Text,
    declare,
)
from fedtheory.device import PerDevice

ROUND_WEIGHTS = dict(
    mask=Mask(tensor=True, shape=(None, None)),
    alpha=Tensor(shape=("mask[1]",), low=0.0, high=1.0),
    pi=Tensor(shape=(..., "mask[1]"), low=0.0, high=1.0),
)
"""One round's participation ``[R, N]``, the target weights ``[N]`` and the rates ``[N]``
(or ``[R, N]``: F3AST's online estimates)."""


@declare(**ROUND_WEIGHTS, clients=Size(), beta_r=Real(0.0, 1.0), finite_result=True)
def f3ast_weights(
    mask: torch.Tensor, alpha: torch.Tensor, pi: torch.Tensor, *, clients: int, beta_r: float
) -> torch.Tensor:
    r"""F3AST as in CA-Fed's code (its ``F3astWeights``):
    :math:`r_k=(1-\beta_r)\pi_k+\beta_r\mathbb 1_{k\in A_t}`, the ``clients`` active clients
    with the largest :math:`\alpha_k^2/r_k^2` (ties: lower index first) get
    :math:`q_k=\alpha_k/r_k`. ``mask [R, N]`` -> ``q [R, N]``."""
    m = mask.to(torch.float64)
    r = (1.0 - beta_r) * pi + beta_r * m
    score = torch.where(mask, alpha**2 / r**2, torch.full_like(r, -torch.inf))
    top = torch.argsort(score, dim=-1, descending=True, stable=True)[:, :clients]
    chosen = torch.zeros_like(mask, dtype=torch.bool).scatter_(1, top, True) & mask
    return torch.where(chosen, alpha / r, torch.zeros_like(r))


class F3astOnlineState(NamedTuple):
    rate: torch.Tensor  # [R, N] float64 availability estimates r_k before this round


ROUND = dict(
    state=Instance(F3astOnlineState),
    mask=Mask(tensor=True, shape=("state.rate[0]", "self.alpha[0]")),
)
"""The estimates ``[R, N]`` and one round's participation ``[R, N]``."""


@declare(
    alpha=Probabilities(),
    clients=Integer(1),
    beta=Real(0.0, 1.0, low_open=True),
    initial=Array(low=0.0, high=1.0, low_open=True, like="alpha"),
    name=Text(),
)
@dataclass(frozen=True)
class F3astOnline:
    r"""F3AST with online availability estimates (module docstring): a
    :class:`~fedtheory.sim.aggregation.StatefulAggregator` for
    :class:`~fedtheory.sim.FedAvg`.

    Examples
    --------
    >>> agg = F3astOnline(np.full(4, 0.25), clients=2)
    >>> state = agg.init(1, 4)
    >>> agg.weights(state, torch.tensor([[True, True, False, True]])).count_nonzero().item()
    2
    """

    alpha: np.ndarray
    clients: int
    beta: float = 1e-3
    initial: float | np.ndarray = 0.5  # one r_k(0) for every client, or one each [N]
    name: str = "f3ast[online]"
    _alpha: PerDevice = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_alpha", PerDevice(torch.from_numpy(self.alpha)))

    @declare("replicates", num_clients=Integer("self.alpha[0]", "self.alpha[0]"))
    def init(self, replicates: int, num_clients: int) -> F3astOnlineState:
        what = f"estimates [{replicates}, {num_clients}]"
        check_bytes(8 * replicates * num_clients, "F3astOnline.init", what=what,
                    fixes="fewer replicates")  # fmt: skip
        start = torch.as_tensor(self.initial, dtype=torch.float64)
        rate = start.expand(replicates, num_clients).clone()
        return F3astOnlineState(rate)

    @declare(
        state=Instance(F3astOnlineState),
        mask=Mask(tensor=True, shape=("state.rate[0]", "self.alpha[0]")),
    )
    def weights(self, state: F3astOnlineState, mask: torch.Tensor) -> torch.Tensor:
        """Weights ``[R, N]`` of round ``t`` from the estimates updated with ``mask``."""
        alpha = self._alpha.on(mask.device)  # copied to a device once, not every round
        rate = state.rate.to(mask.device)
        return f3ast_weights(mask, alpha, rate, clients=self.clients, beta_r=self.beta)

    @declare(
        state=Instance(F3astOnlineState),
        mask=Mask(tensor=True, shape=("state.rate[0]", "self.alpha[0]")),
    )
    def update(self, state: F3astOnlineState, mask: torch.Tensor) -> F3astOnlineState:
        return F3astOnlineState((1 - self.beta) * state.rate + self.beta * mask.to(torch.float64))
