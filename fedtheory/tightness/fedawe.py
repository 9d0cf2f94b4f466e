r"""Tightness family of FedAWE's Lemma 2 (Xiang et al. 2024, §6.2): how close the exact
:math:`\mathbb E[t-\tau_i(t)]` comes to :math:`1/\delta` over availability trajectories
inside Assumption 1.

A point is a horizon :math:`t` and reals :math:`\delta\in[0.01,1]`, :math:`q_r\in[0,1]`
(:math:`r<t`); the trajectory :math:`p^r=\delta+(1-\delta)q_r\ge\delta` keeps the hypothesis
true on the whole box. Measured: the exact first moment at round :math:`t`
(:func:`fedtheory.bounds.fedawe.staleness_moments`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fedtheory.bounds import fedawe
from fedtheory.tightness.family import Family, Integer, Measurement, Real


def _reals(ints: Mapping[str, int]) -> tuple[Real, ...]:
    return (Real("delta", 0.01, 1.0), *(Real(f"q[{r}]", 0.0, 1.0) for r in range(ints["t"])))


def _evaluate(ints: Mapping[str, int], x: np.ndarray, seed: int) -> Measurement:
    t, delta = ints["t"], float(x[0])
    p = delta + (1 - delta) * np.asarray(x[1:], float)  # rounds 0 .. t-1, all >= delta
    first, _ = fedawe.staleness_moments(np.append(p, delta)[:, None])  # rows 0 .. t
    measured = float(first[t, 0])
    return Measurement(measured, {"delta": delta, "t": t}, magnitude=max(measured, 1 / delta))


FEDAWE_LEMMA2 = Family(
    fedawe.lemma2_first,
    "availability trajectories p^r >= delta (independent rounds), horizon t <= 40; measured: "
    "exact E[t - tau_i(t)]",
    (Integer("t", 1, 40, "round"),),
    _reals,
    _evaluate,
    tightness="attained at delta = 1 (ratio 1); p^r = delta for every r gives 1 - (1 - delta)^"
    "(t+1), which tends to 1 as t -> infinity",
    supremum=1.0,
)

FAMILIES = (FEDAWE_LEMMA2,)
"""The paper's tightness families (joining ``fedtheory.tightness.FAMILIES`` through its record,
:mod:`fedtheory.papers`)."""
