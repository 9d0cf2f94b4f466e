"""Every erratum check runs and reaches its verdict; the enumerations they rely on are checked."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedtheory.availability.sampling import successive_inclusion_probabilities
from fedtheory.bounds import errata
from fedtheory.testing.strategies import simplex
from tests.conftest import assert_tight, assert_upper_bound


def test_chi_square_is_not_convex_in_q_on_the_spec_chord():
    e = errata.cafed_chi_square_not_convex_in_q()
    assert e.verdict == "confirmed" and e.values["midpoint"] > e.values["chord"]


@given(simplex(2), simplex(2), simplex(2), st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_chi_square_in_q_is_convex_on_segments_for_two_clients(alpha, qa, qb, pi1, pi2):
    pi = np.array([pi1, pi2])
    ends = [errata._chi2_of_q(q, alpha, pi) for q in (qa, qb)]
    assert_upper_bound(errata._chi2_of_q((qa + qb) / 2, alpha, pi), sum(ends) / 2, rtol=1e-7)


def test_app_d_e_convex_in_y_s_and_water_filling_needs_equal_A():
    assert errata.cafed_convex_in_y_s().verdict == "confirmed"
    e = errata.cafed_water_filling_needs_equal_A()
    assert (
        e.verdict == "confirmed" and e.values["residual_paper"] > 100 * e.values["residual_exact"]
    )


@pytest.mark.parametrize(
    "check",
    [
        errata.cafed_upsilon_uses_w_star,
        errata.cafed_theorem2_versus_its_proof,
        errata.e3cs_fact8,
        errata.e3cs_successive_sampling,
        errata.fedlaavg_equal_blocks,
        errata.fedlaavg_missing_one_over_n,
        errata.fedau_step_size_constant,
        errata.cafed_proof_step23,
    ],
)
def test_erratum_is_confirmed_and_record_is_frozen(check):
    e = check()
    assert e.verdict == "confirmed" and e.statement and e.instance and e.computed
    assert e.kind in errata.CLASSES and e.advice
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.verdict = "refuted"


@pytest.mark.slow
def test_statistical_errata_lambda_estimator_and_mimic_equal_dropout():
    lam = errata.cafed_lambda_estimator_limit()
    assert lam.verdict == "confirmed"
    assert_tight(lam.values["closed_form"], -2 * 0.9 * 0.1 * 0.1)
    assert errata.mimic_equal_dropout().verdict == "confirmed"


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


def test_verdicts_are_restricted():
    with pytest.raises(ValueError):
        errata.Erratum("k", "s", "f", "i", "c", "maybe")


def test_errata_md_lists_every_check_with_its_command():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "validation" / "ERRATA.md").read_text()
    for check in errata.ERRATA:
        assert f"errata.{check.__name__}()" in text
    assert "python -m fedtheory.bounds.errata" in text


def test_step23_fails_exactly_while_the_min_in_J_t_binds():
    # issue 12: lambda = 0.95, C_P = H = 1: every t from 1 to 104
    e = errata.cafed_proof_step23(rounds=300)
    assert e.values["failing_rounds"] == 104 and e.values["last_failing"] == 104
    assert e.values["chain_failing_rounds"] > 0 and e.measured > e.bound


def test_fedau_step_size_instance_meets_theorem2_and_its_option_for_psi():
    e = errata.fedau_step_size_constant()
    assert "every hypothesis of Theorem 2 holds: True" in e.computed
    assert e.values["descent_limit"] < e.values["gamma_eta"] <= e.values["theorem2_limit"]
    assert e.kind == "proof does not establish the statement"


def test_equal_blocks_is_the_papers_own_caveat():
    e = errata.fedlaavg_equal_blocks()
    assert e.kind == "the paper's own caveat, confirmed" and "L'Hopital" in e.statement


@pytest.mark.slow
def test_static_regret_below_28_only_against_a_fixed_allocation():
    e = errata.e3cs_static_regret(rounds=600, replicates=4)
    assert e.verdict == "confirmed"
    assert e.values["fixed_regret"] <= e.values["bound"] < e.values["dynamic_regret"]


def test_record_needs_a_class_and_a_comparison_of_its_values():
    with pytest.raises(ValueError, match="kind"):
        errata.Erratum("k", "s", "f", "i", "c", "confirmed", {"a": 1.0})
    with pytest.raises(ValueError, match="compare"):
        errata.Erratum(
            "k", "s", "f", "i", "c", "confirmed", {"a": 1.0}, kind="not shown",
            compare=("a", ">", "b"),
        )  # fmt: skip


def test_errata_md_records_the_class_of_every_entry():
    from fedtheory.validation import errata as check

    classes = check.recorded_classes(check.ERRATA_MD.read_text(encoding="utf-8"))
    assert len(classes) == len(errata.ERRATA)
    assert set(classes.values()) <= set(errata.CLASSES)
