r"""Client selectors for volatile clients: E3CS and its baselines FedCS, Random and pow-d
(Huang et al., E3CS, Algorithm 1 and Appendix A).

A selector picks exactly :math:`k` of :math:`K` clients per round for ``R`` replicates at once
and keeps its per-client state in an immutable record (E3CS: one log-weight per client,
E3CS Sec. V). The selected clients then succeed or fail (:math:`x_{i,t}`, an availability mask);
``update`` sees the outcome of the selected clients only. The math lives in
:mod:`fedtheory.sim.selection`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import torch

from fedtheory.availability.sampling import successive_sample, systematic_sample
from fedtheory.budget import check_bytes
from fedtheory.constraints import (
    Array,
    Fields,
    Generator,
    Integer,
    Mask,
    Option,
    Real,
    Size,
    Tensor,
    Text,
    declare,
)
from fedtheory.sim.selection.allocation import Allocation, check_tensor, exp3_update, prob_alloc

__all__ = [
    "E3CS",
    "E3CSState",
    "FedCS",
    "PowD",
    "RandomSelection",
    "Selection",
    "Selector",
    "StatelessState",
]


class Selection(NamedTuple):
    """The clients picked in one round."""

    selected: torch.Tensor  # [R, K] bool, exactly k per row
    prob: torch.Tensor  # [R, K] float64 inclusion probability given the past (nan: unknown)
    capped: torch.Tensor | None = None  # [R, K] bool, E3CS's overflowed set S_t


class StatelessState(NamedTuple):
    """State of a selector that remembers nothing but the sizes."""

    replicates: int  # R
    num_clients: int  # K


class E3CSState(NamedTuple):
    log_w: torch.Tensor  # [R, K] float64 log-weights log w_{i,t}


E3CS_STATE = Fields(E3CSState, log_w=Tensor(shape=(None, None)))
"""E3CS's state: finite log-weights ``[R, K]``."""
ROUND = ("state.log_w[0]", "state.log_w[1]")
"""A round's ``[R, K]``, read off the state's log-weights."""


@runtime_checkable
class Selector(Protocol):
    name: str
    k: int
    needs_losses: bool

    def init(self, replicates: int, num_clients: int) -> NamedTuple:
        """Initial state for ``replicates`` replicates of ``num_clients`` clients."""
        ...

    def select(
        self,
        state: NamedTuple,
        t: int,
        generator: np.random.Generator | None = None,
        *,
        losses: torch.Tensor | None = None,
    ) -> Selection:
        """Pick ``k`` clients in round ``t`` (0-based) with randomness from ``generator``
        (round ``t``'s ``rng.numpy_rng(seed, t, rng.SELECTION)``); ``losses [R, K]`` for
        pow-d."""
        ...

    def update(
        self, state: NamedTuple, t: int, selection: Selection, success: torch.Tensor
    ) -> NamedTuple:
        """Next state from the outcome ``success [R, K]`` (read where selected only)."""
        ...


Sampler = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
SAMPLERS: dict[str, Sampler] = {"systematic": systematic_sample, "successive": successive_sample}
"""``systematic``: exact marginals :math:`p` (what the analysis assumes); ``successive``: the
law of ``torch.multinomial(p, k, replacement=False)`` (what the E3CS code does)."""


class E3CS:
    r"""Exp3-based client selection (E3CS, Algorithm 1 with ProbAlloc, Algorithm 2).

    Round :math:`t`: :math:`p_t,S_t=\mathrm{ProbAlloc}(k,\sigma_t,w_t)`, draw :math:`A_t` with
    inclusion probabilities :math:`p_t`, observe :math:`x_{i,t}` for :math:`i\in A_t`, and
    update :math:`\log w` by (16). Starts from :math:`w_{i,1}=1`.

    Parameters
    ----------
    k : int
        Clients selected per round.
    sigma : float or array [T]
        Fairness quota :math:`\sigma_t\in[0,k/K]`: a constant (E3CS-:math:`c` is
        ``quota_constant(c, k, K)``) or one value per round (E3CS-inc is
        ``quota_incremental(k, K, T)``); entry ``t`` is used in round ``t`` (0-based).
    eta : float
        Exp3 learning rate :math:`\eta` (the paper's experiments use 0.5).
    sampler : {"systematic", "successive"}
        Exact-marginal systematic sampling, or the code's successive sampling (⚠ biased).
    """

    needs_losses = False

    @declare(
        k=Size(),
        sigma=Array(ndim=1, low=0.0, scalar=True),
        eta=Real(0.0, low_open=True),
        sampler=Option(*sorted(SAMPLERS)),
        name=Text(),
    )
    def __init__(
        self,
        k: int,
        *,
        sigma: float | np.ndarray = 0.0,
        eta: float = 0.5,
        sampler: str = "systematic",
        name: str = "e3cs",
    ) -> None:
        self.k = k
        self.sigma = float(sigma) if sigma.ndim == 0 else sigma  # a number or one per round
        self.eta, self.sampler, self.name = eta, sampler, name

    @declare("t")
    def quota(self, t: int) -> float:
        r"""Fairness quota :math:`\sigma_t` of round ``t`` (0-based)."""
        if isinstance(self.sigma, float):
            return self.sigma
        t = Integer(low=0, high=self.sigma.size - 1).check(t, "t", "E3CS.quota", {})
        return float(self.sigma[t])

    @declare("replicates", num_clients=Size("self.k"))
    def init(self, replicates: int, num_clients: int) -> E3CSState:
        Array(low=0.0, high=self.k / num_clients, min_size=0).check(
            self.sigma, "sigma", "E3CS.init", {}
        )
        what = f"log-weights [{replicates}, {num_clients}]"
        check_bytes(8 * replicates * num_clients, "E3CS.init", what=what, fixes="fewer replicates")
        return E3CSState(torch.zeros(replicates, num_clients, dtype=torch.float64))

    @declare(
        "t",
        state=E3CS_STATE,
        generator=Generator(numpy=True),
        losses=Tensor(dtype="floating", finite=False, none=True),
    )
    def select(
        self,
        state: E3CSState,
        t: int,
        generator: np.random.Generator | None = None,
        *,
        losses: torch.Tensor | None = None,
    ) -> Selection:
        alloc = prob_alloc(state.log_w, self.k, self.quota(t))
        selected = SAMPLERS[self.sampler](alloc.p.numpy(), self.k, generator)  # [R, K]
        return Selection(torch.from_numpy(selected), *alloc)

    @declare(
        "t",
        state=E3CS_STATE,
        selection=Fields(
            Selection,
            selected=Mask(tensor=True, shape=ROUND),
            prob=Tensor(shape=ROUND, low=0.0, high=1.0),
            capped=Mask(tensor=True, shape=ROUND, none=True),
        ),
        success=Mask(tensor=True, shape=ROUND),
        finite_result=True,
    )
    def update(
        self, state: E3CSState, t: int, selection: Selection, success: torch.Tensor
    ) -> E3CSState:
        sigma = self.quota(t)
        if selection.capped is None:
            alloc = prob_alloc(state.log_w, self.k, sigma)
        else:  # the allocation select() computed from this same state
            alloc = Allocation(selection.prob, selection.capped)
        log_w = exp3_update(
            state.log_w, alloc, selection.selected, success, k=self.k, sigma=sigma, eta=self.eta
        )
        return E3CSState(log_w)

    def __repr__(self) -> str:
        sigma = self.sigma if isinstance(self.sigma, float) else f"[{self.sigma.size} rounds]"
        return f"E3CS(k={self.k}, sigma={sigma}, eta={self.eta}, sampler={self.sampler!r})"


class _Stateless:
    """Shared ``init``/``select``/``update`` of selectors without memory: a subclass gives
    ``_select(replicates, num_clients, generator, losses) -> Selection``."""

    needs_losses = False
    k: int

    @declare("replicates", num_clients=Size("self.k"))
    def init(self, replicates: int, num_clients: int) -> StatelessState:
        return StatelessState(replicates, num_clients)

    def select(
        self,
        state: StatelessState,
        t: int,
        generator: np.random.Generator | None = None,
        *,
        losses: torch.Tensor | None = None,
    ) -> Selection:
        """The clients of round ``t`` (the same rule every round)."""
        return self._select(state.replicates, state.num_clients, generator, losses)

    def update(
        self, state: StatelessState, t: int, selection: Selection, success: torch.Tensor
    ) -> StatelessState:
        return state


def _mask_of(index: torch.Tensor, num_clients: int) -> torch.Tensor:
    """Indices ``[R, k]`` -> mask ``[R, K]``."""
    out = torch.zeros(index.shape[0], num_clients, dtype=torch.bool)
    return out.scatter_(1, index, True)


class FedCS(_Stateless):
    r"""FedCS as a "prophetic" baseline (E3CS App. A): always the :math:`k` clients with the
    highest success probabilities :math:`\rho_i` (ties: lower index first)."""

    @declare(rho=Array(ndim=1, low=0.0, high=1.0), k=Integer(1, "rho[0]"), name=Text())
    def __init__(self, rho, k: int, *, name: str = "fedcs") -> None:
        self.rho, self.k = rho, k
        top = np.argsort(-self.rho, kind="stable")[: self.k]
        self._chosen = torch.zeros(self.rho.size, dtype=torch.bool)
        self._chosen[torch.from_numpy(top)] = True
        self.name = name

    @declare("replicates", num_clients=Integer("self.rho[0]", "self.rho[0]"))
    def init(self, replicates: int, num_clients: int) -> StatelessState:
        return super().init(replicates, num_clients)

    def _select(self, reps: int, num_clients: int, generator, losses) -> Selection:
        chosen = self._chosen.expand(reps, -1)
        return Selection(chosen, chosen.to(torch.float64))

    def __repr__(self) -> str:
        return f"FedCS(k={self.k}, K={self.rho.size})"


def _uniform_subset(
    replicates: int, num_clients: int, size: int, generator: np.random.Generator | None
) -> torch.Tensor:
    """Mask ``[R, K]`` of a uniformly random subset of ``size`` clients per replicate
    (successive sampling with equal weights)."""
    uniform = np.ones((replicates, num_clients))
    return torch.from_numpy(successive_sample(uniform, size, generator))


class RandomSelection(_Stateless):
    r"""Random (E3CS App. A; FedAvg's default): a uniformly random :math:`k`-subset of the
    :math:`K` clients, so every client has inclusion probability :math:`k/K`."""

    @declare(k=Size(), name=Text())
    def __init__(self, k: int, *, name: str = "random") -> None:
        self.k, self.name = k, name

    def _select(self, reps: int, num_clients: int, generator, losses) -> Selection:
        chosen = _uniform_subset(reps, num_clients, self.k, generator)
        return Selection(
            chosen, torch.full((reps, num_clients), self.k / num_clients, dtype=torch.float64)
        )

    def __repr__(self) -> str:
        return f"RandomSelection(k={self.k})"


class PowD(_Stateless):
    r"""Power-of-choice (pow-d; E3CS App. A): draw :math:`d` candidates uniformly without
    replacement; each reports its loss on the current model (reports never fail); keep the
    :math:`k` candidates with the highest loss. :math:`d` is not given in the E3CS paper.

    Needs ``losses [R, K]`` in :meth:`select`; its inclusion probabilities have no closed form
    (``prob`` is nan).
    """

    needs_losses = True

    @declare(k=Size(), d=Size("k"), name=Text())
    def __init__(self, k: int, d: int, *, name: str = "pow-d") -> None:
        self.k, self.d, self.name = k, d, name

    @declare("replicates", num_clients=Size("self.d"))
    def init(self, replicates: int, num_clients: int) -> StatelessState:
        return super().init(replicates, num_clients)

    def _select(self, reps: int, num_clients: int, generator, losses) -> Selection:
        check_tensor(losses, "losses", "PowD.select")
        candidates = _uniform_subset(reps, num_clients, self.d, generator)
        score = torch.where(candidates, losses.to(torch.float64), -torch.inf)  # [R, K]
        chosen = _mask_of(score.topk(self.k, dim=1).indices, num_clients)
        return Selection(chosen, torch.full((reps, num_clients), torch.nan, dtype=torch.float64))

    def __repr__(self) -> str:
        return f"PowD(k={self.k}, d={self.d})"
