r"""FedAvg with pluggable aggregation weights.

Round :math:`t`: every available client runs :math:`E` local steps from :math:`w_t` and
reports :math:`\Delta_t^k`; the server applies
:math:`w_{t+1}=w_t+\eta_s\sum_{k\in A_t}q_{t,k}\Delta_t^k` (CA-Fed (3) without projection).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from fedtheory.params import check_int, check_real
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.local import local_sgd


class FedAvgState(NamedTuple):
    w: torch.Tensor  # [R, d]


Aggregator = Callable[[torch.Tensor], torch.Tensor]
"""Maps the participation mask ``[R, N]`` to aggregation weights ``[R, N]``."""


@dataclass(frozen=True)
class FedAvg:
    r"""FedAvg: ``local_steps`` = :math:`E`, ``lr`` = :math:`\eta` (client), ``server_lr`` =
    :math:`\eta_s`, ``aggregator`` gives :math:`q_{t,k}`."""

    aggregator: Aggregator
    local_steps: int = 1
    lr: float = 0.1
    server_lr: float = 1.0
    name: str = field(default="fedavg")

    def __post_init__(self) -> None:
        check_int(self.local_steps, "local_steps", "FedAvg", low=1)
        check_real(self.lr, "lr", "FedAvg", low=0.0, low_open=True)
        check_real(self.server_lr, "server_lr", "FedAvg", low=0.0, low_open=True)

    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> FedAvgState:
        return FedAvgState(w0)

    def step(
        self,
        problem: FederatedProblem,
        state: FedAvgState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> FedAvgState:
        """One round: ``state.w [R, d]``, ``mask [R, N]`` -> next state.

        Only the participating (replicate, client) pairs do local work."""
        w = state.w
        rep, cli = mask.nonzero(as_tuple=True)  # [M], [M]
        if rep.numel() == 0:
            return state
        delta = local_sgd(
            problem, w[rep], cli, steps=self.local_steps, lr=self.lr, generator=generator
        )
        q = self.aggregator(mask)[rep, cli]  # [M]
        step = torch.zeros_like(w).index_add_(0, rep, q[:, None] * delta)
        return FedAvgState(w + self.server_lr * step)
