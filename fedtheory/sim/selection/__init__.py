"""Client selection (E3CS, Huang et al. 2022, and its baselines), one concept in one folder.

- ``allocation``: the math (ProbAlloc, the Exp3 update, fairness-quota schedules);
- ``policies``: selectors with ``init/select/update`` and state ``[R, K]`` (E3CS, FedCS,
  random, power-of-d);
- ``runner``: the model-free bandit runner (regret against the comparators);
- ``fedavg``: FedAvg trained on the selected clients; ``reference``: its plain loop.
"""

from fedtheory.sim.selection.allocation import (
    Allocation,
    exp3_update,
    prob_alloc,
    quota_constant,
    quota_incremental,
)
from fedtheory.sim.selection.fedavg import SelectedFedAvg, SelectedFedAvgState
from fedtheory.sim.selection.policies import E3CS, FedCS, PowD, RandomSelection, Selector
from fedtheory.sim.selection.runner import SelectionRecord, run_selection

__all__ = [
    "Allocation",
    "E3CS",
    "FedCS",
    "PowD",
    "RandomSelection",
    "SelectedFedAvg",
    "SelectedFedAvgState",
    "SelectionRecord",
    "Selector",
    "exp3_update",
    "prob_alloc",
    "quota_constant",
    "quota_incremental",
    "run_selection",
]
