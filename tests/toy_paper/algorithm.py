"""Toy averaging and its plain loop (the simulator layer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.availability import Bernoulli
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import simulate
from fedtheory.sim.algorithm import LocalTraining
from fedtheory.sim.reference import local_update, reference_loop, server_update


class ToyState(NamedTuple):
    w: torch.Tensor  # [R, d]


@dataclass(frozen=True)
class ToyAverage(LocalTraining):
    """Toy averaging: the participants train, the server averages over all clients."""

    name: str = "toy-average"

    def init(self, problem, w0: torch.Tensor) -> ToyState:
        return ToyState(w0)

    def step(self, problem, state: ToyState, mask, t: int, generator=None) -> ToyState:
        mask = self.participants(mask, t)
        q = torch.full(mask.shape, 1.0 / mask.shape[1], dtype=torch.float64, device=mask.device)
        return ToyState(self.weighted_round(problem, state.w, q, mask, t, generator))


@reference_loop(ToyAverage, examples={"toy-average": {"local_steps": 2, "lr": 0.1}})
def _plain(problem, alg: ToyAverage, mask, w, gen):
    out = [w]
    for t, m in enumerate(mask):
        v = np.zeros_like(w)
        for k in np.flatnonzero(m):
            v += local_update(problem, alg, w, k, t, gen(t)) / mask.shape[1]
        w = server_update(alg, w, v, t)
        out.append(w)
    return out


def squared_norm(L: float, eta: float, T: int, toy_gap0: float, clients: int = 3) -> float:
    r""":math:`\|w_T\|^2` of toy averaging, simulated."""
    problem = QuadraticProblem(np.tile(L * np.eye(1), (clients, 1, 1)), np.zeros((clients, 1)))
    algorithm = ToyAverage(local_steps=1, lr=eta)
    w0 = np.array([np.sqrt(toy_gap0)])
    run = simulate(problem, Bernoulli(np.ones(clients)), algorithm, rounds=int(T), w0=w0)
    return float(run.iterates[0, -1, 0] ** 2)
