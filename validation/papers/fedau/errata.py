r"""Errata of FedAU (Wang and Ji, ICLR 2024): Theorem 2's step sizes against Lemma B.3.3,
checked on quadratic clients."""

from __future__ import annotations

import numpy as np

from fedtheory.bounds import fedau
from fedtheory.constraints import Integer, Real, declare
from fedtheory.validation.errata.record import Erratum, erratum


@declare(
    L=Real(1e-6, 1e6),  # L^2 and 1/L stay finite
    I=Integer(1),
    N=Integer(2, 10**6),  # [N] arrays
    p=Real(0.0, 1.0, low_open=True),
    ge_fraction=Real(0.0, 1.0, low_open=True),
    finite_result=True,  # omega_n = 1/p_n overflows for a denormal p
)
def fedau_step_size_constant(
    *, L: float = 1.0, I: int = 5, N: int = 100, p: float = 0.5, ge_fraction: float = 0.6
) -> Erratum:
    r"""FedAU Theorem 2 allows :math:`\gamma\eta\le\min\{1/(2LI),N/(27LIQ)\}`; the descent
    lemma its proof uses (Lemma B.3.3) is stated for :math:`\gamma\eta\le1/(4LI)`.

    The instance meets every hypothesis of Theorem 2: quadratic clients
    :math:`F_n(x)=\frac L2(x-e_n)^2` (Assumptions 1 and 3, :math:`\delta^2=L^2\max_ne_n^2`),
    isotropic gradient noise of variance :math:`\sigma^2` (Assumption 2), Bernoulli
    participation (Assumption 4), time-constant weights :math:`\omega_n=1/p_n` so that
    :math:`\frac1N\sum_n(p_n\omega_n-1)^2=0\le1/81` (Assumption 5, option 1, hence
    :math:`\Psi_G=0`), :math:`\gamma=1/(4\sqrt{15}LI)` and
    :math:`\gamma\eta\in(1/(4LI),1/(2LI)]` below :math:`N/(27LIQ)`. The lemma's conclusion is
    then computed exactly (:func:`fedau.quadratic_descent_step`) at several points."""
    sigma2 = 1.0
    omega = np.full(N, 1 / p)  # omega_n = 1/p_n: p_n omega_n = 1 for every n
    option1 = float(np.mean((p * omega - 1) ** 2))
    Q = float(np.mean(p * omega**2))
    e = np.linspace(-1.0, 1.0, N)[:, None]  # [N, 1], mean 0
    delta2 = L**2 * float(np.max(e**2))
    gamma = 1 / (4 * np.sqrt(15) * L * I)
    # gamma eta in (1/(4LI), 1/(2LI)]: the given fraction of the way from one to the other
    ge = (1 + ge_fraction) / (4 * L * I)
    res = fedau.theorem2.evaluate(
        strict=False, F_gap=1.0, gamma=gamma, eta=ge / gamma, I=I, T=100, Psi_G=0.0,
        delta2=delta2, L=L, sigma2=sigma2, weight_error=option1, Q_w=Q, N=N,
    )  # fmt: skip
    hyp = {
        "Theorem 2's conditions (gamma, gamma eta <= min{1/(2LI), N/(27LIQ)})": bool(res.valid),
        "Assumption 5 option 1: (1/N) sum (p_n omega_n - 1)^2 <= 1/81": option1 <= 1 / 81,
        "Assumptions 1-3: quadratic clients, isotropic noise, delta^2 = L^2 max e_n^2": True,
        "Assumption 4: Bernoulli participation p_n > 0": p > 0,
    }
    hypotheses = all(hyp.values())
    descent = ge <= 1 / (4 * L * I)
    ratios = []
    for x in (-3.0, 0.5, 3.0):
        step = fedau.quadratic_descent_step(
            e, [x], L=L, gamma=gamma, eta=ge / gamma, I=I, sigma2=sigma2,
            p=np.full(N, p), omega=omega, phi=np.full(N, 1 / N),
        )  # fmt: skip
        bound = fedau.lemma_b33.evaluate(strict=False, **step.lemma_inputs).total
        ratios.append(step.expected_next / float(bound))
    return erratum(
        "fedau.theorem2.step_size",
        "FedAU Theorem 2: 'Let gamma <= 1/(4 sqrt(15) L I) and gamma eta <= min{1/(2LI); "
        "N/(27LIQ)}'; Lemma B.3.3, which the slides' proof outline applies, is stated 'When "
        "gamma <= 1/(4 sqrt(15) L I) and gamma eta <= 1/(4LI)' (ICLR slides)",
        "the two statements' step-size hypotheses are inconsistent: Theorem 2 allows gamma eta "
        "in (1/(4LI), 1/(2LI)], which the lemma excludes and the other conditions need not "
        "exclude; the full proof is not available, and the lemma's conclusion still holds there "
        "on quadratic clients",
        f"N={N} quadratic clients F_n = (L/2)(x - e_n)^2, e_n evenly in [-1, 1] (delta^2="
        f"{delta2:g}), L={L}, I={I}, sigma^2={sigma2}, p_n={p}, omega_n=1/p_n (Assumption 5 "
        f"option 1: mean (p omega - 1)^2 = {option1:g} <= 1/81, Psi_G=0; Q={Q:g}), "
        f"gamma=1/(4 sqrt(15) L I)={gamma:.4f}, gamma eta={ge:.4g}",
        f"every hypothesis of Theorem 2 holds: {hypotheses}; Lemma B.3.3's gamma eta <= "
        f"1/(4LI)={1 / (4 * L * I):.3f} holds: {descent}; N/(27LIQ)={N / (27 * L * I * Q):.3f}"
        f"; the lemma's conclusion computed exactly at x_t in (-3, 0.5, 3): "
        f"E_t[f(x_t+1)]/bound = {', '.join(f'{r:.3f}' for r in ratios)}",
        hypotheses and not descent and max(ratios) <= 1,
        {
            "gamma_eta": ge,
            "theorem2_limit": 1 / (2 * L * I),
            "descent_limit": 1 / (4 * L * I),
            "lemma_ratio": max(ratios),
        },  # fmt: skip
        kind="hypotheses inconsistent between statements",
        advice="Use gamma eta <= min{1/(4LI), N/(27LIQ)} to stay within both statements; no "
        "instance shows Theorem 2 failing for gamma eta in (1/(4LI), 1/(2LI)] (on quadratic "
        "clients the lemma's inequality still holds there), and the full appendix was not "
        "available to us.",
        compare=("gamma_eta", ">", "descent_limit"),
        source="slides only (Theorem 2 and Lemma B.3.3 as shown in the ICLR slides)",
        hypotheses=hyp,
    )


ERRATA = (fedau_step_size_constant,)
"""FedAU's errata, in the order of ``validation/ERRATA.md``."""
EXPORTS = tuple(check.__name__ for check in ERRATA)

SECOND = {
    "fedau_step_size_constant": dict(L=2.0, I=3, N=50, p=0.8, ge_fraction=0.3),
}  # fmt: skip
"""A second instance of each check, independent of its default one (the hostile-reading
tests run both): ``check name -> keyword arguments``."""
