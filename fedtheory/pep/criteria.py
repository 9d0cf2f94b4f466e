r"""Performance criteria of the final or best server model.

``distance`` :math:`\|x_T-x^*\|^2`; ``gap`` :math:`F(x_T)-F^*`; ``min_gap``
:math:`\min_{0\le t\le T}F(x_t)-F^*`; ``min_grad_norm``
:math:`\min_{0\le t\le T}\|\nabla F(x_t)\|^2` (the non-convex criterion); for FedAWE
only, the left sides of its statements (:func:`fedtheory.pep.fedawe.statement_terms`):
``fedawe_zbar`` (Theorem 1), ``fedawe_xbar`` (Corollary 2), ``fedawe_consensus_x``
(Corollary 3), ``fedawe_consensus_z`` (Lemma 6). Under a distribution of masks the
criterion is the expectation over masks of the per-mask value.
"""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Array, Either, Having, Instance, Option, declare
from fedtheory.errors import ParameterError
from fedtheory.pep import fedawe
from fedtheory.pep._pepit import FUNCTION, POINT, POINTS

FEDAWE = fedawe.STATEMENTS
CRITERIA = ("distance", "gap", "min_gap", "min_grad_norm", *FEDAWE)
CONVEX_ONLY = ("distance", "gap", "min_gap")
DESCRIPTION = {
    "distance": "||x_T - x*||^2",
    "gap": "F(x_T) - F*",
    "min_gap": "min_{t<=T} F(x_t) - F*",
    "min_grad_norm": "min_{t<=T} ||grad F(x_t)||^2",
    "fedawe_zbar": "(1/T) sum_{t<T} ||grad F(zbar^t)||^2",
    "fedawe_xbar": "(1/T) sum_{t<T} ||grad F(xbar^t)||^2",
    "fedawe_consensus_x": "(1/T) sum_{t<T} (1/m) sum_i ||x_i^t - xbar^t||^2",
    "fedawe_consensus_z": "(1/T) sum_{t<T} (1/m) sum_i ||z_i^t - zbar^t||^2",
}


@declare(
    criterion=Option(*CRITERIA),
    models=Either(Instance(fedawe.Trajectory), POINTS),
    xs=POINT,
    F=FUNCTION,
)
def terms(criterion: str, models, xs, F) -> list:
    """The PEPit expressions whose minimum is the criterion on one trajectory
    ``models`` (:math:`x_0..x_T`)."""
    if criterion in FEDAWE:
        if not isinstance(models, fedawe.Trajectory):
            raise ParameterError(
                f"The 'criterion' parameter of worst_case must be one of {CRITERIA[:4]} for "
                f"this algorithm ({criterion!r} is a FedAWE statement). Got {criterion!r} instead."
            )
        return fedawe.statement_terms(criterion, models, F)
    if criterion == "distance":
        return [(models[-1] - xs) ** 2]
    if criterion == "gap":
        return [F(models[-1]) - F(xs)]
    if criterion == "min_gap":
        return [F(x) - F(xs) for x in models]
    return [F.gradient(x) ** 2 for x in models]


@declare(
    criterion=Option(*CRITERIA[:4]),
    problem=Having("loss", "client_grads", "alpha", "dim"),
    models=Array(shape=(None, "problem.dim")),
    x_star=Array(shape=("problem.dim",)),
    finite_result=True,
)
def value(criterion: str, models, x_star, problem) -> float:
    """The same criterion measured on a simulated trajectory ``models [T+1, d]`` of
    ``problem`` (numpy), :math:`x^*` = ``x_star [d]``."""
    if criterion == "distance":
        return float(np.sum((models[-1] - x_star) ** 2))
    f_star = float(problem.loss(x_star))
    if criterion == "gap":
        return float(problem.loss(models[-1])) - f_star
    if criterion == "min_gap":
        return float(np.min(problem.loss(models))) - f_star
    full = np.einsum("n,tnd->td", problem.alpha, problem.client_grads(models))
    return float(np.min(np.sum(full**2, -1)))
