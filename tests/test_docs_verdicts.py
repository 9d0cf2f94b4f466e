"""docs/verdicts.md: every example prints what the page shows (doctest of the page)."""

from __future__ import annotations

import doctest
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "verdicts.md"


def test_verdicts_page_examples_print_what_the_page_shows():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0, result
