r"""The protocol every simulated algorithm follows (optax/FedJAX style ``init``/``step``),
and the client/server training configuration the algorithms of this package share.

An algorithm keeps everything it remembers between rounds in an explicit, immutable state
record whose field ``w`` is the server model ``[R, d]``; per-client server state (weights,
stored updates, correction variables) lives in further fields with shapes ``[R, N, ...]``.
``step`` is a pure function of ``(state, mask, t, generator)``.

Two optional state fields are read by :func:`fedtheory.sim.simulate` for the run record:
``participants [R, N]`` (bool: the clients that did local work in the last round, when it
differs from the availability mask, e.g. FedLaAvg's selection or a forced full first round)
and ``weights [R, N]`` (the aggregation weights :math:`q_{t,k}` applied in the last round).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import torch

from fedtheory.constraints import (
    VOCABULARY,
    Bool,
    Constraint,
    Generator,
    Instance,
    Mask,
    Real,
    Size,
    Tensor,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import _sum_per_replicate
from fedtheory.sim.local import ball_projection, sgd_updates
from fedtheory.sim.optimizer import (
    TRAINING_BUFFERS,
    SGDState,
    Training,
    TrainingState,
    local_training,
    sgd_init,
    sgd_step,
    training_init,
)
from fedtheory.sim.schedules import PerStep, Schedule, StepSize, as_schedule


@runtime_checkable
class AlgorithmState(Protocol):
    w: torch.Tensor  # [R, d] server model of every replicate


INIT = dict(
    problem=Instance(FederatedProblem),
    w0=Tensor(dtype="floating", shape=(None, "problem.dim")),
)
"""The declared arguments of an algorithm's ``init``: the problem and the initial models
``w0 [R, d]``."""


@declare(state=Instance(type))
def round_arguments(state: type) -> dict[str, Constraint]:
    """The declared arguments of an algorithm's ``step``: the problem, its ``state`` (an
    instance of this type), round ``t``'s availability ``mask [R, N]`` (``torch.bool``),
    ``t`` and the generator of the round's gradient noise."""
    return dict(
        problem=Instance(FederatedProblem),
        state=Instance(state),
        mask=Mask(tensor=True, shape=("state.w[0]", "problem.num_clients")),
        t=VOCABULARY["t"],
        generator=Generator(none=True),
    )


def _weighted_sum(q: torch.Tensor, pairs: gather.Pairs, values: torch.Tensor) -> torch.Tensor:
    r""":math:`\sum_kq_kv_k` ``[R, d]`` of the rows ``values [M, d]`` of ``pairs`` with
    weights ``q [R, N]`` (padding rows add exact zeros, whatever their weight)."""
    rep, cli = pairs.rep, pairs.cli
    weighted = gather.where_valid(q[rep, cli, None] * values, pairs)
    return _sum_per_replicate(weighted, rep, cli, tuple(q.shape))


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


LOCAL_TRAINING = dict(
    local_steps=Size(),
    prox=Real(0.0),
    radius=Real(0.0, low_open=True, none=True),
    full_first_round=Bool(),
    training=Instance(Training, none=True),
)
"""The declared fields of :class:`LocalTraining` (every algorithm's constructor has them);
``lr`` and ``server_lr`` (a rate or a schedule) are checked by ``as_schedule``."""


ROUND = dict(
    problem=Instance(FederatedProblem),
    w=Tensor(dtype="floating", shape=(None, "problem.dim")),
    mask=Mask(tensor=True, shape=("w[0]", "problem.num_clients")),
    t=VOCABULARY["t"],
    generator=Generator(none=True),
)
"""The declared arguments of a round of :class:`LocalTraining`: the server models
``w [R, d]`` (finite), round ``t``'s ``mask [R, N]`` and the generator (the simulator's
rounds run them trusted, unchecked)."""
CLIENT_MODELS = Tensor(dtype="floating", shape=(..., "problem.dim"), ndim=(2, 3))
"""The models local training starts from: ``w [R, d]``, or one per client ``[R, N, d]``."""
WEIGHTS = Tensor(dtype="floating", shape=("w[0]", "problem.num_clients"))
"""A round's aggregation weights ``q [R, N]``."""


@declare(**LOCAL_TRAINING)
@dataclass(frozen=True, kw_only=True)
class LocalTraining:
    r"""Configuration shared by the algorithms: client and server side of one round.

    Parameters
    ----------
    local_steps : int
        :math:`E` local mini-batch SGD steps (FedAU's :math:`I`, FedLaAvg's :math:`C`).
    lr : float, schedule or PerStep
        Client rate :math:`\eta_l` (or :math:`\gamma`): constant, ``t -> eta_t`` of the
        round :math:`t` (0-based; the same rate for the round's :math:`E` local steps), or
        :class:`~fedtheory.sim.schedules.PerStep`, one rate per local step (of the global
        SGD step :math:`s=tE+k`, or of :math:`(t,k)`; plain SGD steps only).
    server_lr : float or schedule
        Server rate :math:`\eta_s` (FedAU :math:`\eta`, MimiC :math:`\eta_g^t`), constant or
        ``t -> eta_t`` of the round.
    prox : float
        FedProx proximal coefficient :math:`\mu_{\rm prox}\ge0` (0: plain SGD).
    radius : float, optional
        Project the server model onto the ball of this radius around 0 (CA-Fed (3)).
    full_first_round : bool
        Every client participates in round 0, whatever the mask (MimiC's initialisation;
        the MimiC code does it for every algorithm).
    training : Training, optional
        Momentum, weight decay and epochs at clients and server
        (:mod:`fedtheory.sim.optimizer`); default plain SGD steps, (2)-(3) as written.
    """

    local_steps: int = 1
    lr: StepSize = 0.1
    server_lr: StepSize = 1.0
    prox: float = 0.0
    radius: float | None = None
    full_first_round: bool = False
    training: Training | None = None
    client_lr: Schedule = field(init=False, repr=False, compare=False)
    server_rate: Schedule = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if not isinstance(getattr(self, "name", owner), str):
            raise ParameterError(
                f"The 'name' parameter of {owner} must be a string. Got {self.name!r} instead."
            )
        object.__setattr__(self, "client_lr", as_schedule(self.lr, "lr", owner))
        object.__setattr__(self, "server_rate", as_schedule(self.server_lr, "server_lr", owner))
        if isinstance(self.server_lr, PerStep):
            raise ParameterError(
                f"The 'server_lr' parameter of {owner} must be a rate or a schedule of the round "
                "(the server steps once per round). Got a PerStep schedule instead."
            )
        if isinstance(self.lr, PerStep) and not (self.training is None or self.training.plain):
            raise ParameterError(
                f"The 'lr' parameter of {owner} must be a rate or a schedule of the round with an "
                "optimiser 'training' (PerStep rates are plain local SGD steps). Got a PerStep "
                "schedule instead."
            )

    @declare("t")
    def client_rates(self, t: int) -> float | tuple[float, ...]:
        r"""The client rate of round ``t``'s :math:`E` local steps: one :math:`\eta_t` (a
        rate or a schedule of the round) or one per step (:class:`~fedtheory.sim.schedules.
        PerStep`: step :math:`k` at the global SGD step :math:`tE+k`)."""
        lr = self.client_lr
        return lr.rates(t, self.local_steps) if isinstance(lr, PerStep) else lr(t)

    @declare("t", mask=Mask(tensor=True, ndim=2))
    def participants(self, mask: torch.Tensor, t: int) -> torch.Tensor:
        """The clients that work in round ``t``: ``mask [R, N]``, or all in a forced round 0."""
        if self.full_first_round and t == 0:
            return torch.ones_like(mask, dtype=torch.bool)
        return mask.to(torch.bool)

    @declare(**{**ROUND, "w": CLIENT_MODELS}, finite_result=True)
    def local_updates(
        self,
        problem: FederatedProblem,
        w: torch.Tensor,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None,
    ) -> tuple[gather.Pairs, torch.Tensor]:
        """The participating pairs of ``mask [R, N]`` (:func:`~fedtheory.sim._gather.pairs`)
        and their updates ``Delta [M, d]``, each from its replicate's model ``w [R, d]``, or
        from its own model where ``w [R, N, d]`` holds one per client (FedAWE). The cost
        follows the number of participants, not N. In a static round the pairs fill a fixed
        capacity, the padding rows of ``Delta`` are zero and the local steps are batched
        torch operations that read nothing back from the device."""
        pairs = gather.pairs(mask, everyone=self.full_first_round and t == 0)
        rep, cli = pairs.rep, pairs.cli
        if pairs.valid is None and rep.numel() == 0:  # the default round: nobody works
            return pairs, w.new_zeros(0, w.shape[-1])
        start = w[rep] if w.dim() == 2 else w[rep, cli]  # [M, d]
        delta = sgd_updates(problem, start, cli, steps=self.local_steps, lr=self.client_rates(t),
                            prox=self.prox, generator=generator,
                            fused=pairs.valid is None)  # fmt: skip
        return pairs, gather.where_valid(delta, pairs)  # padding rows: exact zeros

    @declare(**ROUND, q=WEIGHTS, finite_result=True)
    def weighted_round(
        self,
        problem: FederatedProblem,
        w: torch.Tensor,
        q: torch.Tensor,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None,
    ) -> torch.Tensor:
        r"""The pairs of ``mask [R, N]`` train locally (:meth:`local_updates`), then
        :math:`w_{t+1}=\mathrm{Proj}_W(w_t+\eta_s(t)\sum_kq_k\Delta_t^k)` with weights
        ``q [R, N]`` (read on ``mask`` only): the next models ``[R, d]``."""
        pairs, delta = self.local_updates(problem, w, mask, t, generator)
        return self.server_update(w, _weighted_sum(q, pairs, delta), t)

    def _most_workers(self, replicates: int) -> int | None:
        """The most (replicate, client) pairs that can work in a round of ``replicates``
        replicates besides a forced full first round (a static round's capacity needs no
        more), or None: as many as are available."""
        return None

    @declare("t", w=Tensor(dtype="floating", ndim=2), v=Tensor(dtype="floating", like="w"),
             finite_result=True)  # fmt: skip
    def server_update(self, w: torch.Tensor, v: torch.Tensor, t: int) -> torch.Tensor:
        r""":math:`w_{t+1}=\mathrm{Proj}_W(w_t+\eta_s(t)\,v_t)` for ``w, v [R, d]``."""
        w_next = w + self.server_rate(t) * v
        return w_next if self.radius is None else ball_projection(w_next, self.radius)

    @declare(**INIT)
    def training_init(self, problem: FederatedProblem, w0: torch.Tensor) -> TrainingState | None:
        """Empty optimiser buffers for ``w0 [R, d]``, or None for plain SGD steps."""
        if self.training is None or self.training.plain:
            return None
        return training_init(problem.num_clients, w0)

    @declare(**ROUND, q=WEIGHTS, opt=TRAINING_BUFFERS, finite_result=True)
    def trained_round(
        self,
        problem: FederatedProblem,
        w: torch.Tensor,
        q: torch.Tensor,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None,
        opt: TrainingState | None,
    ) -> tuple[torch.Tensor, TrainingState | None]:
        r""":meth:`weighted_round` with the optimiser of :attr:`training` and its buffers
        ``opt``: the pairs of ``mask [R, N]`` train (:func:`~fedtheory.sim.optimizer.
        local_training`), the server steps on the gradient :math:`-\sum_kq_k\Delta^k` in
        the replicates with a working client; returns the next models ``[R, d]`` and
        buffers."""
        if opt is None:
            return self.weighted_round(problem, w, q, mask, t, generator), None
        pairs = gather.pairs(mask, everyone=self.full_first_round and t == 0)
        rep, cli = pairs.rep, pairs.cli
        if pairs.valid is None and rep.numel() == 0:
            return w, opt
        tr, client = self.training, opt.client
        start = (
            SGDState(client.buffer[rep, cli], client.started[rep, cli])
            if tr.persistent
            else sgd_init((rep.numel(),), w.shape[-1], w)
        )
        delta, after = local_training(problem, w[rep], cli, start, steps=self.local_steps,
                                      lr=self.client_rates(t), prox=self.prox, training=tr,
                                      generator=generator)  # fmt: skip
        if tr.persistent:  # a padding row writes its client's buffers back unchanged
            buffer = client.buffer.index_put(
                (rep, cli), gather.where_valid(after.buffer, pairs, start.buffer)
            )
            started = client.started.index_put(
                (rep, cli), gather.where_valid(after.started, pairs, start.started)
            )
            client = SGDState(buffer, started)
        v = _weighted_sum(q, pairs, delta)  # [R, d]
        w_next, server = sgd_step(
            w, -v, opt.server, lr=self.server_rate(t), opt=tr.server, active=mask.any(-1)
        )
        if self.radius is not None:
            w_next = ball_projection(w_next, self.radius)
        if pairs.valid is not None:  # the default round returns early when nobody works
            w_next = torch.where(mask.any(), w_next, w)
        return w_next, TrainingState(client, server)
