r"""CA-Fed's greedy exclusion ``get`` (Rodio et al. 2023, Algorithm 1, lines 16-27),
vectorised over replicates.

Starting from weights :math:`q`, clients are visited in a given order; client :math:`k` is
tentatively set to :math:`q_k^+=0` and the change is kept iff the objective drops by at
least :math:`\tau` (:math:`\hat\epsilon-\hat\epsilon^+\ge\tau`, line 22 as printed) or,
with ``strict=True``, by more than :math:`\tau` (:math:`>\tau`; §IV-A: "decreasing by more
than a threshold :math:`\tau\ge0`"). The two differ only on exact ties, e.g. at
:math:`\tau=0` when every loss gap is 0 and the proxy is 0 for every :math:`q`.
Algorithm 1 runs ``get`` twice: in descending :math:`|\hat\lambda_k|`, then in ascending
:math:`\hat\pi_k`. A change that would make the objective non-finite (e.g. excluding every
client) is never kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from fedtheory.constraints import Array, Bool, Function, Instance, Real, Tensor, declare
from fedtheory.errors import ParameterError
from fedtheory.optim.instance import WeightInstance, _weight_objective
from fedtheory.optim.program import WeightSolution, excluded_clients

__all__ = ["greedy_exclusion", "greedy_weights"]

Objective = Callable[[torch.Tensor], torch.Tensor]
"""Maps weights ``[R, N]`` to objective values ``[R]``."""


@declare(
    objective=Function(),
    q=Tensor(dtype="floating", shape=(None, None), low=0.0),
    tau=Real(0.0),
    strict=Bool(),
)
def greedy_exclusion(
    objective: Objective,
    q: torch.Tensor,
    orders: Sequence[torch.Tensor],
    *,
    tau: float = 0.0,
    strict: bool = False,
) -> torch.Tensor:
    r"""Run ``get`` once per order: ``q [R, N]``, each order ``[R, N]`` (client indices)
    -> weights ``[R, N]`` with some entries set to zero.

    A heuristic (no optimality claim): CA-Fed Algorithm 1, lines 16-27."""
    rows = torch.arange(q.shape[0], device=q.device)
    for order in orders:
        eps = objective(q)  # [R]
        for j in range(order.shape[1]):
            trial = q.clone()
            trial[rows, order[:, j]] = 0.0
            eps_trial = objective(trial)
            drop = eps - eps_trial
            keep = torch.isfinite(eps_trial) & ((drop > tau) if strict else (drop >= tau))  # [R]
            q = torch.where(keep[:, None], trial, q)
            eps = torch.where(keep, eps_trial, eps)
    return q


@declare(
    instance=Instance(WeightInstance),
    lam=Array(shape=("instance.num_clients",), low=-1.0, high=1.0, none=True),
    tau=Real(0.0),
)
def greedy_weights(instance: WeightInstance, *, lam=None, tau: float = 0.0) -> WeightSolution:
    r"""CA-Fed's greedy ``get`` applied to the weight program's own objective :math:`f`.

    Starts at :math:`q\propto\alpha/\pi` (Algorithm 1, line 5), rescaled to
    :math:`\|q\|_1=Q` whenever :math:`f` is evaluated; visits clients in descending ``lam``
    (if given; Guideline B excludes the largest :math:`\lambda(P_k)`, the second largest
    eigenvalue "in absolute value", so the order is by :math:`|\lambda_k|`) and then in
    ascending :math:`\pi` (Guideline A). A heuristic: its value is an upper bound on the
    program's optimum."""
    owner = "greedy_weights"
    Q = instance.Q
    orders = []
    if lam is not None:
        orders.append(torch.from_numpy(np.argsort(-np.abs(lam), kind="stable"))[None])
    orders.append(torch.from_numpy(np.argsort(instance.pi, kind="stable"))[None])

    def objective(q: torch.Tensor) -> torch.Tensor:
        total = q.sum(-1, keepdim=True)
        scaled = torch.where(total > 0, Q * q / total, q)
        return _weight_objective(scaled, instance)

    # excluded clients start at zero and the greedy only ever sets weights to zero
    start = np.where(instance.excluded, 0.0, instance.alpha / instance.pi)
    q = greedy_exclusion(objective, torch.from_numpy(start)[None], orders, tau=tau)[0].numpy()
    q = Q * q / q.sum()
    value = float(_weight_objective(torch.from_numpy(q), instance))
    if not (np.isfinite(value) and np.isfinite(q).all()):  # e.g. B = 1e308 or Q = 1e-320
        raise ParameterError(
            f"The 'instance' parameter of {owner} must give finite weights and objective "
            f"(B = {instance.B:g}, C = {instance.C:g}, Q = {instance.Q:g}, largest a = "
            f"{instance.a.max():g}: rescale them). Got f = {value:g} instead."
        )
    return WeightSolution(q, value, "heuristic", excluded_clients(q, Q), "greedy")
