r"""CA-Fed's aggregation-weight programs as DPP cvxpy problems, built once and re-solved.

Rodio et al. 2023, App. D: with :math:`s=1/\pi^\top q` and :math:`y=sq`,
:math:`\min_q\frac{\frac12q^\top Aq+B}{\pi^\top q}+C` becomes the jointly convex program

.. math:: \min_{y\ge0,\,s}\ \frac1{2s}y^\top Ay+Bs+C
          \quad\text{s.t.}\quad \pi^\top y=1,\ \mathbf 1^\top y=Qs

(the perspective of a convex quadratic; :math:`s\ge1/Q>0` follows from the constraints since
:math:`\pi\le1`). Because :math:`p_k=\pi_ky_k`, the bias terms are convex in :math:`(y,s)` too
(CA-Fed, App. D): :math:`\chi^2_{\alpha\|p}=\sum_k\frac{\alpha_k^2}{\pi_ky_k}-1` and
:math:`d_{TV}(\alpha,p)=\tfrac12\|\alpha-\pi\odot y\|_1`. The paper's App. E claims convexity in
:math:`q`, which is false (see ``tests/test_optim.py``); the program here is DCP in
:math:`(y,s)`.

DPP parameter mapping (products of parameters are not DPP, so coefficients are pre-multiplied):

==================  ============================================================
cvxpy parameter     value
==================  ============================================================
``sqrt_a [N]``      :math:`\sqrt{A_{kk}}` (so :math:`y^\top Ay=\|\sqrt a\odot y\|^2`)
``B``, ``C``        :math:`B`, :math:`C`
``pi [N]``          :math:`\pi`
``Q``               :math:`Q`
``chi2_coef [N]``   :math:`w\,\alpha_k^2/\pi_k` (``bias="chi2"``)
``chi2_shift [N]``  1 where the coefficient is 0 (:math:`\alpha_k=0` or :math:`w=0`): the
                    term is then absent and :math:`1/(y_k+1)` lets such clients get zero weight
``bias_weight``     :math:`w` (the :math:`-w` of :math:`\chi^2`, the TV factor :math:`w/4`)
``alpha [N]``       :math:`\alpha` (``bias="tv"``)
``excluded [N]``    1 for clients forced to zero weight (constraint ``excluded * y == 0``)
==================  ============================================================
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from fedtheory.constraints import Array, BoolArray, Instance, Option, Real, Text, declare
from fedtheory.errors import ParameterError, SolverError
from fedtheory.optim.instance import BIAS_KINDS, WeightInstance

__all__ = [
    "SOLVER",
    "SOLVER_OPTIONS",
    "SOLVER_RETRY_OPTIONS",
    "ZERO_WEIGHT_RTOL",
    "WeightProgram",
    "WeightSolution",
    "excluded_clients",
]

SOLVER = "CLARABEL"
"""The one solver used for every weight program."""
SOLVER_OPTIONS: dict[str, float] = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8}
"""Its tolerances (Clarabel option names), fixed here and nowhere else."""
SOLVER_RETRY_OPTIONS: dict[str, float | bool] = {**SOLVER_OPTIONS, "equilibrate_enable": False}
"""Second attempt, same tolerances, when the first ends short of 'optimal' (degenerate
instances such as equal availabilities with a total-variation optimum at the kink)."""
SOLVER_LAST_OPTIONS: dict[str, float | bool] = {
    **SOLVER_OPTIONS,
    "static_regularization_enable": False,
}
"""Third attempt, same tolerances (badly scaled chi-square instances with a tiny alpha_k)."""
ZERO_WEIGHT_RTOL = SOLVER_OPTIONS["tol_gap_rel"] ** 0.5
r"""A client counts as excluded when :math:`q_k\le` ``ZERO_WEIGHT_RTOL`` :math:`\cdot Q`.
Interior-point solvers return small positive values instead of exact zeros; an objective
accurate to :math:`\varepsilon` pins the weights only to about :math:`\sqrt\varepsilon`."""


@declare(
    q=Array(ndim=1),
    objective=Real(),
    status=Text(),
    excluded=BoolArray(shape=("q[0]",)),
    method=Option("cvxpy", "kkt", "newton", "greedy"),
)
@dataclass(frozen=True)
class WeightSolution:
    """Weights returned by a weight program, the water-filling solver or the greedy rule."""

    q: np.ndarray  # [N] aggregation weights, sum Q
    objective: float  # f(q) evaluated at the returned weights
    status: str  # solver status ("optimal", ...) or the method's own
    excluded: np.ndarray  # [N] bool, q_k <= ZERO_WEIGHT_RTOL * Q
    method: str  # "cvxpy", "kkt" or "greedy"

    def __repr__(self) -> str:
        return (
            f"WeightSolution({self.method}: f={self.objective:.6g}, status={self.status}, "
            f"excluded={np.flatnonzero(self.excluded).tolist()})"
        )


@declare(q=Array(ndim=1), Q=Real(0.0, low_open=True))
def excluded_clients(q: np.ndarray, Q: float) -> np.ndarray:
    """Boolean mask ``[N]`` of clients whose weight ``q`` (finite; a solver may return
    tiny negatives) is zero to ``ZERO_WEIGHT_RTOL`` times the total ``Q > 0``."""
    return q <= ZERO_WEIGHT_RTOL * Q


class WeightProgram:
    r"""The DPP program for ``num_clients`` clients and one bias kind, built once.

    ``solve(instance)`` assigns the parameters' ``.value`` and re-solves (no rebuild), so a
    run that updates its availability estimates every round pays only the solver.

    Examples
    --------
    >>> from fedtheory.optim import WeightInstance
    >>> prog = WeightProgram(3)
    >>> sol = prog.solve(WeightInstance([1.0, 1.0, 1.0], 0.5, 0.0, [0.9, 0.5, 0.05], [1/3]*3))
    >>> sol.status, sol.excluded.tolist()
    ('optimal', [False, False, True])
    """

    @declare("num_clients", bias=Option(*BIAS_KINDS))
    def __init__(self, num_clients: int, *, bias: str = "none") -> None:
        n = num_clients
        self.num_clients, self.bias = n, bias
        self.y = cp.Variable(n, nonneg=True)
        self.s = cp.Variable(nonneg=True)
        self.sqrt_a = cp.Parameter(n, nonneg=True)
        self.B = cp.Parameter(nonneg=True)
        self.C = cp.Parameter()
        self.pi = cp.Parameter(n, nonneg=True)
        self.Q = cp.Parameter(pos=True)
        self.excluded = cp.Parameter(n, nonneg=True)
        self.bias_weight = cp.Parameter(nonneg=True)
        y, s = self.y, self.s
        objective = 0.5 * cp.quad_over_lin(cp.multiply(self.sqrt_a, y), s) + self.B * s + self.C
        constraints = [
            self.pi @ y == 1,
            cp.sum(y) == self.Q * s,
            cp.multiply(self.excluded, y) == 0,
        ]
        if bias == "chi2":
            self.chi2_coef = cp.Parameter(n, nonneg=True)
            self.chi2_shift = cp.Parameter(n, nonneg=True)
            inv = cp.Variable(n, nonneg=True)  # epigraph of 1/(y_k + shift_k)
            constraints.append(inv >= cp.inv_pos(y + self.chi2_shift))
            objective = objective + self.chi2_coef @ inv - self.bias_weight
        elif bias == "tv":
            self.alpha = cp.Parameter(n)
            l1 = cp.Variable(nonneg=True)  # epigraph of ||alpha - pi*y||_1 = 2 d_TV
            constraints.append(l1 >= cp.norm1(self.alpha - cp.multiply(self.pi, y)))
            objective = objective + 0.25 * self.bias_weight * cp.square(l1)
        self.problem = cp.Problem(cp.Minimize(objective), constraints)

    def is_dpp(self) -> bool:
        return self.problem.is_dpp()

    def _assign(self, inst: WeightInstance) -> None:
        if inst.num_clients != self.num_clients or inst.bias != self.bias:
            raise ParameterError(
                f"The 'instance' parameter of WeightProgram.solve must have N="
                f"{self.num_clients} and bias={self.bias!r}. Got N={inst.num_clients} and "
                f"bias={inst.bias!r} instead."
            )
        self.sqrt_a.value = np.sqrt(inst.a)
        self.B.value, self.C.value = inst.B, inst.C
        self.pi.value, self.Q.value = inst.pi, inst.Q
        self.excluded.value = inst.excluded.astype(float)
        self.bias_weight.value = inst.bias_weight
        if self.bias == "chi2":
            blocked = inst.excluded & (inst.alpha > 0) & (inst.bias_weight > 0)
            if blocked.any():
                raise SolverError(
                    f"The weight program is infeasible: client {int(np.argmax(blocked))} is "
                    "excluded but has alpha_k > 0, so the chi-square bias is infinite."
                )
            coef = inst.bias_weight * inst.alpha**2 / inst.pi
            self.chi2_coef.value = coef
            self.chi2_shift.value = (coef == 0).astype(float)
        elif self.bias == "tv":
            self.alpha.value = inst.alpha

    @declare(instance=Instance(WeightInstance))
    def solve(self, instance: WeightInstance) -> WeightSolution:
        """Optimal weights of ``instance``; ``SolverError`` names the status on failure."""
        self._assign(instance)
        for options in (SOLVER_OPTIONS, SOLVER_RETRY_OPTIONS, SOLVER_LAST_OPTIONS):
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", "Solution may be inaccurate")
                    self.problem.solve(solver=SOLVER, **options)
                status = self.problem.status
            except cp.SolverError as exc:
                status = f"solver failure ({exc})"
            if status == cp.OPTIMAL:
                break
        else:
            raise SolverError(
                f"The weight program (N={self.num_clients}, bias={self.bias!r}) ended with "
                f"status {status!r} instead of 'optimal'."
            )
        q = self.y.value / self.s.value
        # f evaluated at the returned q: the solver's own value carries its epigraph slack
        # and was seen up to ~1e-5 (relative) off where f(q) itself is within ~1e-7.
        return WeightSolution(
            q, instance.objective(q), status, excluded_clients(q, instance.Q), "cvxpy"
        )

    def __repr__(self) -> str:
        return f"WeightProgram(N={self.num_clients}, bias={self.bias!r}, solver={SOLVER})"
