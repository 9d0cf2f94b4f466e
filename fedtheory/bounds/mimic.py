r"""MimiC (Sun, Mao, Zhang; IEEE TMC 2024) -- FedAvg's objective bias under client dropout.

Setting: :math:`N` clients, objective :math:`f=\sum_i\alpha_if_i` (the paper takes
:math:`\alpha_i=1/N`), active set :math:`\mathcal S_t` in round :math:`t`. Lemma 2 bounds
FedAvg's gradient-estimation error by local-drift terms plus :math:`\mathcal O(\|\Omega^t\|^2)`
with the **objective bias**

.. math:: \Omega^t=\frac1{|\mathcal S_t|}\sum_{i\in\mathcal S_t}\nabla f_i(x^t)-\nabla f(x^t),

and Theorem 1's bound keeps the objective-mismatch term
:math:`\sum_t\eta_g^t\mathbb E\|\Omega^t\|^2/\sum_t\eta_g^t`, which does not vanish as
:math:`\sum\eta_g^t=\infty,\ \sum(\eta_g^t)^2<\infty` (Remark 3). :func:`objective_bias`
computes :math:`\Omega^t` exactly from a problem and an availability realisation.

Exact quantity, no constant: the constants of Theorem 1, of the learning-rate conditions (19)
and (25) and of Theorem 2's bound (26) were lost with the paper's display math (MimiC, Sec. 4,
§1.4) and are deliberately **not** encoded. What is recoverable: Lemma 6's schedule has the
form :math:`\eta_g^t=a/(t+b)` with :math:`a,b>0` (:func:`lemma6_schedule`), which satisfies
Corollary 1's :math:`\sum\eta_g^t=\infty`, :math:`\sum(\eta_g^t)^2<\infty`.

Remark 3 says the mismatch term vanishes for IID data or equal dropout probabilities. With
identical clients :math:`\Omega^t\equiv0`. With equal probabilities and heterogeneous
clients, the *mean* of :math:`\Omega^t` vanishes (a uniformly random active set) but
:math:`\mathbb E\|\Omega^t\|^2` does not, unless every client is always active; see
``errata.mimic_equal_dropout``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.budget import check_bytes
from fedtheory.constraints import (
    Array,
    BoolArray,
    InstanceOf,
    Real,
    Size,
    declare,
    refuse_non_finite,
)
from fedtheory.errors import ParameterError

_OWNER = "objective_bias"

NOT_CHECKABLE: tuple[tuple[str, str], ...] = (
    (
        "MimiC Lemma 1 (loss decay per iteration)",
        "its right-hand side's constants were lost with the display math of MimiC's Sec. 4 "
        "in the available text",
    ),
    (
        "MimiC Lemma 2 (FedAvg gradient-estimation error)",
        "only the O(||Omega^t||^2) form survives; the local-drift constants were lost "
        "(MimiC, Sec. 4, in the available text)",
    ),
    (
        "MimiC Lemma 3 and Theorem 1 (FedAvg convergence)",
        "the bound's constants and the exact "
        "mismatch term were lost (MimiC, Sec. 4, in the available text); errata "
        "mimic.remark3.equal_dropout uses "
        "one reading of it",
    ),
    (
        "MimiC Lemmas 4-5 and Theorem 2 (MimiC convergence, (19)-(26))",
        "the learning-rate "
        "conditions (19), (25) and the bound (26) lost their constants (MimiC, Sec. 6, in the "
        "available text)",
    ),
    (
        "MimiC Lemma 6 and Corollaries 1-2",
        "only the schedule's form eta = a/(t + b) is "
        "recoverable (mimic.lemma6_schedule); the conditions it must meet are lost",
    ),
    ("MimiC Theorem 3 (29)", "its bound's constants were lost with the display math"),
)
"""MimiC statements fedtheory does not check, each with the reason (``fedtheory list``
prints them): the paper's display math, hence every constant, was lost in the text."""


@dataclass(frozen=True)
class ObjectiveMismatch:
    r"""FedAvg's objective bias along a realisation (MimiC Lemma 2, Theorem 1)."""

    omega: np.ndarray  # [R, T, d] Omega^t
    squared_norm: np.ndarray  # [R, T] ||Omega^t||^2
    mismatch: np.ndarray  # [R] sum_t eta_t ||Omega^t||^2 / sum_t eta_t
    mean_bias: np.ndarray  # [R, d] sum_t eta_t Omega^t / sum_t eta_t


@declare(
    problem=InstanceOf("fedtheory.problems.base:FederatedProblem"),
    mask=BoolArray(shape=(None, None, "problem.num_clients")),
    w=Array(),
    eta=Array(shape=("mask[1]",), low=0.0, none=True),
)
def objective_bias(problem, w, mask, *, eta=None) -> ObjectiveMismatch:
    r"""Objective bias :math:`\Omega^t` of FedAvg at points ``w`` for the active sets ``mask``.

    Parameters
    ----------
    problem
        Anything with ``alpha [N]``, ``num_clients``, ``dim`` and exact gradients
        ``grad(w [M, d], clients [M]) -> [M, d]`` (a problem with gradient noise is refused).
    w : array [R, T, d] (or [d], or [R, d] for one fixed point per replicate)
        The points :math:`x^t`.
    mask : bool array [R, T, N]
        Availability realisation :math:`\mathbb 1_{i\in\mathcal S_t}`. In a round with no
        active client the aggregate is empty (FedAvg applies no update), so
        :math:`\Omega^t=-\nabla f(x^t)`.
    eta : array [T], optional
        Global learning rates :math:`\eta_g^t` of the weighted averages (default constant).

    Returns
    -------
    ObjectiveMismatch
        :math:`\Omega^t`, :math:`\|\Omega^t\|^2`, the mismatch term
        :math:`\sum_t\eta_t\|\Omega^t\|^2/\sum_t\eta_t` and the weighted mean of
        :math:`\Omega^t` (exact, MimiC Lemma 2 / Theorem 1).
    """
    import torch  # only when a problem is given: `import fedtheory.bounds` stays torch-free

    if getattr(problem, "noise_std", 0.0) > 0:
        raise ParameterError(
            f"The 'problem' parameter of {_OWNER} must have exact gradients (noise_std = 0). "
            f"Got noise_std = {problem.noise_std} instead."
        )
    m, x = mask, w
    R, T, N = m.shape
    d = problem.dim
    if x.shape not in ((d,), (R, d), (R, T, d)):
        raise ParameterError(
            f"The 'w' parameter of {_OWNER} must have shape ({d},), ({R}, {d}) or "
            f"({R}, {T}, {d}) (one point, one per replicate, or one per round). "
            f"Got shape {x.shape} instead."
        )
    x = np.broadcast_to(x if x.ndim != 2 else x[:, None, :], (R, T, d))
    rates = np.ones(T) if eta is None else eta
    if rates.sum() <= 0:
        raise ParameterError(
            f"The 'eta' parameter of {_OWNER} must have a positive sum. Got {rates} instead."
        )
    points = torch.tensor(x, dtype=torch.float64)[:, :, None, :].expand(R, T, N, -1)
    clients = torch.arange(N).expand(R, T, N)
    g = problem.grad(points.reshape(-1, problem.dim), clients.reshape(-1))
    g = g.reshape(R, T, N, problem.dim).numpy()  # [R, T, N, d]
    active = m.sum(-1, keepdims=True)  # [R, T, 1]
    with np.errstate(over="ignore", invalid="ignore"):  # reported below
        aggregate = np.einsum("rtn,rtnd->rtd", m, g) / np.maximum(active, 1)
        omega = aggregate - np.einsum("n,rtnd->rtd", problem.alpha, g)  # [R, T, d]
        sq = np.sum(omega**2, -1)
        weights = rates / rates.sum()
        out = ObjectiveMismatch(omega, sq, sq @ weights, np.einsum("t,rtd->rd", weights, omega))
    refuse_non_finite(out, _OWNER, {"w": x, "eta": rates})
    return out


@declare(a=Real(0.0, low_open=True), b=Real(0.0, low_open=True), rounds=Size())
def lemma6_schedule(a: float, b: float, rounds: int) -> np.ndarray:
    r"""MimiC Lemma 6's global learning rates :math:`\eta_g^t=a/(t+b)`, :math:`t=0..T-1`
    (Sun et al., MimiC Lemma 6; the form only: the constraints (19), (25) on :math:`a,b`
    were not recovered, so this is neither a bound nor checked against one)."""
    owner = "lemma6_schedule"
    check_bytes(16 * rounds, owner, what=f"{rounds} rates", fixes="fewer rounds")
    with np.errstate(over="ignore"):
        out = a / (np.arange(rounds) + b)
    refuse_non_finite(out, owner, {"a": a, "b": b})
    return out
