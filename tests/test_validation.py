"""The validation suite at tiny size: verdict logic, report, resume, CLI."""

from __future__ import annotations

import json

import numpy as np

from fedtheory.cli import main
from fedtheory.verdict import (
    Verdict,
    compare_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
)
from validation import CHECKS
from validation.runner import run


def test_verdict_logic_detects_a_wrong_bound_and_labels_assumptions():
    assert compare_upper_bound("c", "r", [1.0, 2.0], [2.0, 2.0]).verdict is Verdict.HOLDS
    assert compare_upper_bound("c", "r", [1.0, 2.1], [2.0, 2.0]).verdict is Verdict.VIOLATED
    out = compare_upper_bound("c", "r", [1.0], [2.0], assumptions_hold=False)
    assert out.verdict is Verdict.OUTSIDE
    samples = np.random.default_rng(0).normal(1.0, 0.5, size=50)
    assert compare_mean_upper_bound("c", "r", samples, 1.5).verdict is Verdict.HOLDS
    # the mean is below 1.1 but its upper confidence limit is not: not enough evidence
    assert compare_mean_upper_bound("c", "r", samples, 1.1).verdict is Verdict.VIOLATED
    assert compare_equal("c", "r", 1.0, 1.0 + 1e-12, rtol=1e-9).verdict is Verdict.HOLDS
    assert compare_equal("c", "r", 1.0, 1.1, rtol=1e-9).verdict is Verdict.VIOLATED


def test_each_check_flags_a_deliberately_wrong_prediction():
    for check in CHECKS.values():
        s = check.settings(True)
        data = check.compute(s)
        assert all(r.verdict is Verdict.HOLDS for r in check.judge(data, s)), check.name
        broken = {k: (v * 1e6 + 1.0 if k in ("measured", "end") else v) for k, v in data.items()}
        rows = check.judge(broken, s)
        assert any(r.verdict is Verdict.VIOLATED for r in rows), check.name


def test_report_written_and_resume_reuses_data(tmp_path):
    messages = []
    run(["example1-fedavg"], tmp_path, quick=True, progress=messages.append)
    report = (tmp_path / "report.md").read_text()
    assert "| claim |" in report and "example1-fedavg/figure.png" in report
    assert (tmp_path / "example1-fedavg" / "figure.png").stat().st_size > 1000
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["validations"][0]["rows"][0]["verdict"] == "holds"
    messages.clear()
    run(["example1-fedavg"], tmp_path, quick=True, progress=messages.append)
    assert "data reused" in messages[-1]
    assert not list(tmp_path.rglob("*.tmp"))


def test_cli_list_and_unknown_check(capsys, tmp_path):
    assert main(["list"]) == 0
    assert "cafed.theorem1" in capsys.readouterr().out
    assert main(["validate", "--check", "nope", "--out", str(tmp_path)]) == 2
