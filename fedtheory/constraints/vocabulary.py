"""Names that mean the same everywhere: :data:`VOCABULARY` maps a parameter name
(``rounds``, ``replicates``, ``num_clients``, ``seed``, ``device``, …) to its kind, so
``@declare("rounds", "seed")`` declares it without restating the kind."""

from __future__ import annotations

from fedtheory.constraints.kind import Constraint
from fedtheory.constraints.resources import Device
from fedtheory.constraints.scalars import Integer, Real, Size
from fedtheory.constraints.tensors import Generator

VOCABULARY: dict[str, Constraint] = {
    "rounds": Size(),
    "replicates": Size(),
    "num_clients": Size(),
    "dim": Size(),
    "steps": Size(),
    "local_steps": Size(),
    "seed": Integer(0),
    "start": Integer(0),
    "t": Integer(0),
    "lr": Real(0.0, low_open=True),
    "server_lr": Real(0.0, low_open=True),
    "prox": Real(0.0),
    "generator": Generator(none=True),
    "device": Device(),
    "max_seconds": Real(0.0, low_open=True, none=True),
}
"""Parameters that mean the same everywhere, declared by name: ``@declare("rounds",
"seed", lr=...)``. ``rounds``, ``replicates``, clients, dimensions and local steps are
sizes (integers in ``[1, MAX_SIZE]``); a seed, a first round ``start`` and a round index
``t`` are integers ``>= 0``; step sizes are positive and FedProx's coefficient ``prox`` is
``>= 0`` (CA-Fed §3.1); ``max_seconds`` is the time budget of a call
(:mod:`fedtheory.budget`)."""
