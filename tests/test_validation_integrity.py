"""Results integrity of ``fedtheory validate``: damaged or edited data is reported and
recomputed (the report then equals a clean run's), leftovers of a killed run are removed,
Ctrl-C writes the report of what finished, and a bad output folder fails before compute."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

import fedtheory.validation.machinery.runner as runner
from fedtheory.cli import main
from fedtheory.errors import ParameterError
from fedtheory.io import DamagedFileError, load_npz, save_npz
from fedtheory.validation import CHECKS

NAME = "example1-fedavg"
FEDLAAVG = pytest.mark.paper("fedlaavg")  # the vehicle: NAME is FedLaAvg's Example 1


def _placeholder_figure(stem: Path, *args, **kwargs) -> str:
    """Stands in for a drawn figure: the files the report embeds, with no drawing."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".png").write_bytes(b"\x89PNG placeholder")
    stem.with_suffix(".svg").write_text("<svg/>")
    return ""


@pytest.fixture(autouse=True)
def _no_figures(monkeypatch):
    """Figures are not what these tests check (and they take most of a tiny run)."""
    monkeypatch.setattr(runner, "_save_figure", _placeholder_figure)


def _run(out: Path, names=(NAME,)) -> list[str]:
    messages: list[str] = []
    runner.run(list(names), out, size="tiny", progress=messages.append)
    return messages


def _rows(out: Path) -> list:
    return [v["rows"] for v in json.loads((out / "results.json").read_text())["validations"]]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "_save_figure", _placeholder_figure)
        _run(out)
    return out


def _largest_member_offset(data: bytes) -> int:
    """A byte inside the compressed data of the largest array of an npz file."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = max(z.infolist(), key=lambda i: i.compress_size)
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    return info.header_offset + 30 + name_len + extra_len + info.compress_size // 2


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _garbage(path: Path) -> None:
    path.write_bytes(np.random.default_rng(0).bytes(2000))


def _bit_flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[_largest_member_offset(bytes(data))] ^= 0x10
    path.write_bytes(bytes(data))


def _edit(path: Path) -> None:
    """Change one measured number, keeping settings, code fingerprint and old checksum."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["unequal_end"] = arrays["unequal_end"] + 1000.0
    np.savez_compressed(path, **arrays)


DAMAGES = [_truncate, _empty, _garbage, _bit_flip, _edit]


@FEDLAAVG
@pytest.mark.parametrize("damage", DAMAGES, ids=lambda f: f.__name__.strip("_"))
def test_damaged_or_edited_data_is_reported_and_recomputed(damage, clean, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    damage(out / NAME / "data.npz")
    messages = _run(out)
    assert any(f"{NAME}: data.npz is damaged or was edited" in m for m in messages), messages
    assert "data reused" not in messages[-1]
    assert _rows(out) == _rows(clean)
    fresh, reference = load_npz(out / NAME / "data.npz"), load_npz(clean / NAME / "data.npz")
    assert fresh.keys() == reference.keys()
    for key in reference.keys() - {"__computed__"}:  # the compute time and date differ
        np.testing.assert_array_equal(fresh[key], reference[key])
    assert "data reused" in _run(out)[-1]  # the recomputed file is trusted again


def test_data_files_carry_a_checksum_of_their_arrays(tmp_path):
    path = tmp_path / "x.npz"
    save_npz(path, {"a": np.arange(3.0)})
    np.testing.assert_array_equal(load_npz(path)["a"], np.arange(3.0))
    np.savez(path, a=np.arange(3.0))  # no checksum
    with pytest.raises(DamagedFileError, match="no checksum"):
        load_npz(path)
    np.save(tmp_path / "y.npy", np.arange(3.0))
    with pytest.raises(DamagedFileError, match="not an .npz archive"):
        load_npz(tmp_path / "y.npy")


@FEDLAAVG
def test_library_versions_join_the_fingerprint(monkeypatch):
    before = runner.fingerprint(CHECKS[NAME])
    versions = runner.library_versions()
    monkeypatch.setattr(runner, "library_versions", lambda: {**versions, "numpy": "0.0"})
    assert runner.fingerprint(CHECKS[NAME]) != before


@FEDLAAVG
def test_leftover_temporary_files_are_removed(clean, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(clean, out)
    left = [out / ".report.md.k2j3.tmp", out / NAME / ".data.npz.x8a1.tmp"]
    for path in left:
        path.write_bytes(b"half")
    (out / "notes.tmp").write_text("a user's file, not ours")
    messages = _run(out)
    assert "removed 2 temporary file(s) left by an interrupted run" in messages
    assert not any(path.exists() for path in left)
    assert (out / "notes.tmp").exists()


def _interrupt_second(monkeypatch):
    check = CHECKS["errata"]

    def interrupted(settings):
        raise KeyboardInterrupt

    monkeypatch.setitem(CHECKS, "errata", type(check)(**{**vars(check), "compute": interrupted}))


@FEDLAAVG
def test_ctrl_c_writes_the_report_of_what_finished(monkeypatch, tmp_path):
    _interrupt_second(monkeypatch)
    with pytest.raises(runner.Interrupted, match=r"interrupted during errata \(2/2\)") as info:
        _run(tmp_path, names=(NAME, "errata"))
    assert [o.check.name for o in info.value.outcomes] == [NAME]
    assert [v["name"] for v in json.loads((tmp_path / "results.json").read_text())[
        "validations"]] == [NAME]  # fmt: skip
    assert NAME in (tmp_path / "report.md").read_text()
    assert not list(tmp_path.rglob("*.tmp"))


@FEDLAAVG
def test_ctrl_c_on_the_command_line_is_one_line_and_non_zero(monkeypatch, tmp_path, capsys):
    _interrupt_second(monkeypatch)
    argv = ["validate", "--check", NAME, "--check", "errata", "--size", "tiny"]
    assert main([*argv, "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("fedtheory: interrupted during errata")
    assert "Traceback" not in "\n".join(err)


def _never_compute(monkeypatch):
    check = CHECKS[NAME]

    def compute(settings):
        raise AssertionError("computed before the output folder was checked")

    monkeypatch.setitem(CHECKS, NAME, type(check)(**{**vars(check), "compute": compute}))


@FEDLAAVG
@pytest.mark.parametrize("kind", ["file", "proc", "read-only"])
def test_an_unwritable_output_folder_fails_before_any_compute(kind, monkeypatch, tmp_path):
    _never_compute(monkeypatch)
    if kind == "file":
        out = tmp_path / "a-file"
        out.write_text("x")
    elif kind == "proc":
        out = Path("/proc/fedtheory-out")
    else:
        out = tmp_path / "ro"
        out.mkdir()
        real_mkstemp = runner.tempfile.mkstemp

        def read_only(*args, dir=None, **kwargs):  # root ignores chmod: simulate EROFS
            if Path(dir) == out:
                raise OSError(30, "Read-only file system")
            return real_mkstemp(*args, dir=dir, **kwargs)

        monkeypatch.setattr(runner.tempfile, "mkstemp", read_only)
    with pytest.raises(ParameterError, match=r"'out' parameter of run must be a writable folder"):
        _run(out)


@FEDLAAVG
def test_an_unwritable_output_folder_is_one_line_on_the_command_line(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    argv = ["validate", "--check", NAME, "--size", "tiny", "--out", str(tmp_path / "f")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "must be a writable folder" in err[0] and "a file" in err[0]
