"""Performance estimation of FL methods (fedtheory.pep): tight known rates, random instances
of the class below the worst case, the replayed instance attaining it, metamorphic cases."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")

from fedtheory import sim  # noqa: E402
from fedtheory.availability import TraceReplay  # noqa: E402
from fedtheory.errors import ParameterError  # noqa: E402
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
from fedtheory.pep import solve as pep_solve  # noqa: E402
from fedtheory.pep.catalogue import exact_worst_case_for  # noqa: E402
from fedtheory.pep.classes import Isotropic  # noqa: E402
from fedtheory.pep.replay import replay  # noqa: E402
from fedtheory.problems import QuadraticProblem  # noqa: E402
from fedtheory.sim import (  # noqa: E402
    MIFA,
    AverageAll,
    AverageParticipating,
    FedAvg,
    FixedWeights,
    simulate,
)
from tests.conftest import (  # noqa: E402
    assert_parameter_error,
    assert_pep_close,
    assert_replay_attains,
    assert_tight,
)

PEP_RTOL = pep_solve.CHECK_RTOL
"""A verified PEP value is exact up to ``PEP_RTOL * max(1, |value|)`` (its certificate's
acceptance threshold)."""

MU, L, ETA, ZETA2 = 0.5, 1.0, 0.1, 0.1


def within_pep(measured: float, value: float) -> bool:
    return measured <= value + PEP_RTOL * max(1.0, abs(value))


def assert_certified(shown: str, value: float, tolerance: float) -> None:
    """``shown`` is ``value`` at no more digits than its certificate's ``tolerance``
    supports (its last digit's unit at least the power of ten above it), rounded."""
    import decimal

    unit = 10.0 ** decimal.Decimal(shown).as_tuple().exponent
    assert unit >= 10.0 ** math.ceil(math.log10(tolerance)) * (1 - 1e-12), (shown, tolerance)
    assert abs(float(shown) - value) <= unit / 2 + tolerance, (shown, value, tolerance)


@pytest.mark.parametrize("T", [1, 3, 6])
def test_one_client_fedavg_is_gradient_descent_with_the_tight_rate(T):
    # Taylor, Hendrickx & Glineur 2017: GD with eta <= 1/L on F_{mu,L} contracts
    # ||x_T - x*||^2 by exactly (1 - eta mu)^{2T}
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    r = worst_case(alg, SmoothStronglyConvex(MU, L), Participation.full(T, 1))
    assert r.status == "verified" and r.certificate.error <= PEP_RTOL
    assert_pep_close(r, (1 - ETA * MU) ** (2 * T))


def test_local_steps_of_one_client_are_gradient_steps():
    # metamorphic: E local steps in one round == E rounds of one step (N = 1)
    cls = SmoothStronglyConvex(MU, L)
    a = worst_case(FedAvg(AverageAll(), local_steps=3, lr=ETA), cls, Participation.full(2, 1))
    b = worst_case(FedAvg(AverageAll(), local_steps=1, lr=ETA), cls, Participation.full(6, 1))
    assert_pep_close(a, b)


def _random_instances(seed: int, n: int, dim: int, count: int):
    """Quadratics with Hessians in [MU, L], ||grad f_i(x*)||^2 <= ZETA2, ||x0 - x*|| <= 1."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        prob = QuadraticProblem.random(n, dim, mu=MU, L=L, seed=seed * 1000 + k)
        x_star = prob.optimum()[0]
        g = prob.client_grads(x_star)  # [N, d]
        shrink = np.sqrt(ZETA2 * rng.uniform(0.2, 1.0) / np.max(np.sum(g**2, -1)))
        c = x_star + shrink * (prob.c - x_star)  # same x*, gradients at x* scaled
        prob = QuadraticProblem(prob.A, c)
        u = rng.standard_normal(dim)
        yield prob, prob.optimum()[0] + rng.uniform(0.3, 1.0) * u / np.linalg.norm(u)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: FedAvg(AverageParticipating(), local_steps=2, lr=ETA), id="fedavg"),
        pytest.param(lambda: FedAvg(FixedWeights([0.7, 0.3]), local_steps=2, lr=ETA),
                     id="fedavg-fixed"),
        pytest.param(lambda: MIFA(local_steps=2, lr=ETA), id="mifa"),
        pytest.param(lambda: sim.FedLaAvg(clients_per_round=1, local_steps=2, lr=ETA),
                     id="fedlaavg", marks=pytest.mark.paper("fedlaavg")),
    ],
)  # fmt: skip
def test_random_instances_of_the_class_never_exceed_the_worst_case(make):
    algorithm = make()
    part = Participation.alternating(4, 2, blocks=(2, 1))
    r = worst_case(algorithm, SmoothStronglyConvex(MU, L), part, heterogeneity=AtOptimum(ZETA2))
    assert r.ok
    measured = []
    for prob, w0 in _random_instances(seed=1, n=2, dim=3, count=20):
        rec = simulate(prob, TraceReplay(part.masks[0]), algorithm, rounds=4, w0=w0)
        measured.append(float(np.sum((rec.iterates[0, -1] - prob.optimum()[0]) ** 2)))
    assert all(within_pep(m, r.value) for m in measured)
    assert max(measured) > 0.05 * r.value  # the instances are not trivially far below


@pytest.mark.parametrize("criterion", ["distance", "gap", "min_gap", "min_grad_norm"])
def test_replayed_quadratic_instance_attains_the_worst_case(criterion):
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=ETA)
    part = Participation.alternating(3, 2)
    r = worst_case(alg, Quadratic(MU, L), part, heterogeneity=AtOptimum(ZETA2), criterion=criterion)
    assert r.ok
    rp = replay(r)
    assert rp.fit_residual <= 1e-3
    assert_replay_attains(rp.value, r)


@pytest.mark.parametrize("criterion", ["distance", "gap", "min_grad_norm"])
def test_replayed_interpolating_instance_attains_the_strongly_convex_worst_case(criterion):
    # Taylor, Hendrickx & Glineur 2017, Theorem 4: the PEP's data are interpolated by
    # functions of F_{mu,L}, which the simulator runs
    alg = FedAvg(AverageParticipating(), local_steps=2, lr=ETA)
    part = Participation.alternating(4, 2, blocks=(2, 1))
    cls = SmoothStronglyConvex(MU, L)
    r = worst_case(alg, cls, part, heterogeneity=AtOptimum(ZETA2), criterion=criterion)
    assert r.ok
    assert_replay_attains(replay(r).value, r)


def test_fedau_online_weights_are_the_simulators_and_replay_attains_the_worst_case():
    # FedAU (Wang & Ji 2024, Algorithms 1-2): the weights come from the same stateful rule
    # the simulator runs, so the replayed run (simulate) reproduces the PEP's trajectory
    from fedtheory.pep.methods import fedavg_weights
    from fedtheory.sim import FedAU

    mask = np.array([[1, 0], [0, 1], [0, 1], [1, 1], [1, 0]], bool)
    q = fedavg_weights(FedAU(), mask)
    assert q.shape == (5, 2) and np.all(q[~mask] == 0) and len(np.unique(q[mask])) > 1
    alg = FedAvg(FedAU(), local_steps=1, lr=ETA)
    r = worst_case(alg, Quadratic(MU, L), Participation.fixed(mask), heterogeneity=AtOptimum(ZETA2))
    assert r.ok
    assert_replay_attains(replay(r).value, r)


def test_replay_under_a_distribution_of_masks_attains_the_expected_worst_case():
    part = Participation.bernoulli(2, [0.5, 0.8])
    r = worst_case(
        MIFA(local_steps=1, lr=ETA), Quadratic(MU, L), part, heterogeneity=AtOptimum(ZETA2)
    )
    assert r.ok and part.masks.shape[0] == 16
    assert_replay_attains(replay(r).value, r)


def test_a_sampled_availability_pattern_is_replayed_as_sampled():
    # one replicate of an availability process's sample is a fixed pattern; a round where
    # nobody is available leaves the model unchanged in the PEP as in the simulator
    from fedtheory.availability import Bernoulli

    mask = Bernoulli([0.5, 0.8]).sample(4, seed=1)[0]
    part = Participation.fixed(mask)
    assert not part.masks[0, 0].any()  # this seed's first round is empty
    alg = MIFA(local_steps=1, lr=ETA)
    r = worst_case(alg, Quadratic(MU, L), part, heterogeneity=AtOptimum(ZETA2))
    assert r.ok
    assert_replay_attains(replay(r).value, r)


def test_a_distribution_of_two_equal_masks_is_the_single_mask():
    mask = Participation.alternating(3, 2).masks[0]
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    cls, het = SmoothStronglyConvex(MU, L), AtOptimum(ZETA2)
    one = worst_case(alg, cls, Participation.fixed(mask), heterogeneity=het)
    two = worst_case(alg, cls, Participation(np.stack([mask, mask]), [0.3, 0.7]), heterogeneity=het)
    assert_pep_close(two, one)


def test_permuting_clients_changes_nothing():
    mask = Participation.alternating(4, 2, blocks=(2, 1)).masks[0]
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    cls, het = SmoothStronglyConvex(MU, L), AtOptimum(ZETA2)
    a = worst_case(alg, cls, Participation.fixed(mask), heterogeneity=het)
    b = worst_case(alg, cls, Participation.fixed(mask[:, ::-1]), heterogeneity=het)
    assert_pep_close(a, b)


def test_fedlaavg_selecting_every_available_client_is_mifa():
    from fedtheory.sim import FedLaAvg

    part = Participation.bernoulli(2, [0.5, 0.5])
    cls, het = SmoothStronglyConvex(MU, L), AtOptimum(ZETA2)
    a = worst_case(MIFA(local_steps=1, lr=ETA), cls, part, heterogeneity=het)
    b = worst_case(
        FedLaAvg(clients_per_round=2, local_steps=1, lr=ETA), cls, part, heterogeneity=het
    )
    assert_pep_close(a, b)


def test_example1_worst_case_covers_the_instance_and_the_bound():
    # FedLaAvg Theorem 4 (Yan et al. 2020): the instance's exact error <= exact worst case
    # over Example 1's class <= the paper's bound; the replay attains the worst case
    from fedtheory.pep.fedlaavg import theorem4 as fedlaavg_theorem4
    from fedtheory.tightness.fedlaavg import fedlaavg_example1_error

    for t1, t2, T, x0 in [(2, 1, 6, 3.0), (3, 1, 8, -1.0)]:
        r, bound = fedlaavg_theorem4(t1=t1, t2=t2, T=T, x0=x0)
        assert r.ok
        assert within_pep(fedlaavg_example1_error(x0, t1, t2, T), r.value)
        assert r.value <= bound
        assert_replay_attains(replay(r).value, r)
        key = "fedlaavg.example1.fedlaavg_bound"
        assert_tight(exact_worst_case_for(key, {"t1": t1, "t2": t2, "T": T, "x0": x0}), r.value)


def test_exact_worst_case_applies_only_to_deterministic_families_and_resolved_values():
    from fedtheory.tightness.fedlaavg import fedlaavg_example1_error

    assert exact_worst_case_for("cafed.theorem1", {"T": 4}) is None
    key = "fedlaavg.example1.fedlaavg_bound"
    # at T = 1000 the worst case (about 1e-10) is below the solver's resolution
    assert exact_worst_case_for(key, {"t1": 20, "t2": 3, "T": 1000, "x0": -7.0}) is None
    # at T = 100 (1.6e-5) it is resolved, and covers the instance's exact error
    value = exact_worst_case_for(key, {"t1": 20, "t2": 3, "T": 100, "x0": -7.0})
    assert value is not None
    assert fedlaavg_example1_error(-7.0, 20, 3, 100) <= value * (1 + PEP_RTOL)


def test_nested_classes_give_ordered_worst_cases():
    # Example 1's class (Hessian 2I) inside quadratics with Hessians in [1.5, 2], inside
    # [1, 2], inside F_{1,2}: the worst cases are ordered
    from fedtheory.pep.fedlaavg import EXAMPLE1, example1_setting

    s = example1_setting(t1=1, t2=1, T=2, a2=1.0)
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=0.1)
    values = []
    classes = (EXAMPLE1, Quadratic(1.5, 2.0), Quadratic(1.0, 2.0), SmoothStronglyConvex(1.0, 2.0))
    for cls in classes:
        r = worst_case(alg, cls, s["participation"], initial=s["initial"],
                       heterogeneity=s["heterogeneity"])  # fmt: skip
        assert r.ok
        values.append(r.value)
    assert all(within_pep(a, b) for a, b in zip(values[:-1], values[1:], strict=True))
    assert values[2] > values[0]


def test_fedavg_plateaus_and_fedlaavg_decreases_on_example1():
    from fedtheory.pep.fedlaavg import EXAMPLE1, example1_setting
    from fedtheory.sim import FedLaAvg

    values = {}
    for name, alg in {
        "fedavg": FedAvg(AverageParticipating(), local_steps=1, lr=0.1),
        "fedlaavg": FedLaAvg(clients_per_round=1, local_steps=1, lr=0.1),
    }.items():
        values[name] = []
        for T in (12, 24):
            s = example1_setting(t1=2, t2=1, T=T, a2=1.0)
            values[name].append(worst_case(alg, EXAMPLE1, s.pop("participation"), **s).value)
    # FedAvg's worst case stays above its limit cycle's (X_B - x*)^2 = 0.00813 > 0
    assert min(values["fedavg"]) > 0.008
    assert values["fedlaavg"][1] < 0.1 * values["fedlaavg"][0]


def test_one_client_nonconvex_gradient_descent_has_the_known_tight_rate():
    # L-smooth f, step 1/L, n steps: min_t ||grad f(x_t)||^2 <= 4 L (f(x0) - f*) / (3 n),
    # tight (PEPit's nonconvex gradient-descent example; Abbaszadehpeivasti, de Klerk &
    # Zamani 2021)
    n = 4
    alg = FedAvg(AverageAll(), local_steps=1, lr=1.0)
    r = worst_case(alg, SmoothNonconvex(1.0), Participation.full(n, 1),
                   initial=Initial(1.0, "gap"), criterion="min_grad_norm")  # fmt: skip
    assert r.ok and r.relaxed
    assert_pep_close(r, 4 / (3 * n))
    assert_replay_attains(replay(r).value, r)  # the attaining L-smooth function, in the simulator


def test_dissimilarity_is_marked_relaxed_and_nonconvex_class_solves():
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=0.5)
    r = worst_case(
        alg,
        SmoothNonconvex(1.0),
        Participation.alternating(3, 2),
        initial=Initial(1.0, "gap"),
        heterogeneity=Dissimilarity(1.0, 0.1),
        criterion="min_grad_norm",
    )
    assert r.ok and r.relaxed and r.value > 0
    # replayed through the L-smooth interpolant (h = f + L/2 ||x||^2 convex, 2L-smooth)
    assert_replay_attains(replay(r).value, r)
    # without a heterogeneity condition the clients may differ arbitrarily: unbounded,
    # reported as a failure with the solver's status, never as a number
    free = worst_case(alg, SmoothNonconvex(1.0), Participation.alternating(3, 2),
                      initial=Initial(1.0, "gap"), criterion="min_grad_norm")  # fmt: skip
    assert free.status == "failed" and free.value is None and "unbounded" in free.message


def test_solver_failure_is_reported_without_a_value(monkeypatch):
    monkeypatch.setitem(pep_solve.SOLVERS, "SCS", ("SCS", {"max_iters": 3}))
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    part = Participation.alternating(3, 2)
    r = worst_case(alg, SmoothStronglyConvex(MU, L), part, heterogeneity=AtOptimum(ZETA2),
                   solvers=("SCS",))  # fmt: skip
    assert r.status in ("failed", "inaccurate") and r.value is None
    assert "SCS" in r.message and "worst case" not in str(r)


def test_bad_input_names_the_parameter():
    cls, part = SmoothStronglyConvex(MU, L), Participation.full(2, 2)
    projected = FedAvg(AverageAll(), lr=ETA, radius=1.0)
    assert_parameter_error(lambda: worst_case(projected, cls, part), "algorithm", "radius=None")
    assert_parameter_error(lambda: worst_case(object(), cls, part), "algorithm", "FedAvg")
    alg = FedAvg(AverageAll(), lr=ETA)
    assert_parameter_error(
        lambda: worst_case(alg, SmoothNonconvex(1.0), part, initial=Initial(1.0, "gap")),
        "criterion",
        "min_grad_norm",
    )
    assert_parameter_error(lambda: worst_case(alg, cls, part, criterion="x"), "criterion", "gap")
    assert_parameter_error(lambda: SmoothStronglyConvex(2.0, 1.0), "mu", "[0, 1)")
    assert_parameter_error(lambda: Quadratic(0.0, 1.0), "mu", "(0, 1]")
    assert_parameter_error(lambda: Isotropic(-1.0), "L", "(0, inf)")
    assert_parameter_error(lambda: Participation.bernoulli(7, [0.5, 0.5]), "rounds", "<= 12")
    assert_parameter_error(lambda: Participation(np.ones((1, 2, 2)), [0.5, 0.5]), "probs", "")
    with pytest.raises(ParameterError):
        Initial(-1.0)


def test_cli_prints_worst_case_certificate_replay_and_ratio(capsys):
    from fedtheory.cli import main
    from fedtheory.pep.fedlaavg import theorem4 as fedlaavg_theorem4

    assert main(["pep", "fedlaavg-theorem4", "--t1", "2", "--t2", "1", "-T", "6"]) == 0
    out = capsys.readouterr().out
    r, bound = fedlaavg_theorem4(t1=2, t2=1, T=6, x0=3.0)
    shown = re.search(r"exact worst case: ([0-9.e-]+) \(to ([0-9.e-]+)\)", out)
    assert_certified(shown.group(1), r.value, r.certificate.tolerance)
    assert float(shown.group(2)) == float(f"{r.certificate.tolerance:.1g}")
    assert "certificate: verified" in out and "replayed in the simulator" in out
    assert f"bound / exact worst case = {bound / r.value:.6g}" in out
    args = ["pep", "fedavg", "--class", "quadratic", "-T", "3", "--zeta2", "0.1", "--bound", "1"]
    assert main(args) == 0
    assert "bound / exact worst case" in capsys.readouterr().out


def test_cli_reports_failure_and_bad_input_by_exit_status(capsys):
    from fedtheory.cli import main

    args = ["pep", "mifa", "--class", "nonconvex", "--criterion", "min_grad_norm"]
    assert main(args) == 1  # no heterogeneity condition: unbounded
    assert "PEP unbounded" in (out := capsys.readouterr().out) and "no value reported" in out
    assert main(["pep", "fedavg", "--pattern", "sometimes"]) == 2
    assert "'--pattern' option" in capsys.readouterr().err


def test_the_numbers_of_docs_pep_are_the_codes_output():
    import re
    from pathlib import Path

    from fedtheory.pep.fedlaavg import EXAMPLE1, example1_plateau, example1_setting
    from fedtheory.sim import FedLaAvg

    text = (Path(__file__).resolve().parents[1] / "docs" / "pep.md").read_text()
    # the CLI's output is regenerated at build time (fedtheory-output), never quoted
    command = "fedtheory pep fedlaavg-theorem4 --t1 2 --t2 1 -T 6 --x0 3"
    assert f"```{{fedtheory-output}} {command}\n```" in text
    assert "exact worst case: 0" not in text
    gd = FedAvg(AverageParticipating(), local_steps=1, lr=0.1)
    value = worst_case(gd, SmoothStronglyConvex(0.5, 1.0), Participation.full(3, 1)).value
    assert f"verified {round(value, 6)}" in text
    algs = {
        "fedavg": FedAvg(AverageParticipating(), local_steps=1, lr=0.1),
        "fedlaavg": FedLaAvg(clients_per_round=1, local_steps=1, lr=0.1),
    }
    for T in (12, 24):
        row = re.search(rf"\| {T} \| ([0-9.e-]+) \| ([0-9.e-]+) \|", text)
        for shown, alg in zip(row.groups(), algs.values(), strict=True):
            s = example1_setting(t1=2, t2=1, T=T, a2=1.0)
            r = worst_case(alg, EXAMPLE1, s.pop("participation"), **s)
            assert_certified(shown, r.value, r.certificate.tolerance)
    limit = float(re.search(r"\(X_B-x\^\*\)\^2=([0-9.]+)", text).group(1))
    assert abs(limit - example1_plateau(t1=2, t2=1, periods=1, gamma=0.1)[0]) <= 1e-8


def test_benchmark_runs_at_quick_size(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_pep.py"
    spec = importlib.util.spec_from_file_location("bench_pep", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.main(["--quick"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("load average before") and lines[-1].startswith("load average")
    assert "Gram" in lines[1] and len(lines) == 3 + len(bench.QUICK)
    assert all("verified" in line for line in lines[2:-1])
    # the symmetric row is solved reduced and full, with the same value
    reduced, full = lines[-2].split()[8:10]
    # printed values carry no certificate: they agree within the acceptance threshold
    assert abs(float(reduced) - float(full)) <= PEP_RTOL * max(1.0, abs(float(full)))


@pytest.mark.paper("fedlaavg")  # its Example 1 bound, and CA-Fed's Theorem 1 (no PEP)
@pytest.mark.paper("cafed")
def test_tightness_table_exact_column_lies_between_the_search_and_the_bound():
    """The tightness validation's exact worst case (PEP) at the worst instance's setting of
    FedLaAvg's Example 1 bound: no instance the search finds exceeds it, and the bound
    (a theorem that holds) is at least it; families PEP cannot express stay empty."""
    from fedtheory.validation import tightness

    key = "fedlaavg.example1.fedlaavg_bound"
    s = {**tightness.settings("tiny"), "keys": [key, "cafed.theorem1"]}
    data = tightness.compute(s)
    keys = ("exact", "measured", "bound", "exact_accuracy")
    exact, measured, bound, acc = (float(data[k][0]) for k in keys)
    assert np.isfinite(exact) and np.isnan(data["exact"][1]) and np.isnan(data["exact_accuracy"][1])
    assert 0 < acc <= 1e-5 * max(1.0, exact)  # its certificate's tolerance, accepted
    assert measured <= exact + acc and exact <= bound + acc
    note = tightness.notes(data, s)[0]
    assert "exact worst case (PEP)" in note and "its certificate's tolerance" in note


@pytest.mark.parametrize(
    "module",
    [
        "fedtheory.pep.classes",
        "fedtheory.pep.participation",
        "fedtheory.pep.solve",
        "fedtheory.pep.certificate",
    ],
)
def test_docstring_examples_run(module):
    """The classes' examples (mu < L: a strongly convex class that is not a single
    quadratic's), the patterns' and worst_case's."""
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_a_pep_estimated_above_the_time_budget_is_refused_before_it_is_built():
    alg = FedAvg(AverageParticipating(), local_steps=1, lr=ETA)
    long = Participation.full(10_000, 1)  # a Gram matrix of >= 10^4 points: T^3/3 flops
    with pytest.raises(ParameterError, match=r"worst_case would take at least about .* s \(1 "):
        worst_case(alg, SmoothStronglyConvex(MU, L), long, max_seconds=1.0)


def test_catalogue_inputs_are_refused_before_any_solve():
    from fedtheory.pep.fedawe import statement as fedawe_statement
    from fedtheory.pep.fedlaavg import theorem4 as fedlaavg_theorem4

    key = "fedlaavg.example1.fedlaavg_bound"
    assert_parameter_error(lambda: exact_worst_case_for(key, {"t1": 2}), "instance", "x0")
    assert_parameter_error(lambda: fedlaavg_theorem4(t1=1, t2=1, T=4, x0=1e308), "x0", "finite")
    assert_parameter_error(
        lambda: fedawe_statement("fedawe_zbar", np.full((2, 2), 0.5), Delta=1e308), "F_gap", ""
    )


def _gradient_steps_pep():
    """Three gradient steps on F_{0.1,1}: a small PEP, unsolved."""
    from fedtheory.pep._pepit import functions, pepit

    pep = pepit().PEP()
    f = pep.declare_function(functions().SmoothStronglyConvexFunction, mu=0.1, L=1.0)
    xs = f.stationary_point()
    x = x0 = pep.set_initial_point()
    pep.set_initial_condition((x0 - xs) ** 2 <= 1)
    for _ in range(3):
        x = x - 1.5 * f.gradient(x)
    pep.set_performance_metric((x - xs) ** 2)
    return pep


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_a_second_solve_of_a_pep_is_checked_on_its_own_solution():
    # worst_case tries its solvers in turn on one PEP: the certificate (and the instance)
    # of the second must not keep values PEPit cached from the first solution
    from fedtheory.pep import _program
    from fedtheory.pep.certificate import check

    pep = _gradient_steps_pep()
    rough = _program.solve(pep, None, solver="SCS", eps_abs=1e-1, eps_rel=1e-1, max_iters=8)
    first = check(pep, rough)
    again = check(pep, _program.solve(pep, None, solver="CLARABEL"))
    fresh_pep = _gradient_steps_pep()
    fresh = check(fresh_pep, _program.solve(fresh_pep, None, solver="CLARABEL"))
    assert first.error > 1e3 * fresh.error  # the rough solution is another point
    assert again == fresh


def test_a_pep_value_carries_its_certificates_tolerance_and_certified_digits():
    from fedtheory.pep.certificate import Certificate, certified
    from fedtheory.pep.fedlaavg import theorem4 as fedlaavg_theorem4

    c = Certificate(1.0, 1.0 + 2e-9, 1.0, -1e-8, 3e-9, -1e-10, 0.0, None, scale=40.0)
    assert c.error == pytest.approx(1e-8) and c.feasibility == pytest.approx(1e-8)
    assert c.tolerance == pytest.approx(2e-9 + 40.0 * 1e-8)
    assert "|gap| 2e-09 + max(1, tr G) 40 x largest feasibility error 1e-08" in c.tolerance_text
    # the digits printed are those above the tolerance, the same on either side of it
    assert certified(1.0 + 2e-9, c.tolerance) == certified(1.0 - 3e-9, c.tolerance) == "1.000000"
    assert certified(1.8699, 9.5e-4) == "1.870" and certified(3.7e-6, 1e-5) == "4e-06"
    assert certified(0.00264921227, 3e-9) == "0.00264921"
    assert certified(0.00264921354, 3e-9) == "0.00264921"
    r, _ = fedlaavg_theorem4(t1=2, t2=1, T=6, x0=3.0)
    tol = r.certificate.tolerance
    assert r.certificate.scale >= 1.0 and r.certificate.error <= tol
    shown = certified(r.value, tol)
    assert abs(float(shown) - r.value) <= 10 ** math.ceil(math.log10(tol))


def test_a_built_pep_whose_solve_exceeds_the_time_budget_is_refused_before_any_solver(
    monkeypatch,
):
    """Three clients over two rounds (109 points in one Gram block) pass the gradient-step
    estimate; the solve's (five dense factorisations of the 5995 x 5995 Hessian block) is
    above a 60 s budget, and the refusal names the Gram matrix before any solver runs."""
    from fedtheory.pep.fedawe import statement as fedawe_statement

    monkeypatch.setenv("FEDTHEORY_MAX_SECONDS", "60")
    with pytest.raises(ParameterError, match=r"worst_case .* Gram matrix of 109 points"):
        fedawe_statement("fedawe_zbar", np.full((2, 3), 0.5))
    result, _, _ = fedawe_statement("fedawe_zbar", np.full((2, 2), 0.5))
    assert result.ok and result.gram_dim == 25
