r"""Errata as checks: each suspected error in a *statement* of a paper, on a concrete instance.

One module per paper, named by the paper's record (``errata``, :mod:`fedtheory.papers`); every
check returns a frozen :class:`Erratum` through the one constructor :func:`erratum`
(:mod:`~fedtheory.validation.errata.record`); :data:`ERRATA` lists them in the records' order
and each module's (``validation/ERRATA.md``'s order; ``catalogue``), and the names each module
lists in its ``EXPORTS`` are bound here (``errata.<check name>``); the
validation ``errata`` recomputes every entry against what ``ERRATA.md`` records (``check``).
Print them with ``python -m fedtheory.validation.errata`` (``--markdown``: the details section
of ``validation/ERRATA.md``).
"""

# ruff: noqa: F401, E402  (the package's public names; the papers' join on registration)
from fedtheory import papers as _papers
from fedtheory.validation.errata.catalogue import ERRATA, SECOND, main, markdown_entry, run_all
from fedtheory.validation.errata.check import (
    CODES,
    ERRATA_MD,
    NAME,
    TABLE_ANCHOR,
    TABLE_HEADER,
    class_counts,
    recorded_classes,
    recorded_verdicts,
    table_rows,
)
from fedtheory.validation.errata.record import (
    CAVEATS,
    CLASS_MEANINGS,
    CLASSES,
    RELATIONS,
    VERDICTS,
    Erratum,
    erratum,
    format_erratum,
)

_papers.on_register(lambda paper: _papers.export(paper, "errata", globals()))
