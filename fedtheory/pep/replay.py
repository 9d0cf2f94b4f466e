r"""The worst-case instance of a solved PEP, rebuilt as explicit client functions and run in
the simulator.

For the quadratic class every client's :math:`A_i` is recovered from its interpolation data
(points :math:`x_k`, gradients :math:`g_k`, stationary point :math:`c_i`) as the solution of

.. math:: \min_{A=A^\top}\ \|A(X-c_i)-G\|_F\quad\text{s.t.}\quad\mu I\preceq A\preceq LI,

(exact, residual at the solver's precision, by the interpolation theorem of Bousselmi,
Hendrickx & Glineur 2023); the clients become a :class:`~fedtheory.problems.QuadraticProblem`
and the algorithm runs in :func:`fedtheory.sim.simulate` on each mask (a
:class:`~fedtheory.availability.TraceReplay`) from the extracted :math:`x_0`. The criterion is
then measured on the simulated models with the problem's own minimiser.

For :math:`\mathcal F_{\mu,L}` (and the smooth convex class) the clients are the
interpolating functions of Taylor, Hendrickx & Glineur 2017
(:class:`~fedtheory.pep.interpolation.InterpolatedProblem`, gradients by a small QP per
query) and :math:`x^*` is the PEP's, where their weighted gradients vanish by construction.
The smooth non-convex class is replayed the same way, through the interpolant with
:math:`\mu=-L` (:mod:`fedtheory.pep.interpolation`), with :math:`x^*` the PEP's stationary
point; its PEP is ``relaxed`` (the initial gap imposed at the evaluated points), so the
replayed clients reproduce the PEP's iterates and criterion, while their
:math:`F(x_0)-\inf F` may exceed the PEP's :math:`\Delta`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedtheory.constraints import Array, Exemplified, Having, Instance, Real, RealUpTo, declare
from fedtheory.errors import ParameterError, SolverError
from fedtheory.pep import criteria, registry
from fedtheory.pep.classes import Isotropic, Quadratic, SmoothNonconvex, SmoothStronglyConvex
from fedtheory.pep.participation import Participation
from fedtheory.pep.solve import PepResult, worst_case


@declare(
    value=Real(),
    pep_value=Real(),
    fit_residual=Real(0.0, none=True),
    problem=Having("loss", "client_grads", "alpha"),
)
@dataclass(frozen=True)
class Replay:
    """The simulator's value on the worst-case instance and how well the fit reproduced
    the PEP's gradients."""

    value: float  # the criterion measured in the simulator (expected over the masks)
    pep_value: float
    fit_residual: float | None  # quadratics: max_i ||A_i (X_i - c_i) - G_i||_F; None: interpolant
    problem: object  # the QuadraticProblem or the InterpolatedProblem

    @property
    def difference(self) -> float:
        return abs(self.value - self.pep_value)


@declare(
    points=Array(ndim=2),
    grads=Array(shape=("points[0]", "points[1]")),
    centre=Array(shape=("points[1]",)),
    L=Real(0.0, low_open=True),
    mu=RealUpTo(0.0, "L"),
    finite_result=True,
)
def fit_quadratic(points, grads, centre, mu: float, L: float) -> tuple[np.ndarray, float]:
    r"""``A [d, d]`` with :math:`\mu I\preceq A\preceq LI` closest to
    :math:`A(x_k-c)=g_k` for ``points, grads [P, d]``, ``centre [d]``; and the residual.
    A solver failure is a :class:`~fedtheory.errors.SolverError` with cvxpy's status."""
    import cvxpy as cp

    d = points.shape[1]
    X, G = (points - centre).T, grads.T  # [d, P]
    A = cp.Variable((d, d), symmetric=True)
    eye = np.eye(d)
    problem = cp.Problem(
        cp.Minimize(cp.norm(A @ X - G, "fro")), [A - mu * eye >> 0, L * eye - A >> 0]
    )
    try:
        with np.errstate(all="ignore"):  # an overflowing datum: the status says so
            problem.solve(solver="CLARABEL")
    except (cp.error.SolverError, ValueError) as err:
        raise SolverError(f"fitting a quadratic failed: {err}") from None
    if problem.status != "optimal":
        raise SolverError(f"fitting a quadratic failed: cvxpy status {problem.status!r}")
    fitted = 0.5 * (A.value + A.value.T)
    # clip the solver's eigenvalue error so that QuadraticProblem sees A in [mu, L]
    w, v = np.linalg.eigh(fitted)
    fitted = (v * np.clip(w, mu, L)) @ v.T
    return fitted, float(np.linalg.norm(fitted @ X - G))


def _verified(args) -> PepResult:
    """Two rounds of gradient descent on a quadratic client: a verified PEP to replay."""
    from fedtheory.sim import AverageParticipating, FedAvg

    gd = FedAvg(AverageParticipating(), local_steps=1, lr=0.1)
    return worst_case(gd, Quadratic(0.5, 1.0), Participation.full(2, 1))


@declare(result=Exemplified(Instance(PepResult), _verified))
def replay(result: PepResult) -> Replay:
    """Rebuild the worst-case clients of ``result`` (explicit quadratics, or the
    :math:`\\mathcal F_{\\mu,L}` interpolant of :mod:`fedtheory.pep.interpolation`) and
    measure the criterion in the simulator (``fedtheory.sim.simulate``)."""
    from fedtheory.problems import QuadraticProblem

    fclass = result.inputs.get("fclass")
    classes = (Quadratic, Isotropic, SmoothStronglyConvex, SmoothNonconvex)
    if not result.ok or not isinstance(fclass, classes):
        raise ParameterError(
            "The 'result' parameter of replay must be a verified PEP of a replayable class "
            "(quadratic, isotropic, smooth strongly convex, smooth non-convex). Got status "
            f"{result.status!r}, class {fclass} instead."
        )
    inst = result.instance
    if isinstance(fclass, (SmoothStronglyConvex, SmoothNonconvex)):
        from fedtheory.pep.interpolation import InterpolatedProblem

        problem = InterpolatedProblem(
            inst.points,
            inst.grads,
            inst.values,
            mu=-fclass.L if isinstance(fclass, SmoothNonconvex) else fclass.mu,
            L=fclass.L,
            alpha=result.inputs["alpha"],
            x_star=inst.x_star,
        )
        return _run(result, problem, inst.x_star, None)
    if isinstance(fclass, Isotropic):  # A_i = L I: nothing to fit
        fits = [(fclass.L * np.eye(c.size), 0.0) for c in inst.centres]
    else:
        fits = [
            fit_quadratic(x, g, c, fclass.mu, fclass.L)
            for x, g, c in zip(inst.points, inst.grads, inst.centres, strict=True)
        ]
    A = np.stack([a for a, _ in fits])
    problem = QuadraticProblem(A, np.stack(inst.centres), alpha=result.inputs["alpha"])
    return _run(result, problem, problem.optimum()[0], max(r for _, r in fits))


def _run(result: PepResult, problem, x_star, fit_residual: float | None) -> Replay:
    """The criterion measured on ``simulate`` runs of every mask, weighted by its probability."""
    from fedtheory.availability import TraceReplay
    from fedtheory.sim import simulate

    inst = result.instance
    part, algorithm = result.inputs["participation"], result.inputs["algorithm"]
    total = 0.0
    criterion = result.inputs["criterion"]
    paper = registry.criteria().get(criterion)
    for mask, p in zip(part.masks, part.probs, strict=True):
        if paper is not None:  # a paper's criterion: measured on its own method's run
            total += p * paper.measure(algorithm, problem, mask, inst.x0)
            continue
        record = simulate(problem, TraceReplay(mask), algorithm, rounds=part.rounds, w0=inst.x0)
        models = record.iterates[0]  # [T+1, d]
        total += p * criteria.value(criterion, models, x_star, problem)
    return Replay(float(total), float(result.value), fit_residual, problem)
