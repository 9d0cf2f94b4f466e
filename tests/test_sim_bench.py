"""The simulator benchmark runs end to end at --quick sizes (no timing assertions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.paper(key) for key in ("cafed", "fedawe", "fedlaavg", "mimic")]
"""The benchmark times these papers' algorithms beside FedAvg's (configurations [1] and [6])."""

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_sim.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_sim", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_bench_sim_quick_runs_and_prints_every_figure(capsys):
    bench = load_bench()
    figures = bench.main(["--quick"])
    out = capsys.readouterr().out
    tags = ("machine:", "[1]", "[2]", "[3]", "[4]", "[5]", "speed-up", "of matmul",
            "clients x T=", "fused=False", "one call per pair", "2-core/1-core",
            "[5'] with one competing process", "default/1-thread speed",
            "[6] static shapes", "default/static", "[6'] static shapes for the algorithms",
            "[8] CA-Fed",
            "one objective call per visit")  # fmt: skip
    for tag in tags:
        assert tag in out
    cmp = figures["compare"]
    for key in ("t_ref", "t_vec", "t_stepwise", "t_local", "t_kernel_batched", "t_kernel_per_pair"):
        assert cmp[key] > 0
    assert figures["large"]["gapT"] < figures["large"]["gap0"]  # the run does train
    assert set(figures["others"]) == {"fedau", "mifa", "fedvarp", "fedlaavg", "mimic"}
    assert figures["cores"]["identical"] == 1.0  # 1 and 2 threads: the same numbers
    busy = figures["competitor"]
    assert busy["identical"] == 1.0 and busy["t_default"] > 0 and busy["t_one"] > 0
    assert 1 <= busy["used"] <= busy["default"]
    assert figures["cafed"]["identical"] == 1.0  # windows of visits: the loop's numbers
    for static in figures["static"].values():  # both paths train to about the same gap
        assert static["t_default"] > 0 and static["t_static"] > 0
        assert abs(static["gap_static"] - static["gap_default"]) < 0.5 * static["gap_default"]


def test_bench_sim_device_figures_run_on_the_cpu_through_the_device_code(capsys):
    bench = load_bench()
    figures = bench.main(["--quick", "--device", "cpu"])["device"]
    out = capsys.readouterr().out
    tags = ("[G1]", "[G2]", "[G3]", "client-steps/s", "CPU fused kernel", "target on one H100",
            "GPU busy: n/a off CUDA", "static shapes", "default path")  # fmt: skip
    for tag in tags:
        assert tag in out
    assert all(figures[key] > 0 for key in ("R2", "R2_f32", "R2_cpu", "R8", "huge_seconds",
                                            "R2_dynamic", "huge_dynamic_seconds"))  # fmt: skip
    assert np.isfinite(figures["huge_cpu_per_round"])  # a difference of two timings
