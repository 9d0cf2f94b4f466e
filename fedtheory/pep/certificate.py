r"""PEPit's primal and dual checks, computed silently and kept as numbers.

Mirrors ``PEP.check_feasibility`` of PEPit 0.5: primal side -- smallest eigenvalue of the
Gram matrix and of every LMI, largest violation of the scalar constraints; dual side --
smallest eigenvalue of the residual (the dual of :math:`G\succeq0`) and of the LMI duals,
most negative multiplier of an inequality, and the largest coefficient left over when the
worst-case proof (objective minus the multipliers' combination of constraints) is rebuilt
(PEPit prints the sum of their absolute values, which grows with the Gram matrix's size;
every other check is a largest entry too); the duality gap between the dual value (the
certified upper bound) and the primal value (the one the extracted instance attains).

The certificate bounds how far the value may be from the exact worst case
(:attr:`Certificate.tolerance`): a check error is an eigenvalue or entry of a matrix that the
proof pairs with the Gram matrix :math:`G` (the dual side) or an error of :math:`G` itself
(the primal side), so it moves the value by at most that error times the size of
:math:`G`, :math:`\operatorname{tr}G` (the sum of the squared norms of the leaf points); the
duality gap adds itself. Every comparison with a PEP value takes this tolerance; a value is
printed with the digits it supports (:func:`certified`).

PEPit 0.5.1 does not rebuild the proof of classes defined with LMIs (the quadratic class):
its own check reports a leftover of order one even when the primal and dual values agree to
1e-9. For those the leftover is not checked (``proof_residual`` is None); the duality gap,
the feasibility checks and the replay in the simulator remain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedtheory.constraints import Exemplified, Having, Instance, MappingOf, Real, Text, declare
from fedtheory.errors import ParameterError
from fedtheory.pep._pepit import SOLVED


@declare(
    **dict.fromkeys(
        (
            "primal",
            "dual",
            "gram_min_eig",
            "lmi_min_eig",
            "constraint_violation",
            "residual_min_eig",
            "multiplier_min",
        ),
        Real(),
    ),  # fmt: skip
    proof_residual=Real(0.0, none=True),
    scale=Real(1.0),
)
@dataclass(frozen=True)
class Certificate:
    """The checks' numbers; ``error`` is their largest (absolute) size."""

    primal: float  # primal value tau (attained by the Gram matrix)
    dual: float  # dual value: the proof's constant (certified upper bound)
    gram_min_eig: float
    lmi_min_eig: float
    constraint_violation: float
    residual_min_eig: float
    multiplier_min: float
    proof_residual: float | None  # largest leftover coefficient (PEPit: their sum); None: LMI
    scale: float = 1.0  # max(1, tr G): the size of the solution the errors act on

    @property
    def gap(self) -> float:
        return self.dual - self.primal

    @property
    def error(self) -> float:
        return max(abs(self.gap), self.feasibility)

    @property
    def tolerance(self) -> float:
        r"""How far the value may be from the exact worst case:
        :math:`|\text{gap}|+\max(1,\operatorname{tr}G)\cdot` the largest feasibility
        error (module docstring)."""
        return abs(self.gap) + self.scale * self.feasibility

    @property
    def tolerance_text(self) -> str:
        """Where :attr:`tolerance` comes from, for a report's row."""
        return (
            f"tolerance {self.tolerance:.2g} from the PEP's certificate: |gap| {abs(self.gap):.2g}"
            f" + max(1, tr G) {self.scale:.3g} x largest feasibility error "
            f"{self.feasibility:.2g}"
        )

    @property
    def feasibility(self) -> float:
        """The largest check error but the gap (primal and dual feasibility, the proof)."""
        return max(
            -min(self.gram_min_eig, 0.0),
            -min(self.lmi_min_eig, 0.0),
            max(self.constraint_violation, 0.0),
            -min(self.residual_min_eig, 0.0),
            -min(self.multiplier_min, 0.0),
            0.0 if self.proof_residual is None else self.proof_residual,
        )


@declare(pep=SOLVED, primal=Real())
def check(pep, primal: float) -> Certificate:
    """The certificate of a solved PEPit ``pep`` whose primal value is ``primal``."""
    if pep.G_value is None or pep.residual is None:
        raise ParameterError(
            f"The 'pep' parameter of check must be a solved PEP. Got {pep!r} (not solved) instead."
        )
    from PEPit.point import Point
    from PEPit.tools.dict_operations import prune_dict, symmetrize_dict

    from fedtheory.pep._program import value

    constraints = pep._list_of_prepared_constraints  # PEPit 0.5: every scalar constraint
    lmis = pep._list_of_psd_sent_to_wrapper
    violation = max(
        [value(c) for c in constraints if c.equality_or_inequality == "inequality"]
        + [abs(value(c)) for c in constraints if c.equality_or_inequality == "equality"],
        default=0.0,
    )
    lmi_eig = min((np.linalg.eigvalsh(value(m)).min() for m in lmis), default=0.0)
    lmi_dual = min((np.linalg.eigvalsh(m.eval_dual()).min() for m in lmis), default=0.0)
    multipliers = [c.eval_dual() for c in constraints if c.equality_or_inequality == "inequality"]
    leaves = Point.list_of_leaf_points
    combination = -np.dot(leaves, np.dot(pep.residual, leaves))
    for m in lmis:
        combination -= np.sum(m.eval_dual() * m.matrix_of_expressions)
    for c in constraints:
        combination += c.eval_dual() * c.expression
    proof = prune_dict(symmetrize_dict((pep.objective - combination).decomposition_dict))
    dual = float(proof.get(1, 0.0))
    leftover = float(np.max(np.abs([v for k, v in proof.items() if k != 1]), initial=0.0))
    if lmis:  # not rebuilt by PEPit 0.5.1 (see the module's docstring)
        leftover = None
    return Certificate(
        primal=primal,
        dual=dual,
        gram_min_eig=float(np.linalg.eigvalsh(pep.G_value).min()),
        lmi_min_eig=float(min(lmi_eig, lmi_dual)),
        constraint_violation=float(violation),
        residual_min_eig=float(np.linalg.eigvalsh(pep.residual).min()),
        multiplier_min=float(min(multipliers, default=0.0)),
        proof_residual=leftover,
        scale=max(1.0, float(np.trace(pep.G_value))),
    )


@declare(value=Real(), tolerance=Real(0.0))
def certified(value: float, tolerance: float) -> str:
    """``value`` rounded to the smallest power of ten at least ``tolerance`` (its digits
    below are not the computation's), e.g. ``certified(0.00264921227, 3e-9)`` is
    ``'0.00264921'``; all significant digits (``.10g``) when ``tolerance`` is 0.

    Examples
    --------
    >>> certified(0.00264921227, 3e-9), certified(1.9997823, 2.5e-5), certified(0.5, 0.0)
    ('0.00264921', '1.9998', '0.5')
    """
    if tolerance == 0 or value == 0:
        return f"{value:.10g}"
    unit = math.ceil(math.log10(tolerance))
    rounded = round(value, -unit) or value  # 0.9999997 at 1e-6 has the digits of 1.000000
    digits = max(1, math.floor(math.log10(abs(rounded))) - unit + 1)
    text = f"{rounded:#.{min(digits, 10)}g}"  # '#': the certified trailing zeros stay
    return text.replace(".e", "e").rstrip(".")


COLUMNS = ("accuracy", "gap", "scale", "feasibility")
"""The columns :func:`record` appends under a key, :func:`tolerance_text` reads."""


def _solved(args):
    """A solved PEP's stand-in: what :func:`record` reads of a ``PepResult``."""
    from types import SimpleNamespace

    return SimpleNamespace(certificate=Certificate(1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, None))


def _columns(args) -> dict:
    """The columns of one PEP under the key ``"pep"``."""
    return {f"pep_{c}": np.array([1e-9]) for c in COLUMNS}


def _row(args):
    from fedtheory.verdict import compare_upper_bound

    return compare_upper_bound("c", "r", [1.0], [2.0])


KEY = Exemplified(Text(), lambda args: "pep")
COLUMN_DATA = Exemplified(MappingOf(), _columns)


@declare(
    columns=Instance(dict),
    key=KEY,
    result=Exemplified(Having("certificate"), _solved),
)
def record(columns: dict, key: str, result) -> None:
    """Append ``result``'s value tolerance and where it comes from (the certificate's gap,
    scale and feasibility error) to the lists ``columns[f"{key}_accuracy"]``, ``..._gap``,
    ``..._scale`` and ``..._feasibility``: the columns :func:`with_tolerance` reads."""
    c = result.certificate
    values = (c.tolerance, abs(c.gap), c.scale, c.feasibility)
    for name, v in zip(COLUMNS, values, strict=True):
        columns.setdefault(f"{key}_{name}", []).append(v)


@declare(data=COLUMN_DATA, key=KEY)
def tolerance_text(data, key: str) -> str:
    """Which tolerance a comparison with the PEP values of ``data``'s columns ``key``
    (:func:`record`) took: the largest of their certificates'."""
    missing = [f"{key}_{c}" for c in COLUMNS if f"{key}_{c}" not in data]
    if missing:
        raise ParameterError(
            f"The 'data' parameter of tolerance_text must hold the columns record writes "
            f"under key {key!r}. Got {sorted(data)} (missing {missing}) instead."
        )
    i = int(np.argmax(data[f"{key}_accuracy"]))
    return (
        f"tolerance {data[f'{key}_accuracy'][i]:.2g} from the certificate of the PEP at point "
        f"{i + 1} (|gap| {data[f'{key}_gap'][i]:.2g} + max(1, tr G) {data[f'{key}_scale'][i]:.3g}"
        f" x largest feasibility error {data[f'{key}_feasibility'][i]:.2g}), the largest of "
        f"{data[f'{key}_accuracy'].size}"
    )


@declare(row=Exemplified(Having("detail"), _row), data=COLUMN_DATA, key=KEY)
def said(row, data, key: str):
    """The verdict row ``row`` with the tolerance its comparison took (:func:`tolerance_text`)
    added to its detail."""
    from dataclasses import replace

    return replace(row, detail=f"{row.detail}; {tolerance_text(data, key)}")
