r"""Where the simulator's tensors live: one torch device, given once.

:func:`fedtheory.sim.simulate` takes ``device=`` and puts the models, the algorithms'
per-client state, the availability masks and the local training there; problems keep their
data on the CPU and make one copy per (device, dtype) the first time a device asks for it
(:class:`PerDevice`); exact metrics are computed where the run is and returned as NumPy.

Random numbers are drawn where they are used (counter-based, :mod:`fedtheory.rng`): on a CUDA
device from CUDA generators seeded by ``(seed, t, stream)``, on the CPU as before. The law is
the same on every device, the numbers are not; runs that consume no randomness (full-batch
gradients on a fixed mask) agree across devices to rounding.
"""

from __future__ import annotations

from typing import Any

import torch

from fedtheory.constraints import Device, Text, declare

__all__ = ["check_device"]  # PerDevice, to_device: package helpers (no user input to check)


@declare(name=Text(), owner=Text())
def check_device(device: object, name: str, owner: str) -> torch.device:
    """``device`` (``None`` = CPU, a string such as ``"cuda"`` or ``"cuda:1"``, or a
    ``torch.device``) as a ``torch.device`` that this machine has, else ParameterError
    (the :class:`~fedtheory.constraints.Device` kind's check)."""
    return Device().check(device, name, owner, {})


class PerDevice:
    """A value of CPU tensors (a tensor or a tuple of them) and its copies on other
    devices, each made once: constant data that a problem or an aggregation rule applies
    to tensors on any device."""

    def __init__(self, value: Any) -> None:
        self._copies: dict[torch.device, Any] = {torch.device("cpu"): value}

    def on(self, device: torch.device) -> Any:
        """The value on ``device`` (the CPU original or a cached copy)."""
        if device not in self._copies:
            self._copies[device] = to_device(self._copies[torch.device("cpu")], device)
        return self._copies[device]


def to_device(value: Any, device: torch.device) -> Any:
    """Tensors in ``value`` (a tensor, ``None``, or a tuple / NamedTuple of them, nested)
    moved to ``device``; everything else unchanged."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple):
        moved = [to_device(v, device) for v in value]
        return type(value)(*moved) if hasattr(value, "_fields") else tuple(moved)
    return value
