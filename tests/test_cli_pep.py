"""``fedtheory pep``: the setting in words, values at the digits their certificate supports,
an unbounded worst case explained (the missing heterogeneity bound named), FedAWE."""

from __future__ import annotations

import pytest

pytest.importorskip("PEPit", reason="the pep extra: pip install -e .[pep]")

from fedtheory.cli import main  # noqa: E402
from fedtheory.pep import Participation, SmoothStronglyConvex, worst_case  # noqa: E402
from fedtheory.pep.certificate import certified  # noqa: E402
from fedtheory.pep.heterogeneity import AtOptimum  # noqa: E402
from fedtheory.pep.initial import Initial  # noqa: E402


def test_without_a_heterogeneity_bound_the_worst_case_is_unbounded_and_the_bound_named(capsys):
    assert main(["pep", "fedavg", "--clients", "2", "-T", "3"]) == 1  # alternating
    out = capsys.readouterr().out
    assert "PEP unbounded: with 2 clients and no heterogeneity bound" in out
    assert "--zeta2 Z" in out and "(no value reported)" in out
    assert "SolverError" not in out and "exact worst case" not in out
    # with the bound it is finite
    assert main(["pep", "fedavg", "-T", "3", "--zeta2", "1", "--class", "quadratic"]) == 0
    assert "exact worst case: " in capsys.readouterr().out


def test_the_setting_prints_one_item_a_line_and_the_participation_in_words(capsys):
    assert main(["pep", "mifa", "-T", "2", "--pattern", "bernoulli:0.5,0.8", "--zeta2", "1"]) == 0
    out = capsys.readouterr().out
    assert "Participation(" not in out
    assert (
        "\n  participation: 2 clients, 2 rounds, 16 masks (expectation over them, exact)\n" in out
    )
    assert "\n  heterogeneity: ||grad f_i(x*)||^2 <= 1\n" in out
    assert main(["pep", "fedavg", "-T", "3", "--pattern", "full", "--zeta2", "1"]) == 0
    assert "participation: 2 clients, 3 rounds, one mask\n" in capsys.readouterr().out


def test_values_print_the_digits_their_certificate_supports(capsys):
    from fedtheory.pep.fedlaavg import theorem4 as fedlaavg_theorem4

    assert main(["pep", "fedlaavg-theorem4", "--t1", "2", "--t2", "1", "-T", "6"]) == 0
    out = capsys.readouterr().out
    r, _ = fedlaavg_theorem4(t1=2, t2=1, T=6, x0=3.0)
    tol = r.certificate.tolerance
    assert f"exact worst case: {certified(r.value, tol)} (to {tol:.1g})" in out
    assert "within the certificate's tolerance" in out


def test_fedawe_is_a_method_of_the_command_with_its_statements_as_criteria(capsys):
    from fedtheory.sim import FedAWE

    args = ["pep", "fedawe", "--mu", "0", "-T", "2", "--pattern", "full", "--zeta2", "0.1",
            "--criterion", "fedawe_xbar", "--initial-kind", "gap", "--lr", "0.05",
            "--server-lr", "1"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    r = worst_case(
        FedAWE(local_steps=1, lr=0.05, server_lr=1.0),
        SmoothStronglyConvex(0.0, 1.0),
        Participation.full(2, 2),
        initial=Initial(1.0, "gap"),
        heterogeneity=AtOptimum(0.1),
        criterion="fedawe_xbar",
    )
    assert r.ok and "algorithm: fedawe" in out
    assert "criterion: (1/T) sum_{t<T} ||grad F(xbar^t)||^2" in out
    assert f"exact worst case: {certified(r.value, r.certificate.tolerance)}" in out
    assert "replayed in the simulator" in out
