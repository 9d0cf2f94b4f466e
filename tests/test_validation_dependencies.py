"""The stored data of a validation is keyed on the code its compute runs
(fedtheory.validation.machinery.dependencies): edits of verdict rules, figures and docstrings keep
the key (re-judged and re-plotted from the stored data), edits of computing code change it;
and the static closure holds every module a compute actually runs."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from fedtheory.validation import CHECKS, Check
from fedtheory.validation.machinery import dependencies, runner


def _with_statement(source: bytes, function: str) -> bytes:
    """``source`` with ``_edited = 1`` appended to the body of ``function`` (anywhere)."""
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    assert found, function
    found[0].body.append(ast.parse("_edited = 1").body[0])
    return ast.unparse(ast.fix_missing_locations(tree)).encode()


def _with_docstring(source: bytes, function: str) -> bytes:
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    doc = ast.Expr(ast.Constant("A docstring rewritten."))
    body = found[0].body
    found[0].body = [doc, *(body[1:] if ast.get_docstring(found[0]) else body)]
    return ast.unparse(ast.fix_missing_locations(tree)).encode()


def _file(module: str) -> Path:
    """The source file of ``module``, imported or not (a digest names modules a run may not
    import: in a copy without FedAWE nothing imports ``fedtheory.sim.evaluation``)."""
    return Path(importlib.util.find_spec(module).origin)


def _fingerprint_after(monkeypatch, check: str, path: Path, edit) -> tuple[str, str]:
    """The fingerprint of ``check`` before and after ``edit(bytes) -> bytes`` of ``path``."""
    dependencies.clear_cache()
    before = runner.fingerprint(CHECKS[check])
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: edit(read(p)) if p == path else read(p))
    dependencies.clear_cache()
    try:
        return before, runner.fingerprint(CHECKS[check])
    finally:
        monkeypatch.undo()
        dependencies.clear_cache()


def _verdict_function() -> tuple[str, str]:
    """A module of the verdict rules and one of its functions."""
    import fedtheory.verdict as verdict

    module = verdict.upper_bound_outcome.__module__
    return module, verdict.upper_bound_outcome.__name__


@pytest.mark.paper("fedlaavg")  # example1-fedavg, FedLaAvg's Example 1
@pytest.mark.parametrize(
    "edit",
    ["own judge", "own plot", "verdict rule", "plot style", "docstring in the simulator",
     "comment"],
)  # fmt: skip
def test_judging_drawing_and_docstrings_keep_the_key(monkeypatch, edit):
    check = CHECKS["example1-fedavg"]
    own = _file(check.compute.__module__)
    path, change = {
        "own judge": (own, lambda b: _with_statement(b, check.judge.__name__)),
        "own plot": (own, lambda b: _with_statement(b, check.plot.__name__)),
        "verdict rule": (
            _file(_verdict_function()[0]),
            lambda b: _with_statement(b, _verdict_function()[1]),
        ),
        "plot style": (
            _file("fedtheory.validation.machinery.plots"),
            lambda b: b + b"\nEDITED = 1\n",
        ),
        "docstring in the simulator": (
            _file("fedtheory.sim.runner"),
            lambda b: _with_docstring(b, "simulate"),
        ),
        "comment": (_file("fedtheory.sim.runner"), lambda b: b + b"\n# a comment\n"),
    }[edit]
    before, after = _fingerprint_after(monkeypatch, check.name, path, change)
    assert after == before


@pytest.mark.paper("fedlaavg")  # example1-fedavg, FedLaAvg's Example 1
@pytest.mark.parametrize(
    ("check", "module", "function"),
    [("example1-fedavg", None, "compute"), ("example1-fedavg", "fedtheory.sim.runner", "simulate"),
     pytest.param("cafed-weights", "fedtheory.validation.papers.cafed.theorem2", "compute",
                  marks=pytest.mark.paper("cafed")),
     ("example1-fedavg", "fedtheory.problems.quadratic", None)],
)  # fmt: skip
def test_computing_code_changes_the_key(monkeypatch, check, module, function):
    module = module or CHECKS[check].compute.__module__
    if function is None:

        def change(b):
            return b + b"\nEDITED = 1\n"
    else:

        def change(b):
            return _with_statement(b, function)

    before, after = _fingerprint_after(monkeypatch, check, _file(module), change)
    assert after != before


@pytest.mark.paper("cafed")
@pytest.mark.paper("fedlaavg")
def test_the_key_leaves_out_other_validations_and_the_report():
    modules = dependencies.compute_modules(CHECKS["cafed-weights"])
    assert "fedtheory.validation.papers.cafed.theorem2" in modules  # it calls it
    assert "fedtheory.validation.papers.fedlaavg.example1_fedavg" not in modules
    assert "fedtheory.validation" not in modules  # the package imports every validation
    assert not any(dependencies._left_out(m) for m in modules)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.paper(paper))
        for name, paper in [("example1-fedavg", "fedlaavg"), ("cafed-weights", "cafed")]
    ],
)
def test_every_module_a_compute_runs_is_in_its_key(name):
    check = CHECKS[name]
    ran: set[str] = set()

    def profile(frame, event, arg):
        if event == "call":
            ran.add(frame.f_code.co_filename)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        check.compute(check.settings("tiny"))
    finally:
        sys.setprofile(previous)
    keyed = {str(_file(m)) for m in dependencies.compute_modules(check)}
    package = str(_file("fedtheory").parent)
    ours = {f for f in ran if f.startswith(package) or "/validation/" in f}
    assert ours and ours <= keyed, sorted(ours - keyed)


@pytest.mark.paper("fedlaavg")  # example1-fedavg, FedLaAvg's Example 1
def test_an_edited_judge_reuses_the_stored_data(tmp_path, monkeypatch):
    check = CHECKS["example1-fedavg"]
    runner.run([check.name], tmp_path, size="tiny", progress=lambda m: None)
    own = _file(check.compute.__module__)
    read = Path.read_bytes
    monkeypatch.setattr(
        Path,
        "read_bytes",
        lambda p: _with_statement(read(p), check.judge.__name__) if p == own else read(p),
    )
    dependencies.clear_cache()
    try:
        messages = []
        runner.run([check.name], tmp_path, size="tiny", progress=messages.append)
        assert "data reused" in messages[-1]
    finally:
        monkeypatch.undo()
        dependencies.clear_cache()


def _made_up(name: str, **parts) -> Check:
    """A check of no paper's, its parts given."""
    return Check(name=name, title="a made-up check", claim="none", bounds=("x",), **parts)


def test_settings_holding_a_tuple_reuse_their_data(tmp_path):
    """Settings are stored as JSON, where a tuple becomes a list: a rerun with unchanged
    settings and code reuses the data (it once recomputed ``fedawe-table2`` every time)."""
    calls = []
    check = _made_up(
        "tuple-settings",
        settings=lambda size: {"grid": (0.1, 0.05), "size": size},
        compute=lambda s: calls.append(s) or {"x": [1.0]},
        judge=lambda data, s: [],
        plot=lambda data, s, fig: None,
    )
    first = runner.run_check(check, tmp_path, size="tiny")
    second = runner.run_check(check, tmp_path, size="tiny")
    assert (first.reused, second.reused, len(calls)) == (False, True, 1)


def test_a_rerun_redraws_a_figure_only_when_its_drawing_changed(tmp_path):
    """The figure is keyed on its data, settings, title and drawing code: an unchanged
    rerun keeps the files (and the caption), a new title redraws them."""
    drawn = []

    def plot(data, s, fig):
        drawn.append(1)
        fig.add_subplot().plot(data["x"])
        return "a caption"

    check = _made_up(
        "drawn-once",
        settings=lambda size: {"size": size},
        compute=lambda s: {"x": np.arange(3.0)},
        judge=lambda data, s: [],
        plot=plot,
    )
    first = runner.run_check(check, tmp_path, size="tiny")
    png = tmp_path / "drawn-once" / "figure.png"
    stamp = png.stat().st_mtime_ns
    second = runner.run_check(check, tmp_path, size="tiny")
    assert (len(drawn), second.caption, png.stat().st_mtime_ns) == (1, "a caption", stamp)
    runner.run_check(dataclasses.replace(check, title="another title"), tmp_path, size="tiny")
    assert len(drawn) == 2 and first.caption == "a caption"


def test_the_papers_modules_a_layer_loads_from_their_records_are_compute_code():
    """``pep-exact`` runs the statements of the papers' PEP modules and ``errata`` the checks
    of their errata modules, both loaded from the records (``import_module``), not
    imported: the package that loads them brings all of its modules."""
    from fedtheory.papers import modules

    pep_exact = dependencies.compute_modules(CHECKS["pep-exact"])
    assert {m.__name__ for m in modules("pep")} <= set(pep_exact)
    errata = dependencies.compute_modules(CHECKS["errata"])
    assert {m.__name__ for m in modules("errata")} <= set(errata)
    assert not any(m.startswith("fedtheory.pep.") for m in errata)  # not every lazy loader
