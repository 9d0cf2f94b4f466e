"""Lazy access to PEPit (optional extra ``fedtheory[pep]``), and the declared kinds of
PEPit objects (imported at their first check)."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from fedtheory.constraints import Constraint, Either, Exemplified, Having, InstanceOf, SequenceOf

MISSING = "fedtheory.pep needs PEPit: pip install 'fedtheory[pep]' (or pip install pepit)."


def pepit() -> ModuleType:
    """The ``PEPit`` module, or ImportError with the one-line install hint."""
    try:
        import PEPit
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(MISSING) from err
    return PEPit


def functions() -> ModuleType:
    """``PEPit.functions`` (the interpolable function classes)."""
    pepit()
    import PEPit.functions

    return PEPit.functions


def clients(entry: Constraint, plural: str) -> Constraint:
    """A non-empty list of ``entry`` values, one per client: two in the generated tests'
    valid call (as many as its masks' columns and its weights)."""
    return Exemplified(
        SequenceOf(entry, min_size=1, plural=plural),
        lambda args: [entry.example(args) for _ in range(2)],
    )


def _solved(args: Mapping[str, Any]):
    """One gradient step on :math:`\\mathcal F_{0.1,1}`, solved: a valid PEP to check."""
    from fedtheory.pep import _program as program

    PEPit = pepit()
    pep = PEPit.PEP()
    f = pep.declare_function(functions().SmoothStronglyConvexFunction, mu=0.1, L=1.0)
    xs, x0 = f.stationary_point(), pep.set_initial_point()
    pep.set_initial_condition((x0 - xs) ** 2 <= 1)
    pep.set_performance_metric((x0 - f.gradient(x0) - xs) ** 2)
    program.solve(pep, None, solver="CLARABEL")
    return pep


POINT = Exemplified(
    Either(InstanceOf("PEPit.point:Point"), InstanceOf("fedtheory.pep._symmetry:Vector")),
    lambda args: pepit().Point(),
)
"""A PEPit point (an iterate, a gradient, a client's centre) or a point of the reduced PEP
of interchangeable clients (:class:`fedtheory.pep._symmetry.Vector`)."""
POINTS = clients(POINT, "PEPit points")
"""PEPit points: a trajectory :math:`x_0..x_T`, the clients' gradients at one point."""
EXPRESSION = Exemplified(
    InstanceOf("PEPit.expression:Expression"), lambda args: pepit().Expression()
)
"""A PEPit expression (a function value, a criterion's term)."""
FUNCTION = Exemplified(
    Having("gradient"),
    lambda args: functions().SmoothStronglyConvexFunction(mu=0.1, L=1.0),
)
"""A PEPit function, a weighted sum of clients' functions or a client of the reduced PEP:
``gradient`` (and ``__call__``) on points."""
FUNCTIONS = clients(FUNCTION, "PEPit functions (one per client)")
PEP = Exemplified(InstanceOf("PEPit.pep:PEP"), lambda args: pepit().PEP())
"""A PEPit problem being built."""
SOLVED = Exemplified(InstanceOf("PEPit.pep:PEP"), _solved)
"""A PEPit problem solved by :func:`fedtheory.pep._program.solve`."""
