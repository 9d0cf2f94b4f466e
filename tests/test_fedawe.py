"""FedAWE (Xiang et al. 2024): the availability dynamics, the exact quantities its
statements speak of, the statements on instances inside their hypotheses, the algorithm
against its plain loop, and the catalogue entries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fedtheory.availability import NonStationary
from fedtheory.availability.nonstationary import class_probabilities
from fedtheory.bounds import NOT_CHECKABLE, fedawe
from fedtheory.cli import main
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import AverageParticipating, FedAvg, FedAWE, simulate
from fedtheory.sim import fedawe as fedawe_module
from fedtheory.testing import theorem_values
from fedtheory.tightness import FAMILIES
from fedtheory.verdict import rounding_floor
from tests.conftest import assert_tight, assert_upper_bound

P_VALUE = 1e-3
P = np.array([0.9, 0.5, 0.2])


# --- availability dynamics ---------------------------------------------------------------
def test_probabilities_follow_the_four_trajectories_of_app_j3():
    t = np.arange(40)[:, None]
    g = 0.3 * np.sin(2 * np.pi * t / 20) + 0.7  # by hand, gamma = 0.3, P = 20
    stair = np.where(t % 20 < 10, 1.0, 0.4)
    expected = {
        "stationary": np.broadcast_to(P, (40, 3)),
        "staircase": P * stair,
        "sine": P * g,
        "interleaved_sine": np.where(P * g >= 0.1, P * g, 0.0),
    }
    for d, want in expected.items():
        proc = NonStationary(P, dynamics=d)
        assert_tight(proc.probabilities(np.arange(40)), want)
        assert proc.delta(40) == want.min() and proc.delta_max(40) == want.max()
        assert_tight(proc.marginals, want[:20].mean(axis=0))
    interleaved = NonStationary(P, dynamics="interleaved_sine")
    assert interleaved.delta(40) == 0.0  # Assumption 1 fails: client 2 is cut to 0
    assert NonStationary(P, dynamics="sine").delta(40) > 0


@pytest.mark.parametrize("dynamics", ["staircase", "sine", "interleaved_sine"])
def test_counts_per_round_match_the_exact_probabilities(dynamics):
    proc = NonStationary([0.9, 0.5, 0.3], dynamics=dynamics, period=8, gamma=0.4, cutoff=0.2)
    reps, rounds = 300, 32
    x = proc.sample(rounds, replicates=reps, seed=5).numpy()
    prob = proc.probabilities(np.arange(rounds))  # [T, N]
    assert not x[:, prob == 0].any()  # a cut round never makes a client available
    inside = (prob > 0) & (prob < 1)
    counts = x.sum(axis=0)[inside]
    expected = reps * prob[inside]
    chi2 = np.sum((counts - expected) ** 2 / (expected * (1 - prob[inside])))
    assert stats.chi2.sf(chi2, inside.sum()) > P_VALUE


def test_class_probabilities_are_inner_products_with_a_seeded_phi():
    nu = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5], [0.25] * 4])
    phi = class_probabilities(np.eye(4), seed=3)  # one-hot clients give phi itself
    assert np.all((phi >= 0) & (phi <= [1.0, 1.0, 0.5, 0.5]))  # Phi_c: 1 then 0.5
    assert_tight(class_probabilities(nu, seed=3), nu @ phi)
    assert not np.array_equal(phi, class_probabilities(np.eye(4), seed=4))


# --- exact quantities ----------------------------------------------------------------------
def enumerated_moment(p: np.ndarray) -> np.ndarray:
    """E[W^2] by enumerating the 2^N active sets (mixing matrix (4); W = I when empty)."""
    n = p.size
    out = np.zeros((n, n))
    for bits in itertools.product([False, True], repeat=n):
        a = np.array(bits)
        W = np.eye(n)
        if a.any():
            W[np.ix_(a, a)] = 1 / a.sum()
        out += np.prod(np.where(a, p, 1 - p)) * W @ W
    return out


@settings(max_examples=25)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6))
def test_mixing_moment_equals_enumeration_and_rho_is_its_second_eigenvalue(p):
    p = np.array(p)
    M = enumerated_moment(p)
    assert_tight(fedawe.mixing_moment(p), M, rtol=1e-12, atol=1e-14)
    lam = np.linalg.eigvalsh(M)
    assert abs(float(fedawe.mixing_rho(p)) - min(max(lam[-2], 0.0), 1.0)) <= 1e-12


@settings(max_examples=40)
@given(st.floats(0.01, 1.0), st.integers(2, 7), st.data())
def test_lemma4_holds_on_the_exact_rho_inside_assumption1(delta, m, data):
    p = np.array(data.draw(st.lists(st.floats(delta, 1.0), min_size=m, max_size=m)))
    bound = fedawe.lemma4.evaluate(delta=delta, m=m).total
    assert_upper_bound(fedawe.mixing_rho(p), bound)


@settings(max_examples=25)
@given(st.lists(st.floats(0.05, 1.0), min_size=3, max_size=5), st.data())
def test_lemma1_at_one_round_is_exact_and_below_rho(p, data):
    """E||B (W - J)||_F^2 = tr(B (M - J) B^T) <= rho ||B||_F^2 (W symmetric, WJ = J)."""
    p = np.array(p)
    n = p.size
    B = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=2 * n, max_size=2 * n)))
    B = B.reshape(2, n)
    J = np.full((n, n), 1 / n)
    exact = 0.0
    for bits in itertools.product([False, True], repeat=n):
        a = np.array(bits)
        W = np.eye(n)
        if a.any():
            W[np.ix_(a, a)] = 1 / a.sum()
        exact += np.prod(np.where(a, p, 1 - p)) * np.sum((B @ (W - J)) ** 2)
    assert_tight(exact, np.trace(B @ (fedawe.mixing_moment(p) - J) @ B.T), atol=1e-12)
    rho = float(fedawe.mixing_rho(p))
    bound = fedawe.lemma1.evaluate(rho=rho, t=1, B_sq=np.sum(B**2)).total
    assert exact <= bound + rounding_floor(np.sum(B**2))  # rho = 0 when every p_i = 1


def test_staleness_moments_equal_enumeration_of_histories():
    gen = np.random.default_rng(0)
    p = gen.uniform(0.1, 0.9, size=(6, 1))  # [T, 1]
    first, second = fedawe.staleness_moments(p)
    for t in range(6):
        m1 = m2 = 0.0
        for bits in itertools.product([False, True], repeat=t):
            a = np.array(bits, dtype=bool)
            prob = np.prod(np.where(a, p[:t, 0], 1 - p[:t, 0]))
            last = np.flatnonzero(a)[-1] if a.any() else -1
            m1 += prob * (t - last)
            m2 += prob * (t - last) ** 2
        assert_tight(first[t, 0], m1, rtol=1e-12)
        assert_tight(second[t, 0], m2, rtol=1e-12)


@settings(max_examples=40)
@given(st.floats(0.01, 1.0), st.integers(1, 60), st.data())
def test_lemma2_holds_for_any_trajectory_above_delta(delta, rounds, data):
    p = np.array(data.draw(st.lists(st.floats(delta, 1.0), min_size=rounds, max_size=rounds)))
    first, second = fedawe.staleness_moments(p[:, None])
    assert_upper_bound(first.max(), fedawe.lemma2_first.evaluate(delta=delta).total)
    assert_upper_bound(second.max(), fedawe.lemma2_second.evaluate(delta=delta).total)


# --- statements ----------------------------------------------------------------------------
@settings(max_examples=20)
@given(theorem_values(fedawe.theorem1))
def test_theorem1_total_is_the_hand_transcription_of_app_g(v):
    drift = (v["eta_l"] * v["eta_g"] * v["s"] * v["L"]) ** 2 / (
        v["delta"] ** 2 * (1 - np.sqrt(v["rho"])) ** 2
    )
    hand = (
        6 * v["F_gap"] / (v["eta_l"] * v["eta_g"] * v["s"] * v["T"])
        + 24 * v["eta_l"] * v["eta_g"] * v["L"] * v["delta_max"] * v["sigma2"]
        / (v["m"] * v["delta"] ** 2)
        + drift * (15 * v["sigma2"] + 2800 * v["zeta2"])
    )  # fmt: skip
    assert_tight(fedawe.theorem1.evaluate(**v).total, hand, rtol=1e-12)


def test_corollaries_share_theorem1s_terms_with_their_own_constants():
    v = {"eta_l": 1e-4, "eta_g": 1.0, "s": 2, "L": 1.0, "delta": 0.5, "delta_max": 0.9,
         "rho": 0.3, "m": 5, "sigma2": 1.0, "zeta2": 2.0, "F_gap": 3.0, "T": 100,
         "beta2": 0.0}  # fmt: skip
    t1 = fedawe.theorem1.evaluate(**v).terms
    for thm, consts in ((fedawe.corollary2, (12, 48, 31, 5600)),
                        (fedawe.corollary3, (3, 12, 28, 1600))):  # fmt: skip
        terms = thm.evaluate(**v).terms
        for (key, base), c, c1 in zip(t1.items(), consts, (6, 24, 15, 2800), strict=True):
            assert_tight(terms[key], base * c / c1, rtol=1e-12)


@settings(max_examples=20)
@given(theorem_values(fedawe.proposition2))
def test_proposition2_total_is_the_hand_transcription_of_9(v):
    c = 6 * (v["eta_l"] * v["eta_g"] * v["s"] / v["delta"]) ** 2
    hand = c * ((v["beta2"] + 1) * v["grad_z_avg"] + v["zeta2"]
                + v["L"] ** 2 * v["consensus_z_avg"])  # fmt: skip
    assert_tight(fedawe.proposition2.evaluate(**v).total, hand, rtol=1e-12)


@pytest.mark.parametrize(
    "m, delta, rho, L, beta2", [(100, 0.2, 0.5, 1.0, 0.0), (1, 0.5, 0.0, 3.0, 1.0)]
)
def test_corollary1_horizon_is_where_both_halves_of_11_start_to_hold(m, delta, rho, L, beta2):
    """At Corollary 1's rates, (11) (fedawe.conditions11.*) holds at T_min and one of its
    halves fails just below; the binding half is the one that fails there."""
    h = fedawe.corollary1_binding(s=2, m=m, delta=delta, rho=rho, L=L, beta2=beta2)
    common = {"s": 2, "delta": delta, "rho": rho, "L": L, "beta2": beta2}
    for T, holds in ((h["T_min"], True), (h["T_min"] * (1 - 1e-9), False)):
        eta_l, eta_g = 1 / (np.sqrt(T) * 2 * L), np.sqrt(2 * delta * m)
        prod = fedawe.conditions11_eta_product.evaluate(**common).total
        alone = fedawe.conditions11_eta_l.evaluate(
            **{k: common[k] for k in ("s", "delta", "L", "beta2")}
        ).total
        halves = {
            "eta_product": eta_l * eta_g <= prod * (1 + 1e-12),
            "eta_l": eta_l <= alone * (1 + 1e-12),
        }
        assert all(halves.values()) == holds
        if not holds:
            assert not halves[h["binding"]]
    assert h["binding"] == ("eta_product" if m == 100 else "eta_l")
    hand = 6400 * 2 * m * (L + 1) ** 2 * (1 + np.sqrt(rho)) ** 2 * (beta2 + 1) * (1 + L**2)
    assert_tight(h["eta_product"], hand / (delta * L**2 * (1 - np.sqrt(rho)) ** 2), rtol=1e-12)
    cond = [c.text for c in fedawe.corollary1.conditions]
    assert any("eta_l eta_g half" in c for c in cond) and any("eta_l half" in c for c in cond)


def test_auxiliary_sequence_follows_7_and_8_exactly_and_a_wrong_rate_is_caught():
    from fedtheory.validation.papers.fedawe.auxiliary import auxiliary
    from fedtheory.validation.papers.fedawe.statements import run_fedawe

    problem = QuadraticProblem.random(4, 2, mu=0.5, L=2.0, seed=3)
    proc = NonStationary([0.2, 0.5, 0.7, 0.9], dynamics="staircase")
    alg = FedAWE(local_steps=2, lr=0.05, server_lr=1.5)
    mask, _, x = run_fedawe(problem, proc, alg, rounds=30, replicates=3, seed=1, w0=np.ones(2))
    assert (~mask.any(-1)).any() or mask.any()  # the masks are drawn, not fixed
    a = auxiliary(problem, alg, mask, x)
    assert np.max(np.abs(a["z"][:, 1:] - a["predicted"][:, :-1])) <= 1e-12
    wrong = FedAWE(local_steps=2, lr=0.05, server_lr=1.2)  # z and (7)/(8) at another eta_g
    b = auxiliary(problem, wrong, mask, x)
    assert np.max(np.abs(b["z"][:, 1:] - b["predicted"][:, :-1])) > 1e-3


def example1_expected_limit(p1, p2, u, *, over_all: bool, lr=0.3, steps=2, rounds=400):
    """lim E[x^t] by iterating the exact expectation of one round (enumerating A)."""
    c = (1 - lr) ** steps  # local GD on (x - u)^2/2: x_i^dagger = u_i + c (x - u_i)
    x = 0.0
    for _ in range(rounds):
        nxt = 0.0
        for a1, a2 in itertools.product([0, 1], repeat=2):
            prob = (p1 if a1 else 1 - p1) * (p2 if a2 else 1 - p2)
            active = [u[i] for i, a in enumerate((a1, a2)) if a]
            if not active:
                nxt += prob * x
            elif over_all:
                nxt += prob * (x + (1 - c) * sum(ui - x for ui in active) / 2)
            else:
                nxt += prob * (x + (1 - c) * (np.mean(active) - x))
        x = nxt
    return x


@pytest.mark.parametrize("p1, p2", [(0.2, 0.8), (0.5, 0.5), (0.1, 0.3), (1.0, 0.4)])
def test_example1_closed_forms_are_the_limits_of_the_expected_iterates(p1, p2):
    kw = {"p1": p1, "p2": p2, "u1": 0.0, "u2": 100.0}
    active = fedawe.example1_fedavg_active.evaluate(**kw).total
    assert_tight(active, example1_expected_limit(p1, p2, (0.0, 100.0), over_all=False))
    every = fedawe.example1_fedavg_all.evaluate(**kw).total
    assert_tight(every, example1_expected_limit(p1, p2, (0.0, 100.0), over_all=True))
    if p1 != p2:
        assert abs(active - 50.0) > 1 and abs(every - 50.0) > 1  # biased


# --- algorithm ------------------------------------------------------------------------------
PROB = QuadraticProblem.random(5, 3, mu=0.5, L=2.0, seed=4)
W0 = np.array([1.0, -1.0, 0.5])
SPARSE = NonStationary([0.6, 0.4, 0.3, 0.15, 0.05], dynamics="interleaved_sine", period=6,
                       gamma=0.5, cutoff=0.1)  # fmt: skip


@pytest.mark.parametrize(
    "alg",
    [
        FedAWE(local_steps=3, lr=0.1),
        FedAWE(local_steps=2, lr=0.2, server_lr=1.5, variant="code", clip=0.3, prox=0.1),
    ],  # fmt: skip
    ids=["paper", "code"],
)
def test_fast_path_equals_the_plain_loop_with_client_models_and_last_rounds(alg):
    reps, rounds = 4, 40
    mask = SPARSE.sample(rounds, replicates=reps, seed=2)
    assert (mask.sum(-1) == 0).any()  # rounds without any active client occur
    state = alg.init(PROB, torch.as_tensor(W0).expand(reps, -1).clone())
    iterates = [state.w]
    for t in range(rounds):
        state = alg.step(PROB, state, mask[:, t], t)
        iterates.append(state.w)
    iterates = torch.stack(iterates, 1).numpy()
    for r in range(reps):
        w, x, tau = fedawe_module._plain_loop(PROB, alg, mask[r].numpy(), W0, lambda t: None)
        assert_tight(iterates[r], np.array(w), rtol=1e-12, atol=1e-14)
        assert_tight(state.x[r].numpy(), x, rtol=1e-12, atol=1e-14)
        assert np.array_equal(state.tau[r].numpy(), tau)


def test_a_round_without_active_clients_changes_nothing():
    alg = FedAWE(local_steps=2, lr=0.1)
    state = alg.init(PROB, torch.as_tensor(W0)[None].clone())
    state = alg.step(PROB, state, torch.tensor([[True, False, True, False, False]]), 0)
    after = alg.step(PROB, state, torch.zeros(1, 5, dtype=torch.bool), 1)
    for a, b in zip(state[:3], after[:3], strict=True):
        assert torch.equal(a, b)


def test_same_seed_same_numbers_with_noisy_gradients():
    noisy = QuadraticProblem(PROB.A, PROB.c, noise_std=0.5)
    runs = [simulate(noisy, SPARSE, FedAWE(local_steps=2, lr=0.1), rounds=20, replicates=3,
                     seed=7, w0=W0).iterates for _ in range(2)]  # fmt: skip
    assert np.array_equal(*runs)


def test_always_available_clients_reduce_to_fedavg_over_active_clients():
    always = NonStationary(np.ones(5))
    cfg = {"local_steps": 3, "lr": 0.1, "server_lr": 1.3}
    a = simulate(PROB, always, FedAWE(**cfg), rounds=15, w0=W0).iterates
    b = simulate(PROB, always, FedAvg(AverageParticipating(), **cfg), rounds=15, w0=W0).iterates
    assert_tight(a, b, rtol=1e-12, atol=1e-14)


def test_proposition1_echo_factors_add_up_to_the_round_count():
    alg = FedAWE(local_steps=1, lr=0.1)
    mask = SPARSE.sample(60, replicates=5, seed=1)
    state = alg.init(PROB, torch.as_tensor(W0).expand(5, -1).clone())
    total = torch.zeros(5, 5, dtype=torch.float64)
    for t in range(60):
        state = alg.step(PROB, state, mask[:, t], t)
        total += state.echo
        active = mask[:, t]
        assert torch.equal(total[active], torch.full_like(total[active], t + 1.0))


# --- catalogue ------------------------------------------------------------------------------
def test_list_and_show_cite_every_statement(capsys):
    assert main(["list", "--paper", "fedawe"]) == 0
    out = capsys.readouterr().out
    for key in ("proposition1", "lemma2.first_moment", "lemma4", "lemma1", "lemma5",
                "proposition3", "lemma6", "conditions11.eta_l", "theorem1", "corollary1",
                "corollary2", "corollary3", "example1.fedavg_active", "proposition2",
                "auxiliary.active", "auxiliary.inactive", "corollary1.horizon"):  # fmt: skip
        assert f"fedawe.{key}" in out
    assert "main text (13)" in out and "App. G" in out  # the NOT_CHECKABLE entry
    assert any(name.startswith("FedAWE Theorem 1") for name, _ in NOT_CHECKABLE)
    assert not any("Proposition 2" in name for name, _ in NOT_CHECKABLE)
    assert main(["show", "fedawe.theorem1"]) == 0
    shown = capsys.readouterr().out
    assert "§6.3" in shown and "(13)" in shown and "App. G" in shown


def test_lemma2_tightness_family_approaches_one_at_constant_delta():
    family = FAMILIES["fedawe.lemma2.first_moment"]
    for t, delta in [(1, 0.3), (40, 0.5), (10, 1.0)]:
        ev = family.measure({"t": t}, [delta] + [0.0] * t)  # p^r = delta in every round
        assert_tight(ev.ratio, 1 - (1 - delta) ** (t + 1), rtol=1e-12)
