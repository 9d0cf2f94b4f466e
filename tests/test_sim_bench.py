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
    tags = ("machine:", "[1]", "[2]", "[3]", "[4]", "speed-up", "of matmul", "clients x T=",
            "fused=False", "one call per pair")  # fmt: skip
    for tag in tags:
        assert tag in out
    cmp = figures["compare"]
    for key in ("t_ref", "t_vec", "t_stepwise", "t_local", "t_kernel_batched", "t_kernel_per_pair"):
        assert cmp[key] > 0
    assert figures["large"]["gapT"] < figures["large"]["gap0"]  # the run does train
    assert set(figures["others"]) == {"fedau", "mifa", "fedvarp", "fedlaavg", "mimic"}
