"""Size and time of fedtheory.pep's SDPs: what is feasible with an open-source solver.

For FedAvg (E local steps, uniform weights over participants) on N smooth strongly convex
clients (mu = 0.5, L = 1, eta = 0.1, ||grad f_i(x*)||^2 <= 0.1, ||x0 - x*||^2 <= 1),
worst ||x_T - x*||^2, each row prints the Gram matrix dimension, the number of scalar
constraints and LMIs, the solver that gave the verified value (Clarabel first, SCS when
Clarabel fails or is inaccurate), the status and the wall-clock time of building + solving.
Rows cover N <= 4 and T * E <= 24 local steps per client, alternating and full
participation. Run it with the threads you want to measure, e.g. on two cores:

    OMP_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_pep.py [--quick]
"""

from __future__ import annotations

import argparse
import time

from fedtheory.pep import AtOptimum, Participation, SmoothStronglyConvex, worst_case
from fedtheory.sim import AverageParticipating, FedAvg

FULL = [  # (N, T, E, pattern)
    (1, 24, 1, "full"),
    (2, 12, 2, "alternating"),
    (2, 8, 3, "full"),
    (2, 24, 1, "alternating"),
    (3, 8, 3, "alternating"),
    (3, 6, 4, "full"),
    (4, 12, 2, "alternating"),
    (4, 6, 4, "full"),
    (4, 24, 1, "alternating"),
]
QUICK = [(1, 4, 1, "full"), (2, 4, 2, "alternating")]


def row(n: int, T: int, E: int, pattern: str) -> dict:
    part = (Participation.full if pattern == "full" else Participation.alternating)(T, n)
    alg = FedAvg(AverageParticipating(), local_steps=E, lr=0.1)
    start = time.perf_counter()
    r = worst_case(alg, SmoothStronglyConvex(0.5, 1.0), part, heterogeneity=AtOptimum(0.1))
    seconds = time.perf_counter() - start
    return {
        "N": n,
        "T": T,
        "E": E,
        "pattern": pattern,
        "gram": r.gram_dim,
        "constraints": r.constraints,
        "solver": r.solver or "-",
        "status": r.status,
        "value": "-" if r.value is None else f"{r.value:.6g}",
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small rows (a smoke run)")
    args = parser.parse_args(argv)
    print(
        f"{'N':>2} {'T':>3} {'E':>2} {'pattern':<12} {'Gram':>5} {'constr.':>8} "
        f"{'solver':<9} {'status':<10} {'worst case':>11} {'seconds':>8}",
        flush=True,
    )
    for case in QUICK if args.quick else FULL:
        r = row(*case)
        print(
            f"{r['N']:>2} {r['T']:>3} {r['E']:>2} {r['pattern']:<12} {r['gram']:>5} "
            f"{r['constraints']:>8} {r['solver']:<9} {r['status']:<10} {r['value']:>11} "
            f"{r['seconds']:>8.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
