r"""The protocol every simulated algorithm follows (optax/FedJAX style ``init``/``step``).

An algorithm keeps everything it remembers between rounds in an explicit, immutable state
record whose field ``w`` is the server model ``[R, d]``; per-client server state (weights,
stored updates, correction variables) lives in further fields with shapes ``[R, N, ...]``.
``step`` is a pure function of ``(state, mask, t, generator)``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch

from fedtheory.problems.base import FederatedProblem


@runtime_checkable
class AlgorithmState(Protocol):
    w: torch.Tensor  # [R, d] server model of every replicate


@runtime_checkable
class Algorithm(Protocol):
    name: str

    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> AlgorithmState:
        """Initial state from the initial models ``w0 [R, d]``."""
        ...

    def step(
        self,
        problem: FederatedProblem,
        state: AlgorithmState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> AlgorithmState:
        """One round ``t`` with availability ``mask [R, N]``."""
        ...
