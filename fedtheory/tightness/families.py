r"""Instance families of the catalogue's upper bounds whose measured side is cheap, gathered
from the papers' records.

Each family keeps its bound's hypotheses true on its whole box and measures exactly where
possible; a paper's families are the ``FAMILIES`` of the modules its record names under
``tightness`` (:mod:`fedtheory.papers`), beside the paper's other modules:
:mod:`fedtheory.tightness.cafed`, ``divergences``, ``fedau``, ``e3cs``, ``fedlaavg`` and
``fedawe``. ``FAMILIES`` maps each catalogue key to its family (and, once registered, each
user family: :func:`fedtheory.tightness.register`).
"""

from __future__ import annotations

from importlib import import_module

from fedtheory import papers
from fedtheory.tightness.family import Family

CATALOGUE_KEYS: set[str] = set()
"""Every registered paper's families' keys (a user family may not take one of these keys)."""
FAMILIES: dict[str, Family] = {}
"""Every family by key: each registered paper's (the ``FAMILIES`` of the modules its record
names under ``tightness``), then those registered by the user (``register``)."""


def _load(paper: papers.Paper) -> None:
    for module in map(import_module, paper.tightness):
        CATALOGUE_KEYS.update(f.key for f in module.FAMILIES)
        FAMILIES.update({f.key: f for f in module.FAMILIES})


papers.on_register(_load)
