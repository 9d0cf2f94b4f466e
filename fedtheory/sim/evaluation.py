r"""The model a paper evaluates, when it is not the server model.

FedAWE (Xiang et al. 2024) keeps one model :math:`x_i^t` per client and states its
Corollaries 1-2 for :math:`\bar x^t=\frac1m\sum_{i=1}^mx_i^t`; the authors' code evaluates the
same average (``util.py``, ``evaluate(w_global, device, w_local)`` returns
``sum(w_local) / len(w_local)`` when the client models are given). :class:`ClientMean` wraps
such an algorithm so that the run records :math:`\bar x^t` as its iterate: the record's
metrics are then those of :math:`\bar x^t`, and the wrapped algorithm runs unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch

from fedtheory.constraints import Having, declare
from fedtheory.errors import ParameterError
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.algorithm import INIT, round_arguments


class ClientMeanState(NamedTuple):
    w: torch.Tensor  # [R, d] mean of the client models, x-bar^t
    inner: NamedTuple  # the wrapped algorithm's state (its server model in inner.w)
    participants: torch.Tensor | None = None  # [R, N] bool, forwarded for the run record
    weights: torch.Tensor | None = None  # [R, N], forwarded for the run record


@declare(algorithm=Having("init", "step"))
@dataclass(frozen=True)
class ClientMean:
    r"""Evaluate :math:`\bar x^t=\frac1m\sum_ix_i^t` of an algorithm whose state holds the
    client models ``x [R, N, d]`` (FedAWE).

    Examples
    --------
    >>> from fedtheory.sim import FedAWE
    >>> ClientMean(FedAWE(lr=0.1)).name
    'fedawe[x-bar]'
    """

    algorithm: object

    @property
    def name(self) -> str:
        return f"{self.algorithm.name}[x-bar]"

    def _wrap(self, inner) -> ClientMeanState:
        if getattr(inner, "x", None) is None:
            raise ParameterError(
                f"The 'algorithm' parameter of ClientMean must keep client models x [R, N, d] "
                f"in its state. Got {type(inner).__name__} instead."
            )
        return ClientMeanState(
            inner.x.mean(dim=1),
            inner,
            getattr(inner, "participants", None),
            getattr(inner, "weights", None),
        )

    @declare(**INIT, finite_result=True)  # the mean of huge client models may overflow
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> ClientMeanState:
        return self._wrap(self.algorithm.init(problem, w0))

    @declare(**round_arguments(ClientMeanState))
    def step(
        self,
        problem: FederatedProblem,
        state: ClientMeanState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> ClientMeanState:
        return self._wrap(self.algorithm.step(problem, state.inner, mask, t, generator))
