"""Li, Huang, Yang, Wang & Zhang, "On the Convergence of FedAvg on Non-IID Data" (ICLR 2020),
Theorem 1, checked from outside the catalogue (``examples/li2020.py``,
docs/guide/outside-paper.md): the command line refutes the planted 1/T^2 variant and
leaves the true statement standing, on the families the module registers."""

from __future__ import annotations

import pytest

from fedtheory.cli import main
from fedtheory.tightness import FAMILIES

MODULE = "examples/li2020.py"


@pytest.fixture(autouse=True)
def _fresh_families():
    """Each test loads the module again (its families are registered on load)."""
    yield
    for key in [k for k in FAMILIES if k.startswith("li2020.")]:
        del FAMILIES[key]


@pytest.mark.slow
def test_cli_refutes_the_1_over_T2_variant(tmp_path, capsys):
    # Li et al.'s rate is O(1/T) and attained up to constants (gradient noise); the variant
    # is Theorem 1's bound times gamma / (gamma + T - 1): false for T a few times gamma
    args = ["tightness", "li2020.theorem1_t2", "--module", MODULE, "--budget", "60"]
    assert main([*args, "--out", str(tmp_path / "t2.json")]) == 1  # 1: a counterexample
    out = capsys.readouterr().out
    assert "COUNTEREXAMPLE" in out and "E=1" in out.split("COUNTEREXAMPLE")[1]


@pytest.mark.slow
def test_cli_leaves_theorem1_standing(tmp_path, capsys):
    args = ["tightness", "li2020.theorem1", "--module", MODULE, "--budget", "60"]
    assert main([*args, "--out", str(tmp_path / "t1.json")]) == 0  # 0: no counterexample
    assert "COUNTEREXAMPLE" not in capsys.readouterr().out
