"""fedtheory: check federated-learning theory against experiment.

Layers (see docs/ARCHITECTURE.md): ``problems``, ``availability`` and ``markov`` are shared
foundations; ``bounds`` holds the theorems; ``optim`` the convex weight programs; ``sim``
the vectorised simulator; the top-level ``validation`` package compares them.
"""

from fedtheory.threads import prefer_passive_waiting

__version__ = "0.1.0"

prefer_passive_waiting()  # before torch loads OpenMP: no spin-waiting on shared cores
