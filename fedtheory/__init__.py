"""fedtheory: check federated-learning theory against experiment.

Layers (see docs/ARCHITECTURE.md): ``problems``, ``availability`` and ``markov`` are shared
foundations; ``bounds`` holds the theorems; ``optim`` the convex weight programs; ``sim``
the vectorised simulator; the top-level ``validation`` package compares them.
"""

__version__ = "0.1.0"
