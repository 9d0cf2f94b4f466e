r"""The worst case of an FL method over a function class, as a PEP solved by PEPit.

Performance estimation (Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017) writes
"the largest criterion over all clients' functions in a class, all initial points and (for a
distribution of masks) in expectation over the masks" as a semidefinite program over the
Gram matrix of the iterates and gradients, whose value is the exact worst case when the
class has interpolation conditions. :func:`worst_case` builds it from a simulator
algorithm (:mod:`fedtheory.pep.methods`), solves it, and keeps the solver, its tolerance,
the certificate's checks and what the replay needs.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from fedtheory.budget import check_seconds, seconds
from fedtheory.constraints import (
    Array,
    Bool,
    Exemplified,
    Finite,
    Integer,
    Label,
    MappingOf,
    Option,
    Probabilities,
    Real,
    SequenceOf,
    declare,
)
from fedtheory.constraints import Instance as IsA
from fedtheory.errors import ParameterError
from fedtheory.pep import _symmetry as symmetry
from fedtheory.pep import criteria, methods
from fedtheory.pep._pepit import pepit
from fedtheory.pep.certificate import Certificate, certified, check
from fedtheory.pep.classes import Isotropic, Quadratic, SmoothNonconvex, SmoothStronglyConvex
from fedtheory.pep.heterogeneity import AtOptimum, Dissimilarity
from fedtheory.pep.initial import Initial
from fedtheory.pep.participation import Participation

SOLVERS: dict[str, tuple[str, dict]] = {
    "CLARABEL": ("CLARABEL", {}),  # its defaults: tol_gap_abs = tol_gap_rel = tol_feas = 1e-8
    "CLARABEL-TIGHT": (
        "CLARABEL",
        {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10},
    ),
    # ten times Clarabel's default static regularisation of its KKT matrix: the quadratic
    # class's LMIs vanish at the worst case, and that factorisation then breaks down at the
    # default on some BLAS kernels (NumericalError, or optimal_inaccurate far from the
    # optimum, as for MIFA under a 16-mask Bernoulli pattern) and not on others
    "CLARABEL-REGULARISED": ("CLARABEL", {"static_regularization_constant": 1e-7}),
    "SCS": ("SCS", {"eps_abs": 1e-7, "eps_rel": 1e-7, "max_iters": 200_000}),
}
"""Open-source SDP solvers (name -> cvxpy solver, options) that ``worst_case`` tries in
turn. The tight Clarabel settings suit small, badly scaled programs (values far below one,
e.g. FedLaAvg's Example 1 at long horizons); larger programs often end inaccurate there."""

TOLERANCE = {"CLARABEL": 1e-8, "CLARABEL-TIGHT": 1e-12, "CLARABEL-REGULARISED": 1e-8, "SCS": 1e-7}
"""The requested tolerance of each entry of :data:`SOLVERS` (what the result reports)."""

CHECK_RTOL = 1e-5
"""A solution is *verified* when every check of its certificate is at most
``CHECK_RTOL * max(1, |value|)``; otherwise *inaccurate* (and no value is reported)."""


DIM = "x0[0]"
"""The dimension :math:`d` of the instance's points."""


@declare(
    x0=Array(ndim=1),
    x_star=Array(shape=(DIM,)),
    points=SequenceOf(Array(shape=(None, DIM), min_size=0), min_size=1, plural="arrays [P_i, d]"),
    grads=SequenceOf(Array(shape=(None, DIM), min_size=0), min_size=1, plural="arrays [P_i, d]"),
    values=SequenceOf(Array(ndim=1, min_size=0), min_size=0, plural="arrays [P_i]"),
    centres=SequenceOf(Array(shape=(DIM,)), min_size=1, plural="arrays [d]", none=True),
)
@dataclass(frozen=True)
class Instance:
    """What the replay needs: the interpolation data of every client (points ``x [P, d]``,
    gradients ``g [P, d]``, values ``f [P]``; for quadratics also the stationary point
    ``centre [d]``), :math:`x_0`, :math:`x^*`."""

    x0: np.ndarray  # [d]
    x_star: np.ndarray  # [d]
    points: tuple  # N x [P_i, d]
    grads: tuple  # N x [P_i, d]
    values: tuple  # N x [P_i]
    centres: tuple | None  # N x [d] (quadratic class)


STATUSES = ("verified", "inaccurate", "failed")


@declare(
    status=Option(*STATUSES),
    value=Real(none=True),
    solver=Option(*SOLVERS, none=True),
    tolerance=Real(0.0, low_open=True, none=True),
    certificate=Exemplified(IsA(Certificate, none=True), lambda args: None),
    message=Label(),
    gram_dim=Integer(0),
    constraints=Integer(0),
    seconds=Real(0.0),
    relaxed=Bool(),
    setting=MappingOf(Finite(), "values without NaN or inf"),
    instance=Exemplified(IsA(Instance, none=True), lambda args: None),
    inputs=MappingOf(),  # the solve's objects (an algorithm's radius may be inf: none)
)
@dataclass(frozen=True)
class PepResult:
    """A solved (or failed) PEP. ``value`` is the certified worst case (the proof's dual
    value), exact to ``certificate.tolerance``, or None when the solver failed or its
    solution did not pass the checks."""

    status: str  # "verified", "inaccurate" or "failed"
    value: float | None
    solver: str | None
    tolerance: float | None
    certificate: Certificate | None
    message: str
    gram_dim: int
    constraints: int
    seconds: float
    relaxed: bool  # a condition imposed only at evaluated points (value: upper bound)
    setting: dict | None = None  # None: {}
    instance: Instance | None = field(default=None, repr=False)
    inputs: dict | None = field(default=None, repr=False)  # the objects worst_case was given

    @property
    def ok(self) -> bool:
        return self.status == "verified"

    def __str__(self) -> str:
        if not self.ok:
            return f"PEP {self.status}: {self.message}"
        c = self.certificate
        return (
            f"worst case {certified(self.value, c.tolerance)} (certificate verified to "
            f"{c.tolerance:.1g}: largest check error {c.error:.1g}; {self.solver}, solver "
            f"tolerance {self.tolerance:g})"
        )


CLASSES = (SmoothStronglyConvex, Quadratic, Isotropic, SmoothNonconvex)


def _check_setting(algorithm, fclass, participation, initial, criterion) -> None:
    """ParameterError where the arguments, each valid, do not fit together."""
    owner = "worst_case"
    methods.check_method(algorithm, owner)
    criteria.check(criterion, owner)
    if not fclass.convex and criterion in criteria.CONVEX_ONLY:
        raise ParameterError(
            f"The 'criterion' parameter of {owner} must be 'min_grad_norm' for the class "
            f"{fclass}. Got {criterion!r} instead."
        )
    if not fclass.convex and initial.kind != "gap":
        raise ParameterError(
            f"The 'initial' parameter of {owner} must have kind='gap' for the class {fclass}. "
            f"Got kind={initial.kind!r} instead."
        )


def _budget(algorithm, fclass, participation, max_seconds) -> None:
    r"""Refuse a PEP estimated to take longer than the time budget: at least one PEPit
    operation per gradient step (masks x rounds x clients x local steps) and, but for the
    isotropic class (whose gradients are no new points), one factorisation of a Gram matrix
    of at least one point per round, :math:`T^3/3` flops."""
    K, T, N = participation.masks.shape
    steps = K * T * N * algorithm.local_steps
    gram = 0 if isinstance(fclass, Isotropic) else T**3 / 3
    what = f"{K} masks x {T} rounds x {N} clients x {algorithm.local_steps} local steps"
    check_seconds(seconds(rounds=steps, flops=gram), "worst_case", what=what,
                  fixes="fewer rounds, masks or clients", max_seconds=max_seconds)  # fmt: skip


@declare(
    "max_seconds",
    algorithm=methods.ALGORITHM,
    fclass=Exemplified(IsA(object, among=CLASSES), lambda args: SmoothStronglyConvex(0.5, 1.0)),
    participation=Exemplified(IsA(Participation), lambda args: Participation.full(2, 2)),
    initial=IsA(Initial, none=True),
    heterogeneity=IsA(object, among=(AtOptimum, Dissimilarity), none=True),
    criterion=criteria.CRITERION,
    alpha=Probabilities(size="participation.num_clients", none=True),
    solvers=SequenceOf(Option(*SOLVERS), min_size=1, plural="solver names"),
    use_symmetry=Bool(),
)
def worst_case(
    algorithm,
    fclass,
    participation: Participation,
    *,
    initial: Initial | None = None,
    heterogeneity=None,
    criterion: str = "distance",
    alpha=None,
    solvers: tuple[str, ...] = ("CLARABEL", "CLARABEL-REGULARISED", "SCS"),
    use_symmetry: bool = True,
    max_seconds: float | None = None,
) -> PepResult:
    r"""Exact worst case of ``algorithm`` (a :mod:`fedtheory.sim` FedAvg or MIFA, or a
    paper's method: :mod:`fedtheory.pep.registry`) when every client's :math:`f_i` is in
    ``fclass``, under ``participation``.

    .. math:: \max_{f_i\in\mathcal F,\ x_0}\ \sum_kp_k\,c\big(x^{(k)}_{0..T}\big)
              \quad\text{s.t. initial condition, heterogeneity},

    with :math:`x^*` a minimiser (stationary point) of :math:`F=\sum_i\alpha_if_i` (default
    uniform ``alpha``) and :math:`c` the ``criterion`` (:mod:`fedtheory.pep.criteria`).

    With ``use_symmetry`` (default), clients found interchangeable (same weight, same
    participation and aggregation weights under every mask) are reduced to one
    representative and their mean (:mod:`fedtheory.pep._symmetry`): the same value with a
    program whose size does not grow with the group's size. ``setting["symmetry"]`` says
    which groups were used, or why the full PEP was solved. A PEP estimated to take longer
    than ``max_seconds`` (:mod:`fedtheory.budget`) is refused before it is built (its
    gradient steps) and again before it is solved (its Gram matrix's size).

    Examples
    --------
    >>> from fedtheory.sim import AverageParticipating, FedAvg
    >>> gd = FedAvg(AverageParticipating(), local_steps=1, lr=0.1)
    >>> r = worst_case(gd, SmoothStronglyConvex(0.5, 1.0), Participation.full(3, 1))
    >>> r.status, round(r.value, 6), round((1 - 0.1 * 0.5) ** 6, 6)
    ('verified', 0.735092, 0.735092)
    """
    initial = Initial() if initial is None else initial
    _check_setting(algorithm, fclass, participation, initial, criterion)
    _budget(algorithm, fclass, participation, max_seconds)
    n = participation.num_clients
    alpha = np.full(n, 1.0 / n) if alpha is None else alpha
    args = (algorithm, fclass, participation, initial, heterogeneity, criterion, alpha, solvers,
            max_seconds)  # fmt: skip
    parts, note = [[i] for i in range(n)], "none (full PEP: use_symmetry=False)"
    if use_symmetry:
        parts, note = symmetry.groups(algorithm, fclass, participation, alpha, heterogeneity)
    if len(parts) < n:
        try:
            return _worst_case(*args, parts, note)
        except symmetry.Broken as err:  # the grouping did not survive the computation
            note = f"none (full PEP: {err})"
    return _worst_case(*args, None, note)


def _worst_case(
    algorithm,
    fclass,
    participation,
    initial,
    heterogeneity,
    criterion,
    alpha,
    solvers,
    max_seconds,
    parts,
    note,
) -> PepResult:
    """The PEP of :func:`worst_case`, full (``parts`` None) or reduced to the groups
    ``parts`` of interchangeable clients."""
    PEPit = pepit()
    pep = PEPit.PEP()
    model = None
    if parts is None:
        fs = [fclass.declare(pep) for _ in range(participation.num_clients)]
        F = sum((a * f for a, f in zip(alpha[1:], fs[1:], strict=True)), alpha[0] * fs[0])
        xs = F.stationary_point()
        x0 = pep.set_initial_point()
    else:
        model = symmetry.Reduced(pep, fclass, parts, alpha)
        fs, F, xs, x0 = model.clients, model.F, model.x_star, model.x0
    pep.set_initial_condition(initial.constraint(x0, xs, F))
    trajectories = [methods.run(algorithm, fs, x0, m) for m in participation.masks]
    if not fclass.convex:  # F* <= F(y) at every model y: F(x0) - F* <= value implies these
        for y in (x for traj in trajectories for x in traj[1:]):
            pep.add_constraint(F(x0) - F(y) <= initial.value)
    # every client evaluated at every server model: Dissimilarity needs them; for the
    # quadratic class these extra points (which change no value) keep PEPit's LMI program
    # well conditioned (measured: replays within 1e-7 instead of 3e-5)
    at_models = []
    if isinstance(heterogeneity, Dissimilarity) or isinstance(fclass, Quadratic):
        at_models = [[f.gradient(x) for f in fs] for traj in trajectories for x in traj[:-1]]
    if heterogeneity is not None:
        at_opt = [f.gradient(xs) for f in fs]
        for c in heterogeneity.constraints(at_opt, at_models, alpha):
            pep.add_constraint(c)
    objective = _objective(pep, PEPit, participation, trajectories, criterion, xs, F)
    pep.set_performance_metric(objective)
    if model is not None:
        model.close(trajectories)
    setting = {
        "algorithm": algorithm.name,
        "class": str(fclass),
        "initial": str(initial),
        "heterogeneity": str(heterogeneity),
        "criterion": criteria.description(criterion),
        "participation": repr(participation),
        "local_steps": algorithm.local_steps,
        "symmetry": note,
    }
    relaxed = bool(getattr(heterogeneity, "relaxed", False)) or not fclass.convex
    _solve_budget(model, max_seconds)
    result = _solve(pep, solvers, setting, relaxed, fs, x0, xs, fclass, model)
    inputs = {
        "algorithm": algorithm,
        "fclass": fclass,
        "participation": participation,
        "criterion": criterion,
        "alpha": alpha,
    }
    return replace(result, inputs=inputs)


def _objective(pep, PEPit, participation, trajectories, criterion, xs, F):
    r""":math:`\sum_kp_k\min_jc_{k,j}`: one free variable :math:`\tau_k\le c_{k,j}` per mask
    when the criterion is a minimum over rounds."""
    total = None
    for p, models in zip(participation.probs, trajectories, strict=True):
        terms = criteria.terms(criterion, models, xs, F)
        if len(terms) == 1:
            term = terms[0]
        else:
            term = PEPit.Expression()
            for c in terms:
                pep.add_constraint(term <= c)
        total = p * term if total is None else total + p * term
    return total


SOLVE_ITERATIONS = 5
"""Interior-point iterations :func:`_solve_budget` counts: fewer than a solve of these
programs takes (tens), so that the estimate stays a lower bound on a fast machine (FedAWE's
statement with 3 clients and 2 rounds, 109 points: estimated 72 s, solved in 311 s on the
2-core development machine under load)."""


def _solve_budget(model, max_seconds) -> None:
    r"""Refuse a built PEP whose solve is estimated to take longer than the time budget: an
    interior-point iteration factorises the Hessian of each positive semidefinite block of
    the Gram matrix (a block of :math:`k` points has :math:`m=k(k+1)/2` entries: a dense
    :math:`m\times m` matrix, :math:`m^3/3` flops), :data:`SOLVE_ITERATIONS` times. The
    size is known only once the PEP is built (points per gradient step depend on the method
    and the class), so this check follows :func:`_budget`'s, before any solver starts."""
    from PEPit.point import Point

    sizes = [len(b) for b in model.blocks()] if model is not None else [Point.counter]
    entries = [k * (k + 1) / 2 for k in sizes]
    flops = SOLVE_ITERATIONS * sum(m**3 / 3 for m in entries)
    what = f"a Gram matrix of {Point.counter} points (blocks of {', '.join(map(str, sizes))})"
    check_seconds(seconds(flops=flops), "worst_case", what=what,
                  fixes="fewer rounds, masks or clients", max_seconds=max_seconds)  # fmt: skip


def _solve(pep, solvers, setting, relaxed, fs, x0, xs, fclass, model) -> PepResult:
    """Try the solvers in turn. A solution (status ``optimal``, or ``optimal_inaccurate``,
    which Clarabel reports on many PEPs that pass every check) is kept only if its
    certificate passes; the last one that did not is reported as *inaccurate*, without a
    value; no solution at all is *failed*."""
    from PEPit.point import Point

    from fedtheory.pep import _program as program

    blocks = None if model is None else model.blocks()
    messages, start, rejected = [], time.perf_counter(), None
    for name in solvers:
        try:
            solver, options = SOLVERS[name]
            with warnings.catch_warnings():
                # cvxpy's "Solution may be inaccurate": the status is read and the
                # certificate checked below, and the result says so
                warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
                primal = program.solve(pep, blocks, solver=solver, **options)
        except Exception as err:  # cvxpy.error.SolverError and numerical failures
            messages.append(f"{name} failed ({type(err).__name__}: {err})")
            continue
        status = pep.wrapper.prob.status
        if primal is None or status not in ("optimal", "optimal_inaccurate"):
            messages.append(f"{name} returned status {status!r}")
            continue
        cert = check(pep, primal)
        size = pep.wrapper.scalar_rows + len(pep._list_of_psd_sent_to_wrapper)
        common = dict(
            solver=name,
            tolerance=TOLERANCE[name],
            certificate=cert,
            gram_dim=Point.counter,
            constraints=size,
            seconds=time.perf_counter() - start,
            relaxed=relaxed,
            setting=setting,
        )
        if cert.error > CHECK_RTOL * max(1.0, abs(cert.dual)):
            messages.append(
                f"{name} (status {status}): certificate check error {cert.error:.2g} above "
                f"{CHECK_RTOL:g} x max(1, |value|)"
            )
            rejected = common
            continue
        if status != "optimal":
            messages.append(f"{name} reported {status}; every certificate check passes")
        instance = _instance(fs, x0, xs, fclass) if model is None else model.instance(Instance)
        return PepResult(
            "verified", cert.dual, message="; ".join(messages) or "ok", instance=instance, **common
        )
    if rejected is not None:
        rejected["seconds"] = time.perf_counter() - start
        return PepResult("inaccurate", None, message="; ".join(messages), **rejected)
    return PepResult(
        "failed",
        None,
        None,
        None,
        None,
        "; ".join(messages),
        Point.counter,
        len(pep._list_of_prepared_constraints) + len(pep._list_of_prepared_psd),
        time.perf_counter() - start,
        relaxed,
        setting,
    )


def _instance(fs, x0, xs, fclass) -> Instance:
    """The primal solution's points, gradients and values per client."""
    from fedtheory.pep._program import value

    if isinstance(fclass, Isotropic):
        centres = tuple(np.asarray(value(f.centre)) for f in fs)
        grads = tuple(np.zeros((0, c.size)) for c in centres)
        return Instance(np.asarray(value(x0)), np.asarray(value(xs)), grads, grads, (), centres)
    pts, grads, vals = [], [], []
    for f in fs:
        data = f.list_of_points
        pts.append(np.array([value(x) for x, _, _ in data]))
        grads.append(np.array([value(g) for _, g, _ in data]))
        vals.append(np.array([value(v) for _, _, v in data]))
    centres = None
    if isinstance(fclass, Quadratic):
        centres = tuple(np.asarray(value(f.list_of_stationary_points[0][0])) for f in fs)
    return Instance(
        np.asarray(value(x0)), np.asarray(value(xs)), tuple(pts), tuple(grads), tuple(vals), centres
    )
