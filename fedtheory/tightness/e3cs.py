r"""Tightness families of E3CS's (27) and (28) (Huang et al. 2022): E3CS with exact-marginal
(systematic) sampling, so the run is the theorem's set-up, on Bernoulli success matrices over
short horizons; measured: the regret (26) of every replicate
(:attr:`fedtheory.sim.SelectionRecord.regret`), Monte Carlo over replicates. Its
``FAMILIES`` join ``fedtheory.tightness.FAMILIES`` through E3CS's record.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fedtheory.bounds import e3cs
from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Size, declare
from fedtheory.constraints import Integer as IntegerIn
from fedtheory.tightness.family import Family, Integer, Measurement, Real
from fedtheory.verdict import mean_confidence_interval

E3CS_REPLICATES = 32
"""Replicates of the E3CS families (one success matrix and one selection run each)."""


# --- E3CS (27) and (28) ----------------------------------------------------------------------
def _e3cs_reals(ints: Mapping[str, int], *, with_eta: bool) -> tuple[Real, ...]:
    head = [Real("eta", 0.01, 0.99)] if with_eta else []
    top = 1.0 if with_eta else 0.95  # (28) needs sum_t (k - K sigma_t) > 0
    return (
        *head,
        Real("c", 0.0, top),
        *(Real(f"rho[{i}]", 0.0, 1.0) for i in range(ints["K"])),
    )


@declare(
    K=Size(2),
    k=IntegerIn(1, "K"),
    T=Size(),
    rho=Array(shape=("K",), low=0.0, high=1.0),
    replicates=Size(2),
    seed=IntegerIn(0),
)
def e3cs_regret_samples(
    K: int, k: int, T: int, *, sigma: float, eta: float, rho, replicates: int, seed: int
) -> np.ndarray:
    r"""Regret (26) of E3CS (exact-marginal sampling, Huang et al. 2022, Algorithm 1) on
    ``replicates`` Bernoulli(:math:`\rho_i`) success matrices ``[R, T, K]``: one value per
    replicate, ``[R]`` (:math:`\mathrm{CEP}^*_T` of the best fixed allocation minus
    :math:`\sum_t\sum_ip_{i,t}x_{i,t}`); round :math:`t`'s randomness from ``seed``."""
    from fedtheory.availability import Bernoulli
    from fedtheory.sim import E3CS, run_selection
    from fedtheory.sim.selection.runner import SELECTION_BYTES

    cells = replicates * T * K  # the success matrix and its checked copy (a byte a cell each)
    check_bytes((2 + SELECTION_BYTES) * cells, "e3cs_regret_samples",
                what=f"success matrices [{replicates}, {T}, {K}] and their selections",
                fixes="fewer replicates, rounds T or clients K")  # fmt: skip
    x = Bernoulli(rho).sample(T, replicates=replicates, seed=seed).numpy()
    rec = run_selection(E3CS(k, sigma=sigma, eta=eta, sampler="systematic"), x, seed=seed)
    return rec.regret


def _e3cs_evaluate(optimal: bool):
    def evaluate(ints, x, seed) -> Measurement:
        K, k, T = ints["K"], ints["k"], ints["T"]
        head = 0 if optimal else 1
        c, rho = float(x[head]), x[head + 1 :]
        sigma = c * k / K
        S = float(e3cs.quota_sum(np.full(T, sigma), k=k, K=K))
        kw = {"K": K, "k": k, "sum_quota": S}
        eta = float(e3cs.optimal_eta.evaluate(**kw).total) if optimal else float(x[0])
        samples = e3cs_regret_samples(
            K, k, T, sigma=sigma, eta=eta, rho=rho, replicates=E3CS_REPLICATES, seed=seed
        )
        mean, low, high = mean_confidence_interval(samples, 0.95)
        constants = {"K": K, "k": k, "T": T, "sigma": sigma, "eta": eta, "sum_quota": S}
        return Measurement(mean, constants, (low, high), magnitude=float(np.abs(samples).max()))

    return evaluate


_E3CS_INTEGERS = (
    Integer("K", 2, 8, "clients"),
    Integer("k", 1, lambda ints: ints["K"], "selected per round"),
    Integer("T", 2, 40, "rounds"),
)
_E3CS_DESCRIPTION = (
    "K <= 8 clients, k <= K selected, T <= 40 rounds, quota sigma = c k/K, Bernoulli(rho_i) "
    f"successes; E3CS with exact-marginal sampling; measured: regret (26), mean of "
    f"{E3CS_REPLICATES} replicates (ratio: upper 95% confidence limit / bound)"
)


def _e3cs_describe(optimal: bool):
    """The instance in Huang et al.'s symbols: K, k, T, the quota sigma, eta (the optimal
    eta^* of (28) is computed, so not listed) and the success probabilities rho."""

    def describe(ints, x) -> dict:
        head = 0 if optimal else 1
        out = {**ints, "sigma": float(x[head]) * ints["k"] / ints["K"]}
        if not optimal:
            out["eta"] = float(x[0])
        return {**out, "rho": x[head + 1 :].tolist()}

    return describe


E3CS_REGRET = Family(
    e3cs.regret,
    _E3CS_DESCRIPTION + ", eta in [0.01, 0.99]",
    _E3CS_INTEGERS,
    lambda ints: _e3cs_reals(ints, with_eta=True),
    _e3cs_evaluate(optimal=False),
    monte_carlo=True,
    instance=_e3cs_describe(optimal=False),
)
E3CS_REGRET_OPTIMAL = Family(
    e3cs.regret_optimal,
    _E3CS_DESCRIPTION + ", eta = eta^* of (28), c <= 0.95",
    _E3CS_INTEGERS,
    lambda ints: _e3cs_reals(ints, with_eta=False),
    _e3cs_evaluate(optimal=True),
    monte_carlo=True,
    instance=_e3cs_describe(optimal=True),
)

FAMILIES = (E3CS_REGRET, E3CS_REGRET_OPTIMAL)
"""The paper's tightness families (joining ``fedtheory.tightness.FAMILIES`` through its record,
:mod:`fedtheory.papers`)."""
