r"""CA-Fed (Rodio et al. 2023, Algorithm 1) and its baselines as run in the official code.

Round :math:`t` of CA-Fed, vectorised over replicates (all per-client state is ``[R, N]``):

1. the active clients :math:`A_t` report their loss :math:`F_k^{(t)}` at :math:`w_t`
   (here the exact local objective);
2. loss filter (15) :math:`\hat F\leftarrow(1-\beta\mathbb 1_{A_t})\odot\hat F+
   \beta\mathbb 1_{A_t}\odot F^{(t)}` (in a replicate's first round with an active client,
   observed clients take their loss and the others the mean observed loss, as in the code),
   :math:`\hat F^*=\min_{s\le t}\hat F^{(s)}`, (17) :math:`\hat\Gamma'=\max_k(\hat F_k-\hat F_k^*)`;
   availability estimates :math:`\hat\pi,\hat\lambda` from an oracle (true values, as in the
   paper's experiments) or Beta-prior posterior means
   (:mod:`fedtheory.availability.estimators`);
3. :math:`q=\alpha/\hat\pi`, then ``get`` (:func:`~fedtheory.optim.greedy_exclusion`) in
   descending :math:`\hat\lambda` and in ascending :math:`\hat\pi` on the proxy (18) with
   §VI-A's multiplier :math:`\bar\kappa^2`:
   :math:`\hat\epsilon(q)=\langle\hat F-\hat F^*,\hat\pi\tilde\odot q\rangle+
   \bar\kappa^2d_{TV}^2(\alpha,\hat\pi\tilde\odot q)\hat\Gamma'`;
4. active clients with :math:`q_k>0` run :math:`E` local steps and the server applies (3),
   :math:`w_{t+1}=\mathrm{Proj}_W(w_t+\eta_s\sum_{k\in A_t}q_k\Delta_t^k)` with the
   unnormalised :math:`q` (as the code; no projection unless ``radius`` is set).

Baselines (SPEC §3.7, official ``clients_sampler.py``; with oracle :math:`\pi`):
:func:`~fedtheory.sim.aggregation.unbiased_weights` (:math:`q_k=\alpha_k/\pi_k`),
:class:`AdaFedWeights` (the same, normalised over :math:`A_t`) and :class:`F3astWeights`
(top-:math:`K` active clients by :math:`\alpha_k^2/r_k^2`, :math:`q_k=\alpha_k/r_k`,
:math:`r_k=(1-\beta_r)\pi_k+\beta_r\mathbb 1_{k\in A_t}`). Each is a stateless
``mask -> q`` rule for :class:`~fedtheory.sim.FedAvg`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.availability import estimators
from fedtheory.device import PerDevice
from fedtheory.errors import ParameterError
from fedtheory.optim.greedy import greedy_exclusion
from fedtheory.params import check_array, check_int, check_real, check_simplex
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim.aggregation import check_alpha_pi, check_clients, check_mask
from fedtheory.sim.algorithm import LocalTraining

__all__ = [
    "AdaFedWeights",
    "CaFed",
    "CaFedState",
    "F3astWeights",
    "adafed_weights",
    "cafed_proxy_error",
    "f3ast_weights",
]


def cafed_proxy_error(
    q: torch.Tensor,
    pi: torch.Tensor,
    loss_gap: torch.Tensor,
    alpha: torch.Tensor,
    gamma: torch.Tensor,
    trade_off: float = 1.0,
) -> torch.Tensor:
    r"""CA-Fed's proxy (18) with §VI-A's :math:`\bar\kappa^2`:
    :math:`\langle\hat F-\hat F^*,p\rangle+\bar\kappa^2d_{TV}^2(\alpha,p)\hat\Gamma'`,
    :math:`p=\pi\tilde\odot q`.

    ``q, pi, loss_gap [R, N]``, ``alpha [N]``, ``gamma [R]`` -> ``[R]`` (non-finite when
    :math:`\pi^\top q=0`). A heuristic estimate of Theorem 3's bound, not a bound itself."""
    p = pi * q / (pi * q).sum(-1, keepdim=True)
    tv = 0.5 * (alpha - p).abs().sum(-1)
    return (loss_gap * p).sum(-1) + trade_off * tv**2 * gamma


class CaFedState(NamedTuple):
    w: torch.Tensor  # [R, d] server model
    loss_hat: torch.Tensor  # [R, N] filtered losses F_hat_k (15)
    loss_min: torch.Tensor  # [R, N] running minimum F_hat_k^*
    started: torch.Tensor  # [R] bool: a client has been observed
    counts: estimators.AvailabilityCounts | None  # Beta-prior counts [R, N] (None: oracle)
    weights: torch.Tensor | None = None  # [R, N] q applied in the last round
    participants: torch.Tensor | None = None  # [R, N] bool: active clients with q_k > 0


@dataclass(frozen=True, kw_only=True)
class CaFed(LocalTraining):
    r"""CA-Fed, Algorithm 1 of Rodio et al. 2023 (see the module docstring).

    Parameters
    ----------
    alpha : array [N]
        Target weights :math:`\alpha`.
    pi, lam : array [N], optional
        Oracle availability and correlation :math:`\pi_k,\lambda_k` (the paper's setting).
    prior : BetaPrior, optional
        Use Beta-prior estimators instead of the oracle (give either ``pi``/``lam`` or this).
    beta : float
        Loss-filter parameter :math:`\beta\in(0,1]` of (15) (paper 0.2).
    tau : float
        Exclusion threshold :math:`\tau\ge0` of ``get`` (paper 0).
    trade_off : float
        :math:`\bar\kappa^2\ge0` of §VI-A (code ``bias_const``, default 1).
    ``local_steps``, ``lr``, ``server_lr``, ``radius``, ... as in
    :class:`~fedtheory.sim.algorithm.LocalTraining`.
    """

    alpha: np.ndarray
    pi: np.ndarray | None = None
    lam: np.ndarray | None = None
    prior: estimators.BetaPrior | None = None
    beta: float = 0.2
    tau: float = 0.0
    trade_off: float = 1.0
    name: str = field(default="ca-fed")

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "CaFed"
        alpha = check_simplex(self.alpha, "alpha", owner)
        object.__setattr__(self, "alpha", alpha)
        oracle = self.pi is not None or self.lam is not None
        if oracle == (self.prior is not None) or (oracle and (self.pi is None or self.lam is None)):
            raise ParameterError(
                f"The 'prior' parameter of {owner} must be given exactly when the oracle "
                "'pi' and 'lam' are not. Got "
                f"pi={'set' if self.pi is not None else None}, "
                f"lam={'set' if self.lam is not None else None}, prior={self.prior} instead."
            )
        if oracle:
            n = alpha.shape
            pi = check_array(self.pi, "pi", owner, shape=n, low=0.0, high=1.0, low_open=True)
            lam = check_array(self.lam, "lam", owner, shape=n, low=-1.0, high=1.0)
            object.__setattr__(self, "pi", pi)
            object.__setattr__(self, "lam", lam)
        check_real(self.beta, "beta", owner, low=0.0, high=1.0, low_open=True)
        check_real(self.tau, "tau", owner, low=0.0)
        check_real(self.trade_off, "trade_off", owner, low=0.0)

    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> CaFedState:
        r, n = w0.shape[0], problem.num_clients
        if n != self.alpha.size:
            raise ParameterError(
                f"The 'problem' parameter of CaFed.init must have N={self.alpha.size} clients "
                f"like alpha. Got {n} instead."
            )
        zeros = torch.zeros(r, n, dtype=torch.float64, device=w0.device)
        counts = None if self.prior is None else estimators.init((r, n))
        started = torch.zeros(r, dtype=torch.bool, device=w0.device)
        return CaFedState(w0, zeros, zeros, started, counts)

    def estimates(self, counts, shape, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        r""":math:`(\hat\pi,\hat\lambda)`, each ``[R, N]`` (on ``device``)."""
        if counts is None:
            pi, lam = np.tile(self.pi, (shape[0], 1)), np.tile(self.lam, (shape[0], 1))
        else:
            est = estimators.estimate(counts, self.prior)
            pi, lam = est.pi, est.lam
        return tuple(torch.as_tensor(x, dtype=torch.float64, device=device) for x in (pi, lam))

    def filter_losses(
        self, state: CaFedState, losses: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(15) and the running minimum: ``(loss_hat, loss_min, started)``, all ``[R, N]``/[R]."""
        m = mask.to(torch.float64)
        fresh = ~state.started & mask.any(-1)  # [R]
        mean_seen = (losses * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp_min(1.0)
        first = torch.where(mask, losses, mean_seen)
        filtered = (1.0 - self.beta * m) * state.loss_hat + self.beta * m * losses
        started = state.started | fresh
        loss_hat = torch.where(
            fresh[:, None], first, torch.where(state.started[:, None], filtered, state.loss_hat)
        )
        loss_min = torch.where(
            fresh[:, None],
            first,
            torch.where(state.started[:, None], torch.minimum(state.loss_min, loss_hat), loss_hat),
        )
        return loss_hat, loss_min, started

    def aggregation_weights(
        self, pi: torch.Tensor, lam: torch.Tensor, loss_gap: torch.Tensor
    ) -> torch.Tensor:
        """``get`` twice from :math:`q=\\alpha/\\hat\\pi`: ``[R, N]`` inputs -> ``q [R, N]``."""
        alpha = torch.from_numpy(self.alpha).to(pi.device)
        gamma = loss_gap.max(-1).values  # (17)

        def proxy(q: torch.Tensor) -> torch.Tensor:
            return cafed_proxy_error(q, pi, loss_gap, alpha, gamma, self.trade_off)

        orders = [
            torch.argsort(lam, dim=-1, descending=True, stable=True),
            torch.argsort(pi, dim=-1, stable=True),
        ]
        return greedy_exclusion(proxy, alpha / pi, orders, tau=self.tau)

    def step(
        self,
        problem: FederatedProblem,
        state: CaFedState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> CaFedState:
        """One round of Algorithm 1: ``state.w [R, d]``, ``mask [R, N]`` -> next state."""
        w = state.w
        mask = self.participants(mask, t)
        losses = torch.from_numpy(problem.client_losses(w.cpu().numpy())).to(w.device)  # [R, N]
        loss_hat, loss_min, started = self.filter_losses(state, losses, mask)
        seen = mask.cpu().numpy()
        counts = None if state.counts is None else estimators.update(state.counts, seen)
        pi, lam = self.estimates(counts, tuple(mask.shape), w.device)
        q = self.aggregation_weights(pi, lam, loss_hat - loss_min)
        working = mask & (q > 0)
        w_next = self.weighted_round(problem, w, q, working, t, generator)
        applied = torch.where(working, q, torch.zeros_like(q))
        return CaFedState(w_next, loss_hat, loss_min, started, counts, applied, working)


def adafed_weights(mask: torch.Tensor, alpha: torch.Tensor, pi: torch.Tensor) -> torch.Tensor:
    r"""AdaFed as in CA-Fed's code: :math:`q_k=\frac{\alpha_k/\pi_k}{\sum_{j\in A_t}\alpha_j/\pi_j}`
    for :math:`k\in A_t` (0 otherwise; all zero if :math:`A_t=\emptyset`). ``mask [R, N]``."""
    u = mask.to(torch.float64) * (alpha / pi)
    return u / u.sum(-1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)


def f3ast_weights(
    mask: torch.Tensor, alpha: torch.Tensor, pi: torch.Tensor, *, clients: int, beta_r: float
) -> torch.Tensor:
    r"""F3AST as in CA-Fed's code: :math:`r_k=(1-\beta_r)\pi_k+\beta_r\mathbb 1_{k\in A_t}`,
    the ``clients`` active clients with the largest :math:`\alpha_k^2/r_k^2` (ties: lower
    index first) get :math:`q_k=\alpha_k/r_k`. ``mask [R, N]`` -> ``q [R, N]``."""
    m = mask.to(torch.float64)
    r = (1.0 - beta_r) * pi + beta_r * m
    score = torch.where(mask, alpha**2 / r**2, torch.full_like(r, -torch.inf))
    top = torch.argsort(score, dim=-1, descending=True, stable=True)[:, :clients]
    chosen = torch.zeros_like(mask, dtype=torch.bool).scatter_(1, top, True) & mask
    return torch.where(chosen, alpha / r, torch.zeros_like(r))


class AdaFedWeights:
    """AdaFed's weights (CA-Fed code's ``full_participation`` branch) with oracle ``pi``."""

    name = "adafed"

    def __init__(self, alpha, pi) -> None:
        a, p = check_alpha_pi(alpha, pi, "AdaFedWeights")
        self.alpha, self.pi = torch.from_numpy(a), torch.from_numpy(p)
        self._constants = PerDevice((self.alpha, self.pi))

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        check_clients(self.alpha, check_mask(mask, "AdaFedWeights"), "alpha", "AdaFedWeights")
        return adafed_weights(mask, *self._constants.on(mask.device))

    def __repr__(self) -> str:
        return f"AdaFedWeights(N={self.alpha.numel()})"


class F3astWeights:
    """F3AST's weights as in CA-Fed's code, with oracle ``pi`` (``clients`` = code's
    ``fast_n_clients_per_round``, 12; ``beta_r`` = ``smoothness_param``, 0.001)."""

    name = "f3ast"

    def __init__(self, alpha, pi, *, clients: int = 12, beta_r: float = 1e-3) -> None:
        owner = "F3astWeights"
        a, p = check_alpha_pi(alpha, pi, owner)
        self.alpha, self.pi = torch.from_numpy(a), torch.from_numpy(p)
        self.clients = check_int(clients, "clients", owner, low=1)
        self.beta_r = check_real(beta_r, "beta_r", owner, low=0.0, high=1.0)
        self._constants = PerDevice((self.alpha, self.pi))

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        check_clients(self.alpha, check_mask(mask, "F3astWeights"), "alpha", "F3astWeights")
        alpha, pi = self._constants.on(mask.device)
        return f3ast_weights(mask, alpha, pi, clients=self.clients, beta_r=self.beta_r)

    def __repr__(self) -> str:
        return f"F3astWeights(N={self.alpha.numel()}, clients={self.clients})"
