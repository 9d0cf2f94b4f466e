"""FedAWE (Xiang et al. 2024, Algorithm 1) as a PEP: reductions to known tight rates, the
replayed worst case in the simulator, and its statements against their exact worst cases."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")

from fedtheory.errors import ParameterError  # noqa: E402
from fedtheory.pep import (  # noqa: E402
    AtOptimum,
    Participation,
    SmoothStronglyConvex,
    replay,
    worst_case,
)
from fedtheory.pep import fedawe as pep_fedawe  # noqa: E402
from fedtheory.pep.catalogue import RESOLUTION  # noqa: E402
from fedtheory.sim import AverageParticipating, FedAvg, FedAWE  # noqa: E402
from tests.conftest import assert_parameter_error, assert_pep_close, assert_replay_attains  # noqa: E402

MU, L, ETA = 0.5, 1.0, 0.1


@pytest.mark.parametrize("T", [1, 3, 5])
def test_one_always_available_client_is_gradient_descent_with_the_tight_rate(T):
    # Taylor, Hendrickx & Glineur 2017: GD with eta <= 1/L contracts ||x - x*||^2 by
    # exactly (1 - eta mu)^2 per step on F_{mu,L}
    r = worst_case(FedAWE(local_steps=1, lr=ETA), SmoothStronglyConvex(MU, L),
                   Participation.full(T, 1))  # fmt: skip
    assert r.ok
    assert_pep_close(r, (1 - ETA * MU) ** (2 * T))


def test_one_client_echoes_its_missed_rounds_into_a_longer_gradient_step():
    # mask 1, 0, 1, 1: rounds 0, 2, 3 are GD steps of eta, 2 eta (echo t - tau = 2), eta;
    # each contracts by max(|1 - h mu|, |1 - h L|)^2, here (1 - h mu)^2, all attained by
    # the same quadratic mu/2 x^2
    mask = np.array([[1], [0], [1], [1]], bool)
    r = worst_case(FedAWE(local_steps=1, lr=ETA), SmoothStronglyConvex(MU, L),
                   Participation.fixed(mask))  # fmt: skip
    assert_pep_close(r, (1 - ETA * MU) ** 4 * (1 - 2 * ETA * MU) ** 2)


def test_always_available_clients_are_fedavg_over_the_participants():
    # echo factors are all 1 and every client gets the new model: FedAvg's round
    cls, part, het = SmoothStronglyConvex(MU, L), Participation.full(3, 2), AtOptimum(0.1)
    a = worst_case(FedAWE(local_steps=2, lr=ETA), cls, part, heterogeneity=het)
    b = worst_case(FedAvg(AverageParticipating(), local_steps=2, lr=ETA), cls, part,
                   heterogeneity=het)  # fmt: skip
    assert_pep_close(a, b)


@pytest.mark.parametrize("criterion", ["distance", "gap"])
def test_replayed_worst_case_in_the_simulator_attains_the_pep_value(criterion):
    # staircase-like pattern with missed rounds (echo factors 2 and 3) and an empty round
    mask = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 1], [1, 1, 0]], bool)
    alg = FedAWE(local_steps=2, lr=ETA, server_lr=1.2)
    r = worst_case(alg, SmoothStronglyConvex(0.1, L), Participation.fixed(mask),
                   heterogeneity=AtOptimum(1.0), criterion=criterion)  # fmt: skip
    assert r.ok
    assert_replay_attains(replay(r).value, r)


@pytest.mark.parametrize(
    "criterion", ["fedawe_zbar", "fedawe_xbar", "fedawe_consensus_x", "fedawe_consensus_z"]
)
def test_worst_case_of_each_statement_is_replayed_by_the_simulators_fedawe(criterion):
    # the statements' sequences (client models, Definition 1's z) measured on the run of
    # the interpolating clients equal the PEP's value
    from fedtheory.pep import Initial

    mask = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], bool)
    alg = FedAWE(local_steps=2, lr=0.2)
    r = worst_case(alg, SmoothStronglyConvex(0.1, L), Participation.fixed(mask),
                   initial=Initial(1.0, "gap"), heterogeneity=AtOptimum(0.5),
                   criterion=criterion)  # fmt: skip
    assert r.ok and r.value > 0.05
    assert_replay_attains(replay(r).value, r)


def test_nonconvex_worst_case_is_replayed_through_the_smooth_interpolant():
    from fedtheory.pep import Dissimilarity, Initial, SmoothNonconvex

    mask = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], bool)
    r = worst_case(FedAWE(local_steps=1, lr=0.3), SmoothNonconvex(L), Participation.fixed(mask),
                   initial=Initial(1.0, "gap"), heterogeneity=Dissimilarity(0.5, 0.1),
                   criterion="min_grad_norm")  # fmt: skip
    assert r.ok and r.relaxed
    assert_replay_attains(replay(r).value, r)
    z = worst_case(FedAWE(local_steps=1, lr=0.3), SmoothNonconvex(L), Participation.fixed(mask),
                   initial=Initial(1.0, "gap"), heterogeneity=Dissimilarity(0.5, 0.1),
                   criterion="fedawe_zbar")  # fmt: skip
    assert_replay_attains(replay(z).value, z)


def test_interchangeable_clients_reduction_gives_the_full_pep_value():
    # metamorphic: always-available clients are interchangeable (fedtheory.pep._symmetry)
    alg, part, het = FedAWE(local_steps=2, lr=ETA), Participation.full(3, 3), AtOptimum(0.1)
    cls = SmoothStronglyConvex(MU, L)
    reduced = worst_case(alg, cls, part, heterogeneity=het)
    full = worst_case(alg, cls, part, heterogeneity=het, use_symmetry=False)
    assert "interchangeable" in reduced.setting["symmetry"]
    assert_pep_close(reduced, full)


def test_prefixes_shared_by_masks_give_the_same_value_as_one_mask():
    # a distribution of one mask repeated twice equals the mask (prefix cache metamorphic)
    mask = np.array([[1, 0], [0, 1], [1, 1]], bool)
    alg, cls, het = FedAWE(local_steps=1, lr=ETA), SmoothStronglyConvex(MU, L), AtOptimum(0.1)
    one = worst_case(alg, cls, Participation.fixed(mask), heterogeneity=het)
    two = worst_case(alg, cls, Participation(np.stack([mask, mask]), np.array([0.5, 0.5])),
                     heterogeneity=het)  # fmt: skip
    assert_pep_close(two, one)


def test_clipped_update_and_statement_criteria_of_other_methods_are_refused():
    cls, part = SmoothStronglyConvex(MU, L), Participation.full(2, 2)
    assert_parameter_error(
        lambda: worst_case(FedAWE(variant="code"), cls, part), "algorithm", "clip=None"
    )
    gd = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    with pytest.raises(ParameterError, match="measures FedAWE"):
        worst_case(gd, cls, part, criterion="fedawe_zbar")


def test_independent_participation_enumerates_the_exact_law():
    p = np.array([[0.5, 1.0], [0.25, 0.0]])
    part = Participation.independent(p)
    assert part.masks.shape == (4, 2, 2)  # client 2: always in round 0, never in round 1
    np.testing.assert_allclose(np.einsum("k,ktn->tn", part.probs, part.masks), p, atol=1e-15)
    big = np.ones((7, 2))
    assert_parameter_error(lambda: Participation.independent(big), "probabilities", "T * N <= 12")


def test_pep_exact_fedawe_rows_have_search_below_exact_below_bound():
    from fedtheory.validation import pep_exact

    s = {**pep_exact.settings("tiny"), "statements": ["fedawe"]}
    data = pep_exact.compute(s)
    rows = pep_exact.judge(data, s)
    fedawe_rows = [r for r in rows if "FedAWE" in r.claim]
    assert len(fedawe_rows) == len(rows) == 2 * len(pep_fedawe.ROWS)
    assert all(r.verdict.value == "holds" for r in fedawe_rows)
    for criterion in pep_fedawe.ROWS:
        exact, acc = data[f"{criterion}_exact"], data[f"{criterion}_accuracy"]
        assert np.all(data[f"{criterion}_search"] <= exact + acc)
        assert np.all(exact <= data[f"{criterion}_bound"])
        resolved = exact >= RESOLUTION * acc  # Corollary 3's consensus is not (~1e-8)
        assert np.all(data[f"{criterion}_search"][resolved] > 0.5 * exact[resolved])
    assert np.all(data["fedawe_zbar_exact"] >= RESOLUTION * data["fedawe_zbar_accuracy"])
    assert all("from the certificate of the PEP" in r.detail for r in rows)
    # a PEP value planted below the search: within its certificate's tolerance the
    # consistency row holds; beyond it, it is a defect of fedtheory (not a paper's statement
    # violated), and the statement's own row is unaffected
    for factor, verdict in ((0.5, "holds"), (3.0, "defect of fedtheory")):
        planted = {**data, "fedawe_xbar_exact": data["fedawe_xbar_exact"].copy()}
        search, acc = data["fedawe_xbar_search"][0], data["fedawe_xbar_accuracy"][0]
        planted["fedawe_xbar_exact"][0] = search - factor * acc
        again = {r.claim: r for r in pep_exact.judge(planted, s)}
        row = next(r for c, r in again.items() if c.startswith("FedAWE Corollary 2: the largest"))
        assert row.verdict_text == verdict and row.defect is (verdict != "holds")
        assert row.source == "fedtheory" and not any(
            r.defect or r.verdict.value == "violated" for r in again.values() if r is not row
        )
