"""Time vectorised availability sampling against a plain numpy loop over clients.

Sizes (default): 10^5 clients x 10^3 rounds x 8 replicates for Bernoulli and two-state
Markov availability. The vectorised path draws one ``[R, N]`` block per round from the
round's counter-based generator (``fedtheory.rng``), so the whole ``[R, T, N]`` mask
(800 MB of booleans) is produced in one call; it fits in memory, so no chunking is needed.

The reference is the readable implementation: one generator per client, Bernoulli draws
``[R, T]`` per client, and for Markov a loop over rounds per client (vectorised over
replicates only). The Markov loop is timed on ``--loop-clients`` clients and scaled
linearly to all clients (its cost per client is constant); the Bernoulli loop runs on all
clients unless ``--loop-clients`` is given. Both sides run in this one process, one after
the other, and the ratio is printed.

    python benchmarks/bench_availability.py [--clients 100000 --rounds 1000 --replicates 8]

``--horizon`` instead times the horizon scaling: ``N = 10^4`` clients, 16 replicates,
``T = 1k, 2k, 4k, 8k`` rounds sampled in the chunks ``simulate`` uses (one ``sample(chunk,
start=t0)`` call per chunk), Markov next to Bernoulli, and prints the ratio of the 8k to
the 1k time for each (linear scaling gives 8).

    python benchmarks/bench_availability.py --horizon
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fedtheory.availability import Bernoulli, TwoStateMarkov
from fedtheory.sim.runner import CHUNK_ELEMENTS


def loop_bernoulli(p: np.ndarray, rounds: int, replicates: int, seed: int) -> np.ndarray:
    """Reference: one generator and one ``[R, T]`` draw per client, ``[N, R, T]``."""
    out = np.empty((p.size, replicates, rounds), dtype=bool)
    for k in range(p.size):
        gen = np.random.default_rng(np.random.SeedSequence([seed, k]))
        out[k] = gen.random((replicates, rounds)) < p[k]
    return out


def loop_markov(proc: TwoStateMarkov, clients: int, rounds: int, replicates: int, seed: int):
    """Reference: per client, a loop over rounds vectorised over replicates, ``[N, R, T]``."""
    out = np.empty((clients, replicates, rounds), dtype=bool)
    for k in range(clients):
        gen = np.random.default_rng(np.random.SeedSequence([seed, k]))
        state = gen.random(replicates) < proc.pi[k]
        for t in range(rounds):
            if t > 0:
                u = gen.random(replicates)
                state = u < np.where(state, proc.p_on_on[k], proc.p_off_on[k])
            out[k, :, t] = state
    return out


def timed(fn, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def chunked(proc, rounds: int, replicates: int) -> None:
    """Sample ``rounds`` rounds in ``simulate``'s chunks (``start = t0`` for each chunk)."""
    chunk = max(1, min(rounds, CHUNK_ELEMENTS // (replicates * proc.num_clients)))
    for t0 in range(0, rounds, chunk):
        proc.sample(min(chunk, rounds - t0), replicates=replicates, seed=0, start=t0)


def horizon_scaling(clients: int, replicates: int) -> None:
    """Seconds to sample T = 1k, 2k, 4k, 8k rounds in chunks, Markov next to Bernoulli."""
    gen = np.random.default_rng(0)
    pi, lam = gen.uniform(0.05, 0.95, clients), gen.uniform(0.0, 0.9, clients)
    horizons = (1_000, 2_000, 4_000, 8_000)
    print(f"horizon scaling: {clients} clients x {replicates} replicates, simulate's chunks")
    TwoStateMarkov(pi[:2], lam[:2]).sample(2)  # compile the bridge kernel outside the timing
    for name, proc in (("Bernoulli", Bernoulli(pi)), ("Markov", TwoStateMarkov(pi, lam))):
        times = [timed(chunked, proc, T, replicates)[0] for T in horizons]
        cells = " | ".join(f"T={T}: {s:6.2f} s" for T, s in zip(horizons, times, strict=True))
        print(f"{name:10s} {cells} | 8k / 1k = {times[-1] / times[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1_000)
    parser.add_argument("--replicates", type=int, default=8)
    parser.add_argument(
        "--loop-clients",
        type=int,
        default=None,
        help="clients timed in the loop reference (Markov default: 1000)",
    )
    parser.add_argument("--horizon", action="store_true", help="time the horizon scaling only")
    args = parser.parse_args()
    if args.horizon:
        horizon_scaling(10_000, 16)
        return
    n, T, R = args.clients, args.rounds, args.replicates
    gen = np.random.default_rng(0)
    pi = gen.uniform(0.05, 0.95, n)
    lam = gen.uniform(0.0, 0.9, n)
    print(
        f"sizes: {n} clients x {T} rounds x {R} replicates "
        f"(mask {n * T * R / 2**30:.2f} GiB of booleans)"
    )

    fast, mask = timed(lambda: Bernoulli(pi).sample(T, replicates=R, seed=0))
    freq = np.count_nonzero(mask.numpy()) / mask.numel()
    del mask
    m_b = n if args.loop_clients is None else min(args.loop_clients, n)
    slow, _ = timed(loop_bernoulli, pi[:m_b], T, R, 0)
    slow *= n / m_b
    print(
        f"Bernoulli  vectorised {fast:8.2f} s | loop over clients {slow:8.2f} s "
        f"(timed on {m_b} clients) | loop / vectorised = {slow / fast:6.1f}x "
        f"| mean availability {freq:.4f} vs {pi.mean():.4f}"
    )

    proc = TwoStateMarkov(pi, lam)
    fast, mask = timed(lambda: proc.sample(T, replicates=R, seed=0))
    freq = np.count_nonzero(mask.numpy()) / mask.numel()
    del mask
    m_m = min(args.loop_clients or 1_000, n)
    slow, _ = timed(loop_markov, proc, m_m, T, R, 0)
    slow *= n / m_m
    print(
        f"Markov     vectorised {fast:8.2f} s | loop over clients {slow:8.2f} s "
        f"(timed on {m_m} clients, scaled x{n / m_m:g}) | loop / vectorised = "
        f"{slow / fast:6.1f}x | mean availability {freq:.4f} vs {pi.mean():.4f}"
    )


if __name__ == "__main__":
    main()
