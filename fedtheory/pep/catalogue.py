r"""Catalogue statements about deterministic methods, written as PEPs.

* FedLaAvg's bound on Example 1 (Yan et al. 2020, arXiv Theorem 1; journal App. G
  Theorem 4; catalogue ``fedlaavg.example1.fedlaavg_bound``): FedLaAvg (one available client
  per iteration, exact gradients, :math:`\gamma=1/(2\sqrt T)`) on two clients
  :math:`f_i(x)=\|x-e_i\|^2` with :math:`\|e_1-e_2\|\le1` (Example 1 with
  :math:`e_1=0,e_2=1` and its isometric images in :math:`\mathbb R^d`), blocks
  :math:`t_1,t_2`, :math:`\|x_0-x^*\|\le a`. Criterion
  :math:`\min_{0\le t\le T}\|x_t-x^*\|^2` (:math:`=\min_tF(x_t)-F^*` on this class, the
  paper's :math:`(\hat x-x^*)^2` with :math:`\hat x=\arg\min_{x_t}f(x_t)`). The paper's
  bound is increasing in :math:`a` and :math:`|e_1-e_2|`, so it holds for the whole class
  at its largest values: bound / PEP value is the exact looseness.
* FedAvg on Example 1 (Yan et al. 2020, Example 1; journal App. C eq. (16)-(19);
  catalogue ``fedlaavg.example1.end_of_period``): with exact gradients and alternating
  blocks the period-end iterate tends to :math:`X_B\ne x^*`; from :math:`x_0=x^*` it is
  :math:`x_{kP}-x^*=(X_B-x^*)(1-\rho^k)`, :math:`\rho=(1-2\gamma)^{t_1+t_2}`, a value the
  exact worst case of :math:`\|x_{kP}-x^*\|^2` must reach: FedAvg's worst case plateaus
  at a positive level while FedLaAvg's decreases.
* FedAWE's Theorem 1 and Corollary 2 at :math:`\sigma=0` (Xiang et al. 2024, §6.3 and
  App. G, H.1; catalogue ``fedawe.theorem1``, ``fedawe.corollary2``): FedAWE
  (:mod:`fedtheory.pep.fedawe`) with :math:`\eta_g=1` and :math:`\eta_l` on the boundary of
  (11), :math:`m` clients available independently with probabilities :math:`p_i^t` (every
  mask enumerated, the expectation exact), :math:`F(\bar x^0)-F^*\le\Delta`, Assumption 4
  with :math:`\beta^2=0`; criterion the statement's left side. The PEP ranges over
  :math:`L`-smooth *convex* clients (a subclass of the statements' :math:`L`-smooth class,
  where the gap condition is exact) with Assumption 4 imposed at :math:`x^*` and the server
  models (``relaxed``): its value bounds the worst case over that subclass from above.
"""

from __future__ import annotations

import math

import numpy as np

from fedtheory.constraints import Array, Integer, MappingOf, Option, Real, Size, Text, declare
from fedtheory.errors import ParameterError
from fedtheory.pep.classes import Isotropic
from fedtheory.pep.heterogeneity import AtOptimum
from fedtheory.pep.initial import Initial
from fedtheory.pep.participation import Participation
from fedtheory.pep.solve import PepResult, worst_case

RESOLUTION = 1e3
""":func:`exact_worst_case_for` returns a value only when it is at least this many times the
largest error of its certificate (smaller values are below the solver's resolution)."""

EXAMPLE1 = Isotropic(2.0)
"""The class of Example 1's clients :math:`f_i(x)=\\|x-e_i\\|^2` (Hessian :math:`2I`)."""


@declare(t1=Size(), t2=Size(), T=Size(), a2=Real(0.0, low_open=True), zeta2=Real(0.0))
def example1_setting(*, t1: int, t2: int, T: int, a2: float, zeta2: float = 1.0) -> dict:
    """Pattern, initial condition and heterogeneity of Example 1 (``a2`` =
    :math:`\\|x_0-x^*\\|^2` bound, ``zeta2`` = :math:`\\|e_1-e_2\\|^2`, since
    :math:`\\nabla f_i(x^*)=\\pm(e_2-e_1)`)."""
    return {
        "participation": Participation.alternating(T, 2, blocks=(t1, t2)),
        "initial": Initial(a2),
        "heterogeneity": AtOptimum(zeta2),
    }


@declare(t1=Size(), t2=Size(), T=Size(), x0=Real())
def fedlaavg_theorem4(*, t1: int, t2: int, T: int, x0: float) -> tuple[PepResult, float]:
    """Exact worst case of FedLaAvg on the Example 1 class with ``a = |x0 - 1/2|``
    (:math:`e_1=0, e_2=1`) and the paper's bound at the same constants."""
    from fedtheory.bounds import fedlaavg
    from fedtheory.sim import FedLaAvg

    a2 = float(np.square(np.float64(x0) - 0.5)) if abs(x0) < 1e150 else math.inf
    if not math.isfinite(a2):
        raise ParameterError(
            f"The 'x0' parameter of fedlaavg_theorem4 must keep (x0 - 1/2)^2 finite. Got {x0!r} "
            "instead."
        )
    s = example1_setting(t1=t1, t2=t2, T=T, a2=max(a2, 1e-12))
    alg = FedLaAvg(clients_per_round=1, local_steps=1, lr=1 / (2 * math.sqrt(T)))
    part = s.pop("participation")
    solvers = ("CLARABEL-TIGHT", "CLARABEL", "SCS")  # a 3 x 3 program with tiny values
    # the bound first: constants it refuses (an overflow) are refused before the solve
    bound = fedlaavg.fedlaavg_bound.evaluate(x0=x0, e1=0.0, e2=1.0, t1=t1, t2=t2, T=T).total
    result = worst_case(alg, EXAMPLE1, part, criterion="min_gap", solvers=solvers, **s)
    return result, float(bound)


@declare(
    t1=Size(), t2=Size(), periods=Integer(1), gamma=Real(0.0, 1.0, low_open=True, high_open=True)
)
def example1_plateau(*, t1: int, t2: int, periods: int, gamma: float) -> tuple[float, float]:
    """``(X_B - x*)^2`` (the limit's squared distance) and the squared distance of
    FedAvg's period-end iterate after ``periods`` periods from :math:`x_0=x^*`, on Example 1
    with :math:`e_1=0,e_2=1` (Yan et al. 2020, App. C eq. (16)-(19))."""
    from fedtheory.bounds import fedlaavg

    k = periods
    limit = fedlaavg.end_of_period.evaluate(e1=0.0, e2=1.0, gamma=gamma, t1=t1, t2=t2).total
    rho = (1 - 2 * gamma) ** (t1 + t2)
    gap2 = (float(limit) - 0.5) ** 2
    return gap2, gap2 * (1 - rho**k) ** 2


def _whole(value: object) -> object:
    """A whole float (a JSON number such as ``8.0``) as an int; anything else as given
    (then checked by the function it goes to)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


FEDAWE_STATEMENTS = {
    "fedawe_zbar": "theorem1",
    "fedawe_xbar": "corollary2",
    "fedawe_consensus_x": "corollary3",
}
r"""PEP criterion of each FedAWE statement compared with its exact worst case (the left
sides of Theorem 1 and Corollaries 2-3). Corollary 3's consensus error is of order
:math:`(\eta_l\eta_g)^2` at (11)'s step sizes, below the solver's resolution: its worst
case is then known only to be at most the value plus the certificate's error. Lemma 6's
left side is a difference with Theorem 1's (linear in both), not a criterion here."""


@declare(
    probabilities=Array(ndim=2, low=0.0, high=1.0),
    s=Size(),
    L=Real(0.0, low_open=True),
    zeta2=Real(0.0),
    Delta=Real(0.0, low_open=True),
)
def fedawe_constants(probabilities, *, s: int = 1, L: float = 1.0, zeta2: float = 0.1,
                     Delta: float = 1.0) -> dict:  # fmt: skip
    r"""The statements' constants for availability probabilities ``probabilities [T, m]``
    (:math:`\delta,\delta_{\max}` their extremes, :math:`\rho` the exact
    :func:`fedtheory.bounds.fedawe.mixing_rho`), :math:`\sigma^2=\beta^2=0`,
    :math:`\eta_g=1` and :math:`\eta_l` the largest value both conditions (11) allow."""
    from fedtheory.bounds import fedawe

    p = probabilities
    c = {
        "delta": float(p.min()),
        "delta_max": float(p.max()),
        "rho": float(fedawe.mixing_rho(p).max()),
        "m": p.shape[1],
        "s": s,
        "L": L,
        "sigma2": 0.0,
        "beta2": 0.0,
        "zeta2": zeta2,
        "F_gap": Delta,
        "T": p.shape[0],
        "eta_g": 1.0,
    }
    limits = [
        thm.evaluate(**{k: c[k] for k in thm.parameters}).total
        for thm in (fedawe.conditions11_eta_product, fedawe.conditions11_eta_l)
    ]
    eta_l = float(min(limits))
    if not eta_l > 0:  # conditions (11) scale with delta: an underflow leaves no step
        raise ParameterError(
            f"The 'probabilities' parameter of fedawe_constants must leave a positive local "
            f"step under FedAWE's conditions (11). Got delta = {c['delta']:g} instead, where "
            f"the largest eta_l allowed underflows to {eta_l:g}."
        )
    return {**c, "eta_l": eta_l}


@declare(
    criterion=Option(*FEDAWE_STATEMENTS),
    probabilities=Array(ndim=2, low=0.0, high=1.0),
    s=Size(),
    L=Real(0.0, low_open=True),
    zeta2=Real(0.0),
    Delta=Real(0.0, low_open=True),
)
def fedawe_statement(criterion: str, probabilities, **constants) -> tuple[PepResult, float, dict]:
    """Exact worst case (module docstring) of FedAWE's statement measured by ``criterion``
    (a key of :data:`FEDAWE_STATEMENTS`) under independent availability
    ``probabilities [T, m]``, the statement's bound at the same constants, and the
    constants (:func:`fedawe_constants`)."""
    from fedtheory.bounds import fedawe
    from fedtheory.pep.classes import SmoothConvex
    from fedtheory.pep.heterogeneity import Dissimilarity
    from fedtheory.sim import FedAWE

    c = fedawe_constants(probabilities, **constants)
    alg = FedAWE(local_steps=c["s"], lr=c["eta_l"], server_lr=c["eta_g"])
    # the bound first: constants it refuses (an overflow) are refused before the solve
    thm = getattr(fedawe, FEDAWE_STATEMENTS[criterion])
    bound = thm.evaluate(**{k: c[k] for k in thm.parameters}).total
    result = worst_case(
        alg,
        SmoothConvex(c["L"]),
        Participation.independent(probabilities),
        initial=Initial(c["F_gap"], "gap"),
        heterogeneity=Dissimilarity(c["beta2"], c["zeta2"]),
        criterion=criterion,
        solvers=("CLARABEL-TIGHT", "CLARABEL", "SCS"),
    )
    return result, float(bound), c


EXAMPLE1_CONSTANTS = ("t1", "t2", "T", "x0")
"""The constants of a worst instance of FedLaAvg's Example 1 family."""


@declare(family_key=Text(), instance=MappingOf())
def exact_worst_case_for(family_key: str, instance: dict) -> float | None:
    """Exact worst case (PEP value) for the tightness family ``family_key`` at the
    constants ``instance`` of its worst instance (the tightness table's JSON, with
    ``t1, t2, T, x0``), or None where PEP does not apply (a stochastic or
    Markov-availability statement) or where the value is below :data:`RESOLUTION` times its
    certificate's error.

    Only ``fedlaavg.example1.fedlaavg_bound`` is a deterministic method under a fixed
    pattern (its PEP has a 3 x 3 Gram matrix for any horizon). A solver failure raises
    RuntimeError with its status (never a number)."""
    found = exact_worst_case_certified(family_key, instance)
    return None if found is None else found[0]


@declare(family_key=Text(), instance=MappingOf())
def exact_worst_case_certified(family_key: str, instance: dict) -> tuple[float, float] | None:
    """:func:`exact_worst_case_for` with the tolerance of its certificate: ``(value,
    tolerance)`` (:attr:`fedtheory.pep.certificate.Certificate.tolerance`), or None."""
    if family_key != "fedlaavg.example1.fedlaavg_bound":
        return None
    missing = [k for k in EXAMPLE1_CONSTANTS if k not in instance]
    if missing:
        raise ParameterError(
            f"The 'instance' parameter of exact_worst_case_for must give {EXAMPLE1_CONSTANTS} "
            f"for {family_key!r}. Got {instance!r} (missing {missing}) instead."
        )
    result, _ = fedlaavg_theorem4(**{k: _whole(instance[k]) for k in EXAMPLE1_CONSTANTS})
    if not result.ok:
        raise RuntimeError(f"exact worst case of {family_key}: {result}")
    if result.value < RESOLUTION * result.certificate.error:
        return None
    return result.value, result.certificate.tolerance
