"""A paper is removed by deleting its own modules and its record: in a copy of the repository
without one paper's modules (every module its record names, the record included;
:mod:`tests.paper_copy`), for each of the six papers,

- ``import fedtheory``, ``fedtheory.pep`` and ``fedtheory.validation`` work and the surfaces
  generated from the records run without it: ``fedtheory list --validations``, the errata
  catalogue and table (an erratum of another paper), the PEP layer's methods, criteria and
  statements, ``fedtheory pep`` (a method still present) and a tiny validation of another
  paper;
- the remaining suite is collected without error, and what it leaves out are the paper's own
  test files (their names hold the paper's key) and its tests elsewhere (marked or importing
  it in the test). That the collected tests pass is a run of the suite per paper
  (``scripts/test-without PAPER``, the suite's time again), not repeated here.

No shared module names a paper's: the simulator re-exports the algorithms the records name,
replayed algorithms and the validations of each paper's statements belong to their own
modules, and FedLaAvg's Example 1 comparison runs MimiC where MimiC's record is registered.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from fedtheory.papers import PAPERS
from tests.conftest import LEFT_OUT_LOG
from tests.paper_copy import WITHOUT, build, run_in

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")
if os.environ.get(WITHOUT):
    pytest.skip("a copy is built from the repository's git files, not from a copy",
                allow_module_level=True)  # fmt: skip

SMOKE = """
import contextlib, io, json, sys
import fedtheory, fedtheory.pep, fedtheory.validation
from fedtheory.cli import main
from fedtheory.papers import PAPERS

def run(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv))
    return status, out.getvalue()

from fedtheory.pep import registry
from fedtheory.validation import CHECKS, errata
shown = {"file": fedtheory.__file__, "papers": sorted(PAPERS)}
shown["list"] = run("list", "--validations")
shown["errata"] = [check.__name__ for check in errata.ERRATA]
text = errata.ERRATA_MD.read_text(encoding="utf-8")
found = [getattr(errata, sys.argv[2])()]
shown["errata table"] = errata.table_rows(errata.check.data_of(found, text))
shown["pep"] = [sorted(c.__name__ for c in registry.methods()), sorted(registry.criteria()),
                sorted(registry.statements())]
shown["pep command"] = run("pep", sys.argv[4], "--class", "quadratic", "-T", "2",
                           "--pattern", "full", "--zeta2", "0")
shown["validate"] = run("validate", "--check", sys.argv[3], "--size", "tiny",
                        "--out", sys.argv[1] + "/report")
shown["checks"] = sorted(CHECKS)
print(json.dumps(shown))
"""


FEDAU_ERRATUM = ("fedau_step_size_constant", "fedau.theorem2.step_size")
BOTH = (["FedAWE", "FedLaAvg"], ["fedawe", "fedlaavg"])  # the PEP methods and statements


@pytest.mark.parametrize(
    ("removed", "erratum", "check", "method", "pep"),
    [
        ("fedawe", FEDAU_ERRATUM, "cafed-decomposition", "fedlaavg", (["FedLaAvg"], ["fedlaavg"])),
        ("fedau", ("fedlaavg_equal_blocks", "fedlaavg.example1.equal_blocks"),
         "cafed-decomposition", "fedlaavg", BOTH),
        ("cafed", FEDAU_ERRATUM, "fedlaavg-staleness", "fedlaavg", BOTH),
        ("e3cs", FEDAU_ERRATUM, "cafed-decomposition", "fedlaavg", BOTH),
        ("fedlaavg", FEDAU_ERRATUM, "cafed-decomposition", "fedavg", (["FedAWE"], ["fedawe"])),
        ("mimic", FEDAU_ERRATUM, "cafed-decomposition", "fedlaavg", BOTH),
    ],
)  # fmt: skip
def test_without_one_papers_modules_and_record_the_package_works(
    tmp_path, removed, erratum, check, method, pep
):
    (erratum, key), (methods, statements) = erratum, pep
    copy = build([removed], tmp_path / "copy")
    argv = ["-c", SMOKE, str(tmp_path), erratum, check, method]
    done = run_in(copy, [removed], argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert shown["file"].startswith(str(copy))  # the copy, not the working tree
    assert removed not in shown["papers"] and len(shown["papers"]) == len(PAPERS) - 1
    status, listed = shown["list"]
    assert status == 0 and check in listed
    assert f"{removed}." not in listed.lower() and f"{removed}-" not in listed.lower()
    assert erratum in shown["errata"] and not any(e.startswith(removed) for e in shown["errata"])
    assert [row[1] for row in shown["errata table"]] == [f"`{key}`"]
    assert shown["errata table"][0][5] == "agrees"
    assert shown["pep"][0] == methods and shown["pep"][2] == statements
    assert all(c.startswith("fedawe") for c in shown["pep"][1]) and ("FedAWE" in methods) == bool(
        shown["pep"][1]
    )
    status, printed = shown["pep command"]
    assert status == 0 and f"algorithm: {method}" in printed.lower(), printed
    status, printed = shown["validate"]
    assert status == 0, printed
    rows = json.loads((tmp_path / "report" / "results.json").read_text())["validations"]
    assert [c["name"] for c in rows] == [check] and rows[0]["rows"]
    assert "pep-exact" in shown["checks"] and not any(
        c.startswith(f"{removed}-") for c in shown["checks"]
    )


SIX = ("cafed", "e3cs", "fedau", "fedawe", "fedlaavg", "mimic")
"""The papers (the ``divergences`` record holds definitions CA-Fed builds on)."""


@pytest.mark.parametrize("removed", SIX)
def test_without_one_paper_the_suite_leaves_out_only_that_papers_tests(tmp_path, removed):
    copy, log = build([removed], tmp_path / "copy"), tmp_path / "left_out.txt"
    argv = ["-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q"]
    done = run_in(copy, [removed], argv, capture_output=True, text=True, timeout=600,
                  env={LEFT_OUT_LOG: str(log)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]  # no collection error
    marked = log.read_text(encoding="utf-8") if log.exists() else ""  # collected, left out
    pattern = r"^(tests/test_\w+\.py)::"
    collected = set(re.findall(pattern, f"{done.stdout}\n{marked}", flags=re.MULTILINE))
    files = {f"tests/{p.name}" for p in (copy / "tests").glob("test_*.py")}
    files -= {"tests/test_paper_removed.py"}  # skips itself in a copy
    left_out = sorted(files - collected)
    shared = [f for f in left_out if removed not in Path(f).stem.split("_")]
    assert not shared, shared  # every shared file imports a paper only in the tests using it


def test_a_removed_papers_test_file_named_on_the_command_line_is_left_out(tmp_path):
    copy = build(["mimic"], tmp_path / "copy")
    argv = ["-m", "pytest", "-p", "no:cacheprovider", "-rs", "tests/test_bounds_mimic.py"]
    done = run_in(copy, ["mimic"], argv, capture_output=True, text=True, timeout=600)
    # no collection error: pytest's status for a run in which nothing was collected
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, done.stdout[-3000:]
    assert "1 skipped" in done.stdout, done.stdout[-3000:]
    assert "test_bounds_mimic.py holds a removed paper" in done.stdout
