"""Every availability process: restart property, marginals (statistically), chains, errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

import fedtheory.availability as availability
from fedtheory import papers, rng
from fedtheory.availability import (
    AlternatingBlocks,
    AvailabilityProcess,
    Bernoulli,
    BoundedDropout,
    Clustered,
    Cyclic,
    Diurnal,
    TimeVaryingParticipation,
    TraceReplay,
    TwoStateMarkov,
)
from fedtheory.availability.sampling import capped_inclusion_probabilities
from fedtheory.errors import ParameterError
from fedtheory.markov import kron_chain, product_mixing_constants, stationary_distribution
from fedtheory.testing.strategies import probabilities
from tests.conftest import assert_parameter_error, assert_tight

P_VALUE = 1e-3  # reject a statistical test below this p-value (each test has few comparisons)

PAPER_EXAMPLES = [p for m in papers.modules("availability") for p in m.EXAMPLES]
"""The instances each registered paper gives with its processes (``EXAMPLES``)."""
REGISTRY: list[AvailabilityProcess] = [
    Bernoulli([0.1, 0.5, 0.9]),
    TwoStateMarkov([0.1, 0.5, 0.9], [0.9, -0.5, 0.0]),
    TwoStateMarkov.fedau([0.02, 0.3, 0.9], 0.05),
    Clustered(TwoStateMarkov([0.8, 0.3], 0.7), [0, 1, 1, 0]),
    Cyclic([0.1, 0.5, 1.0], period=10),
    AlternatingBlocks(3, 2, group1=[True, False, True]),
    AlternatingBlocks.fedlaavg_digits(3, num_clients=20, E=4),
    BoundedDropout([0, 1, 2, 5]),
    BoundedDropout.half_normal(6, 10, seed=1),
    TimeVaryingParticipation(8, 0.5),
    TimeVaryingParticipation(8, 0.5, sampler="exact"),
    Diurnal([0.5, 0.3], [0.4, 0.2], period=6, phase=[0.0, 1.0]),
    TraceReplay(np.eye(3, dtype=bool)[[0, 1, 2, 1, 0]], cyclic=True),
    *PAPER_EXAMPLES,
]


def test_registry_covers_every_exported_process():
    exported = {
        cls
        for name in availability.__all__
        if isinstance(cls := getattr(availability, name), type)
        and issubclass(cls, AvailabilityProcess)
        and cls is not AvailabilityProcess
    }
    assert exported == {type(p) for p in REGISTRY}


@pytest.mark.parametrize("proc", REGISTRY, ids=repr)
def test_same_seed_same_mask_and_restart_reproduces_remaining_rows(proc):
    a = proc.sample(40, replicates=3, seed=7)
    assert a.shape == (3, 40, proc.num_clients) and a.dtype == torch.bool
    assert torch.equal(a, proc.sample(40, replicates=3, seed=7))
    for start in (1, 17, 39):
        assert torch.equal(a[:, start:], proc.sample(40 - start, replicates=3, seed=7, start=start))
    assert proc.marginals.shape == (proc.num_clients,)
    assert np.all((proc.marginals >= 0) & (proc.marginals <= 1))


# --- Fast paths against plain loops (same random numbers) ---------------------------------------


def markov_state(proc: TwoStateMarkov, t: int, r: int, k: int, seed: int, memo: dict) -> bool:
    """Readable dyadic-bridge construction of client ``k``'s chain in replicate ``r``: round
    0 stationary, round H = 2^62 from the H-step law, round t the midpoint of [t - h, t + h]
    (h = lowest set bit of t) drawn from the bridge law given both ends."""
    if t in memo:
        return memo[t]
    shape = (r + 1, proc.num_clients)
    pi, lam = proc.pi[k], proc.lam[k]

    if t == 0:
        on = rng.numpy_rng(seed, 0, rng.INITIAL_STATE).random(shape)[r, k] < pi
    else:
        u = rng.numpy_rng(seed, t, rng.AVAILABILITY).random(shape)[r, k]
        horizon = 1 << 62
        if t == horizon:
            x0 = markov_state(proc, 0, r, k, seed, memo)
            lh = float(lam) ** horizon
            on = u < (pi + (1 - pi) * lh if x0 else pi * (1 - lh))
        else:
            h = t & -t
            i = markov_state(proc, t - h, r, k, seed, memo)
            j = markov_state(proc, t + h, r, k, seed, memo)
            lh = float(lam) ** h
            p_on = {False: pi * (1 - lh), True: pi + (1 - pi) * lh}  # P^h[i, on]
            ph = {(a, b): p_on[a] if b else 1 - p_on[a] for a in (False, True) for b in (0, 1)}
            through_on = ph[i, 1] * ph[True, j]
            through_off = ph[i, 0] * ph[False, j]
            on = u < through_on / (through_on + through_off)
    memo[t] = bool(on)
    return memo[t]


def loop_reference(proc: AvailabilityProcess, rounds: int, replicates: int, seed: int):
    """Readable loop over replicates, rounds and clients with the round's uniforms."""
    out = np.zeros((replicates, rounds, proc.num_clients), dtype=bool)
    memos = {}
    for t in range(rounds):
        u = rng.numpy_rng(seed, t, rng.AVAILABILITY).random((replicates, proc.num_clients))
        for r in range(replicates):
            for k in range(proc.num_clients):
                if isinstance(proc, TwoStateMarkov):
                    memo = memos.setdefault((r, k), {})
                    out[r, t, k] = markov_state(proc, t, r, k, seed, memo)
                elif hasattr(proc, "probabilities"):  # independent, time-varying p_k(t)
                    out[r, t, k] = u[r, k] < proc.probabilities(np.array([t]))[0, k]
                else:
                    out[r, t, k] = u[r, k] < proc.p[k]
    return out


@pytest.mark.parametrize(
    "proc",
    [
        Bernoulli([0.1, 0.5, 0.9, 0.0]),
        TwoStateMarkov([0.1, 0.5, 0.9], [0.9, -0.5, 0.0]),
        Diurnal([0.5, 0.3], [0.4, 0.2], period=5, phase=[0.0, 1.0]),
        *(p for p in PAPER_EXAMPLES if hasattr(p, "probabilities")),
    ],
    ids=repr,
)
def test_vectorised_sampling_equals_the_plain_loop(proc):
    fast = proc.sample(30, replicates=4, seed=13).numpy()
    assert np.array_equal(fast, loop_reference(proc, 30, 4, 13))


# --- Frequencies against marginals -----------------------------------------------------------


def test_bernoulli_counts_are_binomial_with_the_marginals():
    p = np.array([0.05, 0.3, 0.5, 0.97])
    x = Bernoulli(p).sample(500, replicates=40, seed=11).numpy()
    for k in range(4):
        assert stats.binomtest(int(x[..., k].sum()), x[..., k].size, p[k]).pvalue > P_VALUE


def lag1_autocorrelation(x: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Per-replicate lag-1 autocorrelation of the indicators ``x [R, T, N]``, ``[R, N]``."""
    c = x - pi
    return (c[:, 1:] * c[:, :-1]).mean(axis=1) / (pi * (1 - pi))


@pytest.mark.slow
@pytest.mark.slow
@pytest.mark.parametrize("start", [0, 2**40 - 3, 10**12 + 5], ids=["start0", "2^40-3", "1e12+5"])
def test_markov_window_anywhere_has_stationary_marginals_and_one_step_law(start):
    """Across replicates, every round of a window (also one straddling the dyadic boundary
    2^40, where the bridge construction changes level) is on with probability pi_k, and the
    next round follows P_k (binomial tests of each conditional frequency)."""
    pi, lam = np.array([0.2, 0.5, 0.7]), np.array([0.8, -0.6, 0.3])
    proc = TwoStateMarkov(pi, lam)
    x = proc.sample(6, replicates=4000, seed=5, start=start).numpy()  # [R, 6, N]
    for k in range(3):
        for t in range(6):
            on = int(x[:, t, k].sum())
            assert stats.binomtest(on, x.shape[0], pi[k]).pvalue > P_VALUE
        for t in range(5):
            for was_on, p_next in ((True, proc.p_on_on[k]), (False, proc.p_off_on[k])):
                rows = x[:, t, k] == was_on
                hits = int(x[rows, t + 1, k].sum())
                assert stats.binomtest(hits, int(rows.sum()), p_next).pvalue > P_VALUE


def test_markov_window_cost_does_not_depend_on_start_and_restarts_far_away():
    proc = TwoStateMarkov([0.3, 0.6], [0.9, -0.2])
    a = proc.sample(30, replicates=2, seed=4, start=10**12)
    assert torch.equal(a[:, 20:], proc.sample(10, replicates=2, seed=4, start=10**12 + 20))
    last = proc.sample(1, seed=4, start=(1 << 62) - 1)
    assert last.shape == (1, 1, 2)
    with pytest.raises(ParameterError, match="'start' parameter of TwoStateMarkov.sample"):
        proc.sample(2, start=(1 << 62) - 1)


def test_markov_windows_after_other_windows_equal_fresh_samples():
    """The memo of rounds drawn after the last window (reused by adjacent windows) never
    changes a sample: overlapping, later, earlier windows and another seed."""
    pi, lam = [0.3, 0.6, 0.9], [0.9, -0.2, 0.5]
    proc = TwoStateMarkov(pi, lam)
    for start, rounds, seed in [(0, 30, 4), (28, 10, 4), (33, 40, 4), (5, 3, 4), (30, 5, 9)]:
        fresh = TwoStateMarkov(pi, lam).sample(rounds, replicates=2, seed=seed, start=start)
        assert torch.equal(proc.sample(rounds, replicates=2, seed=seed, start=start), fresh)


def test_markov_extreme_correlations_keep_or_alternate_the_state():
    frozen = TwoStateMarkov([0.3, 0.8], 1.0).sample(50, replicates=20, seed=2).numpy()
    assert np.all(frozen == frozen[:, :1])  # lambda = 1: the chain never moves
    flip = TwoStateMarkov([0.5], -1.0).sample(50, replicates=20, seed=2, start=7).numpy()
    assert np.all(flip[:, 1:] != flip[:, :-1])  # lambda = -1: it alternates


@pytest.mark.parametrize(
    "proc",
    [TwoStateMarkov.fedau([0.1, 0.3, 0.6], 0.05), TwoStateMarkov.fedau([0.02, 0.5], 0.5)],
    ids=["fedau-a0.05", "fedau-a0.5-capped"],
)
def test_fedau_markov_frequencies_and_lag1_correlation_match(proc):
    x = proc.sample(400, replicates=300, seed=5).numpy().astype(float)
    freq = x.mean(axis=1)  # [R, N], i.i.d. across replicates
    lag1 = lag1_autocorrelation(x, proc.pi)
    for k in range(proc.num_clients):
        assert stats.ttest_1samp(freq[:, k], proc.pi[k]).pvalue > P_VALUE
        assert stats.ttest_1samp(lag1[:, k], proc.lam[k]).pvalue > P_VALUE, (k, proc.lam[k])


def test_clustered_clients_copy_their_cluster_and_keep_its_law():
    base = TwoStateMarkov([0.8, 0.3], [0.7, 0.2])
    proc = Clustered(base, [0, 1, 1, 0, 1])
    x = proc.sample(200, replicates=200, seed=2).numpy()
    assert np.array_equal(x[..., 0], x[..., 3]) and np.array_equal(x[..., 1], x[..., 4])
    assert np.array_equal(x[..., [0, 1]], base.sample(200, replicates=200, seed=2).numpy())
    assert_tight(proc.marginals, [0.8, 0.3, 0.3, 0.8, 0.3])
    xf = x.astype(float)
    for k, c in ((0, 0), (1, 1)):
        assert stats.ttest_1samp(xf[..., k].mean(axis=1), base.pi[c]).pvalue > P_VALUE
        lag1 = lag1_autocorrelation(xf[..., [k]], base.pi[[c]])[:, 0]
        assert stats.ttest_1samp(lag1, base.lam[c]).pvalue > P_VALUE


def test_diurnal_counts_match_the_sine_probabilities():
    proc = Diurnal([0.5, 0.3, 0.8], [0.45, 0.3, 0.1], period=8, phase=[0.0, 2.0, 4.0])
    reps, rounds = 200, 16 * 8
    x = proc.sample(rounds, replicates=reps, seed=4).numpy()
    prob = proc.probabilities(np.arange(rounds))  # [T, N]
    t = np.arange(rounds)[:, None]  # by hand: the sine the frequencies are tested against
    by_hand = [0.5, 0.3, 0.8] + np.array([0.45, 0.3, 0.1]) * np.sin(2 * np.pi * t / 8 + [0, 2, 4])
    assert_tight(prob, by_hand)
    # Whole periods: the expected count is exactly mean * rounds * reps.
    assert_tight(prob.sum(axis=0), proc.mean * rounds)
    var = reps * (prob * (1 - prob)).sum(axis=0)
    z = (x.sum(axis=(0, 1)) - reps * prob.sum(axis=0)) / np.sqrt(var)
    assert np.all(2 * stats.norm.sf(np.abs(z)) > P_VALUE), z
    # Per-round frequencies follow the sine: a chi-square over rounds for client 0.
    counts = x[..., 0].sum(axis=0)
    chi2 = (((counts - reps * prob[:, 0]) ** 2) / (reps * prob[:, 0] * (1 - prob[:, 0]))).sum()
    assert stats.chi2.sf(chi2, rounds) > P_VALUE


@pytest.mark.parametrize("sampler", ["successive", "exact"])
def test_time_varying_draws_exactly_m_clients_with_marginal_m_over_n(sampler):
    proc = TimeVaryingParticipation(10, 0.35, sampler=sampler)
    x = proc.sample(300, replicates=20, seed=8).numpy()
    assert proc.m == 3 and np.all(x.sum(axis=2) == 3)
    for k in range(10):
        assert stats.binomtest(int(x[..., k].sum()), 6000, 0.3).pvalue > P_VALUE


def test_time_varying_exact_inclusion_probabilities_are_those_of_its_rounds():
    proc = TimeVaryingParticipation(6, 0.5, sampler="exact")
    p = proc.inclusion_probabilities(30, replicates=4, seed=3, start=5)
    assert_tight(p.sum(axis=2), np.full((4, 30), 3.0))
    w = rng.numpy_rng(3, 9, rng.AVAILABILITY).uniform(0.1, 1.0, (4, 6))
    assert_tight(p[:, 4], capped_inclusion_probabilities(w, 3))


# --- Deterministic processes: exact frequencies --------------------------------------------------


def test_cyclic_fedau_lengths_exact_long_run_frequency_and_uniform_offsets():
    proc = Cyclic([0.004, 0.3, 1.0], period=100)
    assert proc.on.tolist() == [1, 30, 100] and proc.off.tolist() == [99, 70, 1]
    x = proc.sample(100 * 101, replicates=5, seed=1).numpy()
    assert_tight(x.mean(axis=1), np.tile(proc.on / (proc.on + proc.off), (5, 1)))
    # Every replicate starts in the off phase; the first on-round is off_k - offset_k,
    # uniform over {1, .., off_k}: chi-square across many replicates for client 1.
    reps = 7000
    first = Cyclic([0.3], period=100).sample(71, replicates=reps, seed=9).numpy()[:, :, 0]
    assert not first[:, 0].any()
    counts = np.bincount(first.argmax(axis=1), minlength=71)[1:]
    assert stats.chisquare(counts).pvalue > P_VALUE


def test_bounded_dropout_pattern_gaps_and_marginals():
    proc = BoundedDropout([0, 1, 2, 3, 7])
    x = proc.sample(2 * 3 * 7 * 4, seed=0).numpy()[0]
    assert_tight(x.mean(axis=0), proc.marginals)
    assert_tight(proc.marginals, [1, 1, 1 / 2, 1 / 3, 1 / 7])
    for k, tau in enumerate(proc.tau):
        on = np.flatnonzero(x[:, k])
        assert on[0] == 0 and np.all(np.diff(on) == max(tau, 1))


def half_normal_rounded_law(scale: float, tau_max: int) -> np.ndarray:
    """P(min(round(|Z|), tau_max) = j), j = 0..tau_max, Z ~ N(0, scale^2)."""
    edges = np.concatenate([[0.0], np.arange(tau_max) + 0.5, [np.inf]])
    return np.diff(2 * stats.norm.cdf(edges, scale=scale) - 1)


@pytest.mark.parametrize("tau_max", [4, 10])
def test_dropout_periods_follow_their_laws(tau_max):
    n = 20_000
    hn = BoundedDropout.half_normal(n, tau_max, scale=3.0, seed=5).tau
    expected = n * half_normal_rounded_law(3.0, tau_max)
    assert stats.chisquare(np.bincount(hn, minlength=tau_max + 1), expected).pvalue > P_VALUE
    un = BoundedDropout.uniform(n, tau_max, seed=5).tau
    assert un.min() >= 1 and un.max() <= tau_max
    assert stats.chisquare(np.bincount(un, minlength=tau_max + 1)[1:]).pvalue > P_VALUE


def test_fedlaavg_digit_pattern():
    proc = AlternatingBlocks.fedlaavg_digits(3, num_clients=1000, E=100)
    assert proc.group1.sum() == 300 and proc.group1[:300].all()
    x = proc.sample(400).numpy()[0]
    assert x[:100, :300].all() and not x[:100, 300:].any() and x[100:200, 300:].all()
    assert_tight(proc.marginals, np.full(1000, 0.5))


def test_trace_replay_from_array_json_and_csv(tmp_path):
    ids = [[0, 2], [], [1], [3, 0]]
    mask = TraceReplay(ids, num_clients=4).sample(4, replicates=2).numpy()
    assert mask.shape == (2, 4, 4) and np.array_equal(mask[0], mask[1])
    assert [np.flatnonzero(r).tolist() for r in mask[0]] == [sorted(r) for r in ids]
    (tmp_path / "t.json").write_text(json.dumps(ids))
    (tmp_path / "t.csv").write_text("0,2\n\n1\n3, 0\n")
    for name in ("t.json", "t.csv"):
        proc = TraceReplay.from_file(tmp_path / name, num_clients=4)
        assert np.array_equal(proc.sample(4).numpy()[0], mask[0])
        assert_tight(proc.marginals, [0.5, 0.25, 0.25, 0.25])
    assert np.array_equal(TraceReplay(mask[0]).trace, mask[0])
    wrapped = TraceReplay(ids, num_clients=4, cyclic=True).sample(6, start=3).numpy()[0]
    assert np.array_equal(wrapped, mask[0][[3, 0, 1, 2, 3, 0]])


# --- Chains exposed by the Markov processes -----------------------------------------------------


@given(st.lists(probabilities, min_size=1, max_size=4), st.floats(0.01, 1.0))
@example(p=[0.5], off_on=1.0)  # a = b = 1: a periodic (alternating) client
def test_markov_process_exposes_its_chain(p, off_on):
    proc = TwoStateMarkov.fedau(p, off_on)
    P = proc.transition_matrices  # [N, 2, 2]
    assert_tight(P.sum(axis=-1), np.ones((len(p), 2)))
    assert_tight(np.einsum("ni,nij->nj", proc.stationary_laws, P), proc.stationary_laws)
    assert_tight(proc.marginals, p)
    joint = proc.chain()
    if np.any(proc.lam <= -1.0):
        # a = b = 1 (p = 1/2, off->on 1): a client alternates, the product chain is periodic,
        # outside CA-Fed's Assumption 1, and its stationary law is refused, not guessed
        with pytest.raises(ParameterError, match="aperiodic"):
            stationary_distribution(joint)
        return
    assert_tight(stationary_distribution(joint)[-1], np.prod(p), rtol=1e-7)
    assert proc.mixing_constants() == product_mixing_constants(proc.pi, proc.lam)
    assert np.array_equal(joint, kron_chain(P))


def test_from_transitions_inverts_the_parametrisation():
    proc = TwoStateMarkov([0.2, 0.7], [0.5, -0.3])
    back = TwoStateMarkov.from_transitions(proc.p_on_on, proc.p_off_on)
    assert_tight(np.concatenate([back.pi, back.lam]), [0.2, 0.7, 0.5, -0.3])


# --- Bad input ----------------------------------------------------------------------------------

BAD_CALLS = [
    (lambda: Bernoulli([0.5, 1.5]), "'p'", "[0, 1]"),
    (lambda: Bernoulli([-0.1]), "'p'", "[0, 1]"),
    (lambda: Bernoulli([math.nan]), "'p'", "[0, 1]"),
    (lambda: TwoStateMarkov.fedau([0.5, 1.0]), "'p'", "(0, 1)"),
    (lambda: TwoStateMarkov.fedau([0.5], off_on=1.5), "'off_on'", "(0, 1]"),
    (lambda: TwoStateMarkov.from_transitions([1.0], [0.5]), "'p_on_on'", "[0, 1)"),
    (lambda: TwoStateMarkov(np.full(13, 0.5), 0.0).chain(), "'num_clients'", "[1, 12]"),
    (lambda: Clustered(TwoStateMarkov([0.5], 0.0), [0, 1]), "'clusters'", "[0, 1)"),
    (lambda: Clustered(TwoStateMarkov([0.5, 0.2], 0.0), [0.5]), "'clusters'", "integer"),
    (lambda: Clustered("markov", [0]), "'base'", "AvailabilityProcess"),
    (lambda: Cyclic([0.5], period=1), "'period'", "[2, 2147483647]"),
    (lambda: Cyclic([1.2]), "'p'", "[0, 1]"),
    (lambda: AlternatingBlocks.fedlaavg_digits(0), "'digits'", "[1, 9]"),
    (lambda: AlternatingBlocks.fedlaavg_digits(1, num_clients=25), "'num_clients'", "10"),
    (lambda: BoundedDropout([2, -1]), "'tau'", "[0, 2147483647]"),
    (lambda: BoundedDropout([2.5]), "'tau'", "integers"),
    (lambda: BoundedDropout.uniform(5, 0), "'tau_max'", "[1, 2147483647]"),
    (lambda: BoundedDropout.half_normal(5, 3, scale=0.0), "'scale'", "(0, inf)"),
    (lambda: BoundedDropout.half_normal(0, 3), "'num_clients'", "[1, 2147483647]"),
    (lambda: TimeVaryingParticipation(10, 0.05), "'ratio'", "[0.1, 1]"),
    (lambda: TimeVaryingParticipation(10, 1.5), "'ratio'", "(0, 1]"),
    (lambda: TimeVaryingParticipation(10, 0.5, sampler="depround"), "'sampler'", "exact"),
    (
        lambda: TimeVaryingParticipation(10, 0.5, weight_range=(0.0, 1.0)),
        "'weight_range'",
        "(0, inf)",
    ),
    (
        lambda: TimeVaryingParticipation(10, 0.5, weight_range=(0.5, 0.2)),
        "'weight_range'",
        "low <= high",
    ),
    (
        lambda: TimeVaryingParticipation(4, 0.5).inclusion_probabilities(0),
        "'rounds'",
        "[1, 2147483647]",
    ),
    (lambda: Diurnal([0.5], 0.6), "'amplitude'", "[0, 0.5]"),
    (lambda: Diurnal([0.9], 0.2), "'amplitude'", "[0, 0.1]"),
    (lambda: Diurnal([0.5], 0.1, period=1), "'period'", "[2, 2147483647]"),
    (lambda: TraceReplay([[0, 5]], num_clients=3), "'trace'", "[0, 2]"),
    (lambda: TraceReplay([[0], [-1]], num_clients=3), "'trace'", "[0, 2]"),
    (lambda: TraceReplay([[0.5]], num_clients=3), "'trace'", "integer"),
    (lambda: TraceReplay([[0]]), "'num_clients'", "[1, inf)"),
    (lambda: TraceReplay(np.ones((2, 3), bool), num_clients=4), "'num_clients'", "width 3"),
    (lambda: TraceReplay([], num_clients=3), "'trace'", "at least one round"),
    (lambda: TraceReplay([[0], [1]], num_clients=2).sample(3), "'rounds'", "[1, 2]"),
    (lambda: TraceReplay.from_file("trace.txt", num_clients=2), "'path'", ".json or .csv"),
    (lambda: Bernoulli([0.5]).sample(0), "'rounds'", "[1, 2147483647]"),
    (lambda: Bernoulli([0.5]).sample(3, seed=-2), "'seed'", "[0, inf)"),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)


def test_trace_file_with_non_integer_id_is_rejected(tmp_path):
    (tmp_path / "bad.csv").write_text("0,1\nx\n")
    with pytest.raises(ParameterError, match="'path'.*integer client ids"):
        TraceReplay.from_file(tmp_path / "bad.csv", num_clients=2)
