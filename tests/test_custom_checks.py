"""Bring your own theorem (``fedtheory.validation.custom``): a user's statement and
measurement get the papers' machinery -- verdict rows with confidence intervals, outside
assumptions, figure, report section, resumable data -- and a false statement is caught. A
paper's statements are imported inside the tests (and helpers) that use them, so that the
file runs in a copy without that paper."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp
from matplotlib.figure import Figure
from scipy import stats

from fedtheory.availability import TwoStateMarkov
from fedtheory.bounds import Condition, Theorem
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem
from fedtheory.validation import CHECKS, theorem_check
from fedtheory.validation.machinery.registry import with_wrong_bounds
from fedtheory.validation.machinery.runner import run
from fedtheory.verdict import Verdict
from tests.conftest import assert_tight

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
    assert (
        "fedtheory.validation.machinery.runner.run([check]" in report
    )  # not registered: Python call
    rows = json.loads((tmp_path / "results.json").read_text())["validations"][0]["rows"]
    assert [r["verdict"] for r in rows] == ["holds", "holds", "outside assumptions"]
    assert "max-uniform" not in CHECKS  # run without registering


def test_an_instance_outside_the_hypotheses_is_circled_and_its_bound_point_stays_visible(
    tmp_path,
):
    """The figure marks the instance outside the hypotheses with a hollow ring around its
    bound point, wider than the point's marker, so the point itself is not covered."""
    check = theorem_check(
        MAX_BOUND, sample_max, name="max-uniform", instances=INSTANCES, replicates=50, x="n"
    )
    outcome = _rows(check, tmp_path)
    fig = Figure()
    check.plot(outcome.data, check.settings("tiny"), fig)
    ax = fig.axes[0]
    (ring,) = [c for c in ax.collections if c.get_label() == "outside the hypotheses (circled)"]
    assert ring.get_offsets().tolist() == [[60.0, 1.0]]  # n=60, bound x=1
    assert all(face[3] == 0 for face in ring.get_facecolors())  # hollow
    bounds = [line for line in ax.get_lines() if line.get_label().startswith("bound")]
    assert bounds and np.sqrt(ring.get_sizes()).min() >= 2 * max(b.get_markersize() for b in bounds)


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
    from fedtheory.bounds import fedau

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


def test_theorem_check_refuses_an_order_statement():
    from fedtheory.bounds import fedau

    base = dict(theorem=MAX_BOUND, measure=sample_max, name="ok", instances=INSTANCES)
    with pytest.raises(ParameterError, match="'theorem' parameter of theorem_check"):
        theorem_check(**{**base, "theorem": fedau.theorem3_order})


def _cafed_instance(*, seed, N, d):
    problem = QuadraticProblem.random(N, d, mu=1.0, L=1.0, seed=seed)
    p = np.linspace(1.0, 2.0, N) / np.linspace(1.0, 2.0, N).sum()
    w = 2 * problem.optimum(p)[0] - problem.optimum()[0]
    return problem, w, p


def cafed_error(*, seed, N, d):
    problem, w, p = _cafed_instance(seed=seed, N=N, d=d)
    return float(problem.loss(w) - problem.optimum()[1])


def cafed_constants(*, seed, N, d):
    from fedtheory.bounds import cafed

    c = cafed.decomposition_constants(*_cafed_instance(seed=seed, N=N, d=d))
    return {**c.as_kwargs(), "gap_B": float(c.gap_B)}


def test_theorem_check_derives_the_constants_from_each_instance_and_groups_series(tmp_path):
    """CA-Fed Theorem 1 on instances that hold no theorem parameter (a seed and a size):
    the constants come from the problem each instance builds; the figure draws one series per
    dimension."""
    from fedtheory.bounds import cafed

    instances = [{"seed": s, "N": n, "d": d} for s in range(2) for n in (2, 3) for d in (1, 2)]
    check = theorem_check(cafed.theorem1, cafed_error, name="cafed-derived", instances=instances,
                          constants=cafed_constants, x="N", group="d")  # fmt: skip
    outcome = _rows(check, tmp_path)
    assert [r.verdict for r in outcome.rows] == [Verdict.HOLDS] * len(instances)
    for row, inst in zip(outcome.rows, instances, strict=True):
        c = cafed_constants(**inst)
        want = 2 * c["kappa"] ** 2 * c["gap_B"] + 2 * c["kappa"] ** 4 * c["chi2"] * c["Gamma"]
        assert_tight(row.bound, want)
        assert f"kappa={float(c['kappa']):.6g}, " in row.claim  # the derived constants
    report = (tmp_path / "report.md").read_text() + (tmp_path / "verdicts.csv").read_text()
    assert "(constants kappa=" in report and "np.float64" not in report
    fig = Figure()
    check.plot(outcome.data, check.settings("tiny"), fig)
    labels = fig.axes[1].get_legend_handles_labels()[1]
    assert {"measured / bound (d=1)", "measured / bound (d=2)"} <= set(labels)
    with pytest.raises(ParameterError, match="'group' parameter of theorem_check"):
        theorem_check(cafed.theorem1, cafed_error, name="g", instances=instances,
                      constants=cafed_constants, group="nope")  # fmt: skip
    with pytest.raises(ParameterError, match="'constants' parameter of theorem_check"):
        theorem_check(cafed.theorem1, cafed_error, name="g", instances=instances, constants=3)


# --- the verdict rule on a 0/1 claim: P(|fraction available - pi| > 1/sqrt(T)) <= delta ---
delta = sp.Symbol("delta", positive=True)
CONCENTRATION = Theorem(
    "user.availability_concentration",
    title="P(|available fraction - pi| > 1/sqrt(T))",
    reference="user claim on a two-state chain (CA-Fed's (pi, lambda) parametrisation)",
    kind="upper bound",
    terms={"delta": delta},
    conditions=[Condition("delta <= 1", delta, "<=", sp.Integer(1))],
)


def outside_band(*, delta, lam, pi, T, replicates, seed):
    """1 where the fraction of available rounds of the chain leaves pi +- 1/sqrt(T)."""
    mask = TwoStateMarkov([pi], lam).sample(T, replicates=replicates, seed=seed)  # [R, T, 1]
    fraction = mask.double().mean(dim=1)[:, 0].numpy()  # [R]
    return (np.abs(fraction - pi) > 1 / np.sqrt(T)).astype(float)


def _claim(lam, replicates, **kwargs):
    instance = {"delta": 0.05, "lam": lam, "pi": 0.5, "T": 1000}
    check = theorem_check(
        CONCENTRATION, outside_band, name="band", instances=[instance], replicates=replicates,
        **kwargs,
    )  # fmt: skip
    s = check.settings("tiny")
    return check.judge(check.compute(s), s)[0]


def test_a_true_zero_one_claim_is_never_violated_and_a_false_one_is():
    exact = stats.binom.pmf(np.arange(1001), 1000, 0.5)
    exact = exact[np.abs(np.arange(1001) / 1000 - 0.5) > 1 / np.sqrt(1000)].sum()
    assert 0.045 < exact < 0.05  # lambda = 0: i.i.d. rounds, the claim is true
    row = _claim(0.0, 2000)
    assert row.verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE), row
    assert "exact binomial" in row.detail and 0.0 <= row.interval[0] <= row.interval[1] <= 1.0
    if row.verdict is Verdict.INCONCLUSIVE:
        assert "replicates would decide it" in row.detail
    auto = _claim(0.0, "auto", max_replicates=32768)
    assert auto.verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE), auto
    assert "adaptive replication" in auto.detail and auto.interval[1] < row.interval[1]
    # lambda = 0.99: sticky chains, the fraction leaves the band most of the time
    assert _claim(0.99, 2000).verdict is Verdict.VIOLATED
    assert _claim(0.99, "auto").verdict is Verdict.VIOLATED
