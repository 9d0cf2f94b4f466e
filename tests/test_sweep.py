"""Sweeps: the same table sequentially and on a Dask cluster of separate processes, after a
worker is killed mid-sweep, and after an interruption (finished tasks are not recomputed);
``fedtheory validate --workers``; ``fedtheory sweep CONFIG.toml``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fedtheory.cli import main
from fedtheory.errors import ParameterError
from fedtheory.sweep import grid, open_executor, point_seed, points, read_table, run_sweep
from fedtheory.sweep.summary import plot_summary, summarise
from tests.sweep_functions import counted, killer, noisy, vectorised

distributed = pytest.importorskip("distributed")  # the test extra installs it

TIMEOUT = "120s"  # generous: the machine may be loaded; nothing asserts a duration


@pytest.fixture(scope="module")
def scheduler():
    """One 2-worker LocalCluster (separate processes) shared by the module's tests."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2, timeout=TIMEOUT)
        yield cluster.scheduler_address


DESIGN = grid({"x": [-1.0, 0.0, 1.0], "n": [1, 5]}, replicates=4, seed=7)
SUMMARY = summarise(pd.DataFrame({"x": [1.0, 2.0], "measured": 0.5, "bound": 1.0}), ["x"],
                    inside=None)  # fmt: skip


def test_sequential_and_dask_tables_are_identical(scheduler, tmp_path):
    seq = run_sweep(noisy, DESIGN, out=tmp_path / "seq.csv")
    events = []
    dask = run_sweep(noisy, DESIGN, out=tmp_path / "dask.csv", scheduler=scheduler,
                     progress=events.append)  # fmt: skip
    pd.testing.assert_frame_equal(seq, dask, check_exact=True)
    assert list(seq.columns) == ["x", "n", "replicate", "seed", "mean", "max", "positive"]
    assert len(seq) == len(DESIGN) == 24
    # the files are the tables, floats round-trip exactly
    pd.testing.assert_frame_equal(read_table(tmp_path / "dask.csv"), seq, check_exact=True)
    assert [e.done for e in events] == list(range(25)) and events[-1].total == 24
    assert events[0].dashboard is not None and "Dask cluster" in events[0].where


def test_several_rows_per_call_are_identical_on_dask(scheduler):
    design = points([{"x": 0.0}, {"x": 2.0}], replicates=2)
    seq = run_sweep(vectorised, design)
    dask = run_sweep(vectorised, design, scheduler=scheduler)
    pd.testing.assert_frame_equal(seq, dask, check_exact=True)
    assert list(seq["sample"]) == [0, 1, 2] * 4
    assert (seq["seed"].to_numpy().reshape(4, 3) == seq["seed"].to_numpy()[::3, None]).all()


def test_a_worker_killed_mid_sweep_changes_nothing(scheduler, tmp_path):
    marker = tmp_path / "killed"
    victim = point_seed(DESIGN.seed, {"x": 1.0, "n": 5}, 2)
    fixed = {"marker": str(marker), "victim_seed": victim}
    with distributed.Client(scheduler) as client:
        before = set(client.run(os.getpid).values())
    dask = run_sweep(killer, DESIGN, fixed=fixed, scheduler=scheduler)
    assert marker.exists()  # the task really killed its worker (then ran again elsewhere)
    with distributed.Client(scheduler) as client:
        client.wait_for_workers(2, timeout=TIMEOUT)  # the nanny restarted it
        after = set(client.run(os.getpid).values())
    assert before - after  # one worker process is gone
    seq = run_sweep(killer, DESIGN, fixed=fixed)  # the marker exists: nothing is killed
    pd.testing.assert_frame_equal(seq, dask, check_exact=True)
    pd.testing.assert_frame_equal(seq, run_sweep(noisy, DESIGN), check_exact=True)


class Interrupt(Exception):
    pass


@pytest.mark.parametrize("resume_on", ["sequential", "dask"])
def test_an_interrupted_sweep_resumes_without_recomputing(resume_on, scheduler, tmp_path):
    calls = tmp_path / "calls.txt"
    fixed = {"calls": str(calls)}
    out = tmp_path / "table.csv"

    def stop_after_five(p):
        if p.done == 5:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_sweep(counted, DESIGN, fixed=fixed, out=out, progress=stop_after_five)
    assert len(calls.read_text().splitlines()) == 5 and not out.exists()
    where = {"scheduler": scheduler} if resume_on == "dask" else {}
    events = []
    table = run_sweep(counted, DESIGN, fixed=fixed, out=out, progress=events.append, **where)
    lines = calls.read_text().splitlines()
    assert len(lines) == len(DESIGN)  # 5 before the interruption + 19 after, none twice
    assert len(set(lines)) == len(DESIGN)
    assert events[0].reused == 5
    pd.testing.assert_frame_equal(table, run_sweep(noisy, DESIGN), check_exact=True)
    pd.testing.assert_frame_equal(read_table(out), table, check_exact=True)


def test_changed_code_or_settings_are_recomputed(tmp_path, monkeypatch):
    calls = tmp_path / "calls.txt"
    out = tmp_path / "t.csv"
    run_sweep(counted, DESIGN, fixed={"calls": str(calls)}, out=out)
    run_sweep(counted, DESIGN, fixed={"calls": str(calls), "extra": 1}, out=out)
    assert len(calls.read_text().splitlines()) == 2 * len(DESIGN)
    from fedtheory.sweep import store

    monkeypatch.setattr(store, "code_digest", lambda: "edited")
    run_sweep(counted, DESIGN, fixed={"calls": str(calls)}, out=out)
    assert len(calls.read_text().splitlines()) == 3 * len(DESIGN)


def test_seeds_depend_on_the_point_not_on_the_design():
    small = grid({"x": [0.0, 1.0]}, replicates=3, seed=5)
    large = grid({"x": [2.0, 1.0, 0.0, 3.0]}, replicates=5, seed=5)
    seeds = {(t.point["x"], t.replicate): t.seed for t in large.tasks()}
    assert all(seeds[(t.point["x"], t.replicate)] == t.seed for t in small.tasks())
    all_seeds = [t.seed for t in large.tasks()]
    assert len(set(all_seeds)) == len(all_seeds)
    assert point_seed(6, {"x": 0.0}, 0) != point_seed(5, {"x": 0.0}, 0)


def test_executor_map_yields_every_result_once(scheduler):
    with open_executor(scheduler=scheduler) as ex:
        got = dict(ex.map(abs, [-3, 1, -2]))
    assert got == {0: 3, 1: 1, 2: 2}


@pytest.mark.parametrize(
    "call",
    [
        lambda: grid({"x": []}),
        lambda: grid({"seed": [1]}),
        lambda: grid({"x": [np.nan]}),
        lambda: grid({"x": [1]}, replicates=0),
        lambda: points([{"x": 1}, {"y": 1}]),
        lambda: points([{"x": 1}, {"x": 1}]),
        lambda: run_sweep(noisy, DESIGN, workers=2, scheduler="tcp://localhost:1"),
        lambda: run_sweep(noisy, DESIGN, out="table.txt"),
        lambda: run_sweep(noisy, DESIGN, fixed={"f": object()}),
        lambda: run_sweep(lambda s, seed: {"x": 1.0}, DESIGN),  # clashes with a setting
        lambda: run_sweep(lambda s, seed: {"y": [[1.0]]}, DESIGN),
        lambda: run_sweep(noisy, DESIGN, fixed="n=1"),
        lambda: run_sweep(noisy, DESIGN, progress="bar"),
        lambda: run_sweep(noisy, DESIGN, scheduler="0.5"),  # not an address
        lambda: plot_summary(SUMMARY, "x", fig=3),
        lambda: grid({"x": [1.0, 2.0, 1.0]}),  # a repeated value
    ],
)
def test_bad_input_raises_parameter_error(call):
    with pytest.raises(ParameterError):
        call()


@pytest.mark.paper("cafed")
@pytest.mark.slow  # the workers import the whole validation suite
def test_validate_on_workers_writes_the_sequential_results(scheduler, tmp_path):
    names = ["cafed-theorem2", "cafed-decomposition"]
    checks = [a for n in names for a in ("--check", n)]
    base = ["validate", *checks, "--size", "tiny"]
    assert main([*base, "--out", str(tmp_path / "B")]) == 0
    assert main([*base, "--scheduler", scheduler, "--out", str(tmp_path / "A")]) == 0

    def results(folder):
        data = json.loads((tmp_path / folder / "results.json").read_text())
        data.pop("checksum")  # covers the timings
        for v in data["validations"]:
            v.pop("seconds")  # timings aside
        data.pop("environment")  # the machine's load when the report was written
        return data

    assert results("A") == results("B")
    assert [v["name"] for v in results("A")["validations"]] == names


def test_cli_sweep_of_a_validation_and_of_a_theorem(tmp_path, capsys):
    config = tmp_path / "cafed.toml"
    config.write_text(
        'validation = "cafed-theorem2"\nsize = "tiny"\nseeds = 2\n'
        f'out = "{tmp_path / "cafed"}"\n'
        "[settings]\nhorizon = 20\nreplicates = 3\n"
        "[grid]\nlam = [0.0, 0.9]\nparticipation = [0.3, 0.5]\n"
    )
    assert main(["sweep", str(config)]) == 0
    table = read_table(tmp_path / "cafed" / "table.csv")
    assert len(table) == 4 * 2 * 3 and (tmp_path / "cafed" / "figure.svg").exists()
    summary = pd.read_csv(tmp_path / "cafed" / "summary.csv")
    assert (summary["n"] == 6).all() and summary["inside"].all()
    # participation 0.5 is the validation's own pi profile: its bound at T = 20, lam = 0
    from fedtheory.validation.papers.cafed import theorem2 as cafed_theorem2

    data = cafed_theorem2.compute({**cafed_theorem2.settings("tiny"), "lams": [0.0]})
    first = summary[(summary["lam"] == 0.0) & (summary["participation"] == 0.5)]
    assert first["bound"].item() == data["bound"][0, 0]

    theorem = tmp_path / "e3cs.toml"
    theorem.write_text(
        f'theorem = "e3cs.regret_optimal"\nout = "{tmp_path / "e3cs"}"\n'
        "[settings]\nK = 100\nk = 20\n[grid]\nsum_quota = [0.0, 10.0, 40.0]\n"
    )
    assert main(["sweep", str(theorem)]) == 0
    summary = pd.read_csv(tmp_path / "e3cs" / "summary.csv")
    assert list(summary["sum_quota"]) == [0.0, 10.0, 40.0] and summary["inside"].all()
    from fedtheory.bounds import e3cs

    direct = e3cs.regret_optimal.evaluate(K=100, k=20, sum_quota=summary["sum_quota"])
    np.testing.assert_array_equal(summary["bound"], direct.total)  # CSV floats round-trip

    theorem.write_text('theorem = "no.such.theorem"\n[grid]\nx = [1]\n')
    assert main(["sweep", str(theorem)]) == 2
    assert "theorem" in capsys.readouterr().err


def test_summarise_means_and_ratios():
    table = run_sweep(vectorised, points([{"x": 0.0}, {"x": 2.0}], replicates=2))
    summary = summarise(table, ["x"], measured="y", inside=None)
    for x, row in summary.set_index("x").iterrows():
        y = table.loc[table["x"] == x, "y"]
        assert row["n"] == 6 and row["mean"] == y.mean() and row["ratio"] == y.mean() / 10.0
        assert row["low"] < row["mean"] < row["high"]


@pytest.mark.parametrize("bad", [math.nan, math.inf])
@pytest.mark.parametrize("samples", [1, 3])
def test_summarise_refuses_a_non_finite_measurement(bad, samples):
    """A diverged run's NaN or inf is named with its point, one sample or several (never
    passed through as a mean, nor refused in another function's name)."""
    y = [bad, *([1.0] * (samples - 1))]
    table = pd.DataFrame({"x": [0.0] * samples, "y": y, "bound": [2.0] * samples})
    with pytest.raises(ParameterError, match=r"'y' column of summarise .* at \{'x': 0\.0\}"):
        summarise(table, ["x"], measured="y", inside=None)


def test_dask_missing_gives_an_actionable_message(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed":
            raise ImportError("No module named 'distributed'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    with pytest.raises(ImportError, match=r'pip install "fedtheory\[dask\]"'):
        with open_executor(workers=2):
            pass


def test_parquet_tables_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    table = run_sweep(noisy, DESIGN, out=tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(read_table(Path(tmp_path / "t.parquet")), table)
