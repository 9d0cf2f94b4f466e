r"""One instance of CA-Fed's aggregation-weight problem (App. D form plus a bias term).

The objective over weights :math:`q\ge0`, :math:`\|q\|_1=Q` (Rodio et al. 2023, App. D and
problem (III-C)) is

.. math:: f(q)=\frac{\tfrac12q^\top Aq+B}{\pi^\top q}+C+w\,D(\alpha,p(q)),\qquad
          p_k(q)=\frac{\pi_kq_k}{\pi^\top q}\ \text{(eq. (4))},

with :math:`A=\mathrm{diag}(a)` and :math:`D` one of

* ``"none"``: :math:`0` (minimise :math:`\epsilon_{\rm opt}` only, App. D);
* ``"chi2"``: :math:`\chi^2_{\alpha\|p}=\sum_k\alpha_k^2/p_k-1` (Theorem 1, weight
  :math:`w=2\kappa^4\Gamma\bar\kappa^2`);
* ``"tv"``: :math:`d_{TV}^2(\alpha,p)` (Theorem 3 for a given :math:`\Gamma'`, weight
  :math:`w=8\kappa^4\Gamma'\bar\kappa^2`).

:math:`\bar\kappa^2` is the trade-off multiplier of CA-Fed §VI-A (``trade_off``; 1 gives the
theorems' bounds). With Theorem 2, :math:`A,B,C` are the numerator's
:math:`\Sigma,\upsilon,\psi+\phi/\ln(1/\lambda(P))` times :math:`2\kappa^2/\sum_t\eta_t`, so that
:math:`f` is an upper bound on :math:`\epsilon=F(\bar w_T)-F^*`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from fedtheory.constraints import (
    Array,
    BoolArray,
    Having,
    Instance,
    Option,
    Probabilities,
    Real,
    Tensor,
    declare,
    overflow,
)
from fedtheory.errors import ParameterError

__all__ = ["BIAS_KINDS", "WeightInstance", "weight_objective"]

BiasKind = Literal["none", "chi2", "tv"]
BIAS_KINDS: tuple[str, ...] = ("none", "chi2", "tv")


INSTANCE = dict(
    a=Array(ndim=1, low=0.0),
    B=Real(0.0),
    C=Real(),
    pi=Array(shape=("a[0]",), low=0.0, high=1.0, low_open=True),
    alpha=Probabilities(size="a[0]"),
    Q=Real(0.0, low_open=True),
)
"""The declared data of a weight program (:class:`WeightInstance`)."""
COEFFICIENTS = dict(kappa=Real(1.0), trade_off=Real(0.0))
r"""Theorems 1 and 3's :math:`\kappa\ge1` and the trade-off :math:`\bar\kappa^2\ge0`."""


@declare(
    **INSTANCE,
    bias=Option(*BIAS_KINDS),
    bias_weight=Real(0.0),
    excluded=BoolArray(shape=("a[0]",), none=True),
)
@dataclass(frozen=True)
class WeightInstance:
    r"""Data of the weight program :math:`\min_q f(q)` (see the module docstring).

    Parameters
    ----------
    a : array [N]
        Diagonal of :math:`A` (App. D), entries :math:`\ge0`.
    B, C : float
        :math:`B\ge0` and the constant :math:`C`.
    pi : array [N]
        Availability :math:`\pi_k\in(0,1]`.
    alpha : array [N]
        Target weights :math:`\alpha` on the simplex (used by the bias term).
    Q : float
        Total weight :math:`\|q\|_1=Q>0`.
    bias : {"none", "chi2", "tv"}
    bias_weight : float
        :math:`w\ge0` multiplying the divergence.
    excluded : bool array [N], optional
        Clients forced to weight zero (e.g. by Guideline B); default none.

    Examples
    --------
    >>> inst = WeightInstance.theorem1([1.0, 1.0], 1.0, 0.0, [0.9, 0.1], [0.5, 0.5],
    ...                                kappa=1.0, Gamma=0.1)
    >>> round(inst.objective([0.5, 0.5]), 6)  # 1.25/0.5 + 0.2*(0.25/0.9 + 0.25/0.1 - 1)
    2.855556
    """

    a: np.ndarray
    B: float
    C: float
    pi: np.ndarray
    alpha: np.ndarray
    Q: float = 1.0
    bias: BiasKind = "none"
    bias_weight: float = 0.0
    excluded: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.excluded is None:
            object.__setattr__(self, "excluded", np.zeros(self.a.size, dtype=bool))

    @property
    def num_clients(self) -> int:
        return self.a.size

    @classmethod
    @declare(**INSTANCE, **COEFFICIENTS, Gamma=Real(0.0))
    def theorem1(
        cls, a, B, C, pi, alpha, *, kappa: float, Gamma: float, trade_off: float = 1.0, Q=1.0
    ) -> WeightInstance:
        r""":math:`\epsilon_{\rm opt}+\bar\kappa^2\epsilon_{\rm bias}` with Theorem 1's
        :math:`\epsilon_{\rm bias}=2\kappa^4\chi^2_{\alpha\|p}\Gamma` (Rodio et al. 2023,
        Theorem 1 and problem (III-C); an upper bound on :math:`F(w)-F^*`)."""
        weight = _bias_weight(2.0, kappa, Gamma, trade_off, "WeightInstance.theorem1", "Gamma")
        return cls(a, B, C, pi, alpha, Q, "chi2", weight)

    @classmethod
    @declare(**INSTANCE, **COEFFICIENTS, Gamma_prime=Real(0.0))
    def theorem3(
        cls, a, B, C, pi, alpha, *, kappa: float, Gamma_prime: float, trade_off: float = 1.0, Q=1.0
    ) -> WeightInstance:
        r""":math:`\epsilon_{\rm opt}+\bar\kappa^2\epsilon'_{\rm bias}` with Theorem 3's
        :math:`\epsilon'_{\rm bias}=8\kappa^4d_{TV}^2(\alpha,p)\Gamma'` for a given
        :math:`\Gamma'` (Rodio et al. 2023, Theorem 3, eq. (13); an upper bound)."""
        owner = "WeightInstance.theorem3"
        weight = _bias_weight(8.0, kappa, Gamma_prime, trade_off, owner, "Gamma_prime")
        return cls(a, B, C, pi, alpha, Q, "tv", weight)

    @classmethod
    @declare(
        program=Having("A", "B", "C", "pi", "Q", "sum_eta"),
        alpha=Probabilities(size="program.pi[0]"),
        kappa=Real(1.0, none=True),
        trade_off=COEFFICIENTS["trade_off"],
        bias=Option(*BIAS_KINDS),
        Gamma=Real(0.0),
        finite_result=True,
    )
    def from_theorem2(
        cls,
        program,
        alpha,
        *,
        kappa: float | None = None,
        bias: BiasKind = "none",
        Gamma: float = 0.0,
        trade_off: float = 1.0,
    ) -> WeightInstance:
        r"""The weight program of CA-Fed Theorem 2's coefficients ``program`` (any object with
        its ``A``, ``B``, ``C``, ``pi``, ``Q`` and ``sum_eta``: ``cafed.theorem2_program``).

        Without ``kappa``: :math:`f(q)` is Theorem 2's bound on
        :math:`\mathbb E[F_B(\bar w_T)-F_B^*]` (upper bound; :math:`A,B,C` divided by
        :math:`\sum_t\eta_t`). With ``kappa``: :math:`f(q)=2\kappa^2\cdot` that bound
        :math:`+\ \bar\kappa^2\epsilon_{\rm bias}`, problem (III-C) (Theorem 1, ``bias="chi2"``,
        ``Gamma`` = :math:`\Gamma`) or its Theorem 3 variant (``bias="tv"``, ``Gamma`` =
        :math:`\Gamma'`, fixed). :math:`A=\Sigma` scales with :math:`\pi` (use
        ``curvature_scales_with_pi=True`` in :func:`~fedtheory.optim.weight_sensitivity`)."""
        owner = "WeightInstance.from_theorem2"
        if kappa is None:
            if bias != "none":
                raise ParameterError(
                    f"The 'bias' parameter of {owner} must be 'none' without kappa. "
                    f"Got {bias!r} instead."
                )
            scale, weight = 1.0 / program.sum_eta, 0.0
        else:
            scale = 2.0 * kappa * kappa / program.sum_eta
            factor = {"chi2": 2.0, "tv": 8.0}.get(bias, 0.0)
            weight = _bias_weight(factor, kappa, Gamma, trade_off, owner, "Gamma")
        a, b, c = program.A * scale, program.B * scale, program.C * scale
        if not (np.isfinite(a).all() and np.isfinite([b, c]).all()):
            raise overflow(owner, {"kappa": kappa, "program": [program.B, program.C, *program.A]})
        return cls(a, b, c, program.pi, alpha, program.Q, bias, weight)

    @declare(q=Array(shape=("self.num_clients",), low=0.0))
    def objective(self, q) -> float:
        r""":math:`f(q)` for weights ``q [N]`` (scale matters: use :math:`\|q\|_1=Q`)."""
        return float(weight_objective(torch.from_numpy(q), self))


@declare(inst=Instance(WeightInstance), q=Tensor(shape=(..., "inst.num_clients"), low=0.0))
def weight_objective(q: torch.Tensor, inst: WeightInstance) -> torch.Tensor:
    r""":math:`f(q)` of ``inst`` for a batch of non-negative weights ``q [..., N]`` with
    :math:`\pi^\top q>0` -> ``[...]`` (float64); infinite where :math:`\chi^2` is (some
    :math:`p_k=0<\alpha_k`)."""
    mass = (q * torch.from_numpy(inst.pi)).sum(-1)
    if not bool((mass > 0).all()):
        raise ParameterError(
            "The 'q' parameter of weight_objective must have pi^T q > 0 (f is defined for "
            f"weights with mass on available clients). Got pi^T q = {float(mass.min()):g} instead."
        )
    value = _weight_objective(q, inst)
    chi2_infinite = (
        inst.bias == "chi2"
        and inst.bias_weight > 0
        and bool(((q == 0) & torch.from_numpy(inst.alpha > 0)).any())  # p_k = 0 < alpha_k
    )
    if not (chi2_infinite or bool(torch.isfinite(value).all())):
        raise ParameterError(
            "The 'q' parameter of weight_objective must be scaled so that f(q) is finite "
            f"(it overflows). Got entries in [{float(q.min()):g}, {float(q.max()):g}] instead."
        )
    return value


def _bias_weight(factor: float, kappa: float, gamma: float, trade_off: float, owner: str,
                 name: str) -> float:  # fmt: skip
    r"""The divergence's weight :math:`c\,\kappa^4\Gamma\bar\kappa^2` (``c``: 2 for
    Theorem 1's :math:`\chi^2`, 8 for Theorem 3's :math:`d_{TV}^2`), refused where it
    overflows."""
    weight = factor * kappa * kappa * kappa * kappa * gamma * trade_off
    if not np.isfinite(weight):
        raise overflow(owner, {"kappa": kappa, name: gamma, "trade_off": trade_off})
    return weight


def _weight_objective(q: torch.Tensor, inst: WeightInstance) -> torch.Tensor:
    """:func:`weight_objective` unchecked, infinite where :math:`\\pi^\top q=0` (the greedy
    search compares candidates with it)."""
    pi = torch.from_numpy(inst.pi)
    a = torch.from_numpy(inst.a)
    alpha = torch.from_numpy(inst.alpha)
    mass = (q * pi).sum(-1)  # [...]
    quad = 0.5 * (a * q * q).sum(-1) + inst.B
    value = torch.where(mass > 0, quad / mass, torch.full_like(mass, torch.inf)) + inst.C
    if inst.bias == "none" or inst.bias_weight == 0.0:
        return value
    p = pi * q / mass[..., None]  # [..., N]
    if inst.bias == "chi2":
        ratio = torch.where(alpha > 0, alpha**2 / p, torch.zeros_like(p))
        div = ratio.sum(-1) - 1.0
    else:
        div = (0.5 * (alpha - p).abs().sum(-1)) ** 2
    return value + inst.bias_weight * div
