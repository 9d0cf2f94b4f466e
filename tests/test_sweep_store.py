"""The sweep store trusts nothing it did not check: edited and damaged task files are named
and recomputed, temporaries of killed runs removed, one run per output folder, Ctrl-C
writes what finished (exit 130, one line), a lost scheduler is one line naming its address
and a rerun resumes; configurations are refused before any work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fedtheory.budget import ENV
from fedtheory.cli import main
from fedtheory.errors import ParameterError
from fedtheory.io import FolderLockedError, folder_lock
from fedtheory.sweep import grid, read_table, run_sweep
from fedtheory.sweep.executor import ClusterLostError
from fedtheory.sweep.store import parts_folder
from fedtheory.sweep.targets import parse_config
from tests.sweep_functions import counted, noisy, slow

DESIGN = grid({"x": [-1.0, 0.0, 1.0], "n": [2]}, replicates=2, seed=3)
ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120  # seconds; generous for a loaded machine, nothing asserts a duration


def _calls(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.fixture
def stored(tmp_path):
    """A finished sweep: its table path, the calls file and the reference table."""
    calls = tmp_path / "calls.txt"
    out = tmp_path / "table.csv"
    table = run_sweep(counted, DESIGN, fixed={"calls": str(calls)}, out=out)
    assert _calls(calls) == len(DESIGN)
    return out, calls, table


def _rerun(out: Path, calls: Path):
    events = []
    table = run_sweep(counted, DESIGN, fixed={"calls": str(calls)}, out=out,
                      progress=events.append)  # fmt: skip
    return table, events[0]


def test_an_edited_part_is_named_and_recomputed(stored):
    out, calls, reference = stored
    part = sorted(parts_folder(out).glob("*.json"))[0]
    saved = json.loads(part.read_text())
    saved["result"][0]["mean"] = 999.0  # the checksum is left as it was
    part.write_text(json.dumps(saved))
    table, first = _rerun(out, calls)
    assert _calls(calls) == len(DESIGN) + 1  # that task alone ran again
    assert first.reused == len(DESIGN) - 1
    assert any(part.name in n and "does not match its checksum" in n for n in first.notes)
    pd.testing.assert_frame_equal(table, reference, check_exact=True)
    assert 999.0 not in read_table(out)["mean"].to_numpy()


def _truncate(b: bytes) -> bytes:
    return b[: len(b) // 2]


def _flip(b: bytes) -> bytes:
    i = b.index(b".", b.index(b'"mean": ')) + 2  # a decimal of the first result
    return b[:i] + bytes([b[i] ^ 1]) + b[i + 1 :]


DAMAGE = {
    "truncated": (_truncate, "unreadable"),
    "empty": (lambda b: b"", "unreadable"),
    "garbage": (lambda b: os.urandom(64) + b"\xff\xfe", "unreadable"),
    "bit-flipped": (_flip, "does not match its checksum"),
    "not a record": (lambda b: b"[1, 2, 3]", "no checksum"),
    "older format": (lambda b: json.dumps({"result": [{"mean": 1.0}]}).encode(), "no checksum"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_each_damaged_part_kind_is_named_and_recomputed(stored, kind):
    out, calls, reference = stored
    damage, reason = DAMAGE[kind]
    part = sorted(parts_folder(out).glob("*.json"))[1]
    part.write_bytes(damage(part.read_bytes()))
    table, first = _rerun(out, calls)
    assert _calls(calls) == len(DESIGN) + 1
    (note,) = first.notes
    assert str(part) in note and reason in note
    pd.testing.assert_frame_equal(table, reference, check_exact=True)


def test_a_part_renamed_to_another_task_is_refused(stored):
    out, calls, reference = stored
    a, b = sorted(parts_folder(out).glob("*.json"))[:2]
    b.write_bytes(a.read_bytes())  # a valid file, under the other task's key
    table, first = _rerun(out, calls)
    assert _calls(calls) == len(DESIGN) + 1 and str(b) in first.notes[0]
    pd.testing.assert_frame_equal(table, reference, check_exact=True)


def test_temporaries_of_a_killed_run_are_removed(stored):
    out, calls, _ = stored
    left = [out.parent / f".{out.name}.0123abcd.tmp", parts_folder(out) / ".k.json.99.tmp"]
    unrelated = out.parent / ".other.csv.0123.tmp"  # another file's: not ours to remove
    for path in [*left, unrelated]:
        path.write_text("partial")
    _, first = _rerun(out, calls)
    assert not any(p.exists() for p in left) and unrelated.exists()
    assert "removed 2 temporary file(s)" in first.notes[0]


def test_a_second_run_into_the_same_folder_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "table.csv"
    with folder_lock(tmp_path):
        with pytest.raises(FolderLockedError, match=rf"process {os.getpid()} on "):
            run_sweep(noisy, DESIGN, out=out)
    assert not out.exists()
    run_sweep(noisy, DESIGN, out=out)  # released on exit
    assert out.exists()


def test_a_killed_holder_leaves_no_lock(tmp_path):
    code = (
        "import os, sys; from fedtheory.io import folder_lock\n"
        f"with folder_lock({str(tmp_path)!r}): print('locked', flush=True); os.kill(os.getpid(), 9)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=ROOT)  # fmt: skip
    assert proc.stdout.strip() == "locked" and proc.returncode == -signal.SIGKILL
    with folder_lock(tmp_path):
        pass


def _config(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fedtheory"), err
    return err[0]


CAFED = (
    'validation = "cafed-theorem2"\nsize = "tiny"\nseeds = {seeds}\nout = "{out}"\n'
    "[settings]\nhorizon = {horizon}\nreplicates = 2\n[grid]\nlam = {lam}\n"
)


def _cafed(tmp_path, *, seeds=1, horizon=20, lam="[0.0, 0.9]", extra=""):
    body = CAFED.format(seeds=seeds, horizon=horizon, lam=lam, out=tmp_path / "out") + extra
    return _config(tmp_path / "c.toml", body)


@pytest.mark.paper("cafed")
def test_typos_are_refused_naming_the_nearest_key(tmp_path, capsys):
    config = _cafed(tmp_path).read_text()
    typo = _config(tmp_path / "t.toml", config.replace("replicates = 2", "replicats = 4"))
    assert main(["sweep", str(typo)]) == 2
    assert "'replicats' (nearest valid name: 'replicates')" in _one_line_error(capsys)
    axis = _config(tmp_path / "a.toml", config.replace("lam = ", "learning_rate = "))
    assert main(["sweep", str(axis)]) == 2
    assert "'learning_rate' (nearest valid name: " in _one_line_error(capsys)
    top = _config(tmp_path / "k.toml", config.replace("seeds = 1", "seds = 1"))
    assert main(["sweep", str(top)]) == 2
    assert "'seds' (nearest valid name: 'seeds')" in _one_line_error(capsys)
    nan = _config(tmp_path / "n.toml", config.replace("replicates = 2", "replicates = 2\nmu = nan"))
    assert main(["sweep", str(nan)]) == 2
    assert "'mu' parameter" in _one_line_error(capsys)
    assert not (tmp_path / "out").exists()  # nothing was run


@pytest.mark.paper("e3cs")
def test_theorem_settings_are_checked_before_any_task(tmp_path):
    base = {"theorem": "e3cs.regret_optimal", "settings": {"K": 100, "k": 20}}
    with pytest.raises(ParameterError, match="'sum_quta' \\(nearest valid name: 'sum_quota'\\)"):
        parse_config({**base, "grid": {"sum_quta": [1.0]}})
    with pytest.raises(ParameterError, match="sum_quota"):
        parse_config({**base, "grid": {"sum_quota": [1.0, -5.0]}})
    with pytest.raises(ParameterError, match="both"):
        parse_config({**base, "grid": {"K": [10, 20]}})


@pytest.mark.paper("cafed")
@pytest.mark.parametrize(
    "what, kwargs",
    [
        ("a 10^9-point grid", {"lam": "[0.0, 0.9]", "extra": "participation = {axis}\n"}),
        ("seeds = 10^9", {"seeds": 10**9}),
        ("horizon = 10^9", {"horizon": 10**9}),
    ],
)
def test_huge_configurations_are_refused_with_the_memory_estimate(
    what, kwargs, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv(ENV, "4G")  # the same refusal whatever the machine has
    if "extra" in kwargs:  # 2 x 1000 x 1000 x 250 points, from a 20 kB file
        axis = "[" + ", ".join(f"{0.001 * (i + 1):.3f}" for i in range(250)) + "]"
        extra = kwargs["extra"].format(axis=axis)
        extra += "".join(f"{n} = {list(range(1000))}\n" for n in ("a", "b"))
        kwargs = {**kwargs, "extra": extra}
    config = _cafed(tmp_path, **kwargs)
    assert main(["sweep", str(config)]) == 2, what
    line = _one_line_error(capsys)
    assert "would need about" in line and f"than the environment variable {ENV} (4.0 GiB)" in line
    assert not (tmp_path / "out").exists()


def test_the_grid_is_checked_before_it_is_built(monkeypatch):
    monkeypatch.setenv(ENV, "1G")
    axes = {n: list(range(1000)) for n in ("a", "b", "c")}  # 10^9 points: never built
    with pytest.raises(ParameterError, match=r"1000000000 points x 1 replicates"):
        grid(axes)
    with pytest.raises(ParameterError, match="repeat earlier ones"):
        grid({"x": [0.5] * 100_000})


def _sigint_when(proc: subprocess.Popen, ready) -> tuple[int, str]:
    """Ctrl-C as a terminal sends it: SIGINT to the whole process group (workers too)."""
    deadline = time.monotonic() + TIMEOUT
    while not ready() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, err


@pytest.mark.paper("cafed")
@pytest.mark.parametrize("where", [[], ["--workers", "2"]])
def test_sweep_ctrl_c_writes_what_finished_prints_one_line_and_exits_130(where, tmp_path):
    config = _cafed(tmp_path, lam="[" + ", ".join(f"{i / 100}" for i in range(60)) + "]")
    parts = tmp_path / "out" / "table.csv.parts"
    proc = subprocess.Popen([sys.executable, "-m", "fedtheory", "sweep", str(config), *where],
                            cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    status, err = _sigint_when(proc, lambda: parts.is_dir() and any(parts.glob("*.json")))
    assert status == 130, err
    bar, dashboard = "%|", "dashboard: "  # tqdm's progress bar, the cluster's address
    lines = [line for line in err.replace("\r", "\n").splitlines()
             if line and bar not in line and dashboard not in line]  # fmt: skip
    assert lines == [lines[0]] and lines[0].startswith("fedtheory: interrupted: "), err
    assert "Traceback" not in err
    table = read_table(tmp_path / "out" / "table.csv")  # the finished tasks
    assert 1 <= len(table) < 60 * 2


def _start_cluster(folder: Path) -> tuple[str, list[subprocess.Popen]]:
    """A Dask scheduler and one worker on 127.0.0.1 (separate processes)."""
    file = folder / f"scheduler-{time.monotonic_ns()}.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
         "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + TIMEOUT
    while not file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    address = json.loads(file.read_text())["address"]
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
         "--nworkers", "1", "--host", "127.0.0.1", "--no-dashboard", "--no-nanny"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return address, [scheduler, worker]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=TIMEOUT)


def test_a_killed_scheduler_is_one_error_naming_it_and_a_rerun_resumes(tmp_path):
    pytest.importorskip("distributed")
    from distributed import Client

    design = grid({"x": [float(i) for i in range(12)]}, replicates=1, seed=1)
    fixed = {"n": 3, "sleep": 0.3}
    out = tmp_path / "table.csv"
    address, procs = _start_cluster(tmp_path)
    try:
        with Client(address, timeout=TIMEOUT) as client:
            client.wait_for_workers(1, timeout=TIMEOUT)

        def kill_scheduler(p):
            if p.done == 3:
                procs[0].kill()

        with pytest.raises(ClusterLostError, match=f"lost the Dask scheduler at {address}"):
            run_sweep(slow, design, fixed=fixed, out=out, scheduler=address,
                      progress=kill_scheduler)  # fmt: skip
    finally:
        _stop(procs)
    address, procs = _start_cluster(tmp_path)
    try:
        events = []
        table = run_sweep(slow, design, fixed=fixed, out=out, scheduler=address,
                          progress=events.append)  # fmt: skip
    finally:
        _stop(procs)
    assert events[0].reused >= 3
    pd.testing.assert_frame_equal(table, run_sweep(noisy, design, fixed=fixed), check_exact=True)


@pytest.mark.paper("e3cs")
def test_an_unreachable_scheduler_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    from fedtheory.sweep import executor

    pytest.importorskip("distributed")
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", 1.0)
    config = _config(tmp_path / "t.toml", 'theorem = "e3cs.regret_optimal"\n'
                     f'out = "{tmp_path / "out"}"\n[settings]\nK = 100\nk = 20\n'
                     "[grid]\nsum_quota = [0.0, 10.0]\n")  # fmt: skip
    assert main(["sweep", str(config), "--scheduler", "tcp://127.0.0.1:9"]) == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in _one_line_error(capsys)
