"""The command line: ``--version``, ``list`` filters, ``show``, ``eval``,
``validate --fail-on-violated`` and ``--module``; the light commands never import torch."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fedtheory
from fedtheory.bounds import CATALOGUE
from fedtheory.cli import main
from fedtheory.validation import CHECKS

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "own_theorem.py"


@pytest.fixture
def restore_checks():
    """Checks registered by a ``--module`` file are removed afterwards."""
    before = dict(CHECKS)
    yield
    CHECKS.clear()
    CHECKS.update(before)


def test_version(capsys):
    with pytest.raises(SystemExit) as end:
        main(["--version"])
    assert end.value.code == 0
    assert capsys.readouterr().out.strip() == f"fedtheory {fedtheory.__version__}"


@pytest.mark.paper("cafed")
def test_show_prints_statement_hypotheses_parameters_and_reference(capsys):
    assert main(["show", "cafed.theorem1"]) == 0
    out = capsys.readouterr().out
    thm = CATALOGUE["cafed.theorem1"]
    for text in (thm.statement, thm.reference, thm.kind, "kappa >= 1 (kappa = L/mu)"):
        assert text in out
    for p, entry in thm.notation.items():
        assert p in out and entry.meaning in out
    assert main(["show", "cafed.theorem1", "--latex"]) == 0
    assert r"\underbrace{2 \Delta_{B} \kappa^{2}}_{\text{opt}}" in capsys.readouterr().out


@pytest.mark.paper("cafed")
def test_eval_prints_every_term_and_the_total(capsys):
    argv = ["eval", "cafed.theorem1", "kappa=2", "gap_B=0.1", "chi2=0.5", "Gamma=1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "opt   = 0.8" in out and "bias  = 16" in out and "total = 16.8" in out
    assert "kappa >= 1 (kappa = L/mu): 2 vs 1 -> holds" in out
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["total"] == pytest.approx(16.8) and result["terms"]["bias"] == 16.0
    assert result["valid"] and result["hypotheses"][0]["holds"]


@pytest.mark.paper("cafed")
def test_eval_reports_a_failed_hypothesis_with_exit_status_1(capsys):
    assert main(["eval", "cafed.theorem1", "kappa=0.5", "gap_B=0", "chi2=0", "Gamma=0"]) == 1
    out = capsys.readouterr().out
    assert "FAILS" in out and "NOT VALID" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        *[
            pytest.param(*case, marks=pytest.mark.paper("cafed"))
            for case in [
                (["eval", "cafed.theorem1", "kappa=2"], "missing: ['Gamma', 'chi2', 'gap_B']"),
                (["eval", "cafed.theorem1", "kappa=two"], "expected NAME=NUMBER"),
                (["eval", "cafed.theorem1", "kappa=-1", "gap_B=0", "chi2=0", "Gamma=0"], "'kappa'"),
                (["show", "cafed.theorm1"], "did you mean cafed.theorem1"),
                (
                    ["eval", "cafed.theorem1", "kapa=2", "gap_B=0", "chi2=0", "Gamma=0"],
                    "'kapa': did you mean 'kappa'?",
                ),
                (  # typed by hand: a name the theorem does not take is refused, not ignored
                    ["eval", "cafed.theorem1", "kappa=2", "gap_B=0", "chi2=0", "Gamma=0", "foo=1"],
                    "unknown: ['foo']",
                ),
            ]
        ],
        (["list", "--paper", "nope"], "unknown paper"),
    ],
)
def test_bad_command_lines_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.paper("cafed")
@pytest.mark.paper("fedlaavg")
def test_list_filters_by_paper_and_kind(capsys):
    assert main(["list", "--paper", "cafed", "--kind", "upper bound"]) == 0
    out = capsys.readouterr().out
    listed = {line.split()[0] for line in out.splitlines() if re.match(r"  \S", line)}
    expected = {
        k for k, t in CATALOGUE.items() if k.startswith("cafed.") and t.kind == "upper bound"
    }
    assert listed == expected and "cafed.theorem1" in listed
    assert main(["list", "--paper", "fedlaavg", "--validations"]) == 0
    out = capsys.readouterr().out.split("Validations")[1]
    assert "example1-fedavg" in out and "cafed-decomposition" not in out


def test_list_fits_100_columns_wrapping_under_its_column(capsys):
    assert main(["list", "--validations"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    keys = [line for line in lines if re.match(r"  \S", line) and "." in line.split()[0]]
    assert {line.split()[0] for line in keys} == set(CATALOGUE)  # every key on a line of its own
    wrapped = [line for line in lines if line.startswith(" " * 40)]
    assert wrapped  # long references continue under their column, not past 100 columns


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_show_writes_powers_in_one_notation(key, capsys):
    assert main(["show", key]) == 0
    assert "**" not in capsys.readouterr().out


def test_cli_kinds_are_the_theorem_kinds():
    """The CLI keeps the kinds without importing the bounds (a fast ``--help``)."""
    from fedtheory.bounds.base import KINDS
    from fedtheory.cli.catalogue import KINDS as CLI_KINDS

    assert CLI_KINDS == KINDS


@pytest.mark.paper("fedau")  # examples/own_theorem.py varies FedAU Theorem 3
def test_validate_fail_on_violated_and_module(restore_checks, tmp_path, capsys):
    """The example file registers a true statement and a deliberately false one: its
    report has violated rows, so ``--fail-on-violated`` exits 1 (and 0 without it)."""
    argv = ["validate", "--module", str(EXAMPLE), "--size", "tiny", "--out", str(tmp_path)]
    assert main([*argv, "--fail-on-violated"]) == 1
    assert "violated)" in capsys.readouterr().out
    report = (tmp_path / "report.md").read_text()
    assert f"fedtheory validate --module {EXAMPLE} --check sgd-quadratic" in report
    assert main([*argv, "--check", "sgd-quadratic", "--fail-on-violated"]) == 0
    assert main(argv) == 0
    assert main(["validate", "--module", "missing.py", "--out", str(tmp_path)]) == 2


def _torch_after(code: str) -> list[bool]:
    """Whether torch is imported after each ``# check`` line of ``code`` (a fresh process)."""
    code = code.replace("# check", "print('torch' in sys.modules)")
    run = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True, check=True
    )
    return [line == "True" for line in run.stdout.splitlines() if line in ("True", "False")]


def test_help_and_version_do_not_import_torch():
    code = (
        "from fedtheory.cli import main\n"
        "for argv in (['--help'], ['--version'], ['show', '--help'], ['eval', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n# check"
    )
    assert _torch_after(code) == [False]


@pytest.mark.paper("cafed")
def test_list_show_and_eval_do_not_import_torch():
    """The catalogue is torch-free, and so are ``list``, ``show`` and ``eval``."""
    code = (
        "import fedtheory.bounds\n# check\n"
        "from fedtheory.cli import main\n"
        "main(['list']); main(['show', 'cafed.theorem1'])\n"
        "main(['eval', 'cafed.theorem1', 'kappa=2', 'gap_B=0.1', 'chi2=0.5', 'Gamma=1'])\n# check"
    )
    assert _torch_after(code) == [False, False]
