"""Every public callable of the finished layers rejects a bad type and an out-of-range value
with ``ParameterError`` naming the parameter (STYLE.md, scikit-learn habit).

``CONTRACT`` maps public callables (``module:name``) to valid keyword arguments and the two
bad calls; ``EXEMPT`` lists the public callables that take no user input to check (result
records, protocols, argument-free checks), each with the reason. A public callable added to
one of ``MODULES`` that declares its parameters (``@declare``) needs no entry: the generated
fuzz of ``tests/test_fuzz_public_api.py`` is its contract; one that does not, without an
entry in either table, fails :func:`test_every_public_callable_has_a_contract_entry`.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import hypothesis
import numpy as np
import pandas as pd
import pytest
import sympy
import torch

from fedtheory import papers, tightness
from fedtheory.availability import (
    AlternatingBlocks,
    Bernoulli,
    BoundedDropout,
    Clustered,
    Cyclic,
    Diurnal,
    TimeVaryingParticipation,
    TraceReplay,
    TwoStateMarkov,
    base,
    builders,
    estimators,
    sampling,
)
from fedtheory.bounds import (
    CATALOGUE,
    catalogue,
    divergences,
)
from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.judgement import Judge, judge
from fedtheory.bounds.symbols import NOTATION, add_notation, keyword_of, notation_of, symbol
from fedtheory.budget import ENV
from fedtheory.constraints import Array, Bool, Instance, constraints_of
from fedtheory.data import (
    FederatedDataset,
    cafed_clustered,
    dirichlet_label_split,
    gaussian_linear,
    load_digits,
    load_digits_federated,
    one_label_per_client_split,
    partition,
    primary_label_split,
)
from fedtheory.device import check_device
from fedtheory.errors import FedTheoryError, ParameterError
from fedtheory.markov import (
    check_primitive_chain,
    fedau_two_state,
    kron_chain,
    lambda_feasible_range,
    mixing_constants,
    mixing_rate,
    product_mixing_constants,
    second_eigenvalue_modulus,
    stationary_distribution,
    two_state_matrix,
    two_state_mixing_constants,
    two_state_parameters,
    two_state_transitions,
)
from fedtheory.optim import e3cs as optim_e3cs
from fedtheory.problems import (
    Ball,
    LeastSquaresProblem,
    LogisticRegressionProblem,
    MLPProblem,
    MultinomialLogisticProblem,
    QuadraticForms,
    QuadraticProblem,
    max_quadratic_on_ball,
)
from fedtheory.problems import ball as ball_module
from fedtheory.problems.base import check_points
from fedtheory.sim import (
    MIFA,
    AverageAll,
    AverageParticipating,
    Constant,
    ExponentialDecay,
    FedAU,
    FedAvg,
    FedVARP,
    FixedWeights,
    InverseTime,
    LocalTraining,
    PerStep,
    average_all,
    average_participating,
    evaluate_metrics,
    fedau_init,
    fedau_update,
    fedau_weights,
    footprint,
    local_sgd,
    project_ball,
    simulate,
    unbiased_weights,
)
from fedtheory.sim import reference as sim_reference
from fedtheory.sim.divergence import algorithm_label, non_finite_metric, non_finite_state
from fedtheory.sim.sampled import SampledFedAvg, run_sampled
from fedtheory.sim.samplers import (
    SampleBernoulli,
    SampleUniform,
    SampleWithoutReplacement,
    SampleWithReplacement,
)
from fedtheory.sim.selection import allocation as selection
from fedtheory.sim.selection import reference as selection_reference
from fedtheory.sim.selection import runner as selection_runner
from fedtheory.sim.selection.fedavg import SelectedFedAvg
from fedtheory.sim.selection.policies import E3CS, FedCS, PowD, RandomSelection
from fedtheory.sweep import design as sweep_design
from fedtheory.sweep import executor as sweep_executor
from fedtheory.sweep import runner as sweep_runner
from fedtheory.sweep import store as sweep_store
from fedtheory.sweep import summary as sweep_summary
from fedtheory.sweep import targets as sweep_targets
from fedtheory.testing import (
    assert_equal,
    assert_near_zero,
    assert_upper_bound,
    check_theorem,
    strategies,
    theorem_values,
)
from fedtheory.validation.custom import load_checks, theorem_check
from tests.paper_entries import (
    PAPER_KEYS,
    Lazy,
    entry_papers,
    paper_of_module,
    registered,
    resolve_case,
)

ERRATA_MODULES = ("fedtheory.validation.errata.record", "fedtheory.validation.errata.catalogue",
                  *(m for paper in papers.PAPERS.values() for m in paper.errata))  # fmt: skip
"""The modules of the errata checks: the machinery's (``fedtheory.validation.errata``) and
each registered paper's (its record's ``errata``)."""


def _finished_modules() -> list[str]:
    """The finished layers: every module of seven packages (a new module is included), the
    Markov tools, the E3CS selection modules of ``sim``, the E3CS comparators and the
    bring-your-own-theorem builder of ``validation`` and the sweeps."""
    names = [
        "fedtheory.markov",
        "fedtheory.optim.e3cs",
        "fedtheory.validation.custom",
        *ERRATA_MODULES,
        "fedtheory.device",
    ]
    for package in ("availability", "bounds", "problems", "data", "tightness", "testing"):
        path = importlib.import_module(f"fedtheory.{package}").__path__
        names += [f"fedtheory.{package}.{m.name}" for m in pkgutil.iter_modules(path)]
    selection = importlib.import_module("fedtheory.sim.selection").__path__
    names += [f"fedtheory.sim.selection.{m.name}" for m in pkgutil.iter_modules(selection)]
    sweep = importlib.import_module("fedtheory.sweep").__path__
    names += [f"fedtheory.sweep.{m.name}" for m in pkgutil.iter_modules(sweep)]
    return [*names, *REEXPORTS, "fedtheory.sim.reference", "fedtheory.sim.footprint",
            "fedtheory.sim.divergence", "fedtheory.papers"]  # fmt: skip


REEXPORTS = ("fedtheory.sim",)
"""Packages whose ``__all__`` re-exports callables defined in their modules: those are keyed
by the module that defines them (``fedtheory.sim.fedavg:FedAvg``)."""


MODULES = _finished_modules()

# A paper's modules and names, resolved once the table is built (``resolve_contract``) while
# the paper is registered: its entries are marked with the paper (``contract_keys``) and
# left out of a copy of the repository without it.
cafed = Lazy("fedtheory.bounds.cafed")
e3cs = Lazy("fedtheory.bounds.e3cs")
fedau = Lazy("fedtheory.bounds.fedau")
fedlaavg = Lazy("fedtheory.bounds.fedlaavg")
mimic = Lazy("fedtheory.bounds.mimic")
tightness_cafed = Lazy("fedtheory.tightness.cafed")
tightness_e3cs = Lazy("fedtheory.tightness.e3cs")
tightness_fedlaavg = Lazy("fedtheory.tightness.fedlaavg")
errata = Lazy("fedtheory.validation.errata")
CaFed = Lazy("fedtheory.sim.cafed").CaFed
FedLaAvg = Lazy("fedtheory.sim.fedlaavg").FedLaAvg
MimiC = Lazy("fedtheory.sim.mimic").MimiC
AdaFedWeights = Lazy("fedtheory.sim.cafed").AdaFedWeights
F3astWeights = Lazy("fedtheory.sim.cafed").F3astWeights
absent_longest = Lazy("fedtheory.sim.fedlaavg").absent_longest


def public_callables(module_name: str) -> set[str]:
    """``module:name`` of the callables in ``__all__``, else of the public callables defined
    in the module itself (not imported)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == module_name
        ]
    home = {
        n: getattr(getattr(module, n), "__module__", module_name) if module_name in REEXPORTS
        else module_name
        for n in names
    }  # fmt: skip
    return {
        f"{home[n]}:{n}"
        for n in names
        if callable(getattr(module, n)) and not inspect.ismodule(getattr(module, n))
    }


class Case(NamedTuple):
    call: Any  # the callable, called with keywords
    valid: dict  # keyword arguments of a valid call
    bad_type: tuple[str, Any]  # (parameter, value of a wrong type)
    out_of_range: tuple[str, Any]  # (parameter, value of the right type outside the domain)


# --- valid instances -----------------------------------------------------------------------
P2 = two_state_matrix(0.5, 0.2)
STRING = "not a number"
SUCCESS = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])  # [T, K]
DATA = gaussian_linear(3, 2, 6, seed=0)
LABELLED = cafed_clustered(4, 3, 10, seed=0)
CLASSES = load_digits_federated(4, seed=0)
LABELS = np.repeat(np.arange(3), 8)
QUAD = QuadraticProblem.random(3, 2, seed=0)
FORMS = QuadraticForms(np.eye(2)[None], np.zeros((1, 2)), np.zeros(1))
BALL = Ball(np.zeros(2), 1.0)
COUNTS = estimators.update(estimators.init((1, 2)), np.ones((1, 2), dtype=bool))
LOG_W = torch.zeros(2, 3, dtype=torch.float64)
ALLOC = selection.prob_alloc(LOG_W, 1, 0.0)
SELECTED = torch.tensor([[True, False, False], [False, True, False]])
SELECTOR = RandomSelection(1)
MASK_TRACE = [[0], [1, 2]]
PROG = dict(sigma2=[1.0], pi=[0.5], Q=1.0, E=2, M=2, L=1.0, Gamma=0.1, G=1.0, D=1.0, H=1.0,
            lam=0.9, C_P=1.0, T_P=0, dist0_sq=1.0)  # fmt: skip
COR4 = dict(p_min=0.5, T=10, L=1.0, I=1, F_gap=1.0, N=2, Q=1.0, delta2=1.0, sigma2=1.0)
PROBLEM_KW = dict(data=DATA, ridge=0.1)
FEDAVG = SelectedFedAvg(SELECTOR, lr=0.1)
P3 = [0.5, 0.25, 0.25]


def _m(module: str, name: str) -> str:
    return f"{module}:{name}"


MK = "fedtheory.markov"
AV = "fedtheory.availability"
BD = "fedtheory.bounds"
ER = "fedtheory.validation.errata"
VP = "fedtheory.validation.papers"
PR = "fedtheory.problems"
DT = "fedtheory.data"
SM = "fedtheory.sim"
TG = "fedtheory.tightness"

_KAPPA, _DIST = sympy.symbols("kappa D", positive=True)
USER_BOUND = Theorem(
    "user.contract",
    title="A user's bound",
    reference="made up for the contract: no paper's",
    kind="upper bound",
    terms={"bound": _KAPPA**2 * _DIST},
    conditions=[Condition("kappa >= 1", _KAPPA, ">=", 1)],
    statement="x <= kappa^2 D",
    meanings={"kappa": "a condition number", "D": "a distance"},
)
"""A user's theorem (the entry points ``theorem_values``, ``check_theorem`` and
``theorem_check`` are contracted on it, so that a copy without any paper checks them)."""
USER_EXACT = Theorem(
    "user.exact",
    title="A user's identity",
    reference="made up for the contract: no paper's",
    kind="exact",
    terms={"value": _DIST},
    statement="x = D",
    meanings={"D": "a distance"},
)
"""A user's exact statement (a tightness family refuses it: it bounds nothing)."""


TV_FAMILY = tightness.FAMILIES["divergences.tv_chi_square"]
SAVED_SEARCH = {
    "key": "divergences.tv_chi_square",
    "scale": 1.0,
    "seed": 0,
    "worst": {"integers": {"N": 2}, "reals": {"a[0]": 0.6, "a[1]": 0.4, "b[0]": 1.0, "b[1]": 1.0}},
}

CONTRACT: dict[str, Case] = {
    # --- device ------------------------------------------------------------------------------
    _m("fedtheory.device", "check_device"): Case(
        check_device,
        {"device": "cpu", "name": "device", "owner": "f"},
        ("device", 1.5),
        ("device", "tpu"),
    ),
    # --- markov ------------------------------------------------------------------------------
    _m(MK, "check_primitive_chain"): Case(
        check_primitive_chain, {"P": P2}, ("P", STRING), ("P", [[2.0, -1.0], [0.5, 0.5]])
    ),
    _m(MK, "fedau_two_state"): Case(fedau_two_state, {"p": 0.5}, ("p", STRING), ("p", 1.5)),
    _m(MK, "kron_chain"): Case(
        kron_chain,
        {"matrices": [P2, P2]},
        ("matrices", STRING),
        ("matrices", [[[2.0, -1.0], [0.5, 0.5]]]),
    ),
    _m(MK, "lambda_feasible_range"): Case(
        lambda_feasible_range, {"pi": 0.5}, ("pi", STRING), ("pi", 1.5)
    ),
    _m(MK, "mixing_constants"): Case(mixing_constants, {"P": P2}, ("rate", STRING), ("rate", 1.5)),
    _m(MK, "mixing_rate"): Case(mixing_rate, {"P": P2}, ("P", STRING), ("P", -P2)),
    _m(MK, "product_mixing_constants"): Case(
        product_mixing_constants, {"pi": [0.5], "lam": [0.2]}, ("lam", STRING), ("lam", [1.5])
    ),
    _m(MK, "second_eigenvalue_modulus"): Case(
        second_eigenvalue_modulus, {"P": P2}, ("P", STRING), ("P", -P2)
    ),
    _m(MK, "stationary_distribution"): Case(
        stationary_distribution, {"P": P2}, ("P", STRING), ("P", -P2)
    ),
    _m(MK, "two_state_matrix"): Case(
        two_state_matrix, {"pi": 0.5, "lam": 0.2}, ("pi", STRING), ("lam", 1.5)
    ),
    _m(MK, "two_state_mixing_constants"): Case(
        two_state_mixing_constants, {"pi": 0.5, "lam": 0.2}, ("pi", STRING), ("pi", 1.5)
    ),
    _m(MK, "two_state_parameters"): Case(
        two_state_parameters,
        {"p_on_on": 0.5, "p_off_on": 0.5},
        ("p_on_on", STRING),
        ("p_off_on", 1.5),
    ),
    _m(MK, "two_state_transitions"): Case(
        two_state_transitions, {"pi": 0.5, "lam": 0.2}, ("lam", STRING), ("pi", -0.5)
    ),
    # --- availability -----------------------------------------------------------------------
    _m(f"{AV}.base", "population_rng"): Case(
        base.population_rng, {"seed": 0}, ("seed", STRING), ("seed", -1)
    ),
    _m(f"{AV}.bernoulli", "Bernoulli"): Case(Bernoulli, {"p": [0.5]}, ("p", STRING), ("p", [1.5])),
    _m(f"{AV}.blocks", "AlternatingBlocks"): Case(
        AlternatingBlocks, {"t1": 2, "t2": 1}, ("t1", 1.5), ("t2", 0)
    ),
    _m(f"{AV}.builders", "cafed_population"): Case(
        builders.cafed_population, {}, ("g", STRING), ("nu", 1.5)
    ),
    _m(f"{AV}.builders", "fedau_participation_probabilities"): Case(
        builders.fedau_participation_probabilities,
        {"label_counts": np.ones((3, 2))},
        ("mean", STRING),
        ("minimum", -0.5),
    ),
    _m(f"{AV}.builders", "mimic_static_probabilities"): Case(
        builders.mimic_static_probabilities,
        {"num_clients": 4, "minimum": 0.1},
        ("num_clients", 2.5),
        ("minimum", 1.5),
    ),
    _m(f"{AV}.clusters", "Clustered"): Case(
        Clustered,
        {"base": Bernoulli([0.5, 0.5]), "clusters": [0, 1, 1]},
        ("base", STRING),
        ("clusters", [0, 5]),
    ),
    _m(f"{AV}.cyclic", "Cyclic"): Case(
        Cyclic, {"p": [0.5, 0.5]}, ("period", STRING), ("period", 0)
    ),
    _m(f"{AV}.diurnal", "Diurnal"): Case(
        Diurnal, {"mean": [0.5], "amplitude": [0.2]}, ("amplitude", STRING), ("amplitude", [0.9])
    ),
    _m(f"{AV}.dropout", "BoundedDropout"): Case(
        BoundedDropout, {"tau": [2, 3]}, ("tau", STRING), ("tau", [-1, 3])
    ),
    _m(f"{AV}.estimators", "cafed_code_estimate"): Case(
        estimators.cafed_code_estimate,
        {"state": COUNTS, "pi": 0.5, "lam": 0.5},
        ("horizon", STRING),
        ("pi", 1.5),
    ),
    _m(f"{AV}.estimators", "cafed_code_lambda_limit"): Case(
        estimators.cafed_code_lambda_limit,
        {"pi": [0.5], "lam": [0.2]},
        ("pi", STRING),
        ("lam", [1.5]),
    ),
    _m(f"{AV}.estimators", "estimate"): Case(
        estimators.estimate, {"state": COUNTS}, ("state", STRING), ("prior", STRING)
    ),
    _m(f"{AV}.estimators", "init"): Case(
        estimators.init, {"shape": (1, 2)}, ("shape", STRING), ("shape", (0, 2))
    ),
    _m(f"{AV}.estimators", "update"): Case(
        estimators.update,
        {"state": COUNTS, "mask_t": np.ones((1, 2), dtype=bool)},
        ("mask_t", STRING),
        ("mask_t", np.ones((1, 3), dtype=bool)),
    ),
    _m(f"{AV}.estimators", "BetaPrior"): Case(
        estimators.BetaPrior, {}, ("on", STRING), ("on", -1.0)
    ),
    _m(f"{AV}.estimators", "CodePrior"): Case(
        estimators.CodePrior, {}, ("horizon", STRING), ("horizon", 0.0)
    ),
    _m(f"{AV}.markov", "TwoStateMarkov"): Case(
        TwoStateMarkov, {"pi": [0.5], "lam": [0.2]}, ("pi", STRING), ("lam", [1.5])
    ),
    # sampling allocates [R, T, N]: checked against the memory budget (memory_cap below)
    _m(f"{AV}.bernoulli", "Bernoulli.sample"): Case(
        Bernoulli([0.5, 0.5]).sample,
        {"rounds": 3, "replicates": 2, "seed": 0},
        ("rounds", 2.5),
        ("replicates", 0),
    ),  # fmt: skip
    _m(f"{AV}.markov", "TwoStateMarkov.sample"): Case(
        TwoStateMarkov([0.5, 0.5], [0.2, 0.2]).sample,
        {"rounds": 3, "replicates": 2, "start": 5},
        ("start", STRING),
        ("rounds", -1),
    ),  # fmt: skip
    _m(f"{AV}.sampling", "capped_inclusion_probabilities"): Case(
        sampling.capped_inclusion_probabilities,
        {"weights": [[1.0, 2.0]], "m": 1},
        ("weights", STRING),
        ("m", 3),
    ),
    _m(f"{AV}.sampling", "successive_inclusion_probabilities"): Case(
        sampling.successive_inclusion_probabilities,
        {"weights": [1.0, 2.0], "m": 1},
        ("m", 1.5),
        ("weights", [1.0, -2.0]),
    ),
    _m(f"{AV}.sampling", "successive_sample"): Case(
        sampling.successive_sample,
        {"weights": [[1.0, 2.0]], "m": 1, "generator": np.random.default_rng(0)},
        ("generator", 0),
        ("m", 0),
    ),
    _m(f"{AV}.sampling", "systematic_sample"): Case(
        sampling.systematic_sample,
        {"inclusion": [[0.5, 0.5]], "m": 1, "generator": np.random.default_rng(0)},
        ("generator", 0),
        ("inclusion", [[1.5, -0.5]]),
    ),
    _m(f"{AV}.time_varying", "TimeVaryingParticipation"): Case(
        TimeVaryingParticipation,
        {"num_clients": 4, "ratio": 0.5},
        ("sampler", 3),
        ("ratio", 1.5),
    ),
    _m(f"{AV}.trace", "TraceReplay"): Case(
        TraceReplay, {"trace": MASK_TRACE, "num_clients": 3}, ("cyclic", STRING), ("num_clients", 0)
    ),
    _m(f"{AV}.trace", "ids_to_mask"): Case(
        base_ids := __import__("fedtheory.availability.trace", fromlist=["x"]).ids_to_mask,
        {"trace": MASK_TRACE, "num_clients": 3, "owner": "test"},
        ("num_clients", STRING),
        ("trace", [[5]]),
    ),
}

CONTRACT |= {
    # --- bounds -----------------------------------------------------------------------------
    _m(f"{BD}.base", "Theorem"): Case(
        Theorem,
        {"key": "t", "title": "T", "reference": "r", "kind": "upper bound", "terms": {}},
        ("kind", 3),
        ("kind", "loose"),
    ),
    _m(f"{BD}.catalogue", "register"): Case(
        register,
        {"theorem": next(iter(CATALOGUE.values()))},
        ("theorem", STRING),
        ("theorem", next(iter(CATALOGUE.values()))),  # registered by the valid call: a duplicate
    ),
    _m(f"{BD}.cafed", "decomposition"): Case(
        cafed.decomposition,
        {"problem": QUAD, "w": np.zeros(2), "p": [0.5, 0.25, 0.25]},
        ("w", STRING),
        ("p", [0.5, 0.6, -0.1]),
    ),
    _m(f"{BD}.cafed", "decomposition_constants"): Case(
        cafed.decomposition_constants,
        {"problem": QUAD, "w": np.zeros(2), "p": [0.5, 0.25, 0.25]},
        ("w", STRING),
        ("p", [0.5, 0.6, -0.1]),
    ),
    _m(f"{BD}.cafed", "lemma1_constants"): Case(
        cafed.lemma1_constants,
        {"D": 1.0, "sigma2": [1.0], "diameter": 1.0},
        ("D", STRING),
        ("sigma2", [-1.0]),
    ),
    _m(f"{BD}.cafed", "theorem2_aggregates"): Case(
        cafed.theorem2_aggregates,
        {"eta": np.full(11, 0.01), "lam": 0.5, "C_P": 1.0, "T_P": 0, "H": 1.0},
        ("T_P", 1.5),
        ("lam", 1.5),
    ),
    _m(f"{BD}.cafed", "theorem2_program"): Case(
        cafed.theorem2_program, {"eta": np.full(11, 0.01), **PROG}, ("E", STRING), ("pi", [1.5])
    ),
    _m(f"{BD}.divergences", "chi_square"): Case(
        divergences.chi_square,
        {"alpha": [0.5, 0.5], "p": [0.5, 0.5]},
        ("p", STRING),
        ("p", [1.5, -0.5]),
    ),
    _m(f"{BD}.divergences", "total_variation"): Case(
        divergences.total_variation,
        {"alpha": [0.5, 0.5], "p": [0.5, 0.5]},
        ("alpha", STRING),
        ("alpha", [1.5, -0.5]),
    ),
    _m(f"{BD}.divergences", "effective_weights"): Case(
        divergences.effective_weights,
        {"q": [1.0, 1.0], "pi": [0.5, 0.5]},
        ("q", STRING),
        ("pi", [0.5, 1.5]),
    ),
    _m(f"{BD}.divergences", "chi_square_max_ratio_bound"): Case(
        divergences.chi_square_max_ratio_bound,
        {"alpha": [0.5, 0.5], "p": [0.5, 0.5]},
        ("p", STRING),
        ("alpha", [0.5, 0.6]),
    ),
    _m(f"{BD}.cafed", "lookback_sum"): Case(
        cafed.lookback_sum,
        {"eta": np.full(4, 0.1), "J": [1, 1, 2]},
        ("eta", STRING),
        ("J", [2, 1, 1]),
    ),
    _m(f"{BD}.e3cs", "claim1_allocation"): Case(
        e3cs.claim1_allocation,
        {"w": [1.0, 2.0, 3.0], "k": 2, "sigma": 0.1},
        ("k", 2.5),
        ("sigma", 0.9),
    ),
    _m(f"{BD}.fedau", "quadratic_descent_step"): Case(
        fedau.quadratic_descent_step,
        {
            "e": np.zeros((2, 1)),
            "x": [1.0],
            "L": 1.0,
            "gamma": 0.01,
            "eta": 1.0,
            "I": 2,
            "sigma2": 1.0,
            "p": [0.5, 0.5],
            "omega": [2.0, 2.0],
            "phi": [0.5, 0.5],
        },
        ("I", 2.5),
        ("phi", [0.7, 0.7]),
    ),
    _m(f"{VP}.cafed.errata", "cafed_proof_step23"): Case(
        errata.cafed_proof_step23, {"rounds": 10}, ("rounds", STRING), ("rounds", 1)
    ),
    _m(f"{VP}.e3cs.errata", "e3cs_static_regret"): Case(
        errata.e3cs_static_regret,
        {"rounds": 20, "replicates": 2},
        ("rounds", STRING),
        ("replicates", 1),
    ),
    _m(f"{BD}.e3cs", "quota_sum"): Case(
        e3cs.quota_sum, {"sigma": [0.1], "k": 2, "K": 10}, ("k", 2.5), ("sigma", [0.5])
    ),
    _m(f"{VP}.cafed.errata", "cafed_lambda_estimator_limit"): Case(
        errata.cafed_lambda_estimator_limit, {}, ("rounds", STRING), ("replicates", 0)
    ),
    _m(f"{VP}.e3cs.errata", "e3cs_fact8"): Case(
        errata.e3cs_fact8, {}, ("target_exponent", STRING), ("target_exponent", -1.0)
    ),
    _m(f"{VP}.e3cs.errata", "successive_sampling_inclusion"): Case(
        errata.successive_sampling_inclusion, {"p": [0.5, 0.5]}, ("p", STRING), ("p", [0.5, 0.4])
    ),
    _m(f"{VP}.fedlaavg.errata", "fedlaavg_missing_one_over_n"): Case(
        errata.fedlaavg_missing_one_over_n, {}, ("iterations", 2.5), ("iterations", 0)
    ),
    _m(f"{VP}.cafed.errata", "cafed_chi_square_not_convex_in_q"): Case(
        errata.cafed_chi_square_not_convex_in_q, {}, ("pi", STRING), ("pi", [0.5, 1.5, 0.2, 0.1])
    ),
    _m(f"{VP}.cafed.errata", "cafed_convex_in_y_s"): Case(
        errata.cafed_convex_in_y_s, {}, ("B", STRING), ("B", -1.0)
    ),
    _m(f"{VP}.cafed.errata", "cafed_water_filling_needs_equal_A"): Case(
        errata.cafed_water_filling_needs_equal_A, {}, ("B", STRING), ("sigma2", [0.0] * 5)
    ),
    _m(f"{VP}.cafed.errata", "cafed_upsilon_uses_w_star"): Case(
        errata.cafed_upsilon_uses_w_star, {}, ("pi", STRING), ("seed", -1)
    ),
    _m(f"{VP}.cafed.errata", "cafed_theorem2_versus_its_proof"): Case(
        errata.cafed_theorem2_versus_its_proof, {}, ("Gamma", STRING), ("H", 0.0)
    ),
    _m(f"{VP}.cafed.errata", "cafed_theorem2_step_size"): Case(
        errata.cafed_theorem2_step_size, {}, ("L", STRING), ("E", 0)
    ),
    _m(f"{VP}.cafed.errata", "cafed_lemma3_monotone_steps"): Case(
        errata.cafed_lemma3_monotone_steps, {}, ("T", STRING), ("lam", 1.0)
    ),
    _m(f"{VP}.cafed.errata", "cafed_eq21_reversed"): Case(
        errata.cafed_eq21_reversed, {}, ("dim", STRING), ("seed", -1)
    ),
    _m(f"{VP}.cafed.errata", "cafed_code_oracle_minima"): Case(
        errata.cafed_code_oracle_minima, {}, ("clients", STRING), ("clients", 1)
    ),
    _m(f"{VP}.cafed.errata_experiments", "cafed_table1_gap"): Case(
        errata.cafed_table1_gap, {}, ("cafed", STRING), ("cafed", 101.0)
    ),
    _m(f"{VP}.cafed.errata_experiments", "cafed_code_population"): Case(
        errata.cafed_code_population, {}, ("num_clients", STRING), ("num_clients", 4)
    ),
    _m(f"{VP}.cafed.errata_experiments", "cafed_code_optimiser"): Case(
        errata.cafed_code_optimiser, {}, ("lr", STRING), ("lr", 2.0)
    ),
    _m(f"{VP}.e3cs.errata", "e3cs_successive_sampling"): Case(
        errata.e3cs_successive_sampling, {}, ("p", STRING), ("p", [1.5, 0.5])
    ),
    _m(f"{VP}.fedlaavg.errata", "fedlaavg_equal_blocks"): Case(
        errata.fedlaavg_equal_blocks, {}, ("gamma", STRING), ("gamma", 0.6)
    ),
    _m(f"{VP}.fedau.errata", "fedau_step_size_constant"): Case(
        errata.fedau_step_size_constant, {}, ("L", STRING), ("I", 0)
    ),
    _m(f"{VP}.mimic.errata", "mimic_equal_dropout"): Case(
        errata.mimic_equal_dropout, {}, ("rounds", STRING), ("replicates", 0)
    ),
    _m(f"{BD}.fedau", "cutoff_geometric_pmf"): Case(
        fedau.cutoff_geometric_pmf, {"p_n": 0.5, "K_cut": 3}, ("K_cut", 2.5), ("p_n", 1.5)
    ),
    _m(f"{BD}.fedau", "effective_weights"): Case(
        fedau.effective_weights,
        {"omega_n": [1.0, 1.0], "p_n": [0.5, 0.5]},
        ("omega_n", STRING),
        ("p_n", [0.5, 1.5]),
    ),
    _m(f"{BD}.fedau", "weight_error_bound"): Case(
        fedau.weight_error_bound,
        {"p_n": [0.5], "K_cut": 2, "rounds": 10},
        ("rounds", STRING),
        ("p_n", [0.0]),
    ),
    _m(f"{BD}.fedau", "weight_error_measured"): Case(
        fedau.weight_error_measured,
        {"p_n": [0.5], "omega": np.ones((1, 3, 1))},
        ("omega", STRING),
        ("p_n", [1.5]),
    ),
    _m(f"{BD}.fedau", "weight_error_exact"): Case(
        fedau.weight_error_exact,
        {"p_n": 0.5, "K_cut": 2, "rounds": 3},
        ("p_n", STRING),
        ("rounds", 0),
    ),
    _m(f"{BD}.fedau", "corollary4_choices"): Case(
        fedau.corollary4_choices, COR4, ("N", 2.5), ("p_min", 1.5)
    ),
    _m(f"{BD}.fedlaavg", "staleness_bound"): Case(
        fedlaavg.staleness_bound, {"N": 5, "K": 2, "E": 1}, ("E", 0.5), ("K", 6)
    ),
    _m(f"{BD}.mimic", "objective_bias"): Case(
        mimic.objective_bias,
        {"problem": QUAD, "w": np.zeros(2), "mask": np.ones((1, 2, 3), dtype=bool)},
        ("problem", STRING),
        ("eta", [-1.0, 1.0]),
    ),
    _m(f"{BD}.mimic", "lemma6_schedule"): Case(
        mimic.lemma6_schedule, {"a": 1.0, "b": 1.0, "rounds": 3}, ("b", STRING), ("a", 0.0)
    ),
    _m(f"{BD}.symbols", "symbol"): Case(symbol, {"name": "eta"}, ("name", 3), ("name", "no_such")),
    _m(f"{BD}.symbols", "add_notation"): Case(
        add_notation, {"entries": {}}, ("entries", "eta"), ("entries", {"eta": NOTATION["L"]})
    ),
    _m(f"{BD}.symbols", "keyword_of"): Case(
        keyword_of, {"sym": symbol("eta")}, ("sym", 3), ("sym", __import__("sympy").Symbol("zz"))
    ),
    _m(f"{BD}.symbols", "notation_of"): Case(
        notation_of,
        {"sym": __import__("sympy").Symbol("zz", positive=True)},
        ("sym", 3),
        ("sym", __import__("sympy").Symbol("not an identifier")),
    ),
    # --- paper records ----------------------------------------------------------------------
    _m("fedtheory.papers", "register"): Case(
        papers.register,
        {"paper": papers.PAPERS["divergences"]},  # registered already: nothing changes
        ("paper", "divergences"),
        ("paper", papers.Paper("not an identifier", "A paper")),
    ),
    _m("fedtheory.papers", "export"): Case(
        papers.export,
        {"paper": Lazy("fedtheory.papers").PAPERS["fedawe"], "part": "algorithms", "namespace": {}},
        ("part", 1),
        ("part", "nothing"),
    ),
    _m("fedtheory.papers", "modules"): Case(
        papers.modules, {"part": "tightness"}, ("part", 1), ("part", "nothing")
    ),
    _m("fedtheory.papers", "paper_of"): Case(
        papers.paper_of, {"module": "fedtheory.bounds.cafed"}, ("module", 3), ("module", "")
    ),
    # --- problems ---------------------------------------------------------------------------
    _m(f"{PR}.ball", "Ball"): Case(
        Ball, {"center": np.zeros(2), "radius": 1.0}, ("radius", STRING), ("radius", -1.0)
    ),
    _m(f"{PR}.ball", "max_quadratic_on_ball"): Case(
        max_quadratic_on_ball,
        {"Q": np.eye(2), "b": np.zeros(2), "a": 0.0, "ball": BALL},
        ("ball", STRING),
        ("Q", np.eye(3)),
    ),
    _m(f"{PR}.ball", "quadratic_lemma_one"): Case(
        ball_module.quadratic_lemma_one,
        {"loss": FORMS, "grad_sq": FORMS, "noise": FORMS, "ball": BALL, "w_ref": np.zeros(2)},
        ("ball", STRING),
        ("w_ref", np.zeros(3)),
    ),
    _m(f"{PR}.base", "check_points"): Case(
        check_points, {"w": np.zeros(2), "dim": 2, "owner": "t"}, ("w", STRING), ("w", np.zeros(3))
    ),
    _m(f"{PR}.quadratic", "QuadraticProblem.noise_variance"): Case(
        QUAD.noise_variance, {"w": np.zeros(2)}, ("w", STRING), ("w", np.zeros(3))
    ),
    _m(f"{PR}.quadratic", "QuadraticProblem.client_losses"): Case(
        QUAD.client_losses, {"w": np.zeros(2)}, ("w", STRING), ("w", np.zeros(3))
    ),
    _m(f"{PR}.data_backed", "DataProblem"): Case(
        LeastSquaresProblem, PROBLEM_KW, ("data", STRING), ("ridge", -1.0)
    ),
    _m(f"{PR}.data_backed", "ClassificationProblem"): Case(
        LogisticRegressionProblem, {"data": LABELLED}, ("batch_size", STRING), ("batch_size", 0)
    ),
    _m(f"{PR}.least_squares", "LeastSquaresProblem"): Case(
        LeastSquaresProblem, PROBLEM_KW, ("sampling", 3), ("sampling", "sometimes")
    ),
    _m(f"{PR}.logistic", "LogisticRegressionProblem"): Case(
        LogisticRegressionProblem, {"data": LABELLED}, ("ridge", STRING), ("ridge", 0.0)
    ),
    _m(f"{PR}.data_backed", "DataProblem.local_sgd"): Case(
        LogisticRegressionProblem(LABELLED).local_sgd,
        {
            "w": torch.zeros(2, 3, dtype=torch.float64),
            "clients": torch.tensor([0, 3]),
            "steps": 2,
            "lr": 0.1,
            "prox": 0.0,
        },  # fmt: skip
        ("clients", [0, 3]),
        ("clients", torch.tensor([0, 4])),
    ),
    _m(f"{PR}.data_backed", "DataProblem.exact_metrics"): Case(
        LogisticRegressionProblem(LABELLED).exact_metrics,
        {"w": np.zeros(3)},
        ("w", STRING),
        ("w", np.zeros(4)),
    ),
    _m(f"{PR}.logistic", "MultinomialLogisticProblem"): Case(
        MultinomialLogisticProblem,
        {"data": CLASSES},
        ("alpha", STRING),
        ("alpha", [1.5, -0.5, 0.0, 0.0]),
    ),
    _m(f"{PR}.mlp", "MLPProblem"): Case(
        MLPProblem, {"data": CLASSES}, ("hidden", 32), ("hidden", (0,))
    ),
    _m(f"{PR}.mlp", "MLPProblem.optimality_gap_bound"): Case(  # small: each p is one L-BFGS
        MLPProblem(CLASSES, hidden=(2,), ridge=0.1).optimality_gap_bound,
        {"weights": None},
        ("weights", STRING),
        ("weights", [1.5, -0.5, 0.0, 0.0]),
    ),
    _m(f"{PR}.quadratic", "QuadraticProblem"): Case(
        QuadraticProblem,
        {"A": np.ones((2, 1, 1)), "c": np.zeros((2, 1))},
        ("noise_std", STRING),
        ("A", -np.ones((2, 1, 1))),
    ),
    # --- data -------------------------------------------------------------------------------
    _m(f"{DT}.digits", "load_digits"): Case(
        load_digits, {}, ("intercept", STRING), ("intercept", 2)
    ),
    _m(f"{DT}.digits", "load_digits_federated"): Case(
        load_digits_federated, {"num_clients": 4}, ("num_clients", STRING), ("concentration", -1.0)
    ),
    _m(f"{DT}.federated", "FederatedDataset"): Case(
        FederatedDataset,
        {"features": np.zeros((2, 3, 1)), "labels": np.zeros((2, 3)), "counts": np.array([3, 2])},
        ("counts", STRING),
        ("counts", np.array([4, 2])),
    ),
    _m(f"{DT}.federated", "FederatedDataset.from_clients"): Case(
        FederatedDataset.from_clients,
        {"features": [np.zeros((2, 1)), np.ones((1, 1))], "labels": [[0.0, 1.0], [1.0]]},
        ("num_classes", STRING),
        ("num_classes", 1),
    ),
    _m(f"{DT}.splits", "dirichlet_label_split"): Case(
        dirichlet_label_split,
        {"labels": LABELS, "num_clients": 2, "concentration": 1.0},
        ("concentration", STRING),
        ("concentration", 0.0),
    ),
    _m(f"{DT}.splits", "one_label_per_client_split"): Case(
        one_label_per_client_split,
        {"labels": LABELS, "clients_per_label": 2},
        ("clients_per_label", 1.5),
        ("clients_per_label", 0),
    ),
    _m(f"{DT}.splits", "partition"): Case(
        partition,
        {
            "features": np.zeros((4, 1)),
            "labels": np.zeros(4),
            "parts": [np.arange(2), np.arange(2, 4)],
        },
        ("parts", STRING),
        ("parts", [np.arange(2), np.arange(3, 6)]),
    ),
    _m(f"{DT}.splits", "primary_label_split"): Case(
        primary_label_split,
        {"labels": LABELS, "num_clients": 3, "samples_per_client": 4},
        ("primary_fraction", STRING),
        ("primary_fraction", 1.5),
    ),
    _m(f"{DT}.synthetic", "cafed_clustered"): Case(
        cafed_clustered,
        {"num_clients": 4, "dim": 2, "samples": 5},
        ("hetero", STRING),
        ("samples", 0),
    ),
    _m(f"{DT}.synthetic", "gaussian_linear"): Case(
        gaussian_linear, {"num_clients": 2, "dim": 2, "samples": 3}, ("dim", 1.5), ("noise", -1.0)
    ),
    # --- selection (E3CS) -------------------------------------------------------------------
    _m(f"{SM}.selection.allocation", "exp3_update"): Case(
        selection.exp3_update,
        {
            "log_w": LOG_W,
            "alloc": ALLOC,
            "selected": SELECTED,
            "success": SELECTED,
            "k": 1,
            "sigma": 0.0,
            "eta": 0.5,
        },  # fmt: skip
        ("log_w", STRING),
        ("eta", -0.5),
    ),
    _m(f"{SM}.selection.allocation", "prob_alloc"): Case(
        selection.prob_alloc, {"log_w": LOG_W, "k": 1, "sigma": 0.0}, ("log_w", STRING), ("k", 4)
    ),
    _m(f"{SM}.selection.allocation", "quota_constant"): Case(
        selection.quota_constant, {"c": 0.5, "k": 1, "num_clients": 3}, ("c", STRING), ("c", 1.5)
    ),
    _m(f"{SM}.selection.allocation", "quota_incremental"): Case(
        selection.quota_incremental,
        {"k": 1, "num_clients": 3, "rounds": 4},
        ("rounds", 2.5),
        ("k", 4),
    ),
    _m(f"{SM}.selection.policies", "E3CS"): Case(E3CS, {"k": 1}, ("eta", STRING), ("sigma", -0.5)),
    _m(f"{SM}.selection.policies", "FedCS"): Case(
        FedCS, {"rho": [0.5, 0.5], "k": 1}, ("k", 1.5), ("rho", [0.5, 1.5])
    ),
    _m(f"{SM}.selection.policies", "PowD"): Case(PowD, {"k": 1, "d": 2}, ("d", STRING), ("d", 0)),
    _m(f"{SM}.selection.policies", "RandomSelection"): Case(
        RandomSelection, {"k": 1}, ("k", STRING), ("k", 0)
    ),
    _m(f"{SM}.selection.runner", "run_selection"): Case(
        selection_runner.run_selection,
        {"selector": SELECTOR, "success": SUCCESS[None] > 0},
        ("selector", STRING),
        ("seed", -1),
    ),
    _m(f"{SM}.samplers", "SampleWithReplacement"): Case(
        SampleWithReplacement, {"k": 2, "p": P3}, ("k", STRING), ("p", [0.5, 0.6])
    ),
    _m(f"{SM}.samplers", "SampleWithoutReplacement"): Case(
        SampleWithoutReplacement, {"k": 2, "p": P3}, ("k", 0), ("p", [1.5, -0.5])
    ),
    _m(f"{SM}.samplers", "SampleUniform"): Case(SampleUniform, {"k": 2}, ("k", STRING), ("k", 0)),
    _m(f"{SM}.samplers", "SampleBernoulli"): Case(
        SampleBernoulli, {"pi": [0.5, 1.0, 1.0], "p": P3}, ("pi", STRING), ("pi", [0.0, 1, 1])
    ),
    _m(f"{SM}.sampled", "SampledFedAvg"): Case(
        SampledFedAvg, {"sampler": SampleUniform(1)}, ("sampler", STRING), ("seed", -1)
    ),
    _m(f"{SM}.sampled", "run_sampled"): Case(
        run_sampled,
        {
            "problem": QUAD,
            "algorithm": SampledFedAvg(SampleUniform(1)),
            "mask": np.ones((1, 2, 3), dtype=bool),
            "w0": np.zeros(2),
        },
        ("algorithm", STRING),
        ("mask", np.ones((1, 2, 4), dtype=bool)),
    ),
    _m(f"{SM}.selection.fedavg", "SelectedFedAvg"): Case(
        SelectedFedAvg, {"selector": SELECTOR}, ("selector", STRING), ("omega", [1.5, -0.5])
    ),
    _m(f"{SM}.selection.reference", "paper_prob_alloc"): Case(
        selection_reference.paper_prob_alloc,
        {"w": [1.0, 2.0, 3.0], "k": 1, "sigma": 0.0},
        ("w", STRING),
        ("sigma", 0.5),
    ),
    _m(f"{SM}.selection.reference", "run_selected"): Case(
        selection_reference.run_selected,
        {
            "problem": QUAD,
            "algorithm": FEDAVG,
            "mask": np.ones((1, 2, 3), dtype=bool),
            "w0": np.zeros(2),
        },
        ("algorithm", STRING),
        ("mask", np.ones((1, 2, 4), dtype=bool)),
    ),
    # --- optim (E3CS comparators) -----------------------------------------------------------
    **{
        _m("fedtheory.optim.e3cs", name): Case(
            getattr(optim_e3cs, name), {"success": SUCCESS, "k": 1}, ("k", 1.5), ("sigma", 0.9)
        )
        for name in ("best_fixed_allocation", "best_fixed_allocation_lp", "per_round_oracle")
    },
    _m("fedtheory.optim.e3cs", "comparator_allocation"): Case(
        optim_e3cs.comparator_allocation,
        {"q": [0.5, 0.5, 0.5], "k": 1, "sigma": 0.0},
        ("q", STRING),
        ("q", [0.5, 1.5, 0.5]),
    ),
    # --- tightness --------------------------------------------------------------------------
    _m(f"{TG}.engine", "search"): Case(
        tightness.search, {"family": TV_FAMILY, "budget": 3}, ("budget", STRING), ("budget", 2)
    ),
    _m(f"{TG}.engine", "reproduce"): Case(
        tightness.reproduce, {"saved": SAVED_SEARCH}, ("saved", 3), ("saved", {"key": "nope"})
    ),
    _m(f"{TG}.family", "scaled"): Case(
        tightness.scaled, {"family": TV_FAMILY, "factor": 0.1}, ("factor", STRING), ("factor", 0.0)
    ),
    _m(f"{TG}.custom", "theorem_family"): Case(
        tightness.theorem_family,
        {"theorem": CATALOGUE["divergences.tv_chi_square"], "measure": lambda chi2: chi2},
        ("theorem", STRING),
        ("replicates", 1),
    ),
    _m(f"{TG}.drawn", "strategy_family"): Case(
        tightness.strategy_family,
        {
            "theorem": CATALOGUE["divergences.tv_chi_square"],
            "measure": lambda alpha, p: divergences.total_variation(alpha, p),
            "instances": hypothesis.strategies.fixed_dictionaries(
                {"alpha": strategies.simplex(2), "p": strategies.simplex(2)}
            ),
            "constants": lambda alpha, p: {"chi2": divergences.chi_square(alpha, p)},
        },
        ("instances", STRING),
        ("draws", 0),
    ),
    _m(f"{TG}.custom", "register"): Case(
        tightness.register,
        {"family": TV_FAMILY},
        ("family", STRING),
        ("family", replace(TV_FAMILY, description="another")),
    ),
    _m(f"{TG}.custom", "load_families"): Case(
        tightness.load_families,
        {"path": Path(__file__).parent / "sweep_functions.py"},
        ("path", 3),
        ("path", Path(__file__).parent),
    ),
    _m(f"{TG}.family", "Integer"): Case(
        tightness.Integer,
        {"name": "N", "low": 1, "high": 3, "doc": "clients"},
        ("low", STRING),
        ("doc", ""),
    ),
    _m(f"{TG}.family", "Real"): Case(
        tightness.Real, {"name": "x", "low": 0.0, "high": 1.0}, ("low", STRING), ("name", "")
    ),
    _m(f"{TG}.family", "Family"): Case(
        tightness.Family,
        {**vars(TV_FAMILY)},
        ("theorem", STRING),
        ("theorem", USER_EXACT),
    ),
    **{
        _m(f"{TG}.cafed", name): Case(
            getattr(tightness_cafed, name), {"delta": 0.1}, ("delta", STRING), ("delta", 0.5)
        )
        for name in ("theorem1_near_tight_point", "theorem3_attaining_point")
    },
    _m(f"{TG}.e3cs", "e3cs_regret_samples"): Case(
        tightness_e3cs.e3cs_regret_samples,
        dict(K=3, k=1, T=4, sigma=0.0, eta=0.5, rho=[0.2, 0.5, 0.9], replicates=2, seed=0),
        ("rho", STRING),
        ("rho", [0.2, 0.5, 1.5]),
    ),
    _m(f"{TG}.fedlaavg", "fedlaavg_example1_error"): Case(
        tightness_fedlaavg.fedlaavg_example1_error,
        {"x0": 1.0, "t1": 2, "t2": 1, "T": 5},
        ("x0", STRING),
        ("T", 0),
    ),
}

# --- the property-testing kit -------------------------------------------------------------------
TS = "fedtheory.testing"
_STRATEGY_CASES = {
    "simplex": ({"n": 3}, ("n", STRING), ("n", 0)),
    "participation_probabilities": ({"max_clients": 3}, ("low", STRING), ("low", 1.5)),
    "quadratic_problems": ({"max_clients": 3}, ("max_dim", STRING), ("kappa", (0.5, 2.0))),
    "least_squares_problems": ({}, ("max_clients", STRING), ("max_clients", 1)),
    "logistic_problems": ({}, ("ridge", STRING), ("ridge", (0.0, 1.0))),
    "federated_datasets": ({}, ("num_classes", STRING), ("num_classes", 1)),
    "weight_instances": ({}, ("bias", 3), ("bias", "kl")),
    "stochastic_matrices": ({}, ("sparse", STRING), ("max_states", 1)),
    "cyclic_patterns": ({}, ("max_period", STRING), ("max_period", 1)),
    "block_patterns": ({}, ("max_block", STRING), ("max_block", 0)),
    "step_schedules": ({}, ("max_rounds", STRING), ("max_rounds", 0)),
    "quota_schedules": ({"k": 2, "K": 4}, ("k", STRING), ("k", 5)),
    "e3cs_allocation_inputs": ({}, ("max_clients", STRING), ("max_clients", 1)),
}
CONTRACT |= {
    _m(f"{TS}.strategies", name): Case(getattr(strategies, name), *case)
    for name, case in _STRATEGY_CASES.items()
}
CONTRACT |= {
    _m(f"{TS}.assertions", "assert_upper_bound"): Case(
        assert_upper_bound, {"measured": 1.0, "bound": 2.0}, ("rtol", STRING), ("rtol", -1.0)
    ),
    _m(f"{TS}.assertions", "assert_equal"): Case(
        assert_equal, {"measured": 1.0, "expected": 1.0}, ("atol", STRING), ("rtol", -1.0)
    ),
    _m(f"{TS}.assertions", "assert_near_zero"): Case(
        assert_near_zero, {"measured": 0.0}, ("atol", STRING), ("atol", -1.0)
    ),
    _m(f"{TS}.theorems", "theorem_values"): Case(
        theorem_values,
        {"theorem": USER_BOUND},
        ("theorem", STRING),
        ("fixed", {"kappa": 0.5}),  # breaks kappa >= 1
    ),
    _m(f"{TS}.theorems", "check_theorem"): Case(
        check_theorem,
        {
            "theorem": USER_BOUND,
            "measure": lambda kappa, D: D,
            "settings": hypothesis.settings(max_examples=5),
        },
        ("theorem", STRING),
        ("rtol", -1.0),
    ),
}
CONTRACT |= {
    _m(f"{BD}.judgement", "judge"): Case(
        judge,
        {"theorem": USER_BOUND, "values": {"kappa": 2.0, "D": 1.0}, "measured": 0.01},
        ("values", STRING),
        ("values", {"kappa": 2.0}),  # D missing
    ),
    _m(f"{BD}.judgement", "Judge"): Case(
        Judge,
        {"theorem": USER_BOUND, "measure": lambda **values: 0.0},
        ("theorem", STRING),
        ("rtol", -1.0),
    ),
}
NO_CHECKS = Path(tempfile.mkdtemp()) / "no_checks.py"  # a user file that registers nothing
NO_CHECKS.write_text("")
CONTRACT |= {
    _m("fedtheory.validation.custom", "theorem_check"): Case(
        theorem_check,
        {
            "theorem": USER_BOUND,
            "measure": lambda **values: 0.0,
            "name": "contract",
            "instances": [{"kappa": 2.0, "D": 1.0}],
        },
        ("theorem", STRING),
        ("replicates", 1),
    ),
    _m("fedtheory.validation.custom", "load_checks"): Case(
        load_checks,
        {"path": NO_CHECKS},
        ("path", 3),
        ("path", "no_such_file.py"),
    ),
}

# --- sim (what ``fedtheory.sim`` exports, the plain loops, memory and divergence checks) ----
MASK = torch.tensor([[True, False, True]])  # [R, N]
FEDAU_STATE = fedau_init(1, 3)
AVERAGE = AverageParticipating()
AVAIL3 = Bernoulli([0.5, 0.5, 0.5])
STATE_RN = FEDAVG_SIM_STATE = FedAvg(AVERAGE).init(QUAD, torch.zeros(1, 2, dtype=torch.float64))
ALPHA_PI = {"alpha": [0.5, 0.5], "pi": [0.5, 0.5]}
SIM = "fedtheory.sim"
CONTRACT |= {
    _m(f"{SM}.aggregation", "AverageAll"): Case(AverageAll, {}, ("name", 3), ("name", "")),
    _m(f"{SM}.aggregation", "AverageParticipating"): Case(
        AverageParticipating, {}, ("name", 3), ("name", "")
    ),
    _m(f"{SM}.aggregation", "FedAU"): Case(FedAU, {}, ("cutoff", STRING), ("cutoff", 0)),
    _m(f"{SM}.aggregation", "FixedWeights"): Case(
        FixedWeights, {"q": [0.5, 0.5]}, ("q", STRING), ("q", [-1.0, 1.0])
    ),
    _m(f"{SM}.aggregation", "average_all"): Case(
        average_all, {"mask": MASK}, ("mask", STRING), ("mask", MASK.double())
    ),
    _m(f"{SM}.aggregation", "average_participating"): Case(
        average_participating, {"mask": MASK}, ("mask", STRING), ("mask", MASK.double())
    ),
    _m(f"{SM}.aggregation", "fedau_init"): Case(
        fedau_init,
        {"replicates": 1, "num_clients": 3},
        ("replicates", STRING),
        ("num_clients", 0),
    ),  # fmt: skip
    _m(f"{SM}.aggregation", "fedau_update"): Case(
        fedau_update,
        {"state": FEDAU_STATE, "mask": MASK, "cutoff": 5},
        ("state", STRING),
        ("cutoff", 0),
    ),  # fmt: skip
    _m(f"{SM}.aggregation", "fedau_weights"): Case(
        fedau_weights,
        {"state": FEDAU_STATE, "mask": MASK},
        ("state", STRING),
        ("mask", torch.ones(1, 4, dtype=torch.bool)),
    ),  # fmt: skip
    _m(f"{SM}.aggregation", "unbiased_weights"): Case(
        unbiased_weights, ALPHA_PI, ("alpha", STRING), ("pi", [0.0, 0.5])
    ),
    _m(f"{SM}.algorithm", "LocalTraining"): Case(
        LocalTraining, {}, ("full_first_round", "False"), ("local_steps", 0)
    ),
    _m(f"{SM}.cafed", "AdaFedWeights"): Case(
        AdaFedWeights, ALPHA_PI, ("alpha", STRING), ("pi", [0.5, 1.5])
    ),
    _m(f"{SM}.cafed", "F3astWeights"): Case(
        F3astWeights, ALPHA_PI, ("clients", 1.5), ("beta_r", 1.5)
    ),
    _m(f"{SM}.cafed", "CaFed"): Case(
        CaFed, {**ALPHA_PI, "lam": [0.0, 0.0]}, ("beta", STRING), ("beta", 1.5)
    ),
    _m(f"{SM}.fedavg", "FedAvg"): Case(
        FedAvg, {"aggregator": AVERAGE}, ("aggregator", "avg"), ("lr", -0.1)
    ),
    _m(f"{SM}.fedlaavg", "FedLaAvg"): Case(
        FedLaAvg, {}, ("clients_per_round", 1.5), ("clients_per_round", 0)
    ),
    _m(f"{SM}.fedlaavg", "absent_longest"): Case(
        absent_longest,
        {"mask": MASK, "last": torch.zeros(1, 3, dtype=torch.int64), "k": 1},
        ("mask", STRING),
        ("k", 0),
    ),
    _m(f"{SM}.fedvarp", "FedVARP"): Case(
        FedVARP, {}, ("skip_empty_rounds", "False"), ("prox", -1.0)
    ),
    _m(f"{SM}.local", "local_sgd"): Case(
        local_sgd,
        {
            "problem": QUAD,
            "w": torch.zeros(2, 2, dtype=torch.float64),
            "clients": torch.tensor([0, 1]),
            "steps": 1,
            "lr": 0.1,
        },
        ("clients", [0, 1]),
        ("lr", -0.1),
    ),  # fmt: skip
    _m(f"{SM}.local", "project_ball"): Case(
        project_ball,
        {"w": torch.zeros(2, 2, dtype=torch.float64), "radius": 1.0},
        ("w", STRING),
        ("radius", -1.0),
    ),  # fmt: skip
    _m(f"{SM}.mifa", "MIFA"): Case(MIFA, {}, ("lr", STRING), ("lr", -0.1)),
    _m(f"{SM}.mimic", "MimiC"): Case(MimiC, {}, ("full_first_round", "False"), ("radius", -1.0)),
    _m(f"{SM}.runner", "evaluate_metrics"): Case(
        evaluate_metrics,
        {"problem": QUAD, "w": np.zeros(2)},
        ("problem", STRING),
        ("w", np.zeros(3)),
    ),  # fmt: skip
    _m(f"{SM}.runner", "simulate"): Case(
        simulate,
        {"problem": QUAD, "availability": AVAIL3, "algorithm": FedAvg(AVERAGE), "rounds": 2},
        ("availability", "bernoulli"),
        ("rounds", 0),
    ),
    _m(f"{SM}.schedules", "Constant"): Case(
        Constant, {"value": 0.1}, ("value", STRING), ("value", -1.0)
    ),
    _m(f"{SM}.schedules", "ExponentialDecay"): Case(
        ExponentialDecay, {"initial": 0.1, "decay": 0.9}, ("decay", STRING), ("decay", 1.5)
    ),
    _m(f"{SM}.schedules", "InverseTime"): Case(
        InverseTime, {"a": 1.0, "b": 1.0}, ("a", STRING), ("b", 0.0)
    ),
    _m(f"{SM}.schedules", "PerStep"): Case(
        PerStep, {"schedule": InverseTime(1.0, 1.0)}, ("schedule", STRING), ("index", "global")
    ),
    _m(f"{SM}.reference", "run"): Case(
        sim_reference.run,
        {
            "problem": QUAD,
            "algorithm": FedAvg(AVERAGE),
            "mask": np.ones((2, 3), dtype=bool),
            "w0": np.zeros(2),
        },
        ("w0", STRING),
        ("mask", np.ones((2, 4), dtype=bool)),
    ),  # fmt: skip
    _m(f"{SM}.reference", "reference_loop"): Case(
        sim_reference.reference_loop,
        {"algorithm": FedAvg},
        ("algorithm", STRING),
        ("algorithm", int),
    ),
    _m(f"{SM}.reference", "fedau_omega"): Case(
        sim_reference.fedau_omega,
        {"mask": np.ones((2, 3), dtype=bool), "cutoff": 3},
        ("mask", STRING),
        ("cutoff", 0),
    ),  # fmt: skip
    _m(f"{SM}.reference", "local_update"): Case(
        sim_reference.local_update,
        {
            "problem": QUAD,
            "alg": FedAvg(AVERAGE),
            "w": np.zeros(2),
            "k": 0,
            "t": 0,
            "generator": None,
        },
        ("alg", STRING),
        ("k", 3),
    ),  # fmt: skip
    _m(f"{SM}.reference", "server_update"): Case(
        sim_reference.server_update,
        {"alg": FedAvg(AVERAGE), "w": np.zeros(2), "v": np.ones(2), "t": 0},
        ("alg", STRING),
        ("v", np.ones(3)),
    ),
    _m(f"{SM}.footprint", "estimate"): Case(
        footprint.estimate,
        {
            "replicates": 1,
            "rounds": 2,
            "num_clients": 3,
            "dim": 2,
            "eval_every": 1,
            "keep_masks": True,
            "state": STATE_RN,
            "chunk_elements": 10,
        },
        ("keep_masks", "False"),
        ("rounds", 2**70),
    ),  # fmt: skip
    _m(f"{SM}.footprint", "check"): Case(
        footprint.check,
        {"footprint": footprint.Footprint(1, 1, 1, 1, 1), "max_memory": "1M", "owner": "t"},
        ("footprint", STRING),
        ("max_memory", "-1G"),
    ),
    _m(f"{SM}.divergence", "algorithm_label"): Case(
        algorithm_label,
        {"algorithm": FedAvg(AVERAGE)},
        ("algorithm", STRING),
        ("algorithm", AVERAGE),
    ),  # fmt: skip
    _m(f"{SM}.divergence", "non_finite_state"): Case(
        non_finite_state,
        {"state": STATE_RN, "replicates": 1},
        ("state", STRING),
        ("replicates", 0),
    ),  # fmt: skip
    _m(f"{SM}.divergence", "non_finite_metric"): Case(
        non_finite_metric,
        {"metrics": {"gap": np.zeros((1, 2))}},
        ("metrics", STRING),
        ("metrics", {"gap": np.zeros(2)}),
    ),  # fmt: skip
}

# FedAWE (Xiang et al. 2024): availability dynamics, exact quantities, algorithm
NonStationary = Lazy("fedtheory.availability.nonstationary").NonStationary
class_probabilities = Lazy("fedtheory.availability.nonstationary").class_probabilities
fedawe = Lazy("fedtheory.bounds.fedawe")
FedAWE = Lazy("fedtheory.sim.fedawe").FedAWE

CONTRACT |= {
    _m(f"{AV}.nonstationary", "NonStationary"): Case(
        NonStationary, {"p": [0.5, 0.2], "dynamics": "sine"}, ("gamma", STRING), ("gamma", 0.6)
    ),
    _m(f"{AV}.nonstationary", "class_probabilities"): Case(
        class_probabilities,
        {"class_distribution": np.eye(2), "caps": [1.0, 0.5]},
        ("class_distribution", STRING),
        ("caps", [1.0, 2.0]),
    ),
    _m(f"{BD}.fedawe", "mixing_moment"): Case(
        fedawe.mixing_moment, {"p": [0.5, 0.2]}, ("p", STRING), ("p", [0.5, 1.5])
    ),
    _m(f"{BD}.fedawe", "mixing_rho"): Case(
        fedawe.mixing_rho, {"p": [0.5, 0.2]}, ("p", STRING), ("p", [0.5, -0.5])
    ),
    _m(f"{BD}.fedawe", "staleness_moments"): Case(
        fedawe.staleness_moments, {"p": [[0.5, 0.2]]}, ("p", STRING), ("p", [[0.5, 1.5]])
    ),
    _m(f"{BD}.fedawe", "auxiliary_innovation"): Case(
        fedawe.auxiliary_innovation,
        {"local_sum": [[2.0]], "grad": [[1.0]], "echo": [3.0], "active": [True]},
        ("local_sum", STRING),
        ("echo", [0.5]),
    ),
    _m(f"{BD}.fedawe", "corollary1_binding"): Case(
        fedawe.corollary1_binding,
        {"s": 1, "m": 100, "delta": 0.2, "rho": 0.5, "L": 1.0, "beta2": 0.0},
        ("L", STRING),
        ("rho", 1.0),
    ),
    _m(f"{SM}.fedawe", "FedAWE"): Case(FedAWE, {}, ("variant", 3), ("clip", -1.0)),
}

RECORD = "frozen result record or state tuple (built by the library, not from user input)"
PROTOCOL = "protocol / abstract base: nothing to construct"
NO_INPUT = "takes no argument"
EXEMPT: dict[str, str] = {
    **{_m(MK, n): RECORD for n in ["MixingConstants"]},
    _m(f"{AV}.base", "AvailabilityProcess"): PROTOCOL,
    _m("fedtheory.papers", "Paper"): "a paper's record, checked by register",
    _m("fedtheory.papers", "discover"): NO_INPUT,
    _m("fedtheory.papers", "on_register"): "a layer's loader: any callable (no range to leave)",
    _m(f"{SM}.reference", "examples"): NO_INPUT,
    **{_m(f"{TG}.engine", n): RECORD for n in ["Point", "SearchResult"]},
    _m(f"{TG}.engine", "source_digest"): NO_INPUT,
    _m(f"{TG}.seeded", "provider"): NO_INPUT,
    _m(f"{TG}.seeded", "seed_only_draws"): NO_INPUT,
    _m(f"{TG}.engine", "format_values"): "formats a search's instance for the command line",
    **{_m(f"{TG}.family", n): RECORD for n in ["Evaluation", "Measurement"]},
    _m(f"{BD}.cafed", "DecompositionConstants"): RECORD,
    _m(f"{AV}.builders", "CaFedPopulation"): RECORD,
    **{_m(f"{AV}.estimators", n): RECORD for n in ["AvailabilityCounts", "AvailabilityEstimate"]},
    **{_m(f"{BD}.base", n): RECORD for n in ["Condition", "BoundResult"]},
    **{
        _m(f"{BD}.cafed", n): RECORD
        for n in [
            "Decomposition",
            "Lemma1Constants",
            "ScheduleAggregates",
            "Theorem2Numerator",
            "Theorem2Program",
        ]  # fmt: skip
    },
    _m(f"{BD}.fedau", "DescentStep"): RECORD,
    _m(f"{ER}.catalogue", "run_all"): NO_INPUT,
    _m(f"{ER}.record", "Erratum"): RECORD,
    _m(f"{ER}.record", "format_erratum"): "formats an Erratum record for the command line",
    _m(f"{ER}.record", "hypotheses_text"): "formats an Erratum's hypotheses for the command line",
    _m(f"{ER}.record", "on_simplex"): "a predicate of the errata's hypotheses (any array)",
    _m(f"{ER}.record", "erratum"): "builds an Erratum record, which checks its own fields",
    _m(f"{ER}.catalogue", "markdown_entry"): "formats an erratum check for ERRATA.md",
    _m(f"{ER}.catalogue", "main"): "command-line entry point (argparse validates argv)",
    _m(f"{BD}.judgement", "Judgement"): RECORD,
    _m("fedtheory.testing.gate", "exit_status"): "its one input is a check to run; a "
    "non-callable is refused (tests/test_exit_codes.py)",
    _m(f"{BD}.judgement", "MeasureError"): "an error class (raised, never called by users)",
    _m(f"{BD}.fedau", "Corollary4Choices"): RECORD,
    _m(f"{BD}.mimic", "ObjectiveMismatch"): RECORD,
    _m(f"{BD}.symbols", "Notation"): RECORD,
    **{_m(f"{PR}.ball", n): RECORD for n in ["LemmaOneConstants", "QuadraticForms"]},
    _m(f"{PR}.ball", "QuadraticConstantsMixin"): PROTOCOL,
    _m(f"{PR}.base", "FederatedProblem"): PROTOCOL,
    _m(f"{SM}.selection.allocation", "Allocation"): RECORD,
    **{
        _m(f"{SM}.selection.policies", n): RECORD
        for n in ["E3CSState", "Selection", "StatelessState"]
    },
    _m(f"{SM}.selection.policies", "Selector"): PROTOCOL,
    _m(f"{SM}.selection.runner", "SelectionRecord"): RECORD,
    _m(f"{SM}.selection.fedavg", "SelectedFedAvgState"): RECORD,
    _m(f"{SM}.sampled", "SampledFedAvgState"): RECORD,
    _m("fedtheory.optim.e3cs", "BestFixedAllocation"): RECORD,
    _m(f"{TS}.strategies", "two_state_chains"): NO_INPUT,
    _m(f"{TS}.profiles", "register_profiles"): NO_INPUT,
    _m(f"{TS}.theorems", "TheoremCheck"): RECORD,
}

# --- sweeps --------------------------------------------------------------------------------
SW = "fedtheory.sweep"
SWEEP_TABLE = pd.DataFrame({"x": [1.0, 1.0, 2.0], "measured": [0.5, 0.7, 1.0], "bound": 2.0})
SWEEP_SUMMARY = sweep_summary.summarise(SWEEP_TABLE, ["x"], inside=None)
SWEEP_DIR = Path(tempfile.mkdtemp(prefix="fedtheory-contract-"))
sweep_store.write_table(SWEEP_TABLE, SWEEP_DIR / "table.csv")
(SWEEP_DIR / "config.toml").write_text(
    'theorem = "e3cs.regret"\n[settings]\neta = 0.1\nk = 2\nsum_quota = 1.0\n[grid]\nK = [10]\n'
)


SWEEP_CONFIG = {"theorem": "e3cs.regret", "settings": {"eta": 0.1, "k": 2, "sum_quota": 1.0},
                "grid": {"K": [10]}}  # fmt: skip


def _sweep_fn(settings: dict, seed: int) -> float:
    return settings["x"] + seed % 7


CONTRACT |= {
    _m(f"{SW}.design", "grid"): Case(
        sweep_design.grid, {"axes": {"x": [1.0, 2.0]}}, ("axes", STRING), ("replicates", 0)
    ),
    _m(f"{SW}.design", "points"): Case(
        sweep_design.points, {"settings": [{"x": 1.0}]}, ("settings", STRING), ("seed", -1)
    ),
    _m(f"{SW}.design", "point_seed"): Case(
        sweep_design.point_seed,
        {"seed": 0, "point": {"x": 1.0}, "replicate": 0},
        ("point", STRING),
        ("replicate", -1),
    ),
    _m(f"{SW}.executor", "open_executor"): Case(
        sweep_executor.open_executor, {}, ("scheduler", 8786), ("workers", 0)
    ),
    _m(f"{SW}.runner", "run_sweep"): Case(
        sweep_runner.run_sweep,
        {"fn": _sweep_fn, "design": sweep_design.grid({"x": [1.0]})},
        ("design", STRING),
        ("out", "table.txt"),
    ),
    _m(f"{SW}.store", "read_table"): Case(
        sweep_store.read_table, {"path": SWEEP_DIR / "table.csv"}, ("path", 1), ("path", "t.txt")
    ),
    _m(f"{SW}.store", "write_table"): Case(
        sweep_store.write_table,
        {"table": SWEEP_TABLE, "path": SWEEP_DIR / "written.csv"},
        ("table", STRING),
        ("path", "t.txt"),
    ),
    _m(f"{SW}.store", "function_digest"): Case(
        sweep_store.function_digest, {"fn": _sweep_fn}, ("fn", STRING), ("fn", abs)
    ),
    _m(f"{SW}.summary", "summarise"): Case(
        sweep_summary.summarise,
        {"table": SWEEP_TABLE, "by": ["x"], "inside": None},
        ("table", STRING),
        ("by", ["nope"]),
    ),
    _m(f"{SW}.summary", "plot_summary"): Case(
        sweep_summary.plot_summary,
        {"summary": SWEEP_SUMMARY, "x": "x"},
        ("summary", 1),
        ("x", "nope"),
    ),  # fmt: skip
    _m(f"{SW}.targets", "load_config"): Case(
        sweep_targets.load_config,
        {"path": SWEEP_DIR / "config.toml"},
        ("path", 1),
        ("path", SWEEP_DIR / "table.csv"),
    ),  # fmt: skip
    _m(f"{SW}.targets", "parse_config"): Case(
        sweep_targets.parse_config,
        {"config": SWEEP_CONFIG},
        ("config", STRING),
        ("config", {**SWEEP_CONFIG, "colour": "red"}),
    ),
    _m(f"{SW}.targets", "register_target"): Case(
        sweep_targets.register_target,
        {"name": "contract-target", "settings": dict, "point": lambda s, seed: {}},
        ("point", STRING),
        ("name", ""),
    ),
}
EXEMPT |= {
    **{_m(f"{SW}.design", n): RECORD for n in ["Design", "Task"]},
    _m(f"{SW}.executor", "Executor"): PROTOCOL,
    _m(f"{SW}.executor", "Sequential"): NO_INPUT,
    _m(f"{SW}.store", "code_digest"): NO_INPUT,
    _m(f"{SW}.executor", "DaskExecutor"): "wraps a live distributed.Client (open_executor)",
    _m(f"{SW}.runner", "SweepProgress"): RECORD,
    **{
        n: "an error raised by the library"
        for n in [_m(f"{SW}.executor", "ClusterLostError"), _m(f"{SW}.runner", "SweepInterrupted")]
    },
    _m(f"{SW}.targets", "SweepConfig"): RECORD,
    _m(f"{SW}.targets", "Target"): RECORD,
    **{
        _m(f"{SM}.{module}", n): RECORD
        for module, names in {
            "aggregation": ["FedAUState"],
            "cafed": ["CaFedState"],
            "fedavg": ["FedAvgState"],
            "fedawe": ["FedAWEState"],
            "fedlaavg": ["FedLaAvgState"],
            "fedvarp": ["FedVARPState"],
            "mifa": ["MIFAState"],
            "mimic": ["MimiCState"],
            "record": ["RunRecord"],
            "footprint": ["Footprint"],
            "divergence": ["NonFinite", "NonFiniteMetric"],
        }.items()
        for n in names
    },  # fmt: skip
    **{
        _m(f"{SM}.{m}", n): PROTOCOL
        for m, n in [("algorithm", "Algorithm"), ("aggregation", "StatefulAggregator")]
    },
    _m(f"{SM}.footprint", "available_bytes"): NO_INPUT,
    **{_m(f"{PR}.fused", n): NO_INPUT for n in ["owns_the_cores", "threads"]},
}

NAMES_A_THEOREM = {
    _m(f"{SW}.targets", name): frozenset({"e3cs"}) for name in ("load_config", "parse_config")
}
"""Entries whose valid call names a paper's theorem by its key (``SWEEP_CONFIG``)."""
NEEDS: dict[str, frozenset[str]] = {
    **{key: entry_papers(key) for key in EXEMPT},
    **{
        key: entry_papers(key, case) | NAMES_A_THEOREM.get(key, frozenset())
        for key, case in CONTRACT.items()
    },
}
"""The papers each entry needs (its module's, and those its valid call names)."""
CONTRACT = {key: resolve_case(key, case) for key, case in CONTRACT.items()}


def contract_keys() -> list:
    """The keys of ``CONTRACT``, each marked with the papers it needs."""
    return [
        pytest.param(key, marks=[pytest.mark.paper(p) for p in sorted(NEEDS[key])])
        for key in sorted(CONTRACT)
    ]


def current(keys) -> set[str]:
    """The keys whose papers are registered (the others name modules left out of a copy)."""
    return {key for key in keys if registered(NEEDS[key])}


@pytest.fixture(autouse=True)
def memory_cap(monkeypatch):
    """Every call here may allocate at most 1 GiB: a hostile size is refused by the memory
    check (fedtheory.budget), whatever memory the machine has."""
    monkeypatch.setenv(ENV, "1G")


def _declared(key: str) -> bool:
    """Whether the callable ``module:name`` declares its parameters (``@declare``): the
    generated fuzz (``tests/test_fuzz_public_api.py``) then calls it with a valid call and
    every declared parameter's hostile values, its contract, with no entry here."""
    module, _, name = key.partition(":")
    return constraints_of(getattr(importlib.import_module(module), name)) is not None


def test_every_public_callable_has_a_contract_entry():
    enumerated = set().union(*(public_callables(m) for m in MODULES))
    missing = {k for k in enumerated - set(CONTRACT) - set(EXEMPT) if not _declared(k)}
    assert missing == set(), "public callables without entry or declaration"
    methods = {key for key in CONTRACT if "." in key.split(":")[1]}  # extra: a few methods
    entries = current(set(CONTRACT) | set(EXEMPT))  # a removed paper's are not enumerated
    assert entries - methods - enumerated == set(), "stale entries"
    assert not set(CONTRACT) & set(EXEMPT)


def test_paper_of_module_agrees_with_the_records():
    """The paper an entry needs is read from its module's name (``paper_of_module``), known
    in a copy without the paper's record: it is the paper whose record names the module."""
    shown = [key for key in PAPER_KEYS if key in papers.PAPERS]
    owner = {m: key for key in shown for m in papers.PAPERS[key].modules}
    for key in [*CONTRACT, *EXEMPT]:
        module = key.split(":")[0]
        assert paper_of_module(module) in {owner.get(module)} | set(PAPER_KEYS) - set(shown), key
    assert set(papers.PAPERS) - {"divergences"} <= set(PAPER_KEYS)


@pytest.fixture
def empty_catalogue(monkeypatch):
    """``register`` writes to a throw-away catalogue."""
    monkeypatch.setattr(catalogue, "CATALOGUE", {})


def _raises_naming(case: Case, bad: tuple[str, Any]) -> None:
    """The valid call works, and replacing one argument by ``bad`` raises ParameterError
    naming that parameter (or one of its entries, ``name[k]``)."""
    name, value = bad
    case.call(**case.valid)
    with pytest.raises(ParameterError, match=re.escape(f"'{name}") + r"(\[\d+\])?' parameter of "):
        case.call(**{**case.valid, name: value})


@pytest.mark.parametrize("key", contract_keys())
def test_bad_type_raises_parameter_error_naming_the_parameter(key, empty_catalogue):
    _raises_naming(CONTRACT[key], CONTRACT[key].bad_type)


@pytest.mark.parametrize("key", contract_keys())
def test_out_of_range_raises_parameter_error_naming_the_parameter(key, empty_catalogue):
    _raises_naming(CONTRACT[key], CONTRACT[key].out_of_range)


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_theorem_rejects_a_bad_type_and_an_out_of_range_value(key):
    theorem = CATALOGUE[key]
    bounded = [p for p in theorem.parameters if NOTATION[p].low is not None]
    name = (bounded or theorem.parameters)[0]
    outside = NOTATION[name].low - 1.0 if bounded else np.nan
    values = dict.fromkeys(theorem.parameters, 1.0)
    for bad in (STRING, outside):
        with pytest.raises(ParameterError, match=f"'{name}' parameter of "):
            theorem.evaluate(**{**values, name: bad})


@pytest.mark.parametrize(
    "problem",
    [
        QuadraticProblem.random(3, 2, noise_std=0.5, seed=0),
        LeastSquaresProblem(DATA, batch_size=2),
        MLPProblem(CLASSES, hidden=(4,), batch_size=2),
    ],
    ids=repr,
)
def test_stochastic_gradients_never_fall_back_to_the_global_generator(problem):
    w = torch.zeros(2, problem.dim, dtype=torch.float64)
    clients = torch.tensor([0, 1])
    with pytest.raises(ParameterError, match="'generator' parameter of"):
        problem.grad(w, clients)
    torch.testing.assert_close(
        problem.grad(w, clients, torch.Generator().manual_seed(3)),
        problem.grad(w, clients, torch.Generator().manual_seed(3)),
    )


HELPER_CASES = [
    (lambda: Bool().check("yes", "flag", "f", {}), "The 'flag' parameter of f must be a bool. Got"),
    (lambda: Instance(Ball).check(3, "ball", "f", {}), "'ball' parameter of f must be a Ball. Got"),
    (
        lambda: Array(integer=True).check([1.0, 1.5], "ids", "f", {}),
        "'ids' parameter of f must be an array of int",
    ),
    (
        lambda: Array(integer=True, low=0).check([1, -1], "ids", "f", {}),
        "'ids' parameter of f must be an array of integers, finite, with entries in [0, inf)",
    ),
]


@pytest.mark.parametrize("call, message", HELPER_CASES)
def test_new_parameter_helpers_refuse_and_never_truncate(call, message):
    with pytest.raises(ParameterError, match=re.escape(message)):
        call()
    assert Bool().check(np.bool_(True), "flag", "f", {}) is True
    assert Array(integer=True).check([2.0, 3], "ids", "f", {}).dtype == np.int64


# --- hostile values: every parameter of every entry ------------------------------------------
# A wrong object, NaN, a mismatched length and an overflow-scale value, one parameter at a
# time: the call raises a FedTheoryError (ParameterError naming the problem) or, where the
# value is allowed, returns finite numbers; never a raw TypeError/ValueError/IndexError.
ASSERTIONS = {  # property-test assertions: a NaN measurement fails them (AssertionError)
    f"fedtheory.testing.assertions:{name}"
    for name in ("assert_equal", "assert_near_zero", "assert_upper_bound")
}
NON_FINITE_BY_DESIGN = {
    "fedtheory.sim.local:local_sgd": "a diverging local run: simulate reports the round",
    "fedtheory.problems.data_backed:DataProblem.local_sgd": "the same, in the fused kernel",
}


HUGE_INT = 2**70
"""An integer too large for the machine (an int64 overflows; no allocation can hold it)."""
DENORMAL = 5e-324
"""The smallest positive (subnormal) float: its reciprocal overflows."""


def _variants(value: Any) -> list[tuple[str, Any, bool]]:
    """``(label, hostile value, must be refused)`` for one valid argument: a wrong object,
    an overflow-scale value, ``None`` (allowed only where it means a default), NaN, a
    number written as a string, an integer too large for the machine, a denormal, a longer
    array and a ragged nested list."""
    out = [("object", object(), True), ("1e308", 1e308, False), ("None", None, False)]
    if not isinstance(value, str) and not callable(value):
        out.append(("nan", float("nan"), True))
        out.append(("string", "0.5", value is not None))
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        out.append(("huge int", HUGE_INT, False))
    if isinstance(value, float | np.floating | int) and not isinstance(value, bool):
        out.append(("denormal", DENORMAL, False))
    if isinstance(value, np.ndarray | list | torch.Tensor) and not _ragged(value):
        out.append(("ragged", [[0.5], [0.5, 0.5]], True))
    if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.shape[0] >= 1:
        out.append(("longer", torch.cat([value, value[:1]]), False))
    elif isinstance(value, np.ndarray | list) and len(value) >= 1:
        try:
            array = np.asarray(value)
        except ValueError:  # ragged, e.g. a trace of client ids
            return out
        if array.dtype.kind in "biuf":
            out.append(("longer", np.concatenate([array, array[:1]]), False))
    return out


def _ragged(value: Any) -> bool:
    try:
        np.asarray(value)
    except ValueError:
        return True
    return False


def _finite(result: Any, depth: int = 0) -> bool:
    if isinstance(result, float | np.floating):
        return bool(np.isfinite(result))
    if isinstance(result, np.ndarray) and result.dtype.kind == "f":
        return bool(np.isfinite(result).all())
    if isinstance(result, torch.Tensor) and result.is_floating_point():
        return bool(torch.isfinite(result).all())
    if depth < 3 and isinstance(result, tuple | list):
        return all(_finite(v, depth + 1) for v in result[:20])
    if depth < 3 and hasattr(result, "__dataclass_fields__") and not isinstance(result, type):
        return all(_finite(getattr(result, f), depth + 1) for f in result.__dataclass_fields__)
    return True


def _check_hostile_values(key: str, case: Case, name: str, good) -> None:
    """Every hostile variant of ``good`` given as ``name`` is refused (a FedTheoryError, or an
    AssertionError from the assertions) or, where it is a valid value, gives finite results."""
    for label, value, refuse in _variants(good):
        try:
            result = case.call(**{**case.valid, name: value})
        except FedTheoryError:
            continue
        except AssertionError:
            if key in ASSERTIONS:
                continue
            raise
        assert not refuse, f"{key}: {name}={label} accepted"
        assert _finite(result) or key in NON_FINITE_BY_DESIGN, f"{key}: {name}={label}"


@pytest.mark.parametrize("key", contract_keys())
def test_hostile_values_are_refused_or_give_finite_results(key, empty_catalogue):
    case = CONTRACT[key]
    for name, good in case.valid.items():
        if name == "cutoff":  # math.inf is FedAU's "no cutoff"; the rest as usual
            good = 3
        _check_hostile_values(key, case, name, good)


def _inside(notation) -> float:
    """A value inside a symbol's declared domain (the type checks come first)."""
    low, high = notation.low, notation.high
    if low is not None and high is not None:
        return (low + high) / 2
    return 1.0 if low is None else float(np.floor(low) + 1)


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_every_theorem_refuses_incompatible_shapes_and_overflow(key):
    theorem = CATALOGUE[key]
    values = {p: _inside(NOTATION[p]) for p in theorem.parameters}
    if len(theorem.parameters) > 1:
        first, second = theorem.parameters[:2]
        with pytest.raises(ParameterError, match=f"'{second}' parameter of .* broadcasts"):
            theorem.evaluate(strict=False, **{**values, first: np.ones(2), second: np.ones(3)})
    for name in theorem.parameters:
        try:
            result = theorem.evaluate(strict=False, **{**values, name: 1e308})
        except FedTheoryError:
            continue
        # finite, or reported: outside the hypotheses the result says so (valid=False, reason)
        assert np.all(np.isfinite(result.total)) or not result.valid, f"{key}: {name}=1e308"


def _optional(case: Case) -> dict[str, Any]:
    """The optional arguments of an entry (those with a default, not in its valid call), each
    with its default value, the valid value the hostile variants are built from."""
    try:
        signature = inspect.signature(case.call)
    except (TypeError, ValueError):  # a builtin without a signature
        return {}
    return {
        name: p.default
        for name, p in signature.parameters.items()
        if p.default is not inspect.Parameter.empty and name not in case.valid
    }


@pytest.mark.parametrize("key", contract_keys())
def test_hostile_values_of_optional_arguments_are_refused_or_give_finite_results(
    key, empty_catalogue
):
    case = CONTRACT[key]
    for name, good in _optional(case).items():
        _check_hostile_values(key, case, name, good)
