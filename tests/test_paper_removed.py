"""A paper is removed by deleting its own modules and its record: in a copy of the package
(``fedtheory/`` with ``validation/`` as ``fedtheory/validation``) without one paper's modules
(every module its record names, the record included), for each of the six papers, ``import
fedtheory``, ``fedtheory.pep`` and ``fedtheory.validation`` work and the surfaces generated from
the records run without it: ``fedtheory list --validations``, the errata catalogue and table
(an erratum of another paper), the PEP layer's methods, criteria and statements, ``fedtheory
pep`` (a method still present) and a tiny validation of another paper.

Running the whole remaining suite against the copy would take the suite's time again; this
is a representative smoke of it, in a fresh interpreter whose ``sys.path`` sees the copy
and not the working tree. No shared module names a paper's: the simulator re-exports the
algorithms the records name, replayed algorithms and the validations of each paper's
statements belong to their own modules, and FedLaAvg's Example 1 comparison runs MimiC where
MimiC's record is registered.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory.papers import PAPERS

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")

ROOT = Path(__file__).resolve().parent.parent

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


def _path(module: str) -> Path:
    """Where a module of the package lies in the copy."""
    parts = module.split(".")
    return Path(*parts).with_suffix(".py")


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
    copy = tmp_path / "copy"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "fedtheory", copy / "fedtheory", ignore=ignore)
    shutil.copytree(ROOT / "validation", copy / "fedtheory" / "validation", ignore=ignore)
    paper = PAPERS[removed]
    paths = [_path(m) for m in paper.modules] + [Path("fedtheory", "papers", f"{removed}.py")]
    for path in paths:
        (copy / path).unlink()
    done = subprocess.run(
        [sys.executable, "-c", SMOKE, str(tmp_path), erratum, check, method],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
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
