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
* a paper's method (:data:`fedtheory.pep.registry.METHODS`, from the ``pep`` modules its
  record names): its own rounds, or these with its own selection of the clients that work
  (:func:`rounds`).

The server projection of CA-Fed (3) (``radius``) is not expressible and refused.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.constraints import (
    Array,
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
from fedtheory.pep import registry
from fedtheory.pep._pepit import FUNCTIONS, POINT
from fedtheory.sim.aggregation import AverageParticipating, StatefulAggregator
from fedtheory.sim.fedavg import FedAvg
from fedtheory.sim.mifa import MIFA

SHARED = (FedAvg, MIFA)
"""The simulator's own methods a PEP expresses; the papers' join through their records."""


class Supported:
    """The classes a PEP expresses, read at each call: :data:`SHARED` and every registered
    paper's methods (:data:`fedtheory.pep.registry.METHODS`)."""

    def __iter__(self):
        return iter((*SHARED, *registry.methods()))

    def __contains__(self, kind) -> bool:
        return kind in SHARED or kind in registry.methods()


SUPPORTED = Supported()
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
    projection (and passes its method's own check: :attr:`fedtheory.pep.registry.Method.check`)."""
    if algorithm.radius is not None:
        raise ParameterError(
            f"The 'algorithm' parameter of {owner} must have radius=None (a projection is not "
            f"expressible in a PEP). Got radius={algorithm.radius!r} instead."
        )
    method = registry.methods().get(type(algorithm))
    if method is not None and method.check is not None:
        method.check(algorithm, owner)


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
    forced first round), restricted by a paper's method to its own selection
    (:attr:`fedtheory.pep.registry.Method.participants`)."""
    method = registry.methods().get(type(algorithm))
    if method is not None:
        return method.participants(algorithm, mask)
    return available(algorithm, mask)


@declare(algorithm=ALGORITHM, mask=MASK)
def available(algorithm, mask: np.ndarray) -> np.ndarray:
    """The mask ``[T, N]`` as the algorithm's rounds see it: all clients in a forced first
    round (the simulator's ``participants``), before any selection of its own."""
    m = torch.from_numpy(mask)
    return torch.cat([algorithm.participants(m[t : t + 1], t) for t in range(m.shape[0])]).numpy()


@declare(algorithm=ALGORITHM, fs=FUNCTIONS, x0=POINT, mask=RUN_MASK)
def run(algorithm, fs, x0, mask: np.ndarray) -> list:
    """Server models :math:`x_0..x_T` (PEPit points) of ``algorithm`` on the clients'
    functions ``fs`` under ``mask [T, N]`` (a paper's method may return a list that also
    holds its client models: :attr:`fedtheory.pep.registry.Method.run`)."""
    check_method(algorithm, "run")
    method = registry.methods().get(type(algorithm))
    if method is not None:
        return method.run(algorithm, fs, x0, mask)
    work = participants(algorithm, mask)
    q = fedavg_weights(algorithm.aggregator, work) if isinstance(algorithm, FedAvg) else None
    return rounds(algorithm, fs, x0, work, q)


@declare(
    algorithm=ALGORITHM,
    fs=FUNCTIONS,
    x0=POINT,
    work=RUN_MASK,
    q=Array(shape=("work[0]", "work[1]"), none=True),
)
def rounds(algorithm, fs, x0, work: np.ndarray, q: np.ndarray | None = None) -> list:
    """Server models :math:`x_0..x_T` when the clients of ``work [T, N]`` train from the
    server model: with weights ``q [T, N]`` their updates are summed with these weights
    (FedAvg), without, every client's latest update is averaged over all clients (MIFA's
    table; a paper's method with its own selection of ``work`` reuses it)."""
    n = len(fs)
    table: list = [None] * n  # latest update of every client (MIFA, FedLaAvg)
    models = [x0]
    x = x0
    for t in range(work.shape[0]):
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
