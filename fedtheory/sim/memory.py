r"""Server memory of the latest update of every client, with its running mean.

MIFA, FedVARP and FedLaAvg keep :math:`u_k` = the last update client :math:`k` reported
(0 before its first participation) and use :math:`\bar u=\frac1N\sum_ku_k` (the FedAU
authors' code, ``main.py``). Refreshing the rows of the :math:`M` participants updates the mean in
:math:`O(Md)`, so the cost follows the participants, not :math:`N`.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from fedtheory.budget import check_bytes
from fedtheory.constraints import Indices, Instance, Tensor, declare
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import _sum_per_replicate


class UpdateTable(NamedTuple):
    updates: torch.Tensor  # [R, N, d] latest update u_k of every client
    mean: torch.Tensor  # [R, d] (1/N) sum_k u_k


@declare("replicates", "num_clients", "dim", "device")
def empty_table(
    replicates: int, num_clients: int, dim: int, device: torch.device | None = None
) -> UpdateTable:
    """All stored updates zero: ``[R, N, d]`` and mean ``[R, d]`` (float64, on ``device``)."""
    r, n, d = replicates, num_clients, dim
    check_bytes(8 * r * d * (n + 1), "empty_table", what=f"a table [{r}, {n}, {d}]",
                fixes="fewer replicates, clients or dimensions")  # fmt: skip
    updates = torch.zeros(replicates, num_clients, dim, dtype=torch.float64, device=device)
    return UpdateTable(updates, torch.zeros(replicates, dim, dtype=torch.float64, device=device))


@declare(
    table=Instance(UpdateTable),
    rep=Indices("table.updates[0]", shape=(None,), min_size=0),
    cli=Indices("table.updates[1]", shape=("rep[0]",), min_size=0),
    delta=Tensor(dtype_of="table.updates", shape=("rep[0]", "table.updates[2]"), min_size=0),
)
def refresh(
    table: UpdateTable, rep: torch.Tensor, cli: torch.Tensor, delta: torch.Tensor
) -> tuple[UpdateTable, torch.Tensor]:
    r"""Store ``delta [M, d]`` as the latest update of pairs ``(rep [M], cli [M])``.

    Returns the new table and the previous rows ``u^{old} [M, d]``;
    :math:`\bar u\leftarrow\bar u+\frac1N\sum_{m}(\Delta_m-u_m^{old})`."""
    old = table.updates[rep, cli]  # [M, d]
    updates = table.updates.index_put((rep, cli), delta)
    n = table.updates.shape[1]
    mean = table.mean + _sum_per_replicate((delta - old) / n, rep, cli, tuple(updates.shape[:2]))
    return UpdateTable(updates, mean), old


def _refresh_pairs(
    table: UpdateTable, pairs: gather.Pairs, delta: torch.Tensor
) -> tuple[UpdateTable, torch.Tensor]:
    """:func:`refresh` with the rows ``delta [M, d]`` of gathered ``pairs``: a padding row
    (a static round, :mod:`fedtheory.sim._gather`) stores its client's update back, so that
    it changes neither the table nor the mean (``Delta - u^{old} = 0`` there)."""
    old = table.updates[pairs.rep, pairs.cli]
    return refresh(table, pairs.rep, pairs.cli, gather.where_valid(delta, pairs, old))
