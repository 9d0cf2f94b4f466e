"""Every public function of the theorem catalogue rejects a bad type and an out-of-range value
with the uniform ParameterError message."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory import bounds
from fedtheory.bounds import CATALOGUE
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem

ETA = np.full(11, 0.01)
PROG = dict(sigma2=[1.0], pi=[0.5], Q=1.0, E=2, M=2, L=1.0, Gamma=0.1, G=1.0, D=1.0, H=1.0,
            lam=0.9, C_P=1.0, T_P=0, dist0_sq=1.0)  # fmt: skip
PROB = QuadraticProblem.random(2, 1, seed=0)
MASK = np.ones((1, 2, 2), dtype=bool)

# Each paper's cases call its statements module (the lambda's argument), so that the file
# runs in a copy without that paper: its cases are marked and left out there.
CASES = {
    "cafed": [
        (
            lambda cafed: cafed.lemma1_constants("a", [1.0], 1.0),
            "'D' parameter of lemma1_constants",
        ),
        (lambda cafed: cafed.lemma1_constants(1.0, [-1.0], 1.0), "'sigma2' parameter"),
        (
            lambda cafed: cafed.theorem2_aggregates(ETA, lam=1.5, C_P=1.0, T_P=0, H=1.0),
            "'lam' parameter",
        ),
        (
            lambda cafed: cafed.theorem2_aggregates(ETA, lam=0.5, C_P=1.0, T_P=1.5, H=1.0),
            "'T_P' parameter",
        ),
        (
            lambda cafed: cafed.theorem2_aggregates([0.1], lam=0.5, C_P=1.0, T_P=0, H=1.0),
            "'eta' parameter",
        ),
        (
            lambda cafed: cafed.theorem2_aggregates(-ETA, lam=0.5, C_P=1.0, T_P=0, H=1.0),
            "'eta' parameter",
        ),
        (
            lambda cafed: cafed.theorem2_program(ETA, **{**PROG, "E": 0}),
            "'E' parameter of CA-Fed Theorem 2",
        ),
        (lambda cafed: cafed.theorem2_program(ETA, **{**PROG, "pi": [1.5]}), "'pi' parameter"),
        (lambda cafed: cafed.theorem2_program(ETA, **PROG).numerator([0.5]), "'q' parameter"),
        (lambda cafed: cafed.theorem2.evaluate(**{"lam": 1.0}), "takes exactly the parameters"),
    ],
    "fedau": [
        (
            lambda fedau: fedau.cutoff_geometric_pmf(1.5, 3),
            "'p_n' parameter of cutoff_geometric_pmf",
        ),
        (lambda fedau: fedau.cutoff_geometric_pmf(0.5, 0), "'K_cut' parameter"),
        (lambda fedau: fedau.effective_weights([1.0, -1.0], [0.5, 0.5]), "'omega_n' parameter"),
        (lambda fedau: fedau.effective_weights([0.0, 0.0], [0.5, 0.5]), "'omega_n' parameter"),
        (lambda fedau: fedau.weight_error_bound([0.0], 2, 10), "'p_n' parameter"),
        (lambda fedau: fedau.weight_error_exact(0.5, 2, 0), "'rounds' parameter"),
        (lambda fedau: fedau.weight_error_exact("x", 2, 3), "'p_n' parameter"),
        (lambda fedau: fedau.weight_error_measured([0.5], np.ones((1, 2, 2))), "'p_n' parameter"),
        (lambda fedau: fedau.weight_error_measured([0.5], np.ones((2, 1))), "'omega' parameter"),
        (
            lambda fedau: fedau.corollary4_choices(
                p_min=1.0, T=10, L=1.0, I=1, F_gap=1.0, N=2, Q=1.0, delta2=1.0, sigma2=1.0
            ),
            "'p_min' parameter",
        ),
        (
            lambda fedau: fedau.corollary4_choices(
                p_min=0.5, T=1, L=1.0, I=1, F_gap=1.0, N=2, Q=1.0, delta2=1.0, sigma2=1.0
            ),
            "'T' parameter",
        ),
        (lambda fedau: fedau.theorem3_per_round.evaluate(p=1.5, K_cut=2, t=1), "'p' parameter"),
        (
            lambda fedau: fedau.theorem3_per_round.evaluate(p=0.5, K_cut=2.5, t=1),
            "'K_cut' parameter",
        ),
    ],
    "e3cs": [
        (lambda e3cs: e3cs.quota_sum([0.5], k=2, K=10), "'sigma' parameter of quota_sum"),
        (lambda e3cs: e3cs.quota_sum([0.1], k=11, K=10), "'k' parameter"),
        (lambda e3cs: e3cs.regret.evaluate(K=10, k=2, eta=-1.0, sum_quota=1.0), "'eta'"),
    ],
    "fedlaavg": [
        (lambda fedlaavg: fedlaavg.staleness_bound(5, 6, 1), "'K' parameter of staleness_bound"),
        (lambda fedlaavg: fedlaavg.staleness_bound(5, 2, 0.5), "'E' parameter"),
        (
            lambda fedlaavg: fedlaavg.round_bound.evaluate(
                F_gap=1.0, gamma=0.1, R=0, C=1, sigma2=1.0, L=1.0, N=1, I=1, G=1.0
            ),
            "'R' parameter",
        ),
    ],
    "mimic": [
        (lambda mimic: mimic.objective_bias(PROB, np.zeros(3), MASK), "'w' parameter"),
        (lambda mimic: mimic.objective_bias(PROB, np.zeros(1), MASK[0]), "'mask' parameter"),
        (lambda mimic: mimic.objective_bias(PROB, np.zeros(1), MASK, eta=[1.0]), "'eta' parameter"),
        (lambda mimic: mimic.lemma6_schedule(0.0, 1.0, 3), "'a' parameter of lemma6_schedule"),
    ],
    "divergences": [
        (
            lambda divergences: divergences.chi_square_max_ratio_bound([0.5, 0.6], [0.5, 0.5]),
            "'alpha' param",
        ),
    ],
}
PARAMS = [
    pytest.param(paper, call, message, id=message, marks=pytest.mark.paper(paper))
    for paper, cases in CASES.items()
    for call, message in cases
]


@pytest.mark.parametrize("paper, call, message", PARAMS)
def test_bad_input_raises_parameter_error(paper, call, message):
    statements = getattr(bounds, paper)
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(statements)


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_catalogue_theorem_refuses_the_hostile_values_its_parameters_declare(key):
    """The generated fuzz binds one theorem's ``evaluate``; here every theorem of the
    catalogue gets each hostile value of each parameter's declared constraint (the others at
    their examples, hypotheses not checked): a one-line ParameterError naming it. The edge
    values (1e308, a denormal, 0) are refused or give finite terms (or a result outside the
    hypotheses, marked not valid)."""
    theorem = CATALOGUE[key]
    declared = theorem.evaluate.__constraints__
    assert set(declared) == {*theorem.parameters, "strict"}
    valid = {p: declared[p].example({}) for p in theorem.parameters}
    for name in theorem.parameters:
        for label, value in declared[name].hostile():
            with pytest.raises(ParameterError, match=f"^The '{name}' parameter of ") as err:
                theorem.evaluate(strict=False, **{**valid, name: value})
            assert "\n" not in str(err.value), (name, label)
        for label, value in declared[name].edges(valid[name]):
            try:
                result = theorem.evaluate(strict=False, **{**valid, name: value})
            except ParameterError:
                continue
            finite = all(np.isfinite(v).all() for v in [*result.terms.values(), result.total])
            assert finite or not result.valid, (name, label)
