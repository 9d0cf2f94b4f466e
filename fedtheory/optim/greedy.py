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

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch

from fedtheory.constraints import (
    Array,
    Bool,
    Function,
    Indices,
    Instance,
    Real,
    SequenceOf,
    Tensor,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.optim.instance import WeightInstance, _weight_objective
from fedtheory.optim.program import WeightSolution, excluded_clients

__all__ = ["greedy_exclusion", "greedy_weights"]

Objective = Callable[[torch.Tensor], torch.Tensor]
"""Maps candidate weights ``[R, K, N]`` (``K`` candidates of each replicate) to objective
values ``[R, K]``; row ``r`` is replicate ``r`` (e.g. ``pi[:, None] * q`` for rates
``pi [R, N]``)."""

WINDOW_ELEMENTS = 1 << 15
"""The candidates evaluated in one call of the objective hold about this many weights."""


@declare(
    objective=Function(),
    q=Tensor(dtype="floating", shape=(None, None), low=0.0),
    orders=SequenceOf(Indices("q[1]", shape=("q[0]", "q[1]")), plural="orders [R, N]"),
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

    A heuristic (no optimality claim): CA-Fed Algorithm 1, lines 16-27. The visits are
    sequential, the objective is evaluated on windows of them at once (:func:`_visits`):
    the same decisions and the same numbers as one visit at a time, in a few calls."""
    objective, eps = _candidates(objective, q)
    for order in orders:  # eps stays f(q): each order starts where the last one ended
        q, eps = _visits(objective, q, eps, order, tau, strict)
    return q


def _candidates(objective: Objective, q: torch.Tensor) -> tuple[Objective, torch.Tensor]:
    """The objective of candidates ``[R, K, N]`` and its value ``[R]`` at ``q [R, N]``; an
    objective of weights ``[R, N] -> [R]`` (the contract before 0.2, deprecated) is called
    once per candidate."""
    r, n = q.shape
    eps = objective(q[:, None])
    if isinstance(eps, torch.Tensor) and eps.shape == (r, 1):
        return objective, eps[:, 0]
    eps = objective(q)
    if not isinstance(eps, torch.Tensor) or eps.shape != (r,):
        raise ParameterError(
            f"The 'objective' parameter of greedy_exclusion must map weights [R, K, N] to "
            f"values [R, K] (row r: replicate r). Got {getattr(eps, 'shape', eps)!r} for "
            f"[{r}, {n}] instead."
        )
    warnings.warn(
        "greedy_exclusion: an objective of weights [R, N] -> [R] is deprecated (called once "
        "per candidate, slower; refused from 0.3): map candidates [R, K, N] to [R, K].",
        DeprecationWarning,
        stacklevel=4,
    )
    return lambda c: torch.stack([objective(c[:, k]) for k in range(c.shape[1])], 1), eps


def _visits(objective: Objective, q: torch.Tensor, eps: torch.Tensor, order, tau, strict):
    r"""One ``get`` over ``order [R, N]``. From visit :math:`j` on, each call of the
    objective evaluates, for the next :math:`W` visits, every exclusion alone and the
    exclusions accumulated; while the decisions keep nothing that changes :math:`q` the
    first set is exact, while they keep everything the second is. A replicate advances to
    its first decision that breaks its hypothesis, and past it (it is decided too): one
    call per run of equal decisions instead of one per visit. Each candidate is the
    weight vector the plain loop would build, so its value has the same bits."""
    r, n = q.shape
    width = max(1, min(n, WINDOW_ELEMENTS // (2 * r * n)))
    steps = torch.arange(width, device=q.device)
    done = torch.zeros(r, dtype=torch.long, device=q.device)  # visits decided
    while bool((done < n).any()):
        position = done[:, None] + steps  # [R, W]
        valid = position < n
        client = order.gather(1, position.clamp(max=n - 1))  # [R, W]
        hit = (client[..., None] == torch.arange(n, device=q.device)) & valid[..., None]
        alone = torch.where(hit, 0.0, q[:, None])  # [R, W, N] one exclusion each
        accumulated = torch.where(hit.cumsum(1) > 0, 0.0, q[:, None])  # visits <= i
        values = objective(torch.cat([alone, accumulated], 1))  # [R, 2W]
        eps_alone, eps_accumulated = values[:, :width], values[:, width:]
        before = torch.cat([eps[:, None], eps_accumulated[:, :-1]], 1)  # eps before visit i
        current = q.gather(1, client)
        changes = valid & ((current != 0) | current.signbit())  # q_k^+ = +0 differs from q
        kept = _kept(eps[:, None], eps_alone, tau, strict) & changes  # [R, W]
        broken = ~_kept(before, eps_accumulated, tau, strict) & changes
        remaining = valid.sum(1)
        rejecting = ~kept[:, 0]  # visit j keeps nothing that changes q
        first = torch.where(rejecting, _first(kept), _first(broken))  # [R] in [0, W]
        last = torch.where(rejecting, first, first - 1).clamp(max=width - 1)
        moved = ~rejecting | (first < width)
        pick = last[:, None, None].expand(-1, 1, n)
        source = torch.where(rejecting[:, None, None], alone, accumulated)
        q = torch.where(moved[:, None], source.gather(1, pick)[:, 0], q)
        chosen = torch.where(rejecting[:, None], eps_alone, eps_accumulated)
        eps = torch.where(moved, chosen.gather(1, last[:, None])[:, 0], eps)
        done = done + torch.where(first < width, first + 1, remaining)
    return q, eps


def _kept(eps: torch.Tensor, eps_trial: torch.Tensor, tau: float, strict: bool) -> torch.Tensor:
    r"""Line 22: the exclusion is kept when the objective stays finite and drops by at least
    :math:`\tau` (``strict``: by more)."""
    drop = eps - eps_trial
    return torch.isfinite(eps_trial) & ((drop > tau) if strict else (drop >= tau))


def _first(flags: torch.Tensor) -> torch.Tensor:
    """``[R, W]`` bool -> ``[R]``: the index of the first True, W where none."""
    width = flags.shape[1]
    steps = torch.arange(width, device=flags.device)
    return torch.where(flags, steps, width).amin(1)


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
