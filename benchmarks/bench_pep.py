"""Size and time of fedtheory.pep's SDPs, reduced by client symmetry and full, side by side.

For FedAvg (E local steps, uniform weights over participants) on N smooth strongly convex
clients (mu = 0.5, L = 1, eta = 0.1, ||grad f_i(x*)||^2 <= 0.1, ||x0 - x*||^2 <= 1),
worst ||x_T - x*||^2, each row solves the PEP as ``worst_case`` does by default (clients
found interchangeable reduced to one representative and their mean,
``fedtheory.pep._symmetry``) and, where a reduction applied, again with
``use_symmetry=False`` (the full PEP), in the same run. It prints the Gram matrix
dimension and the number of scalar constraints the solver receives (reduced / full), the
solver and status, both values, and the wall-clock seconds of building + solving each. Rows
cover N <= 4 and T * E <= 24 local steps per client; under alternating participation no two
clients are interchangeable, so there is only the full PEP. The load average is printed
before and after (the timings are those of a shared machine). Run it with the threads you
want to measure, e.g. on two cores:

    OMP_NUM_THREADS=2 taskset -c 0,1 python benchmarks/bench_pep.py [--quick] [--no-full]
"""

from __future__ import annotations

import argparse
import os
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
QUICK = [(1, 4, 1, "full"), (3, 2, 2, "full")]


def _solve(n: int, T: int, E: int, pattern: str, use_symmetry: bool):
    part = (Participation.full if pattern == "full" else Participation.alternating)(T, n)
    alg = FedAvg(AverageParticipating(), local_steps=E, lr=0.1)
    start = time.perf_counter()
    r = worst_case(
        alg,
        SmoothStronglyConvex(0.5, 1.0),
        part,
        heterogeneity=AtOptimum(0.1),
        use_symmetry=use_symmetry,
    )
    return r, time.perf_counter() - start


def row(n: int, T: int, E: int, pattern: str, *, full: bool = True) -> dict:
    """One case: the default (reduced where possible) solve and, where a reduction applied
    and ``full``, the full PEP's."""
    r, seconds = _solve(n, T, E, pattern, True)
    reduced = not r.setting["symmetry"].startswith("none")
    f, full_seconds = _solve(n, T, E, pattern, False) if reduced and full else (None, None)

    def value(res):
        return "-" if res is None or res.value is None else f"{res.value:.6g}"

    return {
        "N": n,
        "T": T,
        "E": E,
        "pattern": pattern,
        "gram": f"{r.gram_dim}/{f.gram_dim}" if f else f"{r.gram_dim}",
        "constraints": f"{r.constraints}/{f.constraints}" if f else f"{r.constraints}",
        "solver": r.solver or "-",
        "status": r.status if f is None or f.status == r.status else f"{r.status}/{f.status}",
        "value": value(r),
        "full_value": value(f) if f else ("(not run)" if reduced else "= (no symmetry)"),
        "seconds": seconds,
        "full_seconds": full_seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two small rows (a smoke run)")
    parser.add_argument("--no-full", action="store_true", help="skip the full PEPs")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'N':>2} {'T':>3} {'E':>2} {'pattern':<12} {'Gram':>7} {'constr.':>9} "
        f"{'solver':<9} {'status':<10} {'reduced':>11} {'full':>15} {'s reduced':>10} "
        f"{'s full':>8}",
        flush=True,
    )
    for case in QUICK if args.quick else FULL:
        r = row(*case, full=not args.no_full)
        full_s = "-" if r["full_seconds"] is None else f"{r['full_seconds']:.2f}"
        print(
            f"{r['N']:>2} {r['T']:>3} {r['E']:>2} {r['pattern']:<12} {r['gram']:>7} "
            f"{r['constraints']:>9} {r['solver']:<9} {r['status']:<10} {r['value']:>11} "
            f"{r['full_value']:>15} {r['seconds']:>10.2f} {full_s:>8}",
            flush=True,
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
