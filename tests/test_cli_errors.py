"""Every command-line failure is one line ``fedtheory: ...`` (2 for bad input, 1 for a named
failure, 70 for an internal error),
with the traceback only under ``--debug`` or ``FEDTHEORY_DEBUG=1``; a missing optional
dependency names the extra that installs it; ``--workers`` is capped to the cores."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

from fedtheory.cli import DEBUG_ENV, EXTRAS, main
from fedtheory.errors import ExitStatus, ParameterError
from fedtheory.sweep import executor

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fedtheory: "), err
    return err[0]


def _theorem_config(tmp_path, grid="sum_quota = [0.0, 10.0]") -> Path:
    path = tmp_path / "t.toml"
    path.write_text(f'theorem = "e3cs.regret_optimal"\nout = "{tmp_path / "out"}"\n'
                    f"[settings]\nK = 100\nk = 20\n[grid]\n{grid}\n")  # fmt: skip
    return path


@pytest.mark.paper("e3cs")  # the sweep of E3CS's regret is the vehicle
def test_a_run_time_parameter_error_is_one_line_with_status_2(tmp_path, capsys, monkeypatch):
    from fedtheory.sweep import runner

    def refuse(*args, **kwargs):
        raise ParameterError("The 'x' parameter of run_sweep must be good. Got bad instead.")

    monkeypatch.setattr(runner, "_run", refuse)
    config = _theorem_config(tmp_path)
    assert main(["sweep", str(config)]) == 2
    assert _one_line(capsys) == (
        "fedtheory: The 'x' parameter of run_sweep must be good. Got bad instead."
    )
    with pytest.raises(ParameterError):  # the traceback, on request
        main(["sweep", str(config), "--debug"])
    monkeypatch.setenv(DEBUG_ENV, "1")
    with pytest.raises(ParameterError):
        main(["sweep", str(config)])


@pytest.mark.paper("e3cs")  # the sweep of E3CS's regret is the vehicle
def test_an_unexpected_error_is_one_internal_error_line_with_its_own_status(
    tmp_path, capsys, monkeypatch
):
    from fedtheory.sweep import runner

    def bug(*args, **kwargs):
        raise TypeError("'FutureCancelledError' object is not subscriptable")

    monkeypatch.setattr(runner, "_run", bug)
    assert main(["sweep", str(_theorem_config(tmp_path))]) == ExitStatus.INTERNAL_ERROR == 70
    line = _one_line(capsys)
    assert line.startswith("fedtheory: internal error: TypeError") and "please report" in line
    assert "--debug" in line and DEBUG_ENV in line


@pytest.mark.paper("fedau")  # the renamed keyword is FedAU's K
def test_a_renamed_keyword_is_accepted_with_its_deprecation_warning(capsys):
    """CHANGELOG.md: the old names still work in 0.2.x with a DeprecationWarning."""
    assert main(["eval", "fedau.theorem3.per_round", "p=0.5", "K=4", "t=10"]) == 0
    out, err = capsys.readouterr()
    assert "total" in out
    assert err.strip() == ("fedtheory: warning: FedAU Theorem 3 (per round): "
                           "the keyword 'K' is deprecated; use 'K_cut'.")  # fmt: skip
    assert main(["eval", "fedau.theorem3.per_round", "p=0.5", "K=4", "K_cut=4", "t=10"]) == 2


def test_a_missing_optional_dependency_names_its_extra(tmp_path, capsys, monkeypatch):
    from fedtheory.sweep import targets

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'distributed'", name="distributed")

    monkeypatch.setattr(targets, "load_config", missing)
    assert main(["sweep", str(_theorem_config(tmp_path))]) == 1
    assert _one_line(capsys) == (
        'fedtheory: distributed is not installed: pip install "fedtheory[dask]"'
    )


def test_the_extras_named_are_those_of_pyproject():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for module, extra in EXTRAS.items():
        names = [re.split(r"[\[<>=; ]", r)[0] for r in extras[extra]]
        assert module in names or (module == "distributed" and "dask" in names), module


@pytest.mark.paper("e3cs")  # the sweep of E3CS's regret is the vehicle
def test_a_locked_output_folder_is_one_line_naming_the_holder(tmp_path, capsys):
    from fedtheory.io import folder_lock

    with folder_lock(tmp_path / "out"):
        assert main(["sweep", str(_theorem_config(tmp_path))]) == 2
    assert "is in use by another fedtheory run (process " in _one_line(capsys)


def test_workers_beyond_the_cores_are_capped_with_a_warning(monkeypatch):
    monkeypatch.setattr(executor, "available_cores", lambda: 2)
    started = []
    monkeypatch.setattr(executor, "_open", lambda workers, scheduler: started.append(workers))
    with pytest.warns(UserWarning, match="workers=8 is more than the 2 core"):
        executor.open_executor(workers=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        executor.open_executor(workers=2)
    assert started == [2, 2]


def test_an_oversized_grid_is_refused_before_the_validations_are_imported(tmp_path):
    # the task count is checked before fedtheory.validation (and torch) load: the command
    # refuses at once instead of after seconds of imports
    import subprocess
    import textwrap

    config = tmp_path / "huge.toml"
    config.write_text(
        'validation = "cafed-theorem2"\nseeds = 1000000000\n[grid]\nlam = [0.0, 0.5]\n'
    )
    code = textwrap.dedent(f"""
        import sys
        from fedtheory.errors import ExitStatus, ParameterError
        from fedtheory.sweep.targets import load_config
        try:
            load_config({str(config)!r})
        except ParameterError as error:
            print("tasks" in str(error), "fedtheory.validation" in sys.modules,
                  "torch" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "False", "False"], done.stdout + done.stderr
