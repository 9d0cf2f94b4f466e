"""Tightness search: the fraction of the proved supremum that the default budget reaches,
for the global search (CMA-ES, then Nelder-Mead) next to the earlier local search
(hypothesis, then Nelder-Mead), with the wall time of each, in one run.

Run from the repository root: ``python benchmarks/bench_tightness.py [--seeds 10]
[--budget 400] [--local-budget 300]`` (the local search at the default budget it had).
For every family of ``fedtheory.tightness.FAMILIES`` with a proved
supremum (CA-Fed Theorems 1 and 3, TV vs chi-square) and every seed it prints the worst
ratio over the supremum reached by each method and the seconds it took (imports and the
first evaluation are done before the clock starts), then the smallest fraction and the
total time per method. Target: every fraction of the global search at least 0.99.
"""

from __future__ import annotations

import argparse
import time

from fedtheory.tightness import DEFAULT_BUDGET, FAMILIES, search

METHODS = ("global", "local")
LOCAL_BUDGET = 300
"""The default budget of the local search when it was the only one."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..SEEDS-1 (default 10)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="global search")
    parser.add_argument("--local-budget", type=int, default=LOCAL_BUDGET, help="local search")
    args = parser.parse_args()
    keys = [key for key, family in FAMILIES.items() if family.supremum is not None]
    for key in keys:  # warm up: imports (cma, scipy, hypothesis, torch) off the clock
        for method in METHODS:
            search(FAMILIES[key], budget=10, seed=0, method=method)
    budgets = {"global": args.budget, "local": args.local_budget}
    print(f"budgets {budgets}, seeds 0-{args.seeds - 1}")
    print(f"{'family':28s} {'seed':>4s}  " + "  ".join(f"{m + ' reached':>15s} {'s':>6s}"
                                                        for m in METHODS))  # fmt: skip
    worst = {m: 1.0 for m in METHODS}
    total = {m: 0.0 for m in METHODS}
    for key in keys:
        for seed in range(args.seeds):
            cells = []
            for method in METHODS:
                start = time.perf_counter()
                result = search(FAMILIES[key], budget=budgets[method], seed=seed, method=method)
                seconds = time.perf_counter() - start
                worst[method] = min(worst[method], result.reached)
                total[method] += seconds
                cells.append(f"{result.reached:15.6f} {seconds:6.2f}")
            print(f"{key:28s} {seed:4d}  " + "  ".join(cells))
    for method in METHODS:
        print(
            f"{method}: smallest fraction of the proved supremum {worst[method]:.6f}, "
            f"total {total[method]:.1f} s"
        )


if __name__ == "__main__":
    main()
