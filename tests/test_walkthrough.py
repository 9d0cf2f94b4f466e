"""examples/walkthrough.py, a user's first day, runs and shows every outcome: a true bound
(exit status 0), a false bound (1), a Monte-Carlo claim (0, inconclusive where its mean
straddles the bound), a false one (1) and CA-Fed Theorem 1 halved on drawn instances (1,
no family given)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.paper("cafed")  # its fourth outcome halves CA-Fed Theorem 1
def test_the_walkthrough_shows_every_outcome():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "walkthrough.py")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          check=True)  # fmt: skip
    lines = done.stdout.splitlines()
    status = {line.split(":")[0]: line.split("exit status ")[1][0] for line in lines[::2]}
    assert status == {
        "true bound": "0",
        "false bound": "1",
        "Monte-Carlo claim": "0",
        "false Monte-Carlo claim": "1",
        "halved catalogue bound": "1",
    }
    detail = dict(zip(list(status), lines[1::2], strict=True))
    assert "no counterexample" in detail["true bound"]
    assert "upper bound violated" in detail["false bound"]
    assert "inconclusive" in detail["Monte-Carlo claim"]
    assert "replicates would decide it" in detail["Monte-Carlo claim"]
    assert "lower limit > bound" in detail["false Monte-Carlo claim"]
    assert "CA-Fed Theorem 1 / 2" in detail["halved catalogue bound"]
