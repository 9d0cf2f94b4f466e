"""E3CS selection: batched replicates against one replicate at a time, and the comparator's
closed form against its LP, measured side by side in one run.

Run from the repository root: ``python benchmarks/bench_selection.py [--replicates 64]``.
The instance is the paper's (E3CS §VI: K = 100, k = 20, four classes of success rates).
torch uses ``--threads`` intra-op threads (default 1: on a shared 2-core machine the
per-round tensors are small and more threads only add synchronisation).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from fedtheory import rng
from fedtheory.availability import Bernoulli
from fedtheory.optim.e3cs import best_fixed_allocation, best_fixed_allocation_lp
from fedtheory.sim import E3CS, run_selection


def paper_style_e3cs(x: np.ndarray, k: int, eta: float, seed: int) -> np.ndarray:
    """One replicate at a time, ProbAlloc in plain Python (Alg. 2 read literally, linear
    weights) and ``torch.multinomial`` per round, as the paper describes. Returns CEP [R]."""
    reps, rounds, num_clients = x.shape
    cep = np.zeros(reps)
    for r in range(reps):
        w = [1.0] * num_clients
        for t in range(rounds):
            total = sum(w)
            if k * max(w) / total <= 1:
                p, capped = [k * wi / total for wi in w], set()
            else:
                ws = sorted(w, reverse=True)
                for m in range(num_clients):
                    alpha = sum(ws[m:]) / (k - m)
                    if ws[m] <= alpha:
                        break
                capped = {i for i in range(num_clients) if w[i] > alpha}
                w_cap = [min(wi, alpha) for wi in w]
                p = [k * wc / sum(w_cap) for wc in w_cap]
            gen = rng.torch_generator(seed, t, rng.SELECTION)
            chosen = torch.multinomial(torch.tensor(p), k, replacement=False, generator=gen)
            for i in chosen.tolist():
                if x[r, t, i]:
                    cep[r] += 1
                    if i not in capped:
                        w[i] *= math.exp(k * eta / num_clients / p[i])
    return cep


def timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicates", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    K, k, R, T = 100, 20, args.replicates, args.rounds
    rho = np.repeat([0.1, 0.3, 0.6, 0.9], K // 4)
    x = Bernoulli(rho).sample(T, replicates=R, seed=0)
    selector = E3CS(k, sigma=0.0, eta=0.5, sampler="successive")

    batched, t_batched = timed(run_selection, selector, x)
    _, t_sequential = timed(lambda: [run_selection(selector, x[r : r + 1]) for r in range(R)])
    _, t_paper = timed(paper_style_e3cs, x.numpy(), k, 0.5, 0)
    print(f"E3CS, K={K}, k={k}, T={T}, R={R} replicates (successive sampler)")
    print(f"  batched over replicates      {t_batched:8.3f} s")
    ratio = t_sequential / t_batched
    print(f"  same code, one replicate     {t_sequential:8.3f} s  ratio {ratio:6.1f}x")
    print(f"  paper style (plain Python)   {t_paper:8.3f} s  ratio {t_paper / t_batched:6.1f}x")
    print(f"  mean CEP (batched)           {batched.cep[:, -1].mean():8.1f}")

    xs = x.numpy().astype(float)
    closed, t_closed = timed(best_fixed_allocation, xs, k, 0.05)
    lp, t_lp = timed(best_fixed_allocation_lp, xs, k, 0.05)
    gap = np.max(np.abs(closed.cep - lp.cep) / closed.cep)
    print(f"best fixed allocation, {R} success matrices [{T}, {K}], sigma = 0.05")
    print(f"  closed form                  {t_closed:8.4f} s")
    print(f"  cvxpy LP (DPP re-solves)     {t_lp:8.4f} s  ratio {t_lp / t_closed:6.1f}x")
    print(f"  largest relative difference  {gap:8.1e}")


if __name__ == "__main__":
    main()
