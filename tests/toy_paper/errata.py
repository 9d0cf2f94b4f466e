"""The toy paper's erratum (the validation layer): its Remark claims contraction up to
:math:`\\eta=2/L`, where toy averaging stops contracting."""

from __future__ import annotations

from fedtheory.validation.errata.record import Erratum, erratum
from tests.toy_paper.algorithm import squared_norm


def toy_remark_step_two_over_L(*, L: float = 1.0, T: int = 3, toy_gap0: float = 1.0) -> Erratum:
    """Toy Remark: ``||w_T||^2 < ||w_0||^2`` for every ``eta <= 2/L``; at ``eta = 2/L`` the
    simulated toy averaging keeps ``||w_T||^2 = ||w_0||^2`` (the factor ``(1 - eta L)^2`` is
    1)."""
    eta = 2.0 / L
    measured = squared_norm(L, eta, T, toy_gap0)
    return erratum(
        "toy.remark.step_two_over_L",
        "Toy Remark: toy averaging contracts for every eta <= 2/L",
        "no contraction at eta = 2/L",
        f"L = {L:g}, eta = 2/L, T = {T}, ||w_0||^2 = {toy_gap0:g}",
        f"||w_T||^2 = {measured:.6g} (simulated)",
        measured >= toy_gap0 * (1 - 1e-12),
        {"final": measured, "initial": toy_gap0},
        kind="statement false",
        advice="read the Remark with eta < 2/L",
        compare=("final", ">=", "initial"),
        source="Toy paper, Remark",
        hypotheses={"eta L <= 2": eta * L <= 2, "||w_0||^2 > 0": toy_gap0 > 0},
    )


ERRATA = (toy_remark_step_two_over_L,)
EXPORTS = ("toy_remark_step_two_over_L",)
SECOND = {"toy_remark_step_two_over_L": {"L": 2.0, "T": 5, "toy_gap0": 0.5}}
