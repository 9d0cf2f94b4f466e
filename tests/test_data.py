"""Federated data: padding, splits, CA-Fed App. F generator, digits (shipped with
scikit-learn), Dirichlet and one-label splits."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory import rng
from fedtheory.data import (
    FederatedDataset,
    cafed_clustered,
    dirichlet_label_split,
    load_digits,
    load_digits_federated,
    one_label_per_client_split,
    partition,
    primary_label_split,
)
from fedtheory.errors import ParameterError
from tests.conftest import assert_parameter_error, assert_tight


def test_padding_round_trips_every_client():
    xs = [np.arange(6.0).reshape(3, 2), np.ones((1, 2)), np.zeros((2, 2))]
    ys = [np.array([0.0, 1.0, 2.0]), np.array([1.0]), np.array([2.0, 0.0])]
    ds = FederatedDataset.from_clients(xs, ys, num_classes=3)
    assert ds.features.shape == (3, 3, 2) and ds.counts.tolist() == [3, 1, 2]
    assert ds.valid.sum() == 6 and not ds.valid[1, 1:].any()
    for k in range(3):
        x, y = ds.client(k)
        assert np.array_equal(x, xs[k]) and np.array_equal(y, ys[k])
    assert np.all(ds.features[~ds.valid] == 0)


def test_split_is_a_deterministic_disjoint_cover():
    ds = cafed_clustered(3, 2, 10, seed=0)
    train, test = ds.split(0.3, seed=5)
    assert train.counts.tolist() == [7, 7, 7] and test.counts.tolist() == [3, 3, 3]
    for k in range(3):
        rows = np.vstack([train.client(k)[0], test.client(k)[0]])
        assert sorted(map(tuple, rows)) == sorted(map(tuple, ds.client(k)[0]))
    again, _ = ds.split(0.3, seed=5)
    assert np.array_equal(again.features, train.features)
    assert np.array_equal(train.groups, ds.groups)


@pytest.mark.parametrize("random_groups", [False, True])
def test_cafed_labels_follow_the_group_laws(random_groups):
    n, d, m, seed = 40, 5, 150, 3
    ds = cafed_clustered(n, d, m, seed=seed, random_groups=random_groups)
    w_star = rng.numpy_rng(seed, 0, rng.DATA).standard_normal(d)  # the documented first draw
    s = 1 / (1 + np.exp(-(ds.features @ w_star)))  # [N, m]
    prob = np.where(ds.groups[:, None] == 1, 0.8 * s + 0.2 * (1 - s), s)
    for g in (0, 1):  # sum of (y - P(y=1|x)) is centred with variance sum p(1-p)
        sel = ds.groups == g
        z = (ds.labels[sel] - prob[sel]).sum() / np.sqrt((prob[sel] * (1 - prob[sel])).sum())
        assert abs(z) < 5
    if not random_groups:
        assert ds.groups.tolist() == [0] * 20 + [1] * 20
    # the flip makes group 1 disagree more often with the Bayes label of group 0
    agree = (ds.labels == (s > 0.5)).mean(axis=1)
    assert agree[ds.groups == 0].mean() > agree[ds.groups == 1].mean()


def test_dirichlet_split_is_a_partition_and_its_proportions_are_unbiased():
    labels = np.repeat(np.arange(4), 50)
    fractions = []
    for seed in range(200):
        parts = dirichlet_label_split(labels, 5, 0.5, seed=seed)
        assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(200))
        fractions.append([np.mean(labels[parts[0]] == c) * len(parts[0]) / 50 for c in range(4)])
    fractions = np.array(fractions)  # share of class c held by client 0: E = 1/N
    mean, se = fractions.mean(0), fractions.std(0) / np.sqrt(len(fractions))
    assert np.all(np.abs(mean - 0.2) <= 4 * se + 0.01)  # 0.01: rounding of cut points


def test_dirichlet_concentration_controls_heterogeneity_and_min_size():
    labels = np.repeat(np.arange(10), 100)

    def top_share(a):
        parts = dirichlet_label_split(labels, 10, a, seed=1, min_size=5)
        assert min(len(p) for p in parts) >= 5
        return np.mean([np.bincount(labels[p], minlength=10).max() / len(p) for p in parts])

    assert top_share(0.05) > 0.6 > top_share(1000.0)
    assert top_share(1000.0) < 0.2


def _authors_partition(labels, weights, permuted):
    """FedAWE's ``util.py`` ``partition`` (mingxiang12/FedAWE) transcribed: client n takes
    label c's samples up to round(len_c * sum_{j<=n} w_jc / sum_j w_jc), given the client
    label weights ``[N, C]`` and each label's (shuffled) sample indices."""
    out = []
    start = np.zeros(weights.shape[1], dtype=np.int64)
    for n in range(weights.shape[0]):
        chunks = []
        for c, idx in enumerate(permuted):
            end = int(np.round(len(idx) * weights[: n + 1, c].sum() / weights[:, c].sum()))
            chunks.append(idx[start[c] : end])
            start[c] = end
        out.append(np.sort(np.concatenate(chunks)))
    return out


def test_per_client_dirichlet_split_is_the_fedawe_authors_partition():
    labels = np.repeat(np.arange(4), [30, 41, 17, 25])
    parts = dirichlet_label_split(labels, 6, 0.3, per="client", seed=5)
    gen = rng.numpy_rng(5, 0, rng.DATA)  # the first draw: weights, then one shuffle per label
    weights = gen.dirichlet(np.full(4, 0.3), size=6)
    permuted = [gen.permutation(np.flatnonzero(labels == c)) for c in range(4)]
    expected = _authors_partition(labels, weights, permuted)
    assert all(np.array_equal(a, b) for a, b in zip(parts, expected, strict=True))


def test_min_size_redraws_until_every_client_holds_enough_samples():
    labels = np.repeat(np.arange(10), 4)
    first = dirichlet_label_split(labels, 10, 0.1, per="client", seed=7)
    assert min(len(p) for p in first) < 2  # the first draw leaves a client short
    parts = dirichlet_label_split(labels, 10, 0.1, per="client", min_size=2, seed=7)
    assert min(len(p) for p in parts) >= 2
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(40))


def test_fedawe_table2_full_split_holds_out_a_test_sample_on_every_client():
    """100 clients, Dirichlet(0.1) per client, >= 2 samples: the 20% split never fails
    (the per-label split of the same size leaves clients with one sample or none)."""
    for seed in range(5):
        ds = load_digits_federated(100, concentration=0.1, per="client", min_size=2, seed=seed)
        train, test = ds.split(0.2, seed=seed)
        assert train.counts.min() >= 1 and test.counts.min() >= 1
        assert train.counts.sum() + test.counts.sum() == 1797
    raw = dirichlet_label_split(load_digits()[1], 100, 0.1, seed=0)
    assert min(len(p) for p in raw) < 2


def test_one_label_split_gives_each_client_one_label_in_order():
    labels = np.repeat(np.arange(3), [10, 12, 9])
    parts = one_label_per_client_split(labels, 3, seed=0)
    assert [np.unique(labels[p]).tolist() for p in parts] == [[0]] * 3 + [[1]] * 3 + [[2]] * 3
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(31))
    assert max(len(p) for p in parts[3:6]) - min(len(p) for p in parts[3:6]) <= 1


def test_primary_label_split_is_disjoint_with_the_requested_mix():
    labels = np.repeat(np.arange(4), 60)
    parts = primary_label_split(labels, 8, 20, primary_fraction=0.75, seed=3)
    everything = np.concatenate(parts)
    assert len(np.unique(everything)) == len(everything) == 160
    for k, part in enumerate(parts):
        assert np.sum(labels[part] == k % 4) == 15 and len(part) == 20
    # the non-primary samples are drawn uniformly from the other labels
    others = np.concatenate([labels[p][labels[p] != k % 4] for k, p in enumerate(parts)])
    assert np.ptp(np.bincount(others, minlength=4)) <= 12


def test_label_distribution_is_the_empirical_law_of_each_client():
    ds = load_digits_federated(20, split="one_label", intercept=False)
    kappa = ds.label_distribution()
    assert_tight(kappa.sum(1), np.ones(20))
    assert_tight(kappa[19], np.eye(10)[9])
    with pytest.raises(ParameterError, match="num_classes"):
        cafed_clustered(2, 2, 3).label_distribution()


def test_digits_ship_with_scikit_learn_and_split_four_ways():
    X, y = load_digits()
    assert X.shape == (1797, 65) and X.min() == 0 and X.max() == 1
    assert_tight(X[:, -1], np.ones(1797))
    assert np.bincount(y.astype(int)).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    one = load_digits_federated(30, split="one_label")
    assert [np.unique(one.client(k)[1]).tolist() for k in (0, 3, 29)] == [[0.0], [1.0], [9.0]]
    iid = load_digits_federated(10, split="iid", intercept=False)
    assert iid.num_features == 64 and iid.counts.sum() == 1797 and np.ptp(iid.counts) <= 1
    primary = load_digits_federated(50, split="primary_label")
    assert np.all(primary.counts == 17) and np.all(
        primary.label_distribution()[:, :10].max(1) >= 0.8
    )
    dirichlet = load_digits_federated(10, concentration=0.1, seed=2)
    assert dirichlet.counts.sum() == 1797 and dirichlet.num_classes == 10


def test_partition_builds_the_clients():
    X, y = np.arange(10.0).reshape(5, 2), np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    ds = partition(X, y, [np.array([4, 0]), np.array([2])], num_classes=2)
    assert ds.counts.tolist() == [2, 1] and np.array_equal(ds.client(0)[0], X[[4, 0]])


BAD_CALLS = [
    (lambda: cafed_clustered(0), "'num_clients'", "[1, 2147483647]"),
    (lambda: cafed_clustered(2, hetero=1.5), "'hetero'", "[0, 1]"),
    (lambda: dirichlet_label_split([0, 1], 3, 1.0), "'num_clients'", "[1, 2]"),
    (lambda: dirichlet_label_split([0, 1, 1], 2, 0.0), "'concentration'", "(0, inf)"),
    (lambda: dirichlet_label_split([0.5, 1], 2, 1.0), "'labels'", "array of integers"),
    (lambda: dirichlet_label_split([0, 1], 2, 1.0, per="sample"), "'per'", "'client'"),
    (lambda: dirichlet_label_split([0, 1, 1, 0], 2, 1.0, min_size=3), "'min_size'", "[0, 2]"),
    (lambda: dirichlet_label_split([0] * 50 + [1], 50, 1e-3, min_size=1), "'min_size'", "1000"),
    (lambda: one_label_per_client_split([0, 0, 1], 2), "'clients_per_label'", "[1, 1]"),
    (lambda: load_digits_federated(15, split="one_label"), "'num_clients'", "multiple of 10"),
    (lambda: primary_label_split([0, 0, 1, 1], 2, 3), "'samples_per_client'", "runs out"),
    (
        lambda: primary_label_split([0, 1], 1, 1, primary_fraction=2.0),
        "'primary_fraction'",
        "[0, 1]",
    ),
    (lambda: load_digits_federated(10, split="shards"), "'split'", "one of"),
    (lambda: partition(np.ones((3, 2)), np.ones(2), [[0]]), "'labels'", "shape (3,)"),
    (lambda: cafed_clustered(2, 2, 3).split(1.0), "'test_fraction'", "(0, 1)"),
    (lambda: cafed_clustered(2, 2, 1).split(0.5), "'self'", "n_k >= 2"),
    (lambda: cafed_clustered(2, 2, 3).client(2), "'k'", "[0, 1]"),
    (
        lambda: FederatedDataset.from_clients([np.ones((1, 1))], [[3.0]], num_classes=2),
        "'labels'",
        "[0, 1]",
    ),
]


@pytest.mark.parametrize("call, name, allowed", BAD_CALLS)
def test_bad_input_names_parameter_and_range(call, name, allowed):
    assert_parameter_error(call, name, allowed)
