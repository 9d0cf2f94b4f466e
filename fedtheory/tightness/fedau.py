r"""Tightness family of FedAU's Theorem 3 per round (Wang & Ji 2024, proof of Theorem 3):
measured the exact :math:`\mathbb E[(p\,\omega_t-1)^2]` of FedAU's Algorithm 2
(:func:`fedtheory.bounds.fedau.weight_error_exact`). Its ``FAMILIES`` join
``fedtheory.tightness.FAMILIES`` through FedAU's record.
"""

from __future__ import annotations

from fedtheory.bounds import fedau
from fedtheory.tightness.family import Family, Integer, Measurement, Real


# --- FedAU Theorem 3, per round --------------------------------------------------------------
def _fedau(ints, x, seed) -> Measurement:
    K_cut, t, p = ints["K_cut"], ints["t"], float(x[0])
    measured = float(fedau.weight_error_exact(p, K_cut, t + 1)[t])
    return Measurement(measured, {"p": p, "K_cut": K_cut, "t": t}, magnitude=1.0)


FEDAU_PER_ROUND = Family(
    fedau.theorem3_per_round,
    "Bernoulli(p) participation, FedAU Algorithm 2 with cutoff K_cut <= 12, round 1 <= t <= 40; "
    "measured: exact E[(p omega_t - 1)^2]",
    (Integer("K_cut", 1, 12, "cutoff"), Integer("t", 1, 40, "round")),
    lambda ints: (Real("p", 1e-4, 1.0),),
    _fedau,
    tightness="tight as t -> infinity: with K_cut = 1, omega_t = 1 and the ratio is "
    "t(1 - p)/(t(1 - p) + 2) (-> 1 as p -> 0, t -> infinity; 40/42 at t = 40)",
    supremum=1.0,  # approached (the theorem's t is unbounded; this family stops at t = 40)
)

FAMILIES = (FEDAU_PER_ROUND,)
"""The paper's tightness families (joining ``fedtheory.tightness.FAMILIES`` through its record,
:mod:`fedtheory.papers`)."""
