"""Import cost: the closed-form layers load without torch.

Each check runs in a fresh interpreter, since this test process has torch loaded already.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "numba", "cvxpy", "matplotlib")


@pytest.mark.parametrize("module", ["fedtheory.bounds", "fedtheory.markov", "fedtheory.cli"])
def test_closed_form_layers_import_no_heavy_library(module):
    code = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"{module} imported {out.stdout.strip()}"


@pytest.mark.paper("cafed")
def test_a_bound_evaluates_without_torch():
    code = (
        "import sys; from fedtheory.bounds import cafed; "
        "r = cafed.theorem1.evaluate(kappa=2.0, gap_B=0.1, chi2=0.5, Gamma=1.0); "
        "print(float(r.total), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    total, torch_loaded = out.stdout.split()
    assert torch_loaded == "False" and float(total) > 0
