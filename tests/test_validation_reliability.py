"""The validation runner with hostile user checks and files: a measurement returning NaN,
inf or text is an error naming the check and the instance; the checks that finished before
one that raises get their report; ``verdicts_frame`` refuses an edited ``results.json``;
one run per output folder; a parallel run starts the longest validations first."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from fedtheory.errors import ParameterError
from fedtheory.io import DamagedFileError, FolderLockedError, folder_lock
from fedtheory.validation import theorem_check
from fedtheory.validation.machinery.runner import (
    _results_checksum,
    longest_first,
    run,
    verdicts_frame,
)
from tests.test_custom_checks import INSTANCES, MAX_BOUND, sample_max


def _quiet(message: str) -> None:
    pass


def _check(measure, name="max-uniform", replicates=200):
    return theorem_check(MAX_BOUND, measure, name=name, instances=INSTANCES[:2],
                         replicates=replicates)  # fmt: skip


def _with(values):
    def measure(*, x, n, replicates, seed):
        out = sample_max(x=x, n=n, replicates=replicates, seed=seed)
        return values(out) if n == 10 else out

    return measure


def _five_nan(out):
    out[[3, 50, 80, 120, 199]] = np.nan
    return out


@pytest.mark.parametrize(
    "values, what",
    [
        (_five_nan, "5 NaN or inf of 200"),
        (lambda out: np.where(out > 0.5, np.inf, out), "NaN or inf of 200"),
        (lambda out: "0.5", "str '0.5'"),
        (lambda out: [str(v) for v in out], "list"),
        (lambda out: None, "NoneType"),
    ],
)
def test_a_measurement_that_is_not_finite_numbers_names_the_check_and_instance(
    values, what, tmp_path
):
    with pytest.raises(ParameterError, match="check 'max-uniform', instance ") as err:
        run([_check(_with(values))], tmp_path, size="tiny", progress=_quiet)
    assert what in str(err.value) and "n=10" in str(err.value)


def test_a_deterministic_measurement_returning_nan_is_refused(tmp_path):
    check = theorem_check(MAX_BOUND, lambda *, x, n: float("nan"), name="nan-check",
                          instances=INSTANCES[:1])  # fmt: skip
    match = "1 NaN or inf of 1 at check 'nan-check', instance x=2"
    with pytest.raises(ParameterError, match=match):
        run([check], tmp_path, size="tiny", progress=_quiet)


def test_the_finished_checks_report_is_written_when_a_later_check_raises(tmp_path):
    def broken(*, x, n, replicates, seed):
        raise RuntimeError("the user's bug")

    good, bad = _check(sample_max, "good"), _check(broken, "bad")
    with pytest.raises(RuntimeError, match="the user's bug"):
        run([good, bad], tmp_path, size="tiny", progress=_quiet)
    results = json.loads((tmp_path / "results.json").read_text())
    assert [v["name"] for v in results["validations"]] == ["good"]
    assert "good" in (tmp_path / "report.md").read_text()
    assert list(verdicts_frame(tmp_path)["validation"].unique()) == ["good"]


def test_verdicts_frame_refuses_an_edited_or_damaged_results_json(tmp_path):
    run([_check(sample_max)], tmp_path, size="tiny", progress=_quiet)
    path = tmp_path / "results.json"
    assert len(verdicts_frame(tmp_path)) == 2
    results = json.loads(path.read_text())
    results["validations"][0]["rows"][0]["verdict"] = "violated"  # checksum left as it was
    path.write_text(json.dumps(results))
    with pytest.raises(DamagedFileError, match="does not match its checksum") as err:
        verdicts_frame(tmp_path)
    assert err.value.path == path
    path.write_bytes(b"\x00garbage")
    with pytest.raises(DamagedFileError, match="unreadable"):
        verdicts_frame(path)
    del results["checksum"]
    path.write_text(json.dumps(results))
    with pytest.raises(DamagedFileError, match="no checksum"):
        verdicts_frame(path)


def test_a_second_run_into_the_same_folder_is_refused(tmp_path):
    with folder_lock(tmp_path):
        with pytest.raises(FolderLockedError, match=str(tmp_path)):
            run([_check(sample_max)], tmp_path, size="tiny", progress=_quiet)
    assert not (tmp_path / "results.json").exists()


class _Recording:
    """An executor that runs the tasks in the order given and yields them in reverse (as a
    cluster may finish them), recording the order they were handed over in."""

    description, dashboard = "recording", None

    def __init__(self) -> None:
        self.started: list[str] = []

    def map(self, fn, items, submitted=None):
        outcomes = []
        for j, item in enumerate(items):
            self.started.append(item.name)
            outcomes.append((j, fn(item)))
        yield from reversed(outcomes)


def _costed(name, cost):
    return replace(_check(sample_max, name, replicates=20), cost=cost)


def test_a_parallel_run_starts_the_longest_first_and_reports_in_the_given_order(tmp_path):
    checks = [_costed("short", 1.0), _costed("long", 5.0), _costed("unknown", None)]
    executor = _Recording()
    outcomes = run(checks, tmp_path, size="tiny", progress=_quiet, executor=executor)
    assert executor.started == ["unknown", "long", "short"]  # no cost known: maybe long
    assert [o.check.name for o in outcomes] == ["short", "long", "unknown"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert [v["name"] for v in results["validations"]] == ["short", "long", "unknown"]


def test_the_times_measured_by_the_last_report_order_the_next_run(tmp_path):
    def report(size, seconds):
        results = {"size": size, "validations": [{"name": n, "seconds": s, "rows": []}
                                                 for n, s in seconds.items()]}  # fmt: skip
        results["checksum"] = _results_checksum(results)
        (tmp_path / "results.json").write_text(json.dumps(results))

    checks = [_costed("a", 1.0), _costed("b", 2.0), _costed("c", None)]
    report("tiny", {"a": 3.0, "b": 0.0})  # b's data was reused: its declared cost counts
    assert [checks[i].name for i in longest_first(checks, tmp_path, "tiny")] == ["c", "a", "b"]
    assert [checks[i].name for i in longest_first(checks, tmp_path, "quick")] == ["c", "b", "a"]
    (tmp_path / "results.json").write_text("{}")  # damaged: the declared costs decide
    assert [checks[i].name for i in longest_first(checks, tmp_path, "tiny")] == ["c", "b", "a"]
