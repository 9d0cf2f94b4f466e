r"""Performance criteria of the final or best server model.

``distance`` :math:`\|x_T-x^*\|^2`; ``gap`` :math:`F(x_T)-F^*`; ``min_gap``
:math:`\min_{0\le t\le T}F(x_t)-F^*`; ``min_grad_norm``
:math:`\min_{0\le t\le T}\|\nabla F(x_t)\|^2` (the non-convex criterion); and the papers'
criteria, the left sides of their statements on their own methods' trajectories
(:data:`fedtheory.pep.registry.CRITERIA`). Under a distribution of masks the criterion is
the expectation over masks of the per-mask value.
"""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Array, Exemplified, Having, Instance, Option, Text, declare
from fedtheory.errors import ParameterError
from fedtheory.pep import registry
from fedtheory.pep._pepit import FUNCTION, POINT, POINTS

SHARED = ("distance", "gap", "min_gap", "min_grad_norm")
"""The criteria of any method's server models."""
CONVEX_ONLY = ("distance", "gap", "min_gap")
DESCRIPTION = {
    "distance": "||x_T - x*||^2",
    "gap": "F(x_T) - F*",
    "min_gap": "min_{t<=T} F(x_t) - F*",
    "min_grad_norm": "min_{t<=T} ||grad F(x_t)||^2",
}
"""The shared criteria in words."""
CRITERION = Exemplified(Text(), lambda args: "distance")
"""A criterion's name (checked against :func:`names` when it is used)."""


def names() -> tuple[str, ...]:
    """Every criterion: :data:`SHARED`, then the registered papers' (in the records' order)."""
    return (*SHARED, *registry.criteria())


@declare(criterion=CRITERION, owner=Text())
def check(criterion: str, owner: str) -> str:
    """``criterion`` if it is one of :func:`names`, else a ParameterError naming them."""
    return Option(*names()).check(criterion, "criterion", owner, {})


@declare(criterion=CRITERION)
def description(criterion: str) -> str:
    """The criterion ``criterion`` (one of :func:`names`) in words."""
    check(criterion, "description")
    paper = registry.criteria().get(criterion)
    return DESCRIPTION[criterion] if paper is None else paper.description


@declare(
    criterion=CRITERION, models=Exemplified(Instance(list), POINTS.example), xs=POINT, F=FUNCTION
)
def terms(criterion: str, models, xs, F) -> list:
    """The PEPit expressions whose minimum is the criterion on one trajectory
    ``models`` (a list of PEPit points :math:`x_0..x_T`; for a paper's criterion, the list
    its method's ``run`` returned, which may hold more)."""
    check(criterion, "worst_case")
    paper = registry.criteria().get(criterion)
    if paper is not None:
        if not isinstance(models, paper.trajectory):
            raise ParameterError(
                f"The 'criterion' parameter of worst_case must be one of {SHARED} for this "
                f"algorithm ({criterion!r} measures {paper.method.__name__}). Got "
                f"{criterion!r} instead."
            )
        return paper.terms(models, F)
    if criterion == "distance":
        return [(models[-1] - xs) ** 2]
    if criterion == "gap":
        return [F(models[-1]) - F(xs)]
    if criterion == "min_gap":
        return [F(x) - F(xs) for x in models]
    return [F.gradient(x) ** 2 for x in models]


@declare(
    criterion=Option(*SHARED),
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
