r"""The pure bandit view of client selection (no model): run a selector over a success matrix
and measure what E3CS's analysis talks about (Huang et al., E3CS, eqs. (8), (25)-(26)).

``success[r, t, i]`` is :math:`x_{i,t}`: client :math:`i` would return its model in round
:math:`t` if selected (e.g. a Bernoulli(:math:`\rho_i`) availability mask from
:mod:`fedtheory.availability`). The selector only sees :math:`x_{i,t}` for the clients it
selected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from fedtheory import rng
from fedtheory.budget import check_bytes, check_seconds, seconds
from fedtheory.constraints import Array, Instance, Mask, declare, trusted
from fedtheory.errors import ParameterError
from fedtheory.optim.e3cs import BestFixedAllocation, best_fixed_allocation, per_round_oracle
from fedtheory.sim.selection.policies import Selector

SELECTION_BYTES = 26
"""Bytes a cell ``[R, T, K]`` of :func:`run_selection`'s peak (selections, probabilities and
the records computed from them)."""

__all__ = ["SelectionRecord", "run_selection"]


@dataclass(frozen=True)
class SelectionRecord:
    r"""Result of :func:`run_selection`.

    Attributes
    ----------
    name : str
        The selector's name.
    selected : ndarray [R, T, K] bool
        :math:`\mathbb 1_{i\in A_t}`.
    prob : ndarray [R, T, K]
        Inclusion probabilities :math:`p_{i,t}` the selector announced (nan: unknown, pow-d).
    success : ndarray [R, T, K] bool
        The success matrix :math:`x_{i,t}` that was used.
    cep : ndarray [R, T]
        Realised cumulative effective participation :math:`\sum_{s\le t}\sum_{i\in A_s}x_{i,s}`
        (E3CS §VI-B).
    expected_cep : ndarray [R, T]
        :math:`\sum_{s\le t}\sum_ip_{i,s}x_{i,s}`, the quantity of (26); it is the conditional
        mean of the realised CEP only with an exact-marginal sampler.
    best_fixed : BestFixedAllocation
        The comparator of Def. 1 with a fixed :math:`q^*` (its ``cep`` is
        :math:`\mathrm{CEP}^*_T`, ``[R]``).
    oracle_cep : ndarray [R]
        CEP of the per-round oracle (dynamic comparator).
    """

    name: str
    selected: np.ndarray
    prob: np.ndarray
    success: np.ndarray
    cep: np.ndarray
    expected_cep: np.ndarray
    best_fixed: BestFixedAllocation
    oracle_cep: np.ndarray

    def __repr__(self) -> str:
        reps, rounds, num_clients = self.selected.shape
        return (
            f"SelectionRecord({self.name}, R={reps}, T={rounds}, K={num_clients}, "
            f"mean CEP {self.cep[:, -1].mean():.1f}, mean regret {self.regret.mean():.1f})"
        )

    @property
    def selection_counts(self) -> np.ndarray:
        """Times each client was selected, ``[R, K]``."""
        return self.selected.sum(axis=1)

    @property
    def success_counts(self) -> np.ndarray:
        """Times each client was selected and succeeded, ``[R, K]``."""
        return (self.selected & self.success).sum(axis=1)

    @property
    def regret(self) -> np.ndarray:
        r"""Measured regret (26), :math:`\mathrm{CEP}^*_T-\sum_t\sum_ip_{i,t}x_{i,t}`, ``[R]``."""
        return self.best_fixed.cep - self.expected_cep[:, -1]

    @property
    def realised_regret(self) -> np.ndarray:
        r""":math:`\mathrm{CEP}^*_T` minus the realised CEP, ``[R]``."""
        return self.best_fixed.cep - self.cep[:, -1]

    @property
    def dynamic_regret(self) -> np.ndarray:
        """Per-round oracle CEP minus ``expected_cep`` at ``T``, ``[R]``."""
        return self.oracle_cep - self.expected_cep[:, -1]


def _quota_cap(args) -> float:
    """The largest quota :math:`k/K` of the selector's ``k`` (E3CS Def. 1)."""
    return getattr(args["selector"], "k", 0) / np.shape(args["success"])[-1]


@declare(
    "seed",
    selector=Instance(Selector),
    success=Mask(ndim=3, min_size=1),  # a bool matrix checked without a wider copy
    sigma=Array(shape=("success[1]",), low=0.0, high=_quota_cap, scalar=True, none=True),
)
def run_selection(selector: Selector, success, *, seed: int = 0, sigma=None) -> SelectionRecord:
    r"""Run ``selector`` on the success matrix ``success [R, T, K]`` (all replicates at once).

    Round :math:`t`'s selection randomness is ``rng.numpy_rng(seed, t, SELECTION)``.
    The comparators use the quotas ``sigma`` (float or ``[T]``; default: the selector's own
    ``sigma`` if it has one, else 0).

    Examples
    --------
    >>> from fedtheory.availability import TwoStateMarkov
    >>> from fedtheory.sim.selection.policies import E3CS
    >>> x = TwoStateMarkov(np.linspace(0.1, 0.9, 10), 0.0).sample(200, replicates=4, seed=0)
    >>> rec = run_selection(E3CS(3, eta=0.5), x, seed=0)
    >>> rec.selection_counts.sum(axis=1)
    array([600, 600, 600, 600])
    """
    owner, x = "run_selection", success  # [R, T, K]
    if selector.needs_losses:
        raise ParameterError(
            f"The 'selector' parameter of {owner} must not need client losses (no model is "
            f"simulated here). Got {selector!r} instead; use SelectedFedAvg with simulate."
        )
    check_bytes(SELECTION_BYTES * x.size, owner, fixes="fewer rounds, replicates or clients",
                what=f"selections [{', '.join(map(str, x.shape))}]")  # fmt: skip
    check_seconds(seconds(rounds=x.shape[1], cells=x.size), owner, fixes="fewer rounds",
                  what=f"{x.shape[1]} rounds of {x.shape[0]} x {x.shape[2]} clients")  # fmt: skip
    reps, rounds, num_clients = x.shape
    xt = torch.from_numpy(x)
    state = selector.init(reps, num_clients)
    selected = torch.empty(reps, rounds, num_clients, dtype=torch.bool)
    prob = torch.empty(reps, rounds, num_clients, dtype=torch.float64)
    with trusted():  # the rounds' arguments are built here, checked once above
        for t in range(rounds):
            choice = selector.select(state, t, rng.numpy_rng(seed, t, rng.SELECTION))
            state = selector.update(state, t, choice, xt[:, t])
            selected[:, t], prob[:, t] = choice.selected, choice.prob
    sel, pr = selected.numpy(), prob.numpy()
    quota = getattr(selector, "sigma", 0.0) if sigma is None else sigma
    return SelectionRecord(
        name=selector.name,
        selected=sel,
        prob=pr,
        success=x,
        cep=np.cumsum((sel & x).sum(axis=2), axis=1),
        expected_cep=np.cumsum((pr * x).sum(axis=2), axis=1),
        best_fixed=best_fixed_allocation(x, selector.k, quota),
        oracle_cep=per_round_oracle(x, selector.k, quota).sum(axis=-1),
    )
