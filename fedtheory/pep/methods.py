r"""FL methods written on PEPit points, round by round exactly as :mod:`fedtheory.sim` runs
them (same objects, same configuration, same aggregation weights).

Every participating client runs :math:`E` local gradient steps from the server model,
:math:`y_{j+1}=y_j-\eta_{t,j}(\nabla f_i(y_j)+\mu_{\rm prox}(y_j-x_t))` (:math:`\eta_{t,j}=\eta_t`
for a schedule of the round; a :class:`~fedtheory.sim.schedules.PerStep` schedule's rate of
the global step :math:`tE+j`, Li et al. ICLR 2020's :math:`\eta_{tE+j}`), and reports
:math:`\Delta_t^i=y_E-x_t`. Then

* :class:`~fedtheory.sim.FedAvg`: :math:`x_{t+1}=x_t+\eta_s\sum_{i\in A_t}q_{t,i}\Delta_t^i`
  with the weights of its aggregator (uniform over participants or all clients, FedAU's
  :math:`1/p_i` via ``unbiased_weights``, CA-Fed's :math:`q` via ``FixedWeights``, or a
  stateful rule such as FedAU's online estimate), computed by the simulator's own code
  from the mask;
* :class:`~fedtheory.sim.MIFA`: :math:`x_{t+1}=x_t+\eta_s\frac1N\sum_iu_i` with
  :math:`u_i` the latest update of client :math:`i` (0 before it first participates);
* :class:`~fedtheory.sim.FedLaAvg`: the same average, refreshed only by the :math:`K`
  available clients absent longest (the simulator's ``absent_longest``);
* :class:`~fedtheory.sim.FedAWE`: client models, echoed innovations and implicit gossip
  among the active clients (:mod:`fedtheory.pep.fedawe`).

The server projection of CA-Fed (3) (``radius``) is not expressible and refused.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.constraints import (
    Either,
    Exemplified,
    Function,
    Having,
    Instance,
    Mask,
    Text,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.pep import fedawe
from fedtheory.pep._pepit import FUNCTIONS, POINT
from fedtheory.sim.aggregation import AverageParticipating, StatefulAggregator
from fedtheory.sim.fedavg import FedAvg
from fedtheory.sim.fedawe import FedAWE
from fedtheory.sim.fedlaavg import FedLaAvg, absent_longest
from fedtheory.sim.mifa import MIFA

SUPPORTED = (FedAvg, MIFA, FedLaAvg, FedAWE)
ALGORITHM = Exemplified(
    Instance(object, among=SUPPORTED),
    lambda args: FedAvg(AverageParticipating(), local_steps=1, lr=0.1),
)
"""A simulator algorithm a PEP can express (:func:`check_method` says with which options)."""
MASK = Mask(ndim=2, min_size=1)
"""A participation mask ``[T, N]``."""
RUN_MASK = Mask(shape=(None, "fs[0]"), min_size=1)
"""A participation mask ``[T, N]`` with one column per client function ``fs``."""


@declare(algorithm=ALGORITHM, owner=Text())
def check_method(algorithm: object, owner: str) -> None:
    """ParameterError unless ``algorithm`` (a supported simulator algorithm) has no
    projection (and, for FedAWE, no clipping)."""
    if algorithm.radius is not None:
        raise ParameterError(
            f"The 'algorithm' parameter of {owner} must have radius=None (a projection is not "
            f"expressible in a PEP). Got radius={algorithm.radius!r} instead."
        )
    if isinstance(algorithm, FedAWE):
        fedawe.check(algorithm, owner)


@declare(
    aggregator=Exemplified(
        Either(Having("init", "weights", "update"), Function()),
        lambda args: AverageParticipating(),
    ),
    mask=MASK,
)
def fedavg_weights(aggregator, mask: np.ndarray) -> np.ndarray:
    """FedAvg's weights :math:`q_{t,i}` ``[T, N]`` for ``mask [T, N]`` from the simulator's
    aggregator (stateless ``mask -> q`` or stateful ``init/weights/update``)."""
    m = torch.from_numpy(mask)
    if isinstance(aggregator, StatefulAggregator):
        state, rows = aggregator.init(1, m.shape[1]), []
        for t in range(m.shape[0]):
            rows.append(aggregator.weights(state, m[t : t + 1])[0])
            state = aggregator.update(state, m[t : t + 1])
        return torch.stack(rows).double().numpy()
    return aggregator(m).double().numpy()


@declare(algorithm=ALGORITHM, mask=MASK)
def participants(algorithm, mask: np.ndarray) -> np.ndarray:
    """The clients that do local work each round ``[T, N]``: the mask (all clients in a
    forced first round), restricted by FedLaAvg to its absent-longest selection."""
    m = torch.from_numpy(mask)
    rows = [algorithm.participants(m[t : t + 1], t) for t in range(m.shape[0])]
    if not isinstance(algorithm, FedLaAvg):
        return torch.cat(rows).numpy()
    last = torch.full((1, m.shape[1]), -1, dtype=torch.int64)
    chosen = []
    for t, row in enumerate(rows):
        pick = absent_longest(row, last, algorithm.clients_per_round)
        last = torch.where(pick, t, last)
        chosen.append(pick)
    return torch.cat(chosen).numpy()


@declare(algorithm=ALGORITHM, fs=FUNCTIONS, x0=POINT, mask=RUN_MASK)
def run(algorithm, fs, x0, mask: np.ndarray) -> list:
    """Server models :math:`x_0..x_T` (PEPit points) of ``algorithm`` on the clients'
    functions ``fs`` under ``mask [T, N]`` (for FedAWE a :class:`fedawe.Trajectory`, which
    also holds the client and auxiliary models)."""
    check_method(algorithm, "run")
    if isinstance(algorithm, FedAWE):
        return fedawe.run(algorithm, fs, x0, mask)
    n = len(fs)
    work = participants(algorithm, mask)
    q = fedavg_weights(algorithm.aggregator, work) if isinstance(algorithm, FedAvg) else None
    table: list = [None] * n  # latest update of every client (MIFA, FedLaAvg)
    models = [x0]
    x = x0
    for t in range(mask.shape[0]):
        rates = algorithm.client_rates(t)  # one rate, or one per local step (PerStep)
        rates = rates if isinstance(rates, tuple) else (float(rates),) * algorithm.local_steps
        server_lr = float(algorithm.server_rate(t))
        deltas = {}
        for i in np.flatnonzero(work[t]):
            y = x
            for lr in rates:
                g = fs[i].gradient(y)
                if algorithm.prox:
                    g = g + algorithm.prox * (y - x)
                y = y - lr * g
            deltas[int(i)] = y - x
        if q is not None:
            step = [q[t, i] * d for i, d in deltas.items()]
        else:
            table = [deltas.get(i, u) for i, u in enumerate(table)]
            step = [u / n for u in table if u is not None]
        if step:
            x = x + server_lr * sum(step[1:], step[0])
        models.append(x)
    return models
