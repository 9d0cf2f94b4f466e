r"""FedAvg with pluggable aggregation weights.

Round :math:`t`: every available client runs :math:`E` local steps from :math:`w_t` and
reports :math:`\Delta_t^k`; the server applies
:math:`w_{t+1}=w_t+\eta_s\sum_{k\in A_t}q_{t,k}\Delta_t^k` (CA-Fed (3) without projection).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from fedtheory.params import check_int, check_real
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.local import local_sgd

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

    def step(
        self,
        problem: FederatedProblem,
        w: torch.Tensor,
        mask: torch.Tensor,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """One round: ``w [R, d]``, ``mask [R, N]`` -> ``w_next [R, d]``.

        Only the participating (replicate, client) pairs do local work."""
        rep, cli = mask.nonzero(as_tuple=True)  # [M], [M]
        if rep.numel() == 0:
            return w
        delta = local_sgd(
            problem, w[rep], cli, steps=self.local_steps, lr=self.lr, generator=generator
        )
        q = self.aggregator(mask)[rep, cli]  # [M]
        step = torch.zeros_like(w).index_add_(0, rep, q[:, None] * delta)
        return w + self.server_lr * step
