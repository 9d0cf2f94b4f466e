"""A paper registers itself in one place: the toy paper of ``tests/toy_paper/`` (one
statement with its own symbol, one algorithm with its plain loop, one tightness family, the
algorithm and the statement as a PEP, one validation, one erratum), registered by one call,
appears in ``fedtheory list``, the generated theorem and API pages, ``fedtheory validate
--check``, ``fedtheory tightness``, ``fedtheory pep``, the ``pep-exact`` validation, the
tightness table's exact column, the errata catalogue and table and the reference-loop
agreement tests, with no other file edited; without the call it appears in none of them.

Each check runs in a fresh interpreter, so the registration never leaks into this session."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory.errors import ParameterError
from fedtheory.papers import PAPERS, PARTS, Paper, discover, modules, paper_of, register

ROOT = Path(__file__).resolve().parent.parent
TOY = "tests.toy_paper"
REGISTRATION = f"""
from fedtheory.papers import Paper, register
register(Paper("toy", "Toy paper (the registration test)", statements=("{TOY}.statements",),
    algorithms=("{TOY}.algorithm",), tightness=("{TOY}.tightness",), pep=("{TOY}.pep",),
    validations=("{TOY}.validation",), errata=("{TOY}.errata",)))
"""
"""The one call that registers the toy paper."""

SURFACES = """
import contextlib, io, json, sys
sys.path.insert(0, "docs/_ext")
from fedtheory.cli import main

def run(*argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv))
    return status, out.getvalue()

import fedtheory_docs
from fedtheory.bounds import CATALOGUE
shown = {}
shown["list"] = run("list", "--validations")
shown["theorem index"] = fedtheory_docs.theorem_index(sorted(CATALOGUE))
toy = CATALOGUE.get("toy.contraction")
shown["theorem page"] = fedtheory_docs.theorem_page(toy, [], []) if toy else ""
shown["api pages"] = fedtheory_docs.api_pages()
shown["validate"] = run("validate", "--check", "toy-contraction", "--size", "tiny",
                        "--out", sys.argv[1] + "/report")
shown["tightness"] = run("tightness", "toy.contraction", "--budget", "20", "--seed", "0",
                         "--out", sys.argv[1] + "/search.json")
shown["pep"] = run("pep", "toy-average", "--class", "quadratic", "--mu", "0.5", "-T", "2",
                   "--pattern", "full", "--zeta2", "0")
from fedtheory.pep.catalogue import exact_worst_case_for
toy_instance = {"L": 1.0, "eta": 0.5, "T": 3, "toy_gap0": 1.0}
shown["exact column"] = exact_worst_case_for("toy.contraction", toy_instance)
from fedtheory.validation import CHECKS, errata, pep_exact
shown["pep-exact"] = [CHECKS["pep-exact"].claim, list(CHECKS["pep-exact"].bounds),
                      pep_exact.settings("tiny")["statements"]]
if "toy" in shown["pep-exact"][2]:
    s = {**pep_exact.settings("tiny"), "statements": ["toy"]}
    rows = pep_exact.judge(pep_exact.compute(s), s)
    shown["pep-exact rows"] = [(r.claim, r.verdict.value) for r in rows]
shown["errata"] = [check.__name__ for check in errata.ERRATA]
found = [check() for check in errata.ERRATA if check.__name__.startswith("toy")]
text = errata.ERRATA_MD.read_text(encoding="utf-8")
shown["errata table"] = errata.table_rows(errata.check.data_of(found, text)) if found else []
print(json.dumps(shown))
"""
"""Every surface but the reference-loop tests, printed as JSON."""


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_paper_registered_by_one_call_appears_on_every_surface(tmp_path):
    done = _python(REGISTRATION + SURFACES, str(tmp_path))
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    status, listed = shown["list"]
    assert status == 0 and "toy.contraction" in listed and "toy-contraction" in listed
    assert "[`toy.contraction`](toy.contraction.md)" in shown["theorem index"]
    assert "Toy Lemma: toy averaging contracts" in shown["theorem page"]
    page = shown["api pages"]["toy.md"]
    for part in ("statements", "algorithm", "tightness", "pep", "validation", "errata"):
        assert f".. automodule:: {TOY}.{part}" in page
    assert "(toy.md)" in shown["api pages"]["index.md"]
    status, printed = shown["validate"]
    assert status == 0, printed
    rows = json.loads((tmp_path / "report" / "results.json").read_text())
    verdicts = [r["verdict"] for c in rows["validations"] if c["name"] == "toy-contraction"
                for r in c["rows"]]  # fmt: skip
    assert verdicts == ["holds"]
    status, printed = shown["tightness"]
    assert status == 0 and "no counterexample" in printed and "attained" in printed
    assert json.loads((tmp_path / "search.json").read_text())["key"] == "toy.contraction"
    status, printed = shown["pep"]  # the toy's method in the command, as a PEP
    assert status == 0 and "algorithm: toy-average" in printed, printed
    assert abs(shown["exact column"] - 0.5**6) <= 1e-6  # (1 - eta L)^(2T): the bound, attained
    claim, bounds, statements = shown["pep-exact"]
    assert "the Toy Lemma" in claim and "toy_bound" in bounds and statements[-1] == "toy"
    assert [v for _, v in shown["pep-exact rows"]] == ["holds", "holds"]
    assert shown["errata"][-1] == "toy_remark_step_two_over_L"
    (row,) = shown["errata table"]
    assert row[:2] == ["statement false", "`toy.remark.step_two_over_L`"] and row[4] == "yes"
    assert row[5] == "**differs** (records nothing)"  # ERRATA.md does not list it


def test_without_the_call_the_toy_paper_is_nowhere(tmp_path):
    done = _python(SURFACES, str(tmp_path))
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert "toy" not in shown["list"][1] and "toy" not in shown["theorem index"]
    assert "toy.md" not in shown["api pages"]
    assert shown["validate"][0] != 0 and shown["tightness"][0] != 0 and shown["pep"][0] != 0
    assert shown["exact column"] is None and "toy" not in shown["pep-exact"][2]
    assert "Toy" not in shown["pep-exact"][0] and "toy_bound" not in shown["pep-exact"][1]
    assert not any(name.startswith("toy") for name in shown["errata"])


def test_the_registered_algorithm_joins_the_reference_loop_tests():
    """The agreement tests of ``tests/test_sim_algorithms.py`` take the configurations a
    paper registers with its plain loop: the toy's runs, and passes, once registered."""
    pytest_call = (
        "import pytest\nraise SystemExit(pytest.main(['-v', '-p', 'no:cacheprovider', "
        "'tests/test_sim_algorithms.py', '-k', 'toy-average']))"
    )
    done = _python(REGISTRATION + pytest_call)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "test_vectorised_equals_reference_loop[toy-average] PASSED" in done.stdout
    absent = _python(pytest_call.replace("'-v'", "'-q', '--collect-only'"))
    assert absent.returncode == 5, absent.stdout[-3000:]  # 5: no test collected


@pytest.mark.paper("cafed")  # the package's papers, each named
@pytest.mark.paper("e3cs")
@pytest.mark.paper("fedau")
@pytest.mark.paper("fedawe")
@pytest.mark.paper("fedlaavg")
@pytest.mark.paper("mimic")
def test_the_package_papers_are_discovered_in_order():
    assert list(discover()) == [
        "cafed", "divergences", "e3cs", "fedau", "fedawe", "fedlaavg", "mimic",
    ]  # fmt: skip
    assert paper_of("fedtheory.sim.fedawe") is PAPERS["fedawe"]
    assert [m.__name__ for m in modules("tightness")] == [
        f"fedtheory.tightness.{key}"
        for key in ("cafed", "divergences", "e3cs", "fedau", "fedawe", "fedlaavg")
    ]
    assert [m.__name__ for m in modules("pep")] == [
        "fedtheory.pep.fedawe",
        "fedtheory.pep.fedlaavg",
    ]
    assert modules("errata")[-1].__name__ == "fedtheory.validation.papers.mimic.errata"
    assert all(isinstance(getattr(p, part), tuple) for p in PAPERS.values() for part in PARTS)


@pytest.mark.parametrize(
    ("paper", "field"),
    [
        (Paper("not an identifier", "A paper"), "'key' field"),
        (Paper("toy", ""), "'title' field"),
        (Paper("toy", "A paper", statements="fedtheory.bounds.cafed"), "'statements' field"),
        (PAPERS[min(PAPERS)]._replace(title="Another title"), "key not yet registered"),
    ],
)
def test_a_bad_record_is_refused_and_registers_nothing(paper, field):
    before = dict(PAPERS)
    with pytest.raises(ParameterError, match=field):
        register(paper)
    assert PAPERS == before
