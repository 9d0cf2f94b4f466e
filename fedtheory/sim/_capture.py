r"""A static round recorded once per capacity and replayed: a CUDA graph on CUDA.

A static round (:mod:`fedtheory.sim._gather`) of FedAvg, MIFA, FedVARP or MimiC with
constant step sizes launches
the same kernels on the same shapes every round; only the values of the state, the mask and
the round's random numbers change. :class:`ReplayedRound` records ``algorithm.step`` on
fixed input buffers once, then each round copies the state and the mask into them, reseeds
the one generator the recording reads to round ``t``'s seed and replays. A generator
registered with a CUDA graph reads its seed and offset when the graph is replayed, so the
replay draws what a freshly seeded generator draws in the eager round: the
per-``(seed, t)`` contract holds and the numbers are the eager static round's. The outputs
are the same tensors every round: whoever keeps one copies it before the next replay.

Off CUDA the recording is the step itself (a replay calls it on the buffers and copies the
result into the same output tensors), so that the buffers, the reseeding and the aliasing
of the outputs are tested on the CPU (``EAGER_ON_CPU``); the capture itself runs on CUDA
only, and was not run in the session that wrote it (no GPU).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from fedtheory.sim import _gather as gather
from fedtheory.sim.schedules import Constant

EAGER_ON_CPU = False
"""Replay static rounds off CUDA too, by calling the step (the tests' switch)."""

REPLAYED: set[type] = set()
"""The algorithms whose round reads ``t`` only through its step sizes (a recording bakes
in every Python number; FedLaAvg's last-seen rounds and FedAWE's echoes hold ``t`` itself,
CA-Fed's weights and the selectors read back) and reads nothing back: FedAvg, MIFA, FedVARP
and MimiC, each added by its own module (:func:`replayed`)."""


def replayed(cls: type) -> type:
    """Add the algorithm class ``cls`` to :data:`REPLAYED` (its own module calls this, so that
    this module names no algorithm); returns it."""
    REPLAYED.add(cls)
    return cls


def replayable(algorithm: object, device: torch.device, t: int) -> bool:
    """Whether round ``t`` of ``algorithm`` on ``device`` is replayed: one of
    :data:`REPLAYED` itself (FedAvg with any aggregator: a pure function of the mask) with
    constant client and server steps, plain SGD, after round 0; on CUDA (or the CPU with
    ``EAGER_ON_CPU``)."""
    return (
        (device.type == "cuda" or EAGER_ON_CPU)
        and type(algorithm) in REPLAYED
        and isinstance(algorithm.client_lr, Constant)
        and isinstance(algorithm.server_rate, Constant)
        and (algorithm.training is None or algorithm.training.plain)
        and t >= 1  # round 0 starts from the initial state, whose fields may be None
    )


class ReplayedRound:
    """``step(state, mask, flag) -> state`` recorded on buffers shaped like ``state`` and
    ``mask [R, N]`` (``flag``: the ``[]`` bool overflow flag of the static gather)."""

    def __init__(self, step: Callable, state, mask: torch.Tensor, generator) -> None:
        self.step, self.generator = step, generator
        leaves, self.spec = tree_flatten(state)
        self.inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in leaves]
        self.mask = mask.clone()
        self.flag = torch.zeros((), dtype=torch.bool, device=mask.device)
        self.graph = None
        if mask.device.type == "cuda":
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm-up: caches and the allocator, off capture
                self._step()
            torch.cuda.current_stream().wait_stream(side)
            self.graph = torch.cuda.CUDAGraph()
            self.graph.register_generator_state(generator)
            with torch.cuda.graph(self.graph):
                out = self._step()
        else:
            out = [x.clone() if isinstance(x, torch.Tensor) else x for x in self._step()]
        self.outputs = out

    def _step(self) -> list:
        state = tree_unflatten(self.inputs, self.spec)
        self.flag.zero_()
        leaves, spec = tree_flatten(self.step(state, self.mask, self.flag))
        if spec != self.spec:
            raise RuntimeError("a replayed round must return a state shaped like its input")
        return leaves

    def fits(self, state) -> bool:
        """Whether ``state`` has the recorded structure (tensors where tensors were)."""
        leaves, spec = tree_flatten(state)
        return spec == self.spec and all(
            isinstance(a, torch.Tensor) == isinstance(b, torch.Tensor)
            and (not isinstance(a, torch.Tensor) or (a.shape, a.dtype) == (b.shape, b.dtype))
            and (isinstance(a, torch.Tensor) or a == b)
            for a, b in zip(leaves, self.inputs, strict=True)
        )

    def __call__(self, state, mask: torch.Tensor, seed: int):
        """The next state (the output buffers) and the overflow flag, for ``state`` and
        ``mask`` with the generator seeded ``seed``."""
        for buffer, value in zip(self.inputs, tree_flatten(state)[0], strict=True):
            if isinstance(buffer, torch.Tensor):
                buffer.copy_(value)
        self.mask.copy_(mask)
        self.generator.manual_seed(seed)
        if self.graph is not None:
            self.graph.replay()
        else:
            for buffer, value in zip(self.outputs, self._step(), strict=True):
                if isinstance(buffer, torch.Tensor):
                    buffer.copy_(value)
        return tree_unflatten(self.outputs, self.spec), self.flag


def copied(state):
    """``state`` with every tensor copied (a state that must outlive the next replay)."""
    leaves, spec = tree_flatten(state)
    return tree_unflatten([x.clone() if isinstance(x, torch.Tensor) else x for x in leaves], spec)


def recorded_step(algorithm, problem, size: int, t: int, generator) -> Callable:
    """The step a :class:`ReplayedRound` records: round ``t`` of ``algorithm`` with the
    static gather of capacity ``size`` (``t`` only fixes the constant schedules' values)."""

    def step(state, mask, flag):
        with gather.static(size, flag):
            return algorithm.step(problem, state, mask, t, generator)

    return step
