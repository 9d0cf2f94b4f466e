r"""Counter-based randomness: the random numbers of round ``t`` are a pure function of
``(seed, t, stream)``, so a run restarted at round ``t`` reproduces the remaining rounds.
No global random state is read or written anywhere in fedtheory.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.constraints import Integer, declare

# Distinct streams keep the randomness of independent parts apart.
AVAILABILITY, INITIAL_STATE, GRADIENT_NOISE, SELECTION, DATA = range(5)
POPULATION = 100
"""Stream of a population's fixed parameters (``availability.base.population_rng``), drawn
once at round 0; kept apart from the per-round streams above."""


@declare("seed", "t", stream=Integer(0))
def numpy_rng(seed: int, t: int, stream: int) -> np.random.Generator:
    """Generator for round ``t`` of ``stream``; independent across (seed, t, stream)."""
    return np.random.default_rng(np.random.SeedSequence([seed, stream, t]))


@declare("seed", "t", "device", stream=Integer(0))
def torch_generator(
    seed: int, t: int, stream: int, device: torch.device | str | None = None
) -> torch.Generator:
    """torch.Generator on ``device`` (default CPU) for round ``t`` of ``stream``, seeded
    from ``(seed, t, stream)``: CUDA's generator (Philox) gives other numbers than the
    CPU's (Mersenne twister) from the same seed, with the same law."""
    state = np.random.SeedSequence([seed, stream, t]).generate_state(1, dtype=np.uint64)[0]
    gen = torch.Generator() if device is None else torch.Generator(device=device)
    return gen.manual_seed(int(state) & 0x7FFF_FFFF_FFFF_FFFF)
