r"""A paper's experiment carries its set-up beside its result: what the paper's text says,
what the authors' public code runs, and what fedtheory ran, aspect by aspect (data, clients,
availability, model, optimiser, rounds, batch, step sizes, evaluated model, metric, seeds,
what each baseline is given), each difference marked material or not with a one-line reason.

A finding row is judged against one column (``"paper"`` or ``"code"``); its *open material
differences* are the aspects where fedtheory's run differs materially from that column. A
row with an open material difference is never *reversed*: it says
*not reproduced (set-up differs: ...)* (:func:`fedtheory.verdict.compare_finding`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fedtheory.errors import ParameterError

COLUMNS = ("paper", "code")
SETUP_HEADER = ("aspect", "paper text", "authors' code", "fedtheory", "material?")


@dataclass(frozen=True)
class Aspect:
    """One line of a set-up table; ``material`` is the difference between ``ours`` and the
    column the row is judged against, ``reason`` says why it matters or not."""

    name: str
    paper: str
    code: str
    ours: str
    material: bool
    reason: str


@dataclass(frozen=True)
class SetUp:
    """The set-up of one finding row, judged against the ``against`` column."""

    finding: str
    against: str
    aspects: tuple[Aspect, ...]

    def __post_init__(self) -> None:
        if self.against not in COLUMNS:
            raise ParameterError(
                f"The 'against' parameter of SetUp must be one of {COLUMNS}. Got "
                f"{self.against!r} instead."
            )

    def open_differences(self) -> tuple[str, ...]:
        """``"aspect: reason"`` of every material difference (empty: a faithful run)."""
        return tuple(f"{a.name}: {a.reason}" for a in self.aspects if a.material)

    def title(self) -> str:
        """The sentence above the table."""
        return f"Set-up of {self.finding} (judged against the {self.against}'s set-up):"

    def table_rows(self) -> list[tuple[str, ...]]:
        """One row per aspect, columns :data:`SETUP_HEADER`."""
        return [
            (a.name, a.paper, a.code, a.ours, ("**yes**: " if a.material else "no: ") + a.reason)
            for a in self.aspects
        ]
