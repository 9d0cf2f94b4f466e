r"""Errata of MimiC (Sun et al.): Remark 3's equal-dropout case against (14), checked on
FedLaAvg Example 1's clients."""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.availability import TwoStateMarkov
from fedtheory.bounds.mimic import objective_bias
from fedtheory.constraints import Real, Size, declare
from fedtheory.problems import QuadraticProblem
from fedtheory.validation.errata.record import NOTE_CLASS, Erratum, erratum


@declare(rounds=Size(2), replicates=Size(2), e2=Real())
def mimic_equal_dropout(*, rounds: int = 4000, replicates: int = 4, e2: float = 1.0) -> Erratum:
    r"""MimiC Remark 3 ("Convergence of FedAvg") says that with the usual global learning
    rates "the RHS of (14) except the term [objective mismatch] converges to zero", and that
    "there are still two obvious special cases where FedAvg can converge with client
    dropouts: 1) data among clients are IID ...; and 2) clients drop out with the same
    probability [20, 19]". Case 2 is a claim about FedAvg citing [20], not about (14)'s
    mismatch term, whose formula is lost in the available text. Under the reading that the
    term is the time average of :math:`\mathbb E\|\Omega^t\|^2` (fedtheory's
    reconstruction), it stays positive with equal dropout (computed exactly over the four
    active sets), so (14) alone does not give case 2; the mean of :math:`\Omega^t`, which
    an unbiased aggregation makes vanish, does."""
    prob = QuadraticProblem.example1(e1=0.0, e2=e2)
    mask = TwoStateMarkov([0.5, 0.5], 0.0).sample(rounds, replicates=replicates, seed=0)
    res = objective_bias(prob, prob.optimum()[0], mask.numpy())
    mean_sq = float(res.mismatch.mean())
    se = float(res.squared_norm.std() / np.sqrt(res.squared_norm.size))
    mean_vec = float(np.abs(res.mean_bias).max())
    se_vec = float(res.omega.std() / np.sqrt(rounds))  # s.e. of one replicate's time average
    x = torch.as_tensor(prob.optimum()[0], dtype=torch.float64).expand(2, -1)
    g = prob.grad(x, torch.arange(2)).numpy()  # [2, d] client gradients at x^*
    g_bar = prob.alpha @ g
    outcomes = (g[0], g[1], np.zeros_like(g_bar), g.mean(0))  # S = {1}, {2}, {} (no update), both
    exact = float(np.mean([np.sum((o - g_bar) ** 2) for o in outcomes]))  # each w.p. 1/4
    hyp = {
        "heterogeneous clients (e1 != e2: not case 1)": e2 != 0.0,
        "same dropout probability for every client (case 2)": True,
        "smooth convex clients (Assumptions 2-4 of Theorem 1)": True,
    }
    return erratum(
        "mimic.remark3.equal_dropout",
        "MimiC Remark 3 (Convergence of FedAvg): 'there are still two obvious special cases "
        "where FedAvg can converge with client dropouts: 1) data among clients are IID ...; "
        "and 2) clients drop out with the same probability [20, 19]'",
        "(14) does not give case 2 by itself: under fedtheory's reading of (14)'s lost "
        "mismatch term (time average of E||Omega^t||^2) the term stays positive with equal "
        "dropout; only the mean of Omega^t vanishes",
        f"FedLaAvg Example 1 clients f_i=(x-e_i)^2, e=(0,{e2:g}), at x=x*={e2 / 2:g}; "
        f"Bernoulli(0.5) dropout for both; {rounds} rounds x {replicates} replicates",
        f"time average of ||Omega||^2 = {mean_sq:.4f} +- {se:.4f} (exact {exact:.4f}); "
        f"max |time average of Omega| = {mean_vec:.4f} (s.e. {se_vec:.4f})",
        None,  # not checkable: inconclusive
        {"mismatch": mean_sq, "exact_mismatch": exact, "mean_bias": mean_vec, "zero": 0.0},
        kind=NOTE_CLASS,
        advice="Read Remark 3's case 2 as a result of [20] about FedAvg, not as a consequence "
        "of (14); check (14)'s mismatch term in the published paper before relying on it: if "
        "it is E||Omega^t||^2 it does not vanish here, if ||E Omega^t||^2 it does.",
        compare=("mismatch", ">", "zero"),
        source="§4, Remark 3 and Theorem 1, eq. (14) (its mismatch term is lost in the "
        "available text)",
        hypotheses=hyp,
    )


ERRATA = (mimic_equal_dropout,)
"""MimiC's errata, in the order of ``validation/ERRATA.md``."""
EXPORTS = tuple(check.__name__ for check in ERRATA)

SECOND = {
    "mimic_equal_dropout": dict(e2=3.0, rounds=2000),
}  # fmt: skip
"""A second instance of each check, independent of its default one (the hostile-reading
tests run both): ``check name -> keyword arguments``."""
