r"""E3CS client selection, the math (Huang et al., "Stochastic Client Selection for Federated
Learning with Volatile Clients", IEEE IoT-J 2022): probability allocation, the Exp3 update and
the fairness-quota schedules. The samplers of exactly :math:`k` clients (systematic, exact
marginals; successive, the paper code's) are shared with the availability processes, in
:mod:`fedtheory.availability.sampling`.

Every function works on a batch of replicates: log-weights ``[R, K]`` give probabilities
``[R, K]`` and selection masks ``[R, K]``. Weights are kept as :math:`\log w` (E3CS, ProbAlloc,
Sec. V):
with :math:`\sigma_t=0` the estimator :math:`\hat x=x/p` is unbounded and :math:`w` itself
overflows within a few hundred rounds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from fedtheory.budget import check_bytes
from fedtheory.constraints import Instance, Integer, Mask, Real, Tensor, declare
from fedtheory.errors import ParameterError

__all__ = [
    "Allocation",
    "exp3_update",
    "prob_alloc",
    "quota_constant",
    "quota_incremental",
]


class Allocation(NamedTuple):
    """Output of :func:`prob_alloc`."""

    p: torch.Tensor  # [R, K] float64 inclusion probabilities, sigma <= p <= 1, sum k
    capped: torch.Tensor  # [R, K] bool, the overflowed set S_t (p = 1 there)


def check_tensor(value: object, name: str, owner: str) -> None:
    """A finite real tensor ``[R, K]``, else ParameterError."""
    ok = isinstance(value, torch.Tensor) and value.ndim == 2 and value.is_floating_point()
    if not (ok and bool(torch.isfinite(value).all())):
        shown = f"shape {tuple(value.shape)}" if isinstance(value, torch.Tensor) else repr(value)
        raise ParameterError(
            f"The '{name}' parameter of {owner} must be a finite float tensor of shape (R, K). "
            f"Got {shown} instead."
        )


def check_quota(sigma: float, k: int, num_clients: int, owner: str) -> float:
    r"""A fairness quota :math:`\sigma_t\in[0,k/K]` (so that :math:`k-K\sigma_t\ge0`)."""
    return Real(low=0.0, high=k / num_clients).check(sigma, "sigma", owner, {})


@declare(
    log_w=Tensor(dtype="floating", shape=(None, None)), k=Integer(1, "log_w[1]"), sigma=Real(0.0)
)
def prob_alloc(log_w: torch.Tensor, k: int, sigma: float) -> Allocation:
    r"""ProbAlloc (E3CS Algorithm 2, eqs. (17)-(23)): exact, from log-weights.

    The allocation is the water-filling :math:`p_i=\min\{1,\sigma+c\,w_i\}` with :math:`c`
    such that :math:`\sum_ip_i=k`. With the weights sorted in descending order
    :math:`w_{(1)}\ge\dots\ge w_{(K)}` and :math:`U_m=\sum_{j>m}w_{(j)}`, the number of capped
    clients :math:`m=|S_t|` is the first :math:`m` with

    .. math:: \sigma+\big(k-K\sigma-m(1-\sigma)\big)\,w_{(m+1)}/U_m\le1,

    then :math:`p_{(j)}=1` for :math:`j\le m` and
    :math:`p_{(j)}=\sigma+(k-K\sigma-m(1-\sigma))\,w_{(j)}/U_m` otherwise (eq. (18) with the
    closed form (23) of :math:`\alpha_t`; ⚠ the paper's (22)-(23) compare :math:`w` with
    :math:`\Psi=w/(1-\sigma)`, read here as :math:`w_j\le(1-\sigma)\alpha_t`). The test at
    :math:`m=k-1` reads :math:`1-(K-k)\sigma\le1` and always holds, so :math:`m\le k-1`.
    Ratios :math:`w_{(j)}/U_m` are computed as ``exp(log w - logsumexp)``, never from
    :math:`w`, so the degenerate limit of ProbAlloc (E3CS Sec. V) (with :math:`\sigma=0`, :math:`k`
    weights dominating until the others underflow: (23) has no finite :math:`\alpha_t`) comes
    out exactly as its limit: :math:`p=1` on the top :math:`k`, :math:`p=0` elsewhere.
    Exact (not a bound).

    Parameters
    ----------
    log_w : Tensor [R, K] float64
        Log-weights :math:`\log w_{i,t}` (only differences matter).
    k : int
        Clients per round, ``1 <= k <= K``.
    sigma : float
        Fairness quota :math:`\sigma_t\in[0,k/K]`.

    Examples
    --------
    >>> alloc = prob_alloc(torch.log(torch.tensor([[8.0, 1.0, 1.0, 1.0]], dtype=torch.float64)),
    ...                    2, 0.1)
    >>> alloc.p
    tensor([[1.0000, 0.3333, 0.3333, 0.3333]], dtype=torch.float64)
    """
    owner = "prob_alloc"
    num_clients = log_w.shape[1]
    sigma = check_quota(sigma, k, num_clients, owner)
    lw = log_w.to(torch.float64)
    lw = lw - lw.amax(dim=1, keepdim=True)  # only differences matter; top weight 1
    sorted_lw, order = lw.sort(dim=1, descending=True)  # [R, K]
    log_u = sorted_lw.flip(1).logcumsumexp(1).flip(1)  # [R, K]: log U_m, m = 0..K-1
    m_idx = torch.arange(num_clients, dtype=torch.float64)
    budget = (k - m_idx) - (num_clients - m_idx) * sigma  # [K]: k - K sigma - m (1 - sigma)
    ratio = torch.exp(sorted_lw - log_u)  # [R, K]: w_(m+1) / U_m
    accept = sigma + budget * ratio <= 1.0
    accept[:, k - 1] = True  # always true in exact arithmetic (see docstring)
    accept[:, k:] = False
    m = accept.to(torch.int64).argmax(dim=1, keepdim=True)  # [R, 1] first accepted m
    scale = budget[m]  # [R, 1]
    share = torch.exp(sorted_lw - log_u.gather(1, m))  # [R, K]: w_(j) / U_m
    rank = torch.arange(num_clients).expand_as(sorted_lw)
    capped_sorted = rank < m
    p_sorted = torch.where(capped_sorted, 1.0, sigma + scale * share)
    p = torch.empty_like(p_sorted).scatter_(1, order, p_sorted)
    capped = torch.empty_like(capped_sorted).scatter_(1, order, capped_sorted)
    return Allocation(p, capped)


@declare(
    log_w=Tensor(dtype="floating", shape=(None, None)),
    alloc=Instance(Allocation),
    selected=Mask(tensor=True, shape=("log_w[0]", "log_w[1]")),
    success=Mask(tensor=True, shape=("log_w[0]", "log_w[1]")),
    k=Integer(1, "log_w[1]"),
    sigma=Real(0.0),
    eta=Real(0.0, low_open=True),
)
def exp3_update(
    log_w: torch.Tensor,
    alloc: Allocation,
    selected: torch.Tensor,
    success: torch.Tensor,
    *,
    k: int,
    sigma: float,
    eta: float,
) -> torch.Tensor:
    r"""E3CS Exp3 update (Algorithm 1 lines 10-11, eqs. (15)-(16)), in log-weights.

    .. math:: \hat x_{i,t}=\frac{\mathbb 1_{i\in A_t}}{p_{i,t}}x_{i,t},\qquad
              \log w_{i,t+1}=\log w_{i,t}+\frac{(k-K\sigma_t)\,\eta\,\hat x_{i,t}}{K}
              \ (i\notin S_t),\qquad \log w_{i,t+1}=\log w_{i,t}\ (i\in S_t).

    ``log_w [R, K]``, ``alloc`` the round's :func:`prob_alloc`, ``selected [R, K]`` and
    ``success [R, K]`` bool (:math:`x_{i,t}`, only read where selected) -> ``[R, K]``.
    """
    num_clients = log_w.shape[1]
    sigma = check_quota(sigma, k, num_clients, "exp3_update")
    gained = selected & success & ~alloc.capped
    x_hat = torch.where(gained, 1.0 / alloc.p, 0.0)
    return log_w + (k - num_clients * sigma) * eta / num_clients * x_hat


@declare("num_clients", c=Real(0.0, 1.0), k=Integer(1, "num_clients"))
def quota_constant(c: float, k: int, num_clients: int) -> float:
    r"""E3CS-:math:`c` fairness quota :math:`\sigma_t=c\,k/K` (E3CS §VI; :math:`c\in[0,1]`;
    :math:`c=1` is uniform random selection)."""
    return c * k / num_clients


@declare("num_clients", "rounds", k=Integer(1, "num_clients"))
def quota_incremental(k: int, num_clients: int, rounds: int) -> np.ndarray:
    r"""E3CS-inc quota: :math:`\sigma_t=0` for :math:`t\le T/4`, then :math:`k/K` (E3CS §VI,
    "Motivation behind incremental fairness quota"; rounds :math:`t=1..T`).

    Returns ``[T]``; entry ``j`` is the quota of paper round :math:`t=j+1`.
    """
    owner = "quota_incremental"
    check_bytes(24 * rounds, owner, what=f"{rounds} quotas", fixes="fewer rounds")
    t = np.arange(1, rounds + 1)
    return np.where(t <= rounds / 4, 0.0, k / num_clients)
