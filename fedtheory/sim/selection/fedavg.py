r"""FedAvg with server-side client selection and volatile clients (E3CS Algorithm 1, (5)).

Round :math:`t`: the selector picks :math:`A_t` (:math:`|A_t|=k`); the availability mask of
the round is the success indicator :math:`x_{i,t}` (client :math:`i` would return its model);
the clients with :math:`i\in A_t` and :math:`x_{i,t}=1` run local SGD from :math:`\Theta_t`,
and the server aggregates (Algorithm 1 line 9)

.. math:: \Theta_{t+1}=\sum_{i\in A_t,\,x_{i,t}=1}\omega_i\Theta_{i,t}
          +\sum_{i\notin A_t\text{ or }x_{i,t}=0}\omega_i\Theta_t
          =\Theta_t+\sum_{i\in A_t,\,x_{i,t}=1}\omega_i\,(\Theta_{i,t}-\Theta_t),

with data weights :math:`\sum_i\omega_i=1`: failed or unselected clients contribute the
current model: FedAvg with fixed weights :math:`\omega` on the clients that are selected and
successful. The state's ``participants``
(who returned a model) make :func:`~fedtheory.sim.simulate` record the effective
participation of every round, whose running sum is the CEP (E3CS §VI-B).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from fedtheory import rng
from fedtheory.constraints import Instance, Integer, Probabilities, declare
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.selection.policies import Selector

__all__ = ["SelectedFedAvg", "SelectedFedAvgState"]


class SelectedFedAvgState(NamedTuple):
    w: torch.Tensor  # [R, d] server model Theta_t
    selector: NamedTuple  # the selector's state (E3CS: log-weights [R, K])
    selections: torch.Tensor  # [R, K] int64, times selected so far
    successes: torch.Tensor  # [R, K] int64, times selected and successful (CEP per client)
    participants: torch.Tensor  # [R, K] bool, returned a model this round (A_t and x_t = 1)
    weights: torch.Tensor  # [R, K] float64, weights applied this round: omega_i on returners


@declare(**LOCAL_TRAINING)
@dataclass(frozen=True)
class SelectedFedAvg(LocalTraining):
    r"""E3CS-style training (Algorithm 1): select with ``selector``, aggregate by line 9.

    Parameters
    ----------
    selector : Selector
        :class:`~fedtheory.sim.selection.policies.E3CS`, ``FedCS``, ``RandomSelection`` or
        ``PowD`` (which is given the exact client losses of the current model).
    omega : array [K], optional
        Data weights :math:`\omega` (default: the problem's target weights :math:`\alpha`).
    seed : int
        Selection randomness of round ``t`` is ``rng.numpy_rng(seed, t, SELECTION)``,
        independent of the gradient noise.
    local_steps, lr, server_lr, prox, radius, full_first_round
        Client and server training, :class:`~fedtheory.sim.algorithm.LocalTraining`
        (``server_lr = 1`` is Algorithm 1; ``prox > 0`` gives the paper's FedProx variant).
    """

    selector: Selector
    omega: np.ndarray | None = None
    seed: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "SelectedFedAvg"
        Instance(Selector).check(self.selector, "selector", owner, {})
        Integer(0).check(self.seed, "seed", owner, {})
        if self.omega is not None:
            object.__setattr__(self, "omega", Probabilities().check(self.omega, "omega", owner, {}))
        if not self.name:
            object.__setattr__(self, "name", self.selector.name)

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> SelectedFedAvgState:
        reps, num_clients = w0.shape[0], problem.num_clients
        zeros = torch.zeros(reps, num_clients, dtype=torch.int64)
        return SelectedFedAvgState(
            w0,
            self.selector.init(reps, num_clients),
            zeros,
            zeros,
            zeros.to(device=w0.device, dtype=torch.bool),
            zeros.to(device=w0.device, dtype=torch.float64),
        )

    @declare(**round_arguments(SelectedFedAvgState))
    def step(
        self,
        problem: FederatedProblem,
        state: SelectedFedAvgState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> SelectedFedAvgState:
        """Round ``t``: ``state.w [R, d]``, success mask ``mask [R, K]`` -> next state.

        Only selected and successful (replicate, client) pairs do local work. The
        selection (NumPy randomness, bandit state) runs on the CPU whatever the device of
        ``state.w``; the local training and the fields ``participants``/``weights`` are on
        that device."""
        w = state.w
        mask = mask.cpu()
        losses = None
        if self.selector.needs_losses:
            losses = torch.from_numpy(problem.client_losses(w.cpu().numpy()))  # [R, K]
        gen = rng.numpy_rng(self.seed, t, rng.SELECTION)
        choice = self.selector.select(state.selector, t, gen, losses=losses)
        returned = self.participants(choice.selected & mask, t)  # [R, K]
        omega = torch.from_numpy(problem.alpha if self.omega is None else self.omega)
        q = returned * omega  # [R, K]
        returned_on, q_on = returned.to(w.device), q.to(w.device)
        return SelectedFedAvgState(
            self.weighted_round(problem, w, q_on, returned_on, t, generator),
            self.selector.update(state.selector, t, choice, mask),
            state.selections + choice.selected,
            state.successes + returned,
            returned_on,
            q_on,
        )
