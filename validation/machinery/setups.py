r"""A paper's experiment carries its set-up beside its result: what the paper's text says,
what the authors' public code runs, and what fedtheory ran, aspect by aspect (data, clients,
availability, model, optimiser, rounds, batch, step sizes, evaluated model, metric, seeds,
what each baseline is given), each difference marked material or not with a one-line reason.

Every aspect says what fixes it (``fixed_by``): ``"paper"`` (the paper's text),
``"code"`` (the authors' code, with ``cite``: file and line at a named commit) or
``"unforced"`` (neither: an initial estimate, a step size tuned for another model, the
initialisation where the text is silent...), with the values tried over a stated plausible
range (``values``, the first the default run). A finding varies every unforced aspect
(:func:`fedtheory.verdict.compare_findings` with ``unforced=`` :meth:`SetUp.unforced`) and is
*reproduced* or *reversed* only if that holds at every value; otherwise it *depends on* it.

A finding row is judged against one column (``"paper"`` or ``"code"``); its *open material
differences* are the aspects where fedtheory's run differs materially from that column. A
row with an open material difference is never *reversed*: it is *reproduced on a stand-in*,
*contradicted at this scale* or *underpowered* (:func:`fedtheory.verdict.compare_finding`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fedtheory.constraints import (
    Bool,
    Exemplified,
    Instance,
    Label,
    Option,
    SequenceOf,
    Text,
    declare,
)
from fedtheory.errors import ParameterError

COLUMNS = ("paper", "code")
FIXED_BY = ("paper", "code", "unforced")
SETUP_HEADER = ("aspect", "fixed by", "paper text", "authors' code", "fedtheory", "material?")


@declare(
    name=Text(),
    paper=Label(),
    code=Label(),
    ours=Label(),
    material=Bool(),
    reason=Label(),
    fixed_by=Option(*FIXED_BY),
    cite=Label(),
    values=SequenceOf(Label()),
)
@dataclass(frozen=True)
class Aspect:
    """One line of a set-up table; ``material`` is the difference between ``ours`` and the
    column the row is judged against, ``reason`` says why it matters or not; ``fixed_by``
    what fixes the choice (:data:`FIXED_BY`), ``cite`` where the authors' code fixes it
    (``"path:line"`` at the table's commit; required for ``"code"``), ``values`` the values
    an unforced choice is run at over its plausible range (at least two, the default first;
    required for ``"unforced"``)."""

    name: str
    paper: str
    code: str
    ours: str
    material: bool
    reason: str
    fixed_by: str = "paper"
    cite: str = ""
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.fixed_by == "code" and not self.cite:
            raise ParameterError(
                f"The 'cite' parameter of Aspect must name the file and line of the authors' "
                f"code that fixes {self.name!r} (fixed_by='code'). Got '' instead."
            )
        if self.fixed_by == "unforced" and len(self.values) < 2:
            raise ParameterError(
                f"The 'values' parameter of Aspect must list at least 2 values of the unforced "
                f"choice {self.name!r} (its plausible range). Got {self.values!r} instead."
            )

    def fixed(self) -> str:
        """The "fixed by" cell: the paper, the code at ``cite``, or unforced with its values."""
        if self.fixed_by == "code":
            return f"code ({self.cite})"
        if self.fixed_by == "unforced":
            return "unforced: varied over " + ", ".join(self.values)
        return "paper"


@declare(
    finding=Text(),
    against=Option(*COLUMNS),
    aspects=Exemplified(SequenceOf(Instance(Aspect), plural="aspects"), lambda args: ()),
    commit=Label(),
)
@dataclass(frozen=True)
class SetUp:
    """The set-up of one finding row, judged against the ``against`` column."""

    finding: str
    against: str
    aspects: tuple[Aspect, ...]
    commit: str = ""  # the authors' repository and commit the ``cite`` lines refer to

    def unforced(self) -> tuple[str, ...]:
        """The names of the unforced aspects: the choices every row must vary."""
        return tuple(a.name for a in self.aspects if a.fixed_by == "unforced")

    def open_differences(self) -> tuple[str, ...]:
        """``"aspect: reason"`` of every material difference (empty: a faithful run)."""
        return tuple(f"{a.name}: {a.reason}" for a in self.aspects if a.material)

    def title(self) -> str:
        """The sentence above the table."""
        at = f"; the code's lines at {self.commit}" if self.commit else ""
        return f"Set-up of {self.finding} (judged against the {self.against}'s set-up{at}):"

    def table_rows(self) -> list[tuple[str, ...]]:
        """One row per aspect, columns :data:`SETUP_HEADER`."""
        return [
            (
                a.name,
                a.fixed(),
                a.paper,
                a.code,
                a.ours,
                ("**yes**: " if a.material else "no: ") + a.reason,
            )  # fmt: skip
            for a in self.aspects
        ]
