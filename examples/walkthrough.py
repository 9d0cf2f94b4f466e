r"""A researcher's first day with fedtheory: four claims, four outcomes, and the exit status a
CI job reads for each. Run it with

    python examples/walkthrough.py

or give it to the command line, which finds the tightness families it registers:

    fedtheory tightness user.gd_false --module examples/walkthrough.py

1. **A true bound** -- gradient descent with step :math:`\eta` on
   :math:`f(x)=\frac\mu2\|x\|^2-b^\top x` (minimiser :math:`x^*=b/\mu\neq0`) contracts as
   :math:`\|x_T-x^*\|^2=(1-\eta\mu)^{2T}\|x_0-x^*\|^2` exactly, so the textbook bound
   :math:`\|x_T-x^*\|^2\le(1-\eta\mu)^{2T}\|x_0-x^*\|^2` (:math:`\eta\mu\le1`) holds with
   equality. The measurement returns a plain float: at :math:`x_0=x^*` or
   :math:`\eta\mu=1` the bound is 0 and the iterates land on :math:`x^*` only up to
   rounding, which the rounding floor of the parameters accepts.
2. **A false bound** -- the same with rate :math:`(1-2\eta\mu)^{2T}`: refuted, with the
   instance.
3. **A Monte-Carlo claim** -- a client available in each round independently with
   probability :math:`p` is absent for :math:`K` rounds in a row with probability
   :math:`(1-p)^K`. Measured as the mean of 0/1 replicates: the claim
   :math:`P\le(1-p)^K` is *inconclusive* wherever its mean straddles the bound (it is
   exact), never *violated*; the false claim :math:`P\le(1-p)^{K+1}` is *violated*.
4. **A halved catalogue bound** -- CA-Fed Theorem 1 (Rodio et al. 2023, Theorem 1) with its
   bound divided by 2, on quadratic problems with :math:`\kappa\in[1,50]` drawn by a
   hypothesis strategy, the theorem's constants derived from each: refuted by
   ``check_theorem``'s defaults, no family given (the search after the examples runs over
   the strategy's own choices, :func:`fedtheory.tightness.strategy_family`).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import sympy as sp
from hypothesis import settings
from hypothesis import strategies as st

from fedtheory.bounds import Condition, Theorem, cafed
from fedtheory.testing import check_theorem, exit_status, strategies
from fedtheory.tightness import register, theorem_family

h, D0 = sp.symbols("h D0", positive=True)  # h = eta mu, D0 = ||x_0 - x*||^2
T = sp.Symbol("T", positive=True, integer=True)
STEP = [Condition("eta mu <= 1", h, "<=", sp.Integer(1))]
GD = Theorem(
    "user.gd", title="GD contraction", reference="textbook (exact for a quadratic)",
    kind="upper bound", terms={"contraction": (1 - h) ** (2 * T) * D0}, conditions=STEP,
)  # fmt: skip
GD_FALSE = Theorem(
    "user.gd_false", title="GD contraction, rate (1 - 2 eta mu)^2T", reference="false",
    kind="upper bound", terms={"contraction": (1 - 2 * h) ** (2 * T) * D0}, conditions=STEP,
)  # fmt: skip
B = np.array([1.0, -2.0, 0.7])


def gd_distance(*, h, T, D0, mu=0.3):
    """||x_T - x*||^2 of T gradient steps (step h/mu) from x_0 = x* + sqrt(D0) u."""
    x_star = B / mu
    x = x_star + np.sqrt(D0) * np.array([0.6, 0.0, 0.8])
    for _ in range(int(T)):
        x = x - (h / mu) * (mu * x - B)
    return float((x - x_star) @ (x - x_star))


p = sp.Symbol("p", positive=True)
K = sp.Symbol("rounds", positive=True, integer=True)  # K in the text
AVAILABLE = [Condition("p <= 1", p, "<=", sp.Integer(1))]
ABSENT = Theorem(
    "user.absent", title="K absences in a row", reference="independent rounds",
    kind="upper bound", terms={"absent": (1 - p) ** K}, conditions=AVAILABLE,
)  # fmt: skip
ABSENT_FALSE = Theorem(
    "user.absent_false", title="K absences in a row, one too many", reference="false",
    kind="upper bound", terms={"absent": (1 - p) ** (K + 1)}, conditions=AVAILABLE,
)  # fmt: skip


def absent(*, p, rounds, replicates, seed):
    """0/1 replicates: was a client of availability p absent in each of K rounds?"""
    rng = np.random.default_rng(seed)
    return (rng.random((replicates, int(rounds))) >= p).all(axis=1).astype(float)


HALVED = Theorem(
    "user.cafed.theorem1_half", title="CA-Fed Theorem 1 / 2", reference="false on purpose",
    kind="upper bound", terms={k: e / 2 for k, e in cafed.theorem1.terms.items()},
    conditions=list(cafed.theorem1.conditions),
)  # fmt: skip


@st.composite
def quadratic_instances(draw):
    """A quadratic problem with kappa in [1, 50], weights p and a point w."""
    problem = draw(strategies.quadratic_problems(max_clients=3, max_dim=2, kappa=(1.0, 50.0)))
    weights = draw(strategies.simplex(problem.num_clients))
    w = draw(st.lists(st.floats(-2, 2), min_size=problem.dim, max_size=problem.dim))
    return {"problem": problem, "w": w, "p": weights}


def gap(problem, w, p):
    return problem.loss(w) - problem.optimum()[1]


def constants(problem, w, p):
    return cafed.decomposition_constants(problem, w, p).as_kwargs()


GD_RANGES = {"T": (1, 30), "D0": (0.1, 4.0)}
for theorem in (GD, GD_FALSE):  # for `fedtheory tightness KEY --module examples/walkthrough.py`
    register(theorem_family(theorem, gd_distance, ranges=GD_RANGES))

EXAMPLES = settings(max_examples=40, derandomize=True, deadline=None)
AVAILABILITY = {"p": (0.2, 0.8), "rounds": (1, 4)}
CASES = {
    "true bound": partial(check_theorem, GD, gd_distance, ranges=GD_RANGES),
    "false bound": partial(check_theorem, GD_FALSE, gd_distance, ranges=GD_RANGES),
    "Monte-Carlo claim": partial(check_theorem, ABSENT, absent, replicates="auto",
                                 ranges=AVAILABILITY),
    "false Monte-Carlo claim": partial(check_theorem, ABSENT_FALSE, absent,
                                       replicates="auto", ranges=AVAILABILITY),
    "halved catalogue bound": partial(check_theorem, HALVED, gap,
                                      instances=quadratic_instances(), constants=constants),
}  # fmt: skip


def main() -> None:
    for name, case in CASES.items():
        status, message = exit_status(partial(case, settings=EXAMPLES))
        print(f"{name}: exit status {int(status)} ({status.name.lower().replace('_', ' ')})")
        print("   ", message.splitlines()[0][:400])


if __name__ == "__main__":
    main()
