"""Client symmetry in performance estimation (fedtheory.pep._symmetry): the reduced PEP has the
full PEP's value wherever both solve, the groups come from the masks, weights and
aggregation, and a grouping that the computation contradicts falls back to the full PEP."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")

from fedtheory.pep import (  # noqa: E402
    AtOptimum,
    Dissimilarity,
    Initial,
    Participation,
    Quadratic,
    SmoothNonconvex,
    SmoothStronglyConvex,
    worst_case,
)
from fedtheory.pep import _symmetry as symmetry  # noqa: E402
from fedtheory.pep import solve as pep_solve  # noqa: E402
from fedtheory.pep.replay import replay  # noqa: E402
from fedtheory.sim import MIFA, AverageParticipating, FedAvg  # noqa: E402
from tests.conftest import assert_pep_close, assert_replay_attains  # noqa: E402

MU, L, ETA, ZETA2 = 0.5, 1.0, 0.1, 0.1  # the constants of tests/test_pep.py
CLASS, HET = SmoothStronglyConvex(MU, L), AtOptimum(ZETA2)


def _both(algorithm, fclass, part, **kw):
    reduced = worst_case(algorithm, fclass, part, **kw)
    full = worst_case(algorithm, fclass, part, use_symmetry=False, **kw)
    assert reduced.ok and full.ok, (reduced, full)
    return reduced, full


def test_full_participation_reduces_to_one_representative_with_the_full_value():
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=ETA)
    reduced, full = _both(alg, CLASS, Participation.full(2, 3), heterogeneity=HET)
    assert reduced.setting["symmetry"].startswith("clients {0,1,2} interchangeable")
    assert full.setting["symmetry"].startswith("none")
    assert reduced.gram_dim < full.gram_dim and reduced.constraints < full.constraints
    assert_pep_close(reduced, full)


def test_a_partial_mask_groups_only_clients_with_identical_participation():
    # clients 0 and 1 share every round; 2 and 3 differ from everybody
    mask = np.array([[1, 1, 0, 1], [1, 1, 1, 0], [0, 0, 1, 1]], bool)
    part = Participation.fixed(mask)
    for alg in (FedAvg(AverageParticipating(), local_steps=1, lr=ETA), MIFA(lr=ETA)):
        parts, note = symmetry.groups(alg, CLASS, part, np.full(4, 0.25), HET)
        assert parts == [[0, 1], [2], [3]] and "{0,1}, {2}, {3}" in note
        reduced, full = _both(alg, CLASS, part, heterogeneity=HET)
        assert_pep_close(reduced, full)


def test_groups_follow_the_weights_and_every_mask_of_a_distribution():
    part = Participation.full(2, 3)
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    parts, _ = symmetry.groups(alg, CLASS, part, np.array([0.5, 0.25, 0.25]), HET)
    assert parts == [[0], [1, 2]]
    # two masks: clients 1 and 2 agree in both, client 0 differs in the second
    masks = np.ones((2, 2, 3), bool)
    masks[1, 0, 0] = False
    two = Participation(masks, [0.4, 0.6])
    parts, _ = symmetry.groups(alg, CLASS, two, np.full(3, 1 / 3), HET)
    assert parts == [[0], [1, 2]]
    reduced, full = _both(alg, CLASS, two, heterogeneity=HET)
    assert_pep_close(reduced, full)
    # independent Bernoulli masks: no two columns agree in every mask
    parts, note = symmetry.groups(MIFA(lr=ETA), CLASS, Participation.bernoulli(2, [0.5, 0.5]),
                                  np.full(2, 0.5), HET)  # fmt: skip
    assert parts == [[0], [1]] and note.startswith("none")


def test_fedlaavg_tie_breaking_is_not_mistaken_for_symmetry():
    # every client always available, one selected per round by index among the longest
    # absent: clients do not work in the same rounds, so no grouping
    from fedtheory.sim import FedLaAvg

    alg = FedLaAvg(clients_per_round=1, local_steps=1, lr=ETA)
    parts, note = symmetry.groups(alg, CLASS, Participation.full(4, 2), np.full(2, 0.5), HET)
    assert parts == [[0], [1]] and note.startswith("none")


@pytest.mark.parametrize("setting", ["dissimilarity", "nonconvex"])
def test_reduced_value_equals_the_full_value_for_other_constraints(setting):
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=0.5 if setting == "nonconvex" else ETA)
    part = Participation.full(2, 3)
    if setting == "dissimilarity":
        kw = {"heterogeneity": Dissimilarity(1.0, ZETA2)}
        reduced, full = _both(alg, CLASS, part, criterion="gap", **kw)
    else:
        kw = {"heterogeneity": Dissimilarity(1.0, ZETA2), "initial": Initial(1.0, "gap")}
        reduced, full = _both(alg, SmoothNonconvex(L), part, criterion="min_grad_norm", **kw)
    assert "interchangeable" in reduced.setting["symmetry"]
    assert_pep_close(reduced, full)


def test_the_reduced_instance_is_replayed_by_every_client():
    # the representative and the mean rebuild three explicit clients of F_{mu,L}
    # (Taylor, Hendrickx & Glineur 2017, Theorem 4) whose simulated run attains the value
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=ETA)
    r = worst_case(alg, CLASS, Participation.full(2, 3), heterogeneity=HET, criterion="gap")
    assert r.ok and "interchangeable" in r.setting["symmetry"]
    assert len(r.instance.points) == 3
    assert_replay_attains(replay(r).value, r)


def test_a_grouping_the_computation_contradicts_falls_back_to_the_full_pep(monkeypatch):
    mask = np.array([[1, 0, 1], [0, 1, 1]], bool)
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    full = worst_case(alg, CLASS, Participation.fixed(mask), heterogeneity=HET)
    monkeypatch.setattr(symmetry, "groups", lambda *a: ([[0, 1], [2]], "clients {0,1}, {2}"))
    r = worst_case(alg, CLASS, Participation.fixed(mask), heterogeneity=HET)
    assert r.ok and r.setting["symmetry"].startswith("none (full PEP:")
    assert_pep_close(r, full)


def test_classes_without_a_reduction_solve_the_full_pep():
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    r = worst_case(alg, Quadratic(MU, L), Participation.full(2, 2), heterogeneity=HET)
    assert r.ok and r.setting["symmetry"] == "none (full PEP: the class quadratic is not reduced)"


def test_the_stacked_program_has_pepits_own_value():
    # metamorphic: the same PEPit problem through PEPit's cvxpy wrapper and through the
    # stacked (sparse) one; both are gradient descent's tight rate (1 - eta mu)^(2T)
    # (Taylor, Hendrickx & Glineur 2017)
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    from fedtheory.pep import _program as program

    values = []
    for stacked in (False, True):
        pep = PEP()
        f = pep.declare_function(SmoothStronglyConvexFunction, mu=MU, L=L)
        xs, x0 = f.stationary_point(), pep.set_initial_point()
        pep.set_initial_condition((x0 - xs) ** 2 <= 1)
        x = x0
        for _ in range(3):
            x = x - ETA * f.gradient(x)
        pep.set_performance_metric((x - xs) ** 2)
        if stacked:
            values.append(program.solve(pep, None, solver="CLARABEL"))
        else:
            values.append(pep.solve(solver="CLARABEL", verbose=0, return_primal_or_dual="primal"))
    # raw PEPit solves carry no certificate: they agree within the acceptance threshold
    for value in (values[0], (1 - ETA * MU) ** 6):
        assert abs(values[1] - value) <= pep_solve.CHECK_RTOL * max(1.0, abs(value))
