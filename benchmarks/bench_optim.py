"""Time CA-Fed's aggregation-weight programs: DPP re-solve against rebuilding the cvxpy
problem, and the KKT water-filling solver against cvxpy, for N in {10, 100, 1000}.

Each size draws ``--instances`` random App. D instances (availability estimates changing
from one instance to the next, as in a run that re-estimates pi every round). Timings are
medians over the instances, all measured in this one process, one after the other:

* ``rebuild``: ``WeightProgram(N, bias=...)`` built anew and solved, per instance;
* ``re-solve``: one program built once, parameters assigned, solved (DPP);
* ``kkt``: :func:`fedtheory.optim.waterfilling_weights` (closed form, bias "none" only).

The ratios rebuild / re-solve and re-solve / kkt are printed, with the largest weight
difference between cvxpy and KKT as a sanity check.

    python benchmarks/bench_optim.py [--instances 5] [--sizes 10 100 1000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from fedtheory.optim import SOLVER, WeightInstance, WeightProgram, waterfilling_weights


def instances(n: int, count: int, bias: str, seed: int = 0) -> list[WeightInstance]:
    rng = np.random.default_rng(seed)
    alpha = rng.dirichlet(np.ones(n))
    sigma2 = rng.uniform(0.5, 2.0, n)
    out = []
    for _ in range(count):
        pi = rng.uniform(0.05, 1.0, n)
        out.append(
            WeightInstance(
                sigma2 * pi,
                1.0,
                0.0,
                pi,
                alpha,
                bias=bias,
                bias_weight=0.0 if bias == "none" else 0.1,
            )
        )
    return out


def median_time(fn, items) -> tuple[float, list]:
    times, results = [], []
    for item in items:
        start = time.perf_counter()
        results.append(fn(item))
        times.append(time.perf_counter() - start)
    return statistics.median(times), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    args = parser.parse_args()
    print(f"solver {SOLVER}; medians over {args.instances} instances per size")
    header = f"{'N':>6} {'bias':>5} {'rebuild s':>10} {'re-solve s':>11} {'rebuild/re-solve':>17}"
    print(header + f" {'kkt s':>10} {'re-solve/kkt':>13} {'max|q_cvx-q_kkt|':>17}")
    for n in args.sizes:
        for bias in ("none", "chi2"):
            items = instances(n, args.instances, bias)
            prog = WeightProgram(n, bias=bias)
            prog.solve(items[0])  # first solve compiles the DPP parameter map
            t_re, sols = median_time(prog.solve, items)
            t_build, _ = median_time(
                lambda i, n=n, b=bias: WeightProgram(n, bias=b).solve(i), items
            )
            line = f"{n:>6} {bias:>5} {t_build:>10.4f} {t_re:>11.4f} {t_build / t_re:>17.1f}"
            if bias == "none":
                t_kkt, kkts = median_time(waterfilling_weights, items)
                err = max(np.abs(s.q - k.q).max() for s, k in zip(sols, kkts, strict=True))
                line += f" {t_kkt:>10.2e} {t_re / t_kkt:>13.0f} {err:>17.1e}"
            print(line)


if __name__ == "__main__":
    main()
