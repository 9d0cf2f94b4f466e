"""Every erratum check on its own instance and on a second, independent one (a hostile
reading): the hypotheses the entry names are computed and hold, the finding and the advice's
claim hold on both instances; the enumerations the checks rely on are checked."""

from __future__ import annotations

import dataclasses
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.availability.sampling import successive_inclusion_probabilities
from fedtheory.papers import PAPERS
from fedtheory.testing.strategies import simplex
from fedtheory.validation import errata
from tests.conftest import assert_tight, assert_upper_bound

RELATION = {">": operator.gt, ">=": operator.ge, "<=": operator.le, "==": operator.eq,
            "!=": operator.ne}  # fmt: skip
#: the verdict ERRATA.md records for each check (its records' modules name the checks)
RECORDED = errata.recorded_verdicts(errata.ERRATA_MD.read_text(encoding="utf-8"))
#: a second instance for every check, independent of its default one (its module's SECOND)
SECOND = {check: errata.SECOND[check.__name__] for check in errata.ERRATA}
SLOW = {"cafed_lambda_estimator_limit", "e3cs_static_regret", "mimic_equal_dropout"}
CAFED, FEDAU, FEDLAAVG = (pytest.mark.paper(key) for key in ("cafed", "fedau", "fedlaavg"))
INSTANCES = pytest.mark.parametrize("instance", ["first", "second"])
"""A check's default instance and its module's SECOND."""


def _kwargs(check, instance: str) -> dict:
    return {} if instance == "first" else errata.SECOND[check.__name__]


def _params(instance: str):
    return [
        pytest.param(
            check,
            {} if instance == "first" else SECOND[check],
            id=f"{check.__name__}-{instance}",
            marks=[pytest.mark.slow] if check.__name__ in SLOW else [],
        )  # fmt: skip
        for check in errata.ERRATA
    ]


@pytest.mark.parametrize(("check", "kwargs"), _params("first") + _params("second"))
def test_each_erratum_meets_its_hypotheses_and_its_finding_on_two_instances(check, kwargs):
    """Hostile reading: every hypothesis the entry names is computed on the instance and
    holds; the verdict and the compared numbers are those ERRATA.md records."""
    e = check(**kwargs)
    assert e.hypotheses and e.hypotheses_hold, e.hypotheses
    assert e.source and e.statement and e.instance and e.computed and e.advice
    assert e.verdict == RECORDED[e.key], e.computed
    measured, relation, bound = e.compare
    assert RELATION[relation](e.measured, e.bound), (measured, e.measured, bound, e.bound)


def test_second_instances_are_other_instances():
    assert set(errata.SECOND) == {check.__name__ for check in errata.ERRATA}
    for check, kwargs in SECOND.items():
        if check.__name__ in SLOW:
            continue
        assert check().instance != check(**kwargs).instance, check.__name__


@CAFED
@INSTANCES
def test_water_filling_advice_form_of_27_is_exact_and_paraphrase_breaks_ordering(instance):
    check = errata.cafed_water_filling_needs_equal_A
    e = check(**_kwargs(check, instance))
    assert e.values["residual_exact"] < 1e-4 < 1e-2 < e.values["residual_paper"]


@CAFED
def test_water_filling_with_equal_A_makes_the_paraphrase_exact():
    """The advice's converse: with sigma_k^2 pi_k equal for every k the paraphrase holds."""
    pi = np.array([0.3, 0.5, 0.7, 0.9])
    e = errata.cafed_water_filling_needs_equal_A(pi=pi, sigma2=0.5 / pi, B=0.1)
    assert e.values["residual_paper"] < 1e-4 and e.verdict == "refuted"


@CAFED
@INSTANCES
def test_lemma3_step_e_holds_for_the_non_increasing_schedule(instance):
    check = errata.cafed_lemma3_monotone_steps
    e = check(**_kwargs(check, instance))
    assert_upper_bound(e.values["step_d_monotone"], e.values["step_e_monotone"], rtol=1e-12)


@FEDAU
@INSTANCES
def test_fedau_lemma_conclusion_still_holds_in_the_gap(instance):
    check = errata.fedau_step_size_constant
    e = check(**_kwargs(check, instance))
    assert e.values["descent_limit"] < e.values["gamma_eta"] <= e.values["theorem2_limit"]
    assert e.values["lemma_ratio"] <= 1


@CAFED
def test_theorem2_constants_instance_has_gamma_at_most_2H_and_fedtheory_adds_the_step_condition():
    e = errata.cafed_theorem2_versus_its_proof()
    assert e.hypotheses["Gamma <= 2H ((8) with Assumption 2)"]
    assert e.values["proof"] > e.values["stated"] and e.kind == "constant or typo"
    too_big = errata.cafed_theorem2_versus_its_proof(Gamma=0.5)
    assert not too_big.hypotheses_hold and too_big.verdict == "refuted"
    assert errata.cafed_theorem2_step_size().values["rounds_above"] > 0


@CAFED
@FEDLAAVG
def test_caveat_is_not_an_erratum_and_every_class_is_defined():
    e = errata.fedlaavg_equal_blocks()
    assert e.kind == "caveat confirmed" and not e.is_erratum and "L'Hopital" in e.statement
    assert errata.cafed_eq21_reversed().is_erratum
    assert set(errata.CLASSES) == set(errata.CLASS_MEANINGS) and set(errata.CAVEATS) <= set(
        errata.CLASSES
    )
    assert all(errata.CLASS_MEANINGS.values())


@CAFED
def test_chi_square_is_not_convex_in_q_on_the_spec_chord():
    e = errata.cafed_chi_square_not_convex_in_q()
    assert e.verdict == "confirmed" and e.values["midpoint"] > e.values["chord"]


@CAFED
@given(simplex(2), simplex(2), simplex(2), st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_chi_square_in_q_is_convex_on_segments_for_two_clients(alpha, qa, qb, pi1, pi2):
    from fedtheory.validation.papers.cafed.errata import _chi2_of_q

    pi = np.array([pi1, pi2])
    ends = [_chi2_of_q(q, alpha, pi) for q in (qa, qb)]
    assert_upper_bound(_chi2_of_q((qa + qb) / 2, alpha, pi), sum(ends) / 2, rtol=1e-7)


@CAFED
def test_record_is_frozen():
    e = errata.cafed_upsilon_uses_w_star()
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.verdict = "refuted"


@CAFED
@pytest.mark.slow
def test_lambda_estimator_closed_form():
    lam = errata.cafed_lambda_estimator_limit()
    assert_tight(lam.values["closed_form"], -2 * 0.9 * 0.1 * 0.1)


def test_successive_sampling_enumeration_agrees_with_torch_multinomial():
    import torch

    p = np.array([0.9, 0.6, 0.3, 0.2])
    draws = torch.multinomial(
        torch.tensor(p).expand(100_000, -1),
        2,
        replacement=False,
        generator=torch.Generator().manual_seed(0),
    )
    freq = np.bincount(draws.flatten().numpy(), minlength=4) / 100_000
    se = np.sqrt(freq * (1 - freq) / 100_000)
    assert np.all(np.abs(freq - successive_inclusion_probabilities(p, 2)) <= 4.5 * se)


RECORD = dict(kind="not shown", advice="a", compare=("a", ">", "a"), source="s")
"""The keyword fields of a valid :class:`Erratum` with ``values={"a": 1.0}``."""


def test_verdicts_and_hypotheses_are_restricted():
    with pytest.raises(ValueError, match="verdict"):
        errata.Erratum("k", "s", "f", "i", "c", "maybe", {"a": 1.0}, **RECORD)
    with pytest.raises(ValueError, match="hypotheses"):
        errata.Erratum("k", "s", "f", "i", "c", "confirmed", {"a": 1.0}, **RECORD,
                       hypotheses={"h": 1})  # fmt: skip


def test_errata_md_lists_every_check_with_its_command():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "validation" / "ERRATA.md").read_text()
    for check in errata.ERRATA:
        assert f"errata.{check.__name__}()" in text
    assert "python -m fedtheory.validation.errata" in text


@CAFED
def test_step23_fails_exactly_while_the_min_in_J_t_binds():
    # lambda = 0.95, C_P = H = 1: every t from 1 to 104
    e = errata.cafed_proof_step23(rounds=300)
    assert e.values["failing_rounds"] == 104 and e.values["last_failing"] == 104
    assert e.values["chain_failing_rounds"] > 0 and e.measured > e.bound


def test_record_needs_a_class_and_a_comparison_of_its_values():
    with pytest.raises(ValueError, match="kind"):
        errata.Erratum("k", "s", "f", "i", "c", "confirmed", {"a": 1.0},
                       **{**RECORD, "kind": "no such class"})  # fmt: skip
    with pytest.raises(ValueError, match="compare"):
        errata.Erratum("k", "s", "f", "i", "c", "confirmed", {"a": 1.0},
                       **{**RECORD, "compare": ("a", ">", "b")})  # fmt: skip
    with pytest.raises(TypeError, match="kind"):  # no default class: every record has one
        errata.Erratum("k", "s", "f", "i", "c", "confirmed", {"a": 1.0})


def test_errata_md_records_the_class_of_every_entry():
    from fedtheory.validation import errata as check

    classes = check.recorded_classes(check.ERRATA_MD.read_text(encoding="utf-8"))
    registered = [key for key in classes if key.split(".")[0] in PAPERS]  # the papers' own
    assert len(registered) == len(errata.ERRATA)
    assert set(classes.values()) <= set(errata.CLASSES)
