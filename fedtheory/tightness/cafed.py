r"""Tightness families of CA-Fed's Theorems 1 and 3 (Rodio et al. 2023): quadratic clients
:math:`F_k(w)=\frac12(w-c_k)^\top A_k(w-c_k)` (so :math:`\kappa\ge1` holds by construction;
the smallest eigenvalue is normalised to 1 and the first minimiser to 0, as the ratio is
invariant under both), any target :math:`\alpha` and effective weights :math:`p` in the open
simplex (every such :math:`p` is :math:`\pi\odot q/\pi^\top q` for some availability and
weights), any point :math:`w`; measured: the exact :math:`F(w)-F^*`
(:func:`fedtheory.bounds.cafed.decomposition_constants`). Its ``FAMILIES`` join
``fedtheory.tightness.FAMILIES`` through CA-Fed's record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from fedtheory.bounds import cafed
from fedtheory.constraints import Real as RealIn
from fedtheory.constraints import declare
from fedtheory.tightness.family import Family, Integer, Measurement, Real

KAPPA_MAX = 100.0
"""Largest condition number of the CA-Fed family (eigenvalues in ``[1, KAPPA_MAX]``)."""
LOG_WEIGHT_RANGE = 2.0
"""CA-Fed family: :math:`\\log_{10}(\\alpha_k/\\alpha_0)` and :math:`\\log_{10}(p_k/p_0)` lie in
``[-LOG_WEIGHT_RANGE, LOG_WEIGHT_RANGE]``."""


# --- CA-Fed Theorems 1 and 3 -----------------------------------------------------------------
def _cafed_reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    n, d = ints["N"], ints["d"]
    out = [Real(f"u[{k},{j}]", 0.0, 1.0) for k in range(n) for j in range(d) if k + j > 0]
    out += [Real(f"theta[{k}]", 0.0, math.pi) for k in range(n)] if d == 2 else []
    out += [Real(f"c[{k},{j}]", -1.0, 1.0) for k in range(1, n) for j in range(d)]
    out += [Real(f"log_a[{k}]", -LOG_WEIGHT_RANGE, LOG_WEIGHT_RANGE) for k in range(1, n)]
    out += [Real(f"log_b[{k}]", -LOG_WEIGHT_RANGE, LOG_WEIGHT_RANGE) for k in range(1, n)]
    out += [Real("beta", -4.0, 4.0)] + ([Real("zeta", -4.0, 4.0)] if d == 2 else [])
    return tuple(out)


def _cafed_parts(ints: Mapping[str, int], x) -> dict:
    r"""The CA-Fed family's instance at a point, in the paper's symbols:
    ``A [N, d, d]``, client minimisers ``c [N, d]`` (:math:`w_k^*`), ``alpha``, ``p`` ``[N]``
    and the coordinates ``beta``, ``zeta`` of :math:`w-w_B^*` (see :func:`_cafed_instance`)."""
    n, d = ints["N"], ints["d"]
    x = np.asarray(x, dtype=float)
    i = 0

    def take(m):
        nonlocal i
        i += m
        return x[i - m : i]

    eig = KAPPA_MAX ** np.concatenate([[0.0], take(n * d - 1)]).reshape(n, d)  # [N, d]
    if d == 2:
        th = take(n)
        rot = np.stack(
            [np.stack([np.cos(th), -np.sin(th)], -1), np.stack([np.sin(th), np.cos(th)], -1)], -2
        )  # [N, 2, 2]
        A = np.einsum("nij,nj,nkj->nik", rot, eig, rot)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
    else:
        A = eig[:, :, None]  # [N, 1, 1]
    c = np.vstack([np.zeros((1, d)), take((n - 1) * d).reshape(n - 1, d)])
    a = 10.0 ** np.concatenate([[0.0], take(n - 1)])
    b = 10.0 ** np.concatenate([[0.0], take(n - 1)])
    beta = float(take(1)[0])
    zeta = float(take(1)[0]) if d == 2 else 0.0
    return {"A": A, "c": c, "alpha": a / a.sum(), "p": b / b.sum(), "beta": beta, "zeta": zeta}


def _cafed_instance(ints: Mapping[str, int], x):
    r"""The CA-Fed family's instance ``(problem, p [N], w [d])`` at a point.

    Client :math:`k` has eigenvalues :math:`\kappa_{\max}^{u_{kj}}` with :math:`u_{00}=0`
    (the smallest eigenvalue is 1 and belongs to client 0: the ratio is invariant under
    scaling every :math:`A_k` and under relabelling the clients, so :math:`\mu=1`,
    :math:`L\le\kappa_{\max}`), rotated by :math:`\theta_k` when :math:`d=2`, and
    minimiser :math:`c_k` with :math:`c_0=0` and :math:`c_k\in[-1,1]^d` (the ratio is
    invariant under translating and scaling every :math:`c_k`);
    :math:`\alpha_k\propto10^{a_k}`, :math:`p_k\propto10^{b_k}` with :math:`a_0=b_0=0`,
    :math:`a_k,b_k\in[-2,2]`; the point is :math:`w=w_B^*+\beta s+\zeta s^\perp` with
    :math:`s=w_B^*-w^*` and, when :math:`d=2`, :math:`s^\perp` its rotation by a right angle
    (:math:`\beta=1` is the worst point of the two-client instance of
    :func:`theorem3_attaining_point`)."""
    from fedtheory.problems import QuadraticProblem  # torch: on the first evaluation only

    parts = _cafed_parts(ints, x)
    problem = QuadraticProblem(parts["A"], parts["c"], alpha=parts["alpha"])
    w_star, _ = problem.optimum()
    w_b, _ = problem.optimum(parts["p"])
    shift = w_b - w_star
    w = w_b + parts["beta"] * shift
    if ints["d"] == 2:
        w = w + parts["zeta"] * np.array([-shift[1], shift[0]])
    return problem, parts["p"], w


def _cafed_evaluate(ints, x, seed) -> Measurement:
    problem, p, w = _cafed_instance(ints, x)
    c = cafed.decomposition_constants(problem, w, p)
    loss = float(problem.loss(w))
    magnitude = max(abs(loss), abs(c.F_star), abs(float(problem.loss(w, p))), abs(c.F_B_star))
    constants = {"N": ints["N"], "d": ints["d"], **c.as_kwargs()}
    constants["gap_B"] = float(constants["gap_B"])
    return Measurement(loss - c.F_star, constants, magnitude=magnitude)


def _cafed_describe(ints, x) -> dict:
    """The instance in Rodio et al.'s symbols: A_k, the client minimisers w_k^*, alpha, p, w."""
    problem, p, w = _cafed_instance(ints, x)
    parts = _cafed_parts(ints, x)
    A = parts["A"][:, 0, 0] if ints["d"] == 1 else parts["A"]
    return {
        "N": ints["N"],
        "d": ints["d"],
        "A_k": A.tolist(),
        "w_k^*": parts["c"].tolist(),
        "alpha": parts["alpha"].tolist(),
        "p": p.tolist(),
        "w": w.tolist(),
    }


_CAFED_INTEGERS = (
    Integer("N", 2, 5, "clients"),
    Integer("d", 1, 2, "dimension"),
)


@declare(delta=RealIn(0.0, 0.49, low_open=True))
def theorem1_near_tight_point(delta: float) -> tuple[dict, np.ndarray]:
    r"""A point of the ``cafed.theorem1`` family where measured / bound is
    :math:`(1-4\delta^2)/(1-2\delta^2)` (:math:`\to1` as :math:`\delta\to0`).

    Two clients in one dimension, :math:`A_k=1` (:math:`\kappa=1`), :math:`c=(0,1)`,
    :math:`\alpha=(\frac12,\frac12)`, :math:`p=(\frac12-\delta,\frac12+\delta)`,
    :math:`w=2w_B^*-w^*=\frac12+2\delta`: :math:`F(w)-F^*=2\delta^2`,
    :math:`F_B(w)-F_B^*=\delta^2/2`, :math:`\chi^2=4\delta^2/(1-4\delta^2)`,
    :math:`\Gamma=\frac18`. So Theorem 1 is tight: the supremum of the ratio is 1
    (approached, attained at no :math:`\delta>0` of this instance)."""
    log_b = math.log10((0.5 + delta) / (0.5 - delta))
    return {"N": 2, "d": 1}, np.array([0.0, 1.0, 0.0, log_b, 1.0])


@declare(delta=RealIn(0.0, 0.49, low_open=True))
def theorem3_attaining_point(delta: float) -> tuple[dict, np.ndarray]:
    r"""A point of the ``cafed.theorem3`` family where measured = bound exactly.

    Two clients in one dimension, :math:`A_k=1`, :math:`c=(0,1)`,
    :math:`p=(\frac12,\frac12)` (:math:`w_B^*=\frac12`), :math:`\alpha=(\frac12+\delta,
    \frac12-\delta)` (:math:`w^*=\frac12-\delta`, :math:`d_{TV}=\delta`),
    :math:`w=\frac12+\delta`: :math:`F(w)-F^*=2\delta^2=2\cdot\frac{\delta^2}2+
    8\delta^2\cdot\frac18` with :math:`\Gamma'=\frac18`. So Theorem 3 is attained (its
    worst ratio is exactly 1)."""
    log_a = math.log10((0.5 - delta) / (0.5 + delta))
    return {"N": 2, "d": 1}, np.array([0.0, 1.0, log_a, 0.0, 1.0])


_CAFED_DESCRIPTION = (
    "quadratic clients (N <= 5, d <= 2, kappa <= 100), any alpha, p in the open simplex "
    "(ratios within 100), any w; measured: exact F(w) - F^*"
)
CAFED_THEOREM1 = Family(
    cafed.theorem1,
    _CAFED_DESCRIPTION,
    _CAFED_INTEGERS,
    _cafed_reals,
    _cafed_evaluate,
    tightness="tight: sup ratio = 1, approached at kappa = 1 (theorem1_near_tight_point: "
    "ratio (1 - 4 delta^2)/(1 - 2 delta^2))",
    supremum=1.0,
    instance=_cafed_describe,
)
CAFED_THEOREM3 = Family(
    cafed.theorem3,
    _CAFED_DESCRIPTION,
    _CAFED_INTEGERS,
    _cafed_reals,
    _cafed_evaluate,
    tightness="attained: ratio exactly 1 at kappa = 1 (theorem3_attaining_point)",
    supremum=1.0,
    instance=_cafed_describe,
)

FAMILIES = (CAFED_THEOREM1, CAFED_THEOREM3)
"""The paper's tightness families (joining ``fedtheory.tightness.FAMILIES`` through its record,
:mod:`fedtheory.papers`)."""
