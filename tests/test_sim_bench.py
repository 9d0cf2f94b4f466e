"""The simulator benchmark runs end to end at --quick sizes (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_sim.py"


def test_bench_sim_quick_runs_and_prints_every_figure(capsys):
    spec = importlib.util.spec_from_file_location("bench_sim", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    figures = bench.main(["--quick"])
    out = capsys.readouterr().out
    for tag in ("machine:", "[1]", "[2]", "[3]", "[4]", "speed-up", "of matmul", "clients x T="):
        assert tag in out
    assert figures["compare"]["t_ref"] > 0 and figures["compare"]["t_vec"] > 0
    assert figures["large"]["gapT"] < figures["large"]["gap0"]  # the run does train
    assert set(figures["others"]) == {"fedau", "mifa", "fedvarp", "fedlaavg", "mimic"}
