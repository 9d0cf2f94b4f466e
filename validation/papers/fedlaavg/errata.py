r"""Errata of FedLaAvg (Yan et al.): Example 1's exception and Algorithm 3's step,
each checked on a concrete instance."""

from __future__ import annotations

import numpy as np

from fedtheory.bounds import fedlaavg
from fedtheory.constraints import Integer, Real, declare
from fedtheory.validation.errata.record import NOTE_CLASS, Erratum, erratum


@declare(
    e1=Real(),
    e2=Real(),
    gamma=Real(0.0, 0.5, low_open=True, high_open=True),  # below 1/L = 1/2
    tau=Integer(1),
    finite_result=True,  # the limit cycle of e_i near 1e308 overflows
)
def fedlaavg_equal_blocks(
    *, e1: float = 0.0, e2: float = 1.0, gamma: float = 0.05, tau: int = 5
) -> Erratum:
    r"""FedLaAvg Example 1: FedAvg's limit is biased only when :math:`t_1\ne t_2` (and
    :math:`e_1\ne e_2`). The proof says so itself, after L'Hopital's rule (formulas lost in
    the text, restored in brackets): "Note that [the limit equals x^*] only when [e_1=e_2]
    (data distributions are IID) or [t_1=t_2]." With equal blocks the limit cycle averages to
    :math:`x^*` exactly and only oscillates."""
    x_star = (e1 + e2) / 2
    avg_eq = float(fedlaavg.time_average.evaluate(e1=e1, e2=e2, gamma=gamma, t1=tau, t2=tau).total)
    amp = float(fedlaavg.equal_block_amplitude.evaluate(e1=e1, e2=e2, gamma=gamma, tau=tau).total)
    avg_uneq = float(fedlaavg.time_average.evaluate(e1=e1, e2=e2, gamma=gamma, t1=9, t2=1).total)
    hyp = {
        "Example 1: f_i = (x - e_i)^2 with e1 != e2 (non-IID)": e1 != e2,
        "exact gradients, learning rate gamma < 1/L = 1/2": 0 < gamma < 0.5,
    }
    scale = abs(e2 - e1)
    ok = abs(avg_eq - x_star) < 1e-12 * max(1.0, scale) and amp > 0.1 * scale
    ok = ok and abs(avg_uneq - x_star) > 0.1 * scale
    return erratum(
        "fedlaavg.example1.equal_blocks",
        "FedLaAvg Example 1 (arXiv Thm 2 / journal Thm 1): FedAvg is biased even with a small "
        "learning rate; the proof: 'Based on L'Hopital's rule, we then have [lim X = (t1 e1 + "
        "t2 e2)/(t1 + t2)] ... Note that [it equals x^*] only when [e1 = e2] (data "
        "distributions are IID) or [t1 = t2]' (formulas lost in the text)",
        "the bias needs t1 != t2, as the proof's exception says: equal blocks give zero bias "
        "(time average = x^*) and a non-zero oscillation",
        f"e1={e1}, e2={e2}, gamma={gamma}; equal blocks t1=t2={tau}, unequal (9, 1)",
        f"equal: time average {avg_eq:.6f} = x* = {x_star}, amplitude |X_A - X_B| = {amp:.4f};"
        f" unequal: time average {avg_uneq:.4f} (bias {avg_uneq - x_star:+.4f})",
        ok,
        {
            "bias_equal": avg_eq - x_star,
            "amplitude": amp,
            "bias_unequal": avg_uneq - x_star,
            "zero": 0.0,
        },  # fmt: skip
        kind="caveat confirmed",
        advice="Nothing to correct: read Example 1's bias claim for t1 != t2 (and e1 != e2), "
        "as the proof's exception states; with t1 = t2 FedAvg oscillates around x^* with "
        "amplitude (1 - rho)/(1 + rho)|e1 - e2|, rho = (1 - 2 gamma)^tau.",
        compare=("bias_equal", "==", "zero"),
        source="§3 (Example 1 and its proof, the sentence after L'Hopital's rule)",
        hypotheses=hyp,
    )


@declare(
    iterations=Integer(1, 10**5),  # a Python loop
    N=Integer(2, 10**6),  # [N] arrays
    gamma=Real(0.0, 1 / 8, low_open=True),  # gamma <= 1/(4L), L = 2
    finite_result=True,  # the diverging iterate grows like |1 - 2 gamma N|^iterations
)
def fedlaavg_missing_one_over_n(
    iterations: int = 20, *, N: int = 20, gamma: float = 0.1
) -> Erratum:
    r"""FedLaAvg App. C's Algorithm 3 line 13 reads (in the source fedtheory's notes were
    taken from) :math:`x^t=x^{t-1}-\gamma\sum_ig_i` without :math:`1/N`. The available text
    names Algorithm 3 ("we introduce an mathematically equivalent Algorithm 3 of Algorithm 2")
    but lost its lines, so the line cannot be checked here; what is computed is that such a
    step is :math:`N` times the one of (3)-(4) ("the average latest gradient ... to update the
    global model parameters in (4)") and diverges where the average converges."""
    e = np.linspace(-1.0, 1.0, N)  # f_i = (x - e_i)^2, L = 2, gamma <= 1/(4L)
    x_star = e.mean()
    with_n, without = 5.0, 5.0
    for _ in range(iterations):
        with_n -= gamma * np.mean(2 * (with_n - e))
        without -= gamma * np.sum(2 * (without - e))
    err_with, err_without = abs(with_n - x_star), abs(without - x_star)
    hyp = {
        "gamma <= 1/(4L) (L = 2)": gamma <= 1 / 8,
        "full availability, exact gradients": True,
        "2 gamma N > 2 (the sum's step is unstable)": 2 * gamma * N > 2,
    }
    return erratum(
        "fedlaavg.alg3.line13",
        "FedLaAvg App. C, Algorithm 3 line 13: x^t <- x^{t-1} - gamma sum_{i=1}^N g_i (as "
        "fedtheory's notes record it; the available text names Algorithm 3 but lost its lines)",
        "a typo: (3)-(4) use 'the average latest gradient'; without 1/N the step is N times "
        "larger and the iteration diverges",
        f"N={N} clients f_i=(x-e_i)^2 (L=2), e_i evenly in [-1, 1], full availability, "
        f"gamma={gamma} <= 1/(4L), x_0=5, {iterations} iterations",
        f"|x_T - x*| with 1/N: {err_with:.2e} (contraction 1-2 gamma = {1 - 2 * gamma:.1f}); "
        f"without: {err_without:.2e} (factor 1-2 gamma N = {1 - 2 * gamma * N:.1f}, diverges)",
        None,  # not checkable: inconclusive
        {"error_with": err_with, "error_without": err_without},
        kind=NOTE_CLASS,
        advice="Check Algorithm 3 in the published paper; if line 13 lacks 1/N, read it as "
        "x^t = x^{t-1} - (gamma/N) sum_i g_i, as (3)-(4) average the gradients.",
        compare=("error_without", ">", "error_with"),
        source="App. C, Algorithm 3 (its lines are lost in the available text) against (3)-(4)",
        hypotheses=hyp,
    )


ERRATA = (fedlaavg_equal_blocks, fedlaavg_missing_one_over_n)
"""FedLaAvg's errata, in the order of ``validation/ERRATA.md``."""
EXPORTS = tuple(check.__name__ for check in ERRATA)

SECOND = {
    "fedlaavg_equal_blocks": dict(e1=-1.0, e2=2.0, gamma=0.1, tau=3),
    "fedlaavg_missing_one_over_n": dict(N=10, gamma=0.12),
}  # fmt: skip
"""A second instance of each check, independent of its default one (the hostile-reading
tests run both): ``check name -> keyword arguments``."""
