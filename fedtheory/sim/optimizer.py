r"""Client and server optimisers with ``torch.optim.SGD``'s semantics, and local training by
epochs: the training set-ups of the papers' experiments and of their authors' code.

**SGD with momentum and weight decay** (``torch.optim.SGD`` with ``dampening=0``,
``nesterov=False``): for a gradient :math:`g` at :math:`w`,

.. math:: d=g+\lambda_{\rm wd}\,w,\qquad
          b\leftarrow\begin{cases}d&\text{first step}\\ \mu b+d&\text{otherwise}\end{cases},
          \qquad w\leftarrow w-\eta\,b .

With :math:`\mu=\lambda_{\rm wd}=0` this is the plain step :math:`w\leftarrow w-\eta g` of the
papers' (2)-(3). The buffer :math:`b` is per-row state: ``[M, d]`` for client pairs,
``[R, d]`` for the server.

**Server.** The server treats :math:`-\sum_kq_k\Delta^k` as its gradient (CA-Fed's code,
``aggregator.py``: the gradient is the weighted mean of ``global - local``), so with plain SGD
:math:`w\leftarrow w+\eta_s\sum_kq_k\Delta^k`, CA-Fed (3). A replicate without any working
client makes no server step (the code returns early when no client is sampled).

**Local training** runs either ``steps`` mini-batch steps (the problem's ``grad``) or
``epochs`` passes over the client's data in mini-batches of ``batch_size`` (a shuffled data
loader without ``drop_last``: the last batch of a pass is smaller when the batch size does not
divide :math:`n_k`, and each batch's loss is its mean). Each pass's order is the argsort of
uniform keys ``[M, E, n_max]`` drawn in one call from the round's generator for the
participating pairs in (replicate, client) order (padding keys sort last), so the orders are a
pure function of the round's generator and the mask.

**Client buffers** persist across rounds (``persistent=True``, CA-Fed's code: each client keeps
its ``torch.optim.SGD`` while only the model is overwritten by the server's) or restart every
round (``persistent=False``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from fedtheory.budget import check_bytes, check_seconds, seconds
from fedtheory.constraints import (
    VOCABULARY,
    Array,
    Bool,
    Fields,
    Generator,
    Indices,
    Instance,
    Mask,
    Option,
    Real,
    Size,
    Tensor,
    checking,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.local import step_seconds

LOCAL_MODES = ("steps", "epochs")


@declare(momentum=Real(0.0, 1.0, high_open=True), weight_decay=Real(0.0, 1e6))
@dataclass(frozen=True, kw_only=True)
class SGD:
    r"""``torch.optim.SGD``'s momentum :math:`\mu\in[0,1)` and weight decay
    :math:`\lambda_{\rm wd}\ge0` (the step size comes from the algorithm's schedule).

    Examples
    --------
    >>> SGD(momentum=0.9, weight_decay=1e-2).plain
    False
    """

    momentum: float = 0.0
    weight_decay: float = 0.0

    @property
    def plain(self) -> bool:
        """Whether this is the plain step :math:`w\\leftarrow w-\\eta g`."""
        return self.momentum == 0.0 and self.weight_decay == 0.0


class SGDState(NamedTuple):
    buffer: torch.Tensor  # [..., d] momentum buffer b
    started: torch.Tensor  # [...] bool: b holds a previous step's value


LIKE = Tensor(dtype="floating", finite=False, min_size=0)
"""A tensor whose dtype and device new buffers take (its entries are not read)."""


def _state(like: str) -> Fields:
    """Buffers ``[..., d]`` like the models ``like`` (finite) and their ``started`` flags."""
    return Fields(SGDState, buffer=Tensor(dtype="floating", like=like),
                  started=Mask(tensor=True))  # fmt: skip


@declare(shape=Array(ndim=1, integer=True, low=0, min_size=0), dim=Size(), like=LIKE)
def sgd_init(shape: tuple[int, ...], dim: int, like: torch.Tensor) -> SGDState:
    """Empty buffers ``[*shape, dim]`` (dtype and device of ``like``)."""
    shape = tuple(int(n) for n in shape)
    check_bytes(9 * math.prod(shape) * dim, "sgd_init", what=f"buffers {[*shape, dim]}",
                fixes="fewer rows or a smaller dimension")  # fmt: skip
    buffer = like.new_zeros(*shape, dim)
    return SGDState(buffer, torch.zeros(shape, dtype=torch.bool, device=like.device))


@declare(
    "lr",
    w=Tensor(dtype="floating", shape=(..., None)),
    g=Tensor(dtype="floating", like="w"),
    state=_state("w"),
    opt=Instance(SGD),
    active=Mask(tensor=True, none=True),
    finite_result=True,
)
def sgd_step(
    w: torch.Tensor,
    g: torch.Tensor,
    state: SGDState,
    *,
    lr: float,
    opt: SGD,
    active: torch.Tensor | None = None,
) -> tuple[torch.Tensor, SGDState]:
    r"""One step of ``torch.optim.SGD`` (module docstring) on the rows of ``w, g [..., d]``;
    rows where ``active [...]`` is False keep their model and buffer."""
    d = g if opt.weight_decay == 0.0 else g + opt.weight_decay * w
    if opt.momentum == 0.0:
        step = d
        buffer, started = state.buffer, state.started
    else:
        step = torch.where(state.started[..., None], opt.momentum * state.buffer + d, d)
        buffer, started = step, torch.ones_like(state.started)
    w_next = w - lr * step
    if active is None:
        return w_next, SGDState(buffer, started)
    keep = active[..., None]
    return torch.where(keep, w_next, w), SGDState(
        torch.where(keep, buffer, state.buffer), state.started | (active & started)
    )


@declare(
    client=Instance(SGD),
    server=Instance(SGD),
    local=Option(*LOCAL_MODES),
    batch_size=Size(none=True),
    persistent=Bool(),
)
@dataclass(frozen=True, kw_only=True)
class Training:
    r"""The optimiser set-up of one experiment: client and server :class:`SGD`, local
    training by ``"steps"`` or ``"epochs"`` (``local_steps`` of the algorithm counts either),
    the mini-batch size of an epoch (default: the problem's ``batch_size``) and whether client
    buffers persist across rounds.

    Examples
    --------
    >>> code = Training(client=SGD(momentum=0.9, weight_decay=1e-2),
    ...                 server=SGD(momentum=0.9, weight_decay=1e-2), local="epochs")
    >>> code.local, Training().plain
    ('epochs', True)
    """

    client: SGD = field(default_factory=SGD)
    server: SGD = field(default_factory=SGD)
    local: str = "steps"
    batch_size: int | None = None
    persistent: bool = True

    @property
    def plain(self) -> bool:
        """Plain SGD steps at both ends: the papers' (2)-(3), no state to carry."""
        return self.client.plain and self.server.plain and self.local == "steps"


class TrainingState(NamedTuple):
    client: SGDState  # buffer [R, N, d], started [R, N]
    server: SGDState  # buffer [R, d], started [R]


class _Buffers(Fields):
    """The optimiser buffers a round of ``self`` (a :class:`~fedtheory.sim.algorithm.
    LocalTraining`) carries: ``None`` for plain SGD steps, else a :class:`TrainingState`
    for the models ``w [R, d]`` of ``problem`` (finite buffers)."""

    def __init__(self):
        client = Fields(
            SGDState,
            buffer=Tensor(dtype="floating", shape=("w[0]", "problem.num_clients", "problem.dim")),
            started=Mask(tensor=True, shape=("w[0]", "problem.num_clients")),
        )
        server = Fields(
            SGDState,
            buffer=Tensor(dtype="floating", like="w"),
            started=Mask(tensor=True, shape=("w[0]",)),
        )
        super().__init__(TrainingState, none=True, client=client, server=server)

    @staticmethod
    def _plain(args) -> bool:
        training = getattr(args.get("self"), "training", None)
        return training is None or training.plain

    def describe(self, args):
        return "None (plain SGD steps)" if self._plain(args) else super().describe(args)

    def convert(self, value, args):
        return None if self._plain(args) else super().convert(value, args)

    def example(self, args):
        return None if self._plain(args) else super().example(args)


TRAINING_BUFFERS = _Buffers()
"""The declared optimiser buffers ``opt`` of a round (``None`` for plain SGD steps)."""


@declare("num_clients", w0=Tensor(dtype="floating", ndim=2))
def training_init(num_clients: int, w0: torch.Tensor) -> TrainingState:
    """Empty client ``[R, N, d]`` and server ``[R, d]`` buffers for models ``w0 [R, d]``."""
    r, d = w0.shape
    return TrainingState(sgd_init((r, num_clients), d, w0), sgd_init((r,), d, w0))


@declare(pairs=Size(0), epochs=Size(), n_max=Size(), generator=Generator(), like=LIKE)
def epoch_keys(
    pairs: int, epochs: int, n_max: int, generator: torch.Generator, like: torch.Tensor
) -> torch.Tensor:
    """Uniform keys ``[M, E, n_max]`` (float64) of one round's shuffles, one call to
    ``generator`` (each pass shuffles the clients' data)."""
    check_bytes(8 * pairs * epochs * n_max, "epoch_keys", what=f"keys [{pairs}, {epochs}, {n_max}]",
                fixes="fewer pairs or epochs")  # fmt: skip
    return torch.rand(
        (pairs, epochs, n_max), generator=generator, dtype=torch.float64, device=like.device
    )


@declare(
    keys=Tensor(ndim=3, low=0.0, high=1.0),
    counts=Tensor(dtype="int64", shape=("keys[0]",), low=0, high="keys[2]", min_size=0),
    batch_size=Size(),
)
def epoch_batches(
    keys: torch.Tensor, counts: torch.Tensor, batch_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The mini-batches of the passes: ``keys [M, E, n_max]``, ``counts [M]`` ->
    sample indices ``[M, E, J, B]`` and weights ``[M, E, J, B]`` with
    :math:`J=\lceil n_{\max}/B\rceil`. Batch :math:`j` of a pass holds positions
    :math:`jB,\dots,jB+B-1` of the shuffled order; weights are :math:`1/|{\rm batch}|` on
    positions below :math:`n_k` and 0 elsewhere (a batch of all-zero weights is no step)."""
    m, e, n_max = keys.shape
    j = -(-n_max // batch_size)
    # indices and weights [M, E, J, B] (8 + 8 bytes), positions and masks [J B], [M, J B],
    # the shuffle's keys, order and sort buffer [M, E, n_max] (3 x 8 bytes)
    nbytes = (16 * m * e + 8 + m) * j * batch_size + 24 * m * e * n_max
    check_bytes(nbytes, "epoch_batches", what=f"batches [{m}, {e}, {j}, {batch_size}]",
                fixes=f"a batch size up to n_max ({n_max}) or fewer pairs or passes")  # fmt: skip
    pad = j * batch_size - n_max
    valid = torch.arange(n_max, device=keys.device)[None, :] < counts[:, None]  # [M, n_max]
    order = keys.masked_fill(~valid[:, None, :], 2.0).argsort(dim=-1, stable=True)
    order = torch.nn.functional.pad(order, (0, pad))  # [M, E, J B]
    position = torch.arange(j * batch_size, device=keys.device)  # [J B]
    inside = position[None, :] < counts[:, None]  # [M, J B]
    inside = inside.view(m, 1, j, batch_size).expand(m, e, j, batch_size)
    size = inside.sum(-1, keepdim=True).clamp_min(1)
    weight = inside.to(torch.float64).div_(size)  # one [M, E, J, B] buffer
    return order.view(m, e, j, batch_size), weight


LOCAL = dict(
    steps=VOCABULARY["steps"],
    lr=VOCABULARY["lr"],
    prox=VOCABULARY["prox"],
    generator=VOCABULARY["generator"],
    problem=Instance(FederatedProblem),
    w=Tensor(dtype="floating", shape=(None, "problem.dim"), min_size=0),
    clients=Indices("problem.num_clients", shape=("w[0]",), min_size=0),
    state=_state("w"),
    training=Instance(Training),
)
"""The declared arguments of local training: the pairs ``clients [M]`` from ``w [M, d]``
with buffers ``state``, ``steps`` steps (or epochs) of ``training``'s client optimiser."""


def _check_local(problem, w, clients, steps: int, training: Training, owner: str) -> None:
    """Local training by epochs needs a data-backed problem; the steps fit the time budget
    (not re-checked in the simulator's rounds)."""
    if not checking():
        return
    if training.local == "epochs" and not hasattr(problem, "data"):
        raise ParameterError(
            f"The 'problem' parameter of {owner} must hold data (a DataProblem) for local "
            f"training by epochs. Got {type(problem).__name__} instead."
        )
    n = int(problem.data.counts.max()) if training.local == "epochs" else 1
    check_seconds(seconds(rounds=steps * n, cells=steps * n * w.numel()), owner,
                  what=f"{steps} {training.local} of {w.shape[0]} pairs in dimension {w.shape[1]}",
                  fixes="fewer steps or pairs", units=steps * n, unit="step",
                  probe=lambda: step_seconds(problem, w, clients))  # fmt: skip


@declare(**LOCAL, finite_result=True)
def local_training(
    problem,
    w: torch.Tensor,
    clients: torch.Tensor,
    state: SGDState,
    *,
    steps: int,
    lr: float,
    prox: float,
    training: Training,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, SGDState]:
    r"""Updates ``Delta [M, d]`` of the pairs ``clients [M]`` from ``w [M, d]`` with buffers
    ``state`` (``[M, d]``, ``[M]``), and the buffers after training. ``steps`` counts
    mini-batch steps or epochs (:class:`Training`); FedProx's term adds
    :math:`\mu_{\rm prox}(y-w)` to each gradient."""
    _check_local(problem, w, clients, steps, training, "local_training")
    y = w.clone()
    if training.local == "steps":
        for _ in range(steps):
            g = problem.grad(y, clients, generator)
            if prox:
                g = g + prox * (y - w)
            y, state = sgd_step(y, g, state, lr=lr, opt=training.client)
        return y - w, state
    counts = torch.as_tensor(problem.data.counts, device=w.device)[clients]
    batch = training.batch_size or problem.batch_size or int(problem.data.counts.max())
    keys = epoch_keys(clients.numel(), steps, problem.data.counts.max(), generator, w)
    index, weight = epoch_batches(keys, counts, batch)
    for e in range(steps):
        for j in range(index.shape[2]):
            c = weight[:, e, j]  # [M, B]
            g = problem.indexed_grad(y, clients, index[:, e, j], c.to(y.dtype))
            if prox:
                g = g + prox * (y - w)
            y, state = sgd_step(y, g, state, lr=lr, opt=training.client, active=c.sum(-1) > 0)
    return y - w, state


@declare(**LOCAL, finite_result=True)
def local_training_loop(
    problem,
    w: torch.Tensor,
    clients: torch.Tensor,
    state: SGDState,
    *,
    steps: int,
    lr: float,
    prox: float,
    training: Training,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, SGDState]:
    """:func:`local_training` one pair and one sample index at a time (the readable
    reference; the same random draws, so the same numbers)."""
    _check_local(problem, w, clients, steps, training, "local_training_loop")
    mu, wd = training.client.momentum, training.client.weight_decay
    rows = [[w[m].clone(), state.buffer[m].clone(), bool(state.started[m])] for m in range(len(w))]

    def step(m: int, g: torch.Tensor) -> None:  # torch.optim.SGD on pair m
        y, b, s = rows[m]
        d = g + prox * (y - w[m]) + wd * y
        b = mu * b + d if s and mu > 0.0 else d
        rows[m] = [y - lr * b, b if mu > 0.0 else state.buffer[m], s or mu > 0.0]

    if training.local == "steps":
        for _ in range(steps):  # the batches of all pairs are drawn together, as in grad
            g = problem.grad(torch.stack([r[0] for r in rows]), clients, generator)
            for m in range(len(rows)):
                step(m, g[m])
    else:
        n = problem.data.counts
        batch = training.batch_size or problem.batch_size or int(n.max())
        keys = epoch_keys(clients.numel(), steps, n.max(), generator, w)
        for m, k in enumerate(clients.tolist()):
            for e in range(steps):
                order = sorted(range(n[k]), key=lambda i, e=e: float(keys[m, e, i]))
                for start in range(0, n[k], batch):
                    chosen = order[start : start + batch]
                    size = len(chosen)
                    idx = torch.tensor([chosen + [0] * (batch - size)])
                    c = w.new_tensor([[1.0 / size] * size + [0.0] * (batch - size)])
                    step(m, problem.indexed_grad(rows[m][0][None], clients[m : m + 1], idx, c)[0])
    if not rows:
        return w.new_zeros(w.shape), state
    buffer = torch.stack([r[1] for r in rows])
    started = torch.tensor([r[2] for r in rows], device=w.device)
    return torch.stack([r[0] for r in rows]) - w, SGDState(buffer, started)
