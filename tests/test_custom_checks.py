"""Bring your own theorem (``fedtheory.validation.custom``): a user's statement and
measurement get the papers' machinery -- verdict rows with confidence intervals, outside
assumptions, figure, report section, resumable data -- and a false statement is caught."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from fedtheory.bounds import Condition, Theorem, fedau
from fedtheory.errors import ParameterError
from fedtheory.validation import CHECKS, theorem_check
from fedtheory.validation.registry import with_wrong_bounds
from fedtheory.validation.runner import run
from fedtheory.verdict import Verdict

x = sp.Symbol("x", positive=True)
n = sp.Symbol("n", positive=True, integer=True)

# E[max of n uniforms on [0, x]] = x n / (n + 1) <= x  (exact: x n / (n + 1))
MAX_BOUND = Theorem(
    "user.max_uniform",
    title="max of uniforms",
    reference="order statistics",
    kind="upper bound",
    terms={"x": x},
    conditions=[Condition("n <= 50", n, "<=", sp.Integer(50))],
    statement="E[max_i U_i] <= x for U_i ~ U[0, x]",
)
MAX_EXACT = Theorem(
    "user.max_uniform_exact",
    title="max of uniforms, exact",
    reference="order statistics",
    kind="exact",
    terms={"mean": x * n / (n + 1)},
)


def sample_max(*, x, n, replicates, seed):
    gen = np.random.default_rng(seed)
    return x * gen.random((replicates, n)).max(axis=1)


def exact_max(*, x, n):
    return x * n / (n + 1)  # computed independently of MAX_EXACT's sympy terms


INSTANCES = [{"x": 2.0, "n": 1}, {"x": 1.0, "n": 10}, {"x": 1.0, "n": 60}]  # last: outside


def _rows(check, tmp_path):
    (outcome,) = run([check], tmp_path, size="tiny", progress=lambda m: None)
    return outcome


def test_a_users_random_statement_gets_rows_with_intervals_figure_and_report(tmp_path):
    check = theorem_check(
        MAX_BOUND, sample_max, name="max-uniform", instances=INSTANCES, replicates=50, x="n"
    )
    outcome = _rows(check, tmp_path)
    verdicts = [r.verdict for r in outcome.rows]
    assert verdicts == [Verdict.HOLDS, Verdict.HOLDS, Verdict.OUTSIDE]
    assert all(r.interval is not None and r.relation == "<=" for r in outcome.rows)
    assert outcome.rows[0].ratio == pytest.approx(0.5, abs=0.15)  # E max of 1 uniform = x/2
    assert (tmp_path / "max-uniform" / "figure.png").stat().st_size > 0
    report = (tmp_path / "report.md").read_text()
    assert "## max of uniforms (user check)" in report
    assert "fedtheory.validation.runner.run([check]" in report  # not registered: Python call
    rows = json.loads((tmp_path / "results.json").read_text())["validations"][0]["rows"]
    assert [r["verdict"] for r in rows] == ["holds", "holds", "outside assumptions"]
    assert "max-uniform" not in CHECKS  # run without registering


def test_wrong_bounds_turn_every_row_inside_the_hypotheses_violated(tmp_path):
    check = theorem_check(
        MAX_BOUND, sample_max, name="max-uniform", instances=INSTANCES[:2], replicates=20
    )
    data = check.compute(check.settings("tiny"))
    rows = check.judge(with_wrong_bounds(check, data), check.settings("tiny"))
    assert [r.verdict for r in rows] == [Verdict.VIOLATED, Verdict.VIOLATED]


def test_a_deterministic_exact_statement_and_a_false_one(tmp_path):
    exact = theorem_check(MAX_EXACT, exact_max, name="exact", instances=INSTANCES[:2])
    rows = _rows(exact, tmp_path / "a").rows
    assert [r.verdict for r in rows] == [Verdict.HOLDS] * 2
    assert all(r.relation == "==" and r.interval is None for r in rows)
    halved = Theorem(
        "user.fedau_half",
        title="FedAU Theorem 3 halved",
        reference="false on purpose",
        kind="upper bound",
        terms={k: e / 2 for k, e in fedau.theorem3_per_round.terms.items()},
    )

    def weight_error(*, p, K_cut, t):
        return float(fedau.weight_error_exact(p, K_cut, t + 1)[t])

    false = theorem_check(
        halved, weight_error, name="half", instances=[{"p": 0.125, "K_cut": 1, "t": 60}]
    )
    (row,) = _rows(false, tmp_path / "b").rows
    assert row.verdict is Verdict.VIOLATED and row.ratio > 1.5


def test_data_is_reused_only_for_the_same_measurement(tmp_path):
    check = theorem_check(MAX_BOUND, sample_max, name="m", instances=INSTANCES, replicates=5)
    assert not _rows(check, tmp_path).reused
    assert _rows(check, tmp_path).reused

    def other_max(*, x, n, replicates, seed):
        return np.full(replicates, x)

    changed = theorem_check(MAX_BOUND, other_max, name="m", instances=INSTANCES, replicates=5)
    assert not _rows(changed, tmp_path).reused


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"theorem": fedau.theorem3_order}, "theorem"),
        ({"measure": 3}, "measure"),
        ({"name": "a b"}, "name"),
        ({"instances": [{"x": 1.0}]}, "instances"),
        ({"instances": {"tiny": INSTANCES}}, "instances"),
        ({"replicates": 1}, "replicates"),
        ({"x": "nope"}, "x"),
    ],
)
def test_theorem_check_refuses_bad_arguments(kwargs, name):
    base = dict(theorem=MAX_BOUND, measure=sample_max, name="ok", instances=INSTANCES)
    with pytest.raises(ParameterError, match=f"'{name}' parameter of theorem_check"):
        theorem_check(**{**base, **kwargs})
