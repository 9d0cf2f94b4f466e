"""Shared test helpers: the kit's assertions and tolerances (``fedtheory.testing``), the
hypothesis profile, parameter-error and binomial checks."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import settings
from scipy import stats

from fedtheory.errors import ParameterError
from fedtheory.papers import PAPERS
from fedtheory.testing import (
    BOUND_RTOL,
    DEFAULT_PROFILE,
    TIGHT_RTOL,
    ZERO_ATOL,
    assert_equal,
    assert_near_zero,
    assert_upper_bound,
    register_profiles,
)
from tests.paper_copy import WITHOUT, WITHOUT_CHECKS

# Derandomised by default, so the README's test command gives the same result on every
# machine; HYPOTHESIS_PROFILE=dev (random) or =thorough explores.
register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", DEFAULT_PROFILE))

# The three kinds of numerical assertion and their named tolerances are the kit's
# (fedtheory.testing.assertions); ``assert_tight`` is the tests' name for an exact statement.
assert_tight = assert_equal


REMOVED = tuple(filter(None, os.environ.get(WITHOUT, "").split(",")))
"""The modules of the papers removed from the copy this suite runs in (``python -m
tests.paper_copy``); empty in the repository, where nothing is left out."""


KEYS = sorted({*PAPERS, *(m.removeprefix("fedtheory.papers.") for m in REMOVED
                          if m.startswith("fedtheory.papers."))})  # fmt: skip
"""The papers' keys, the registered and the removed (in a copy without some papers)."""


ROOT = Path(__file__).resolve().parent.parent

LEFT_OUT_LOG = "FEDTHEORY_LEFT_OUT_LOG"
"""Where a copy's collection writes the ids of the tests it leaves out by their paper."""


def paper_marks(text: str) -> list:
    """``paper(key)`` marks for every paper whose key ``text`` names (``fedawe.theorem1``,
    ``FedAWE``, ``--check fedawe-table2``) or one of its validations (``example1-fedavg``),
    itself or in an ``examples/`` file it names: a shown example or a notebook that names a
    paper is left out of a copy without it."""
    for example in re.findall(r"examples/\w+\.py", text):  # a module the example loads
        text += (ROOT / example).read_text(encoding="utf-8")
    named = {k for k in KEYS if re.search(rf"(?<![a-z0-9]){k}(?![a-z0-9])", text, flags=re.I)}
    named |= {paper for name, paper in _check_papers().items()
              if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)}  # fmt: skip
    return [pytest.mark.paper(k) for k in sorted(named)]


@functools.cache
def _check_papers() -> dict[str, str]:
    """The paper of each validation: the registered papers' (``fedtheory.validation``) and,
    in a copy, the removed papers' (named by ``tests.paper_copy``)."""
    from fedtheory.validation import PAPER_OF

    removed = os.environ.get(WITHOUT_CHECKS, "")
    pairs = (pair.split(":") for pair in filter(None, removed.split(",")))
    return dict(PAPER_OF) | {name: paper for paper, name in pairs}


def of_registered_papers(entries: dict[str, Callable[[], dict]]) -> dict[str, object]:
    """The entries of a shared test table that belong to registered papers (paper key -> a
    function making its entries, called only while its record is registered)."""
    return {k: v for paper, make in entries.items() if paper in PAPERS for k, v in make().items()}


def _removed(module: str) -> bool:
    return any(module == m or module.startswith(f"{m}.") for m in REMOVED)


def _missing(node: ast.Import | ast.ImportFrom) -> bool:
    """Whether an absolute import names a removed paper's module, a test module that imports
    one at its top, or a name that a module of fedtheory or the tests no longer has (a
    removed paper's, re-exported where it is registered). Any other import error is left to
    fail at collection."""
    if isinstance(node, ast.Import):
        return any(_removed(a.name) for a in node.names)
    if node.level or node.module is None or node.module.split(".")[0] not in ("fedtheory", "tests"):
        return False
    if _removed(node.module) or any(_removed(f"{node.module}.{a.name}") for a in node.names):
        return True
    helper = importlib.util.find_spec(node.module) if node.module.startswith("tests.") else None
    if helper is not None and _removed_papers_parts(Path(helper.origin))[0]:
        return True  # a test module of the removed paper's, or one importing it at its top
    try:
        module = importlib.import_module(node.module)
    except ImportError:
        return False  # reported where the file is collected
    return not all(
        hasattr(module, a.name) or importlib.util.find_spec(f"{node.module}.{a.name}")
        for a in node.names
    )


@functools.cache
def _removed_papers_parts(path: Path) -> tuple[bool, frozenset[str]]:
    """Whether the test file at ``path`` is a removed paper's (a module-level import of its
    modules or names), and else the names of its functions that import them."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if any(_missing(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)):
        return True, frozenset()
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    return False, frozenset(
        f.name
        for f in functions
        if any(isinstance(n, ast.Import | ast.ImportFrom) and _missing(n) for n in ast.walk(f))
    )


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    """In a copy without some papers, leave out the test files that import their modules."""
    if REMOVED and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return _removed_papers_parts(collection_path)[0] or None
    return None


class _LeftOutFile(pytest.File):
    """A removed paper's test file named on the command line (``pytest_ignore_collect`` is
    not asked about those): reported as skipped, saying why, instead of an import error."""

    def collect(self):
        reason = f"{self.path.name} holds a removed paper's tests ({WITHOUT}): left out"
        raise pytest.skip.Exception(reason, allow_module_level=True)


def pytest_pycollect_makemodule(module_path: Path, parent) -> pytest.File | None:
    """In a copy without some papers, a test file of theirs that is named on the command
    line is left out as it would be when collected from its folder."""
    if REMOVED and _removed_papers_parts(module_path)[0]:
        return _LeftOutFile.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(config, items) -> None:
    """Skip the tests marked ``gpu`` where no CUDA device is available; leave out the tests
    that need a paper whose record is not registered (marked ``paper(name)``, or, in a copy
    without some papers, importing their modules in the test)."""
    kept, left_out = [], []
    for item in items:
        needs = [m.args[0] for m in item.iter_markers("paper")]
        importing = _removed_papers_parts(item.path)[1] if REMOVED else ()
        name = getattr(item, "originalname", item.name)
        gone = any(n not in PAPERS for n in needs) or name in importing
        (left_out if gone else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        if log := os.environ.get(LEFT_OUT_LOG):  # the copy's collection test reads them
            Path(log).write_text("\n".join(item.nodeid for item in left_out), encoding="utf-8")
        items[:] = kept
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is False)")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


def assert_parameter_error(call: Callable[[], object], name: str, allowed: str) -> str:
    """``call()`` raises ``ParameterError`` whose message names the parameter ``name`` and
    the allowed values ``allowed``; returns the message."""
    with pytest.raises(ParameterError) as err:
        call()
    message = str(err.value)
    assert name in message and allowed in message
    return message


def binomial_interval(trials: int, p: float, family: int, level: float = 1e-3):
    """Two-sided binomial acceptance interval for counts, Bonferroni over ``family`` tests."""
    return stats.binom.interval(1 - level / family, trials, p)


def binomial_frequencies_ok(freq, p, n: int, alpha: float) -> bool:
    """Every ``|freq - p|`` within the two-sided binomial (normal) bound of ``n`` draws,
    Bonferroni over the entries at family-wise level ``alpha``."""
    freq, p = np.asarray(freq), np.asarray(p)
    z = stats.norm.ppf(1 - alpha / (2 * p.size))
    se = np.sqrt(np.maximum(p * (1 - p), 1e-12) / n)
    return bool(np.all(np.abs(freq - p) <= z * se))


__all__ = [
    "BOUND_RTOL",
    "TIGHT_RTOL",
    "ZERO_ATOL",
    "assert_equal",
    "assert_near_zero",
    "assert_parameter_error",
    "assert_tight",
    "assert_upper_bound",
    "binomial_frequencies_ok",
    "binomial_interval",
]


def assert_pep_close(a, b) -> None:
    """``a`` and ``b`` agree within the certificates of the PEP solves among them: each
    verified :class:`~fedtheory.pep.PepResult` is the exact worst case up to its certificate's
    tolerance (|gap| + max(1, tr G) x its largest feasibility error,
    :mod:`fedtheory.pep.certificate`); a float is a closed form or a simulator's replay of
    the worst instance, exact up to float rounding."""
    solved = [x for x in (a, b) if hasattr(x, "certificate")]
    assert solved, "at least one side must be a PEP result with its certificate"
    assert all(x.ok for x in solved), [x.status for x in solved]
    va, vb = (float(getattr(x, "value", x)) for x in (a, b))
    tolerance = sum(x.certificate.tolerance for x in solved)
    rounding = 1e-12 * max(1.0, abs(va), abs(vb))
    assert abs(va - vb) <= tolerance + rounding, (va, vb, tolerance)


def assert_replay_attains(replayed: float, result) -> None:
    """The simulator's value on the instance :func:`fedtheory.pep.replay` rebuilds from a
    verified solve's Gram matrix equals the PEP value up to the solve's acceptance threshold
    (``fedtheory.pep.solve.CHECK_RTOL`` x max(1, |value|)): the instance is fitted to a Gram
    matrix whose checks pass at that threshold, so it attains the value and stays in the
    class only to that precision, not to the certificate's (smaller) tolerance."""
    from fedtheory.pep.solve import CHECK_RTOL

    assert result.ok, result.status
    threshold = CHECK_RTOL * max(1.0, abs(result.value))
    assert abs(replayed - result.value) <= threshold, (replayed, result.value, threshold)
