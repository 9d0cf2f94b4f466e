"""A hostile fuzz of the public API generated from the declared constraints
(:mod:`fedtheory.constraints`).

Every public callable of the public packages is discovered (not listed by hand): the
functions and classes of every module of ``fedtheory`` (the validation suite
``fedtheory.validation`` included) but the command line, and the public methods of those
classes. A callable with
declared parameters is fed, one parameter at a time, every hostile value its constraint
declares (None, empty and ragged arrays, NaN or inf inside vectors, complex numbers,
numbers written as strings, bools, ``2**70``, out-of-range values, ...): each must be
refused with a fedtheory error, before any work, within :data:`CALL_SECONDS`. It is
then fed the constraint's edge values that may be valid (``1e308``, the smallest
denormal, the largest size): each is refused or gives finite numbers. The valid call a
value is put into comes from the contract table (``test_public_api_contract.CONTRACT``) or
is generated from the declaration's examples.

Every public callable that takes input declares its parameters (those of
``fedtheory.validation`` included); one without a declaration fails
:func:`test_every_public_callable_declares_its_parameters`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import math
import pkgutil
import signal
import tempfile
import warnings
from collections import Counter
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple, Protocol

import numpy as np
import pytest
import torch

import fedtheory
import fedtheory.validation
from fedtheory import papers, pep, tightness
from fedtheory.availability import TraceReplay
from fedtheory.bounds.judgement import Judge
from fedtheory.budget import ENV, TIME_ENV
from fedtheory.constraints import (
    DENORMAL,
    Constraint,
    Integer,
    Location,
    MappingOf,
    Real,
    Size,
    constraints_of,
)
from fedtheory.errors import FedTheoryError
from fedtheory.io import import_file, load_npz, read_json, read_text, save_npz
from fedtheory.optim import WeightInstance, WeightProgram
from fedtheory.optim.greedy import greedy_exclusion
from fedtheory.optim.implicit import polish_weights
from fedtheory.pep.interpolation import InterpolatedProblem
from fedtheory.problems.ball import Ball
from fedtheory.problems.base import FederatedProblem
from fedtheory.problems.logistic import LogisticRegressionProblem
from fedtheory.sim.evaluation import ClientMean
from fedtheory.sim.f3ast import F3astOnline
from fedtheory.sim.memory import empty_table
from fedtheory.sim.optimizer import SGD, Training
from fedtheory.sim.record import RunRecord
from fedtheory.sim.schedules import as_schedule
from fedtheory.sweep.executor import DaskExecutor, Sequential
from fedtheory.validation.machinery import registry
from fedtheory.validation.machinery.registry import Check
from fedtheory.verdict import (
    Comparison,
    FindingSpec,
    Variant,
    Verdict,
    compare_finding,
    compare_findings,
    compare_mean_equal,
    compare_mean_upper_bound,
    draws_to_decide,
    finding_difference,
    finding_label,
    holm_levels,
    replicate_until_decided,
    rounding_floor,
)
from tests.test_public_api_contract import CONTRACT, EXEMPT, NEEDS, current

CALL_SECONDS = 10
"""A call that has not returned after this long counts as a hang (a budget refusal is
immediate; a valid small call takes milliseconds)."""

PRIVATE_PACKAGES = ("fedtheory.cli", "fedtheory.constraints", "fedtheory.params",
                    "fedtheory.validation.machinery.kinds")  # fmt: skip
"""Not library API to fuzz: the command line (its own tests) and the checking machinery
itself (``tests/test_constraints.py``, ``tests/test_params.py``; the validation suite's
kinds through the refusals of the callables declared with them)."""


def _walked(package: Any) -> list[str]:
    """``package`` and its modules: the validation suite (the repository's ``validation/``
    installed as ``fedtheory.validation``) lies outside ``fedtheory.__path__``, so it is
    walked on its own path."""
    infos = pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    return [package.__name__, *(info.name for info in infos)]


def _modules() -> list[str]:
    names = []
    for name in [*_walked(fedtheory)[1:], *_walked(fedtheory.validation)]:
        if any(p.startswith("_") for p in name.split(".")) or name.startswith(PRIVATE_PACKAGES):
            continue
        names.append(name)
    return sorted(set(names))


def _takes_input(obj: Any, key: str = "") -> bool:
    """Whether a callable takes arguments to check: records (NamedTuples; dataclasses that
    check nothing and that the contract table exempts as results a library function fills,
    ``EXEMPT``), enumerations, errors, protocols and argument-free functions do not."""
    if inspect.isclass(obj):
        if issubclass(obj, BaseException | Enum) or Protocol in obj.__mro__[1:]:
            return False
        if issubclass(obj, tuple) and hasattr(obj, "_fields"):
            return False
        record = dataclasses.is_dataclass(obj) and not hasattr(obj, "__post_init__")
        if record and constraints_of(obj) is None and key in EXEMPT:
            return False
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return True
    return any(p not in ("self", "cls") for p in params)


def discover() -> dict[str, Any]:
    """``module:name`` (``module:Class.method`` for methods) -> the public callable."""
    found = {}
    for module_name in _modules():
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            try:  # an old path kept one release (a DeprecationWarning): fuzzed at its new home
                module = importlib.import_module(module_name)
                names = getattr(module, "__all__", None) or [
                    n for n, v in vars(module).items() if not n.startswith("_")
                ]
            except DeprecationWarning:
                continue
        for name in names:
            obj = getattr(module, name, None)
            if obj is None or not callable(obj) or inspect.ismodule(obj):
                continue
            if getattr(obj, "__module__", module_name) != module_name:
                continue  # re-exported: keyed by its own module
            found[f"{module_name}:{name}"] = obj
            if not inspect.isclass(obj):
                continue
            for attr, raw in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if Protocol in obj.__mro__[1:]:
                    break  # an interface: its implementations are the callables
                if isinstance(raw, (staticmethod, classmethod)) or inspect.isfunction(raw):
                    found[f"{module_name}:{name}.{attr}"] = getattr(obj, attr)
    return {k: v for k, v in found.items() if _takes_input(v, k)}


PUBLIC = discover()


def _declared(obj: Any) -> dict[str, Constraint] | None:
    return constraints_of(obj)


def test_every_public_callable_declares_its_parameters():
    missing = {k for k, v in PUBLIC.items() if _declared(v) is None}
    assert not missing, (
        f"public callables without declared parameters: {sorted(missing)}; declare them with "
        "fedtheory.constraints.declare (docs/ARCHITECTURE.md, 'A new public function')"
    )


# --- generated fuzz ----------------------------------------------------------------------
class Hang(Exception):
    """A call ran past CALL_SECONDS."""


@contextlib.contextmanager
def _time_limit(seconds: int):
    def stop(signum, frame):
        raise Hang

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _pool() -> list[Any]:
    """Valid objects to draw an ``Instance`` parameter or a method's ``self`` from: the
    contract's valid arguments and the objects its valid calls build."""
    objects = []
    live = current(CONTRACT)  # a removed paper's entries are left as they are, unresolved
    for case in (case for key, case in CONTRACT.items() if key in live):
        objects += list(case.valid.values())
        if inspect.isclass(case.call):
            with contextlib.suppress(Exception):
                objects.append(case.call(**case.valid))
    return objects


RUN_RECORD = RunRecord(np.zeros((1, 3, 2)), None, {"gap": np.ones((1, 3))}, {"rounds": 2})
PLAIN_WEIGHTS = WeightInstance([1.0, 2.0], 1.0, 0.0, [0.9, 0.1], [0.5, 0.5])
THEOREM2_TERMS = SimpleNamespace(A=np.array([1.0, 2.0]), B=1.0, C=0.0, pi=np.array([0.9, 0.1]),
                                 Q=1.0, sum_eta=2.0)  # fmt: skip
"""Coefficients with the attributes ``WeightInstance.from_theorem2`` reads (it takes any
object that has them), built by hand: a copy without CA-Fed has no ``theorem2_program``."""


class _ClientModelsState(NamedTuple):
    w: torch.Tensor  # [R, d]
    x: torch.Tensor  # [R, N, d]


@dataclasses.dataclass(frozen=True)
class ClientModels:
    """A made-up algorithm keeping client models ``x [R, N, d]`` (each the server model; a
    round changes nothing): what ``ClientMean`` evaluates, in a copy without FedAWE too."""

    name: str = "client-models"

    def init(self, problem, w0):
        return _ClientModelsState(w0, w0[:, None, :].repeat(1, problem.num_clients, 1))

    def step(self, problem, state, mask, t, generator=None):
        return state


def _while(paper: str, build: Any) -> list[Any]:
    """``build()``'s objects while ``paper`` is registered (its modules exist), else none."""
    return build() if paper in papers.PAPERS else []


def _own(module: str, name: str) -> Any:
    """``module.name`` of a paper's module, imported when used."""
    return getattr(importlib.import_module(module), name)


EXTRA_INSTANCES = [
    PLAIN_WEIGHTS,
    WeightProgram(2),
    Comparison("claim", "reference", "<=", 0.5, 1.0, Verdict.HOLDS),
    *_while("cafed", lambda: [
        CONTRACT["fedtheory.bounds.cafed:theorem2_program"].call(
            **CONTRACT["fedtheory.bounds.cafed:theorem2_program"].valid
        ),
    ]),
    WeightInstance([1.0, 2.0], 1.0, 0.0, [0.9, 0.1], [0.5, 0.5], bias="chi2", bias_weight=0.1),
    *_while("cafed", lambda: [_own("fedtheory.sim.cafed", "CaFed")(
        alpha=np.full(3, 1 / 3), pi=np.full(3, 0.5), lam=np.zeros(3), losses="exact")]),
    *_while("fedawe", lambda: [ClientMean(_own("fedtheory.sim.fedawe", "FedAWE")(lr=0.1))]),
    ClientMean(ClientModels()),
    empty_table(2, 3, 2),
    F3astOnline(np.full(3, 1 / 3), clients=2),
    *_while("fedau", lambda: [
        Judge(_own("fedtheory.bounds.fedau", "theorem3_per_round"), lambda **values: 0.0)]),
    *(pep.Isotropic(2.0), pep.Quadratic(0.5, 1.0), pep.SmoothStronglyConvex(0.5, 1.0)),
    *(pep.SmoothNonconvex(1.0), pep.AtOptimum(0.1), pep.Dissimilarity(0.1, 0.1), pep.Initial()),
    *(
        CONTRACT[key].call(**CONTRACT[key].valid)  # results of functions: their methods' selves
        for key in (
            "fedtheory.bounds.cafed:decomposition_constants",
            "fedtheory.bounds.judgement:judge",
        )
        if key in current(CONTRACT)
    ),
    SGD(momentum=0.5),
    Training(),
    RUN_RECORD,
    Check("fuzz-check", "A made-up check", "none", lambda size: {"size": size},
          lambda settings: {"x": np.zeros(2)}, lambda data, settings: [],
          lambda data, settings, figure: None, bounds=("x",)),  # registered by the fuzz
    THEOREM2_TERMS,
]  # fmt: skip
"""Valid objects of classes outside the contract table."""
POOL = EXTRA_INSTANCES + _pool()


def _instance_of(kind: type) -> Any:
    for obj in POOL:
        if isinstance(obj, kind):
            return obj
    raise LookupError(kind)


def _states() -> list[Any]:
    """The states the pool's algorithms and aggregators start from (two replicates, on the
    pool's first problem): what their ``step``, ``weights`` and ``update`` take."""
    problem = _instance_of(FederatedProblem)
    w0 = torch.zeros(2, problem.dim, dtype=torch.float64)
    states = []
    for obj in POOL:
        if inspect.isclass(obj) or not callable(getattr(obj, "init", None)):
            continue
        with contextlib.suppress(Exception):
            states.append(obj.init(problem, w0) if hasattr(obj, "step") else
                          obj.init(2, problem.num_clients))  # fmt: skip
    return states


POOL += _states()
POOL.append(  # after the states: the algorithms' init runs on the pool's torch problem
    InterpolatedProblem(
        [np.zeros((1, 2))],
        [np.ones((1, 2))],
        [np.zeros(1)],
        mu=0.5,
        L=1.0,
        alpha=[1.0],
        x_star=np.zeros(2),
    )
)


def _saved(record: RunRecord) -> Path:
    path = Path(tempfile.mkdtemp()) / "run.npz"
    record.save(path)
    return path


def _file(name: str, text: str = "") -> Path:
    path = Path(tempfile.mkdtemp()) / name
    if name.endswith(".npz"):
        save_npz(path, {"x": np.zeros(2)})
    else:
        path.write_text(text)
    return path


LOGISTIC = _instance_of(LogisticRegressionProblem)
EXTRA_CALLS = {
    "fedtheory.problems.logistic:LogisticRegressionProblem.curvature_on_ball": (
        LOGISTIC.curvature_on_ball, {"ball": Ball(np.zeros(LOGISTIC.dim), 1.0)}),
    "fedtheory.sim.record:RunRecord.load": (RunRecord.load, {"path": _saved(RUN_RECORD)}),
    "fedtheory.availability.trace:TraceReplay.from_file": (
        TraceReplay.from_file, {"path": _file("trace.json", "[[0], [1, 2]]"), "num_clients": 3}),
    "fedtheory.io:load_npz": (load_npz, {"path": _file("saved.npz")}),
    "fedtheory.optim.implicit:polish_weights": (polish_weights, {
        "instance": PLAIN_WEIGHTS, "q": WeightProgram(2).solve(PLAIN_WEIGHTS).q}),
    "fedtheory.optim.greedy:greedy_exclusion": (greedy_exclusion, {
        "objective": lambda q: q.sum(-1), "q": torch.ones(1, 3, dtype=torch.float64),
        "orders": [torch.tensor([[2, 0, 1]])]}),
    "fedtheory.sim.schedules:as_schedule": (
        as_schedule, {"value": 0.1, "name": "lr", "owner": "f"}),
    "fedtheory.io:read_text": (
        read_text, {"path": _file("text.txt", "x"), "name": "path", "owner": "f"}),
    "fedtheory.io:read_json": (
        read_json, {"path": _file("value.json", "[1, 2]"), "name": "path", "owner": "f"}),
    "fedtheory.io:import_file": (
        import_file, {"path": _file("module.py", "X = 1\n"), "owner": "f", "prefix": "m"}),
}  # fmt: skip
"""Valid calls outside the contract table that the declarations' examples cannot build
(a file that exists with valid content)."""


# sweep, verdict, tightness: valid calls that need a live object or a related value --------
class _StubClient:
    """What DaskExecutor reads of a ``distributed.Client`` (no cluster is started)."""

    scheduler = SimpleNamespace(address="tcp://stub:8786")
    dashboard_link = None

    def scheduler_info(self):
        return {"workers": {}}

    def map(self, fn, items, pure=True):
        raise OSError("a stub client runs nothing")

    def cancel(self, futures):
        pass


_VV = "fedtheory.verdict."
_SEARCH = tightness.search(tightness.FAMILIES["divergences.tv_chi_square"], budget=3)
_WORST = _SEARCH.worst
_POINT = {"integers": dict(_WORST.integers), "reals": _WORST.vector()}
_VARIANT = Variant("init", "zero", [[1.0, 2.0], [2.0, 3.0], [1.5, 1.0]], np.zeros((3, 2)))
_SPEC = FindingSpec("c", "r", [[1.0, 2.0], [2.0, 3.0], [1.5, 1.0]], np.zeros((3, 2)),
                    variants=(_VARIANT,))  # fmt: skip
_MEAN_ROW = {"claim": "c", "reference": "r", "samples": np.array([0.1, 0.2, 0.4])}
EXTRA_CALLS |= {
    f"{_VV}adaptive:replicate_until_decided": (replicate_until_decided, {
        "draw": lambda batch, size: np.full(size, 0.1 * batch),
        "judge": lambda x, level: compare_mean_upper_bound("c", "r", x, 1.0, confidence=level),
        "cap": 4, "start": 2}),
    f"{_VV}findings:compare_findings": (compare_findings, {"specs": [_SPEC]}),
    f"{_VV}findings:holm_levels": (holm_levels, {"specs": [_SPEC]}),
    f"{_VV}findings:compare_finding": (compare_finding, {
        "claim": "c", "reference": "r", "samples": _SPEC.samples, "baseline": _SPEC.baseline,
        "variants": (_VARIANT,)}),
    f"{_VV}findings:finding_label": (finding_label, {"verdict": Verdict.UNDERPOWERED}),
    f"{_VV}findings:draws_to_decide": (draws_to_decide, {
        "diff": finding_difference(_SPEC.samples, _SPEC.baseline)}),
    f"{_VV}findings:FindingSpec": (FindingSpec, {
        "claim": "c", "reference": "r", "samples": _SPEC.samples, "baseline": _SPEC.baseline,
        "variants": (_VARIANT,)}),
    f"{_VV}rounding:rounding_floor": (rounding_floor, {"ulps": 64.0}),
    f"{_VV}rows:Comparison": (Comparison, {
        "claim": "c", "reference": "r", "relation": "<=", "measured": 0.5, "bound": 1.0,
        "verdict": Verdict.HOLDS}),
    f"{_VV}statements:compare_mean_upper_bound": (
        compare_mean_upper_bound, {**_MEAN_ROW, "bound": 1.0}),
    f"{_VV}statements:compare_mean_equal": (
        compare_mean_equal, {**_MEAN_ROW, "predicted": 0.2, "margin": 0.5}),
    "fedtheory.sweep.executor:DaskExecutor": (DaskExecutor, {"client": _StubClient()}),
    "fedtheory.sweep.executor:DaskExecutor.lost": (
        DaskExecutor(_StubClient()).lost, {"error": OSError("gone")}),
    "fedtheory.tightness.engine:Point.as_dict": (
        _WORST.as_dict, {"family": tightness.FAMILIES["divergences.tv_chi_square"]}),
    "fedtheory.tightness.engine:SearchResult.save": (
        _SEARCH.save, {"path": Path(tempfile.mkdtemp()) / "search.json"}),
    "fedtheory.tightness.engine:SearchResult.measured_too_few": (
        _SEARCH.measured_too_few, {"share": 0.5}),
    "fedtheory.tightness.family:Family.describe": (
        tightness.FAMILIES["divergences.tv_chi_square"].describe, _POINT),
    "fedtheory.tightness.family:Family.measure": (
        tightness.FAMILIES["divergences.tv_chi_square"].measure, {**_POINT, "seed": 0}),
}  # fmt: skip
POOL += [DaskExecutor(_StubClient()), Sequential()]


def _owner_class(key: str) -> type | None:
    module, _, name = key.partition(":")
    if "." not in name:
        return None
    return getattr(importlib.import_module(module), name.split(".")[0])


def baseline(key: str, obj: Any) -> tuple[Any, dict[str, Any]]:
    """``(callable, valid keyword arguments)`` for a declared callable: the contract's
    valid call, else one generated from the declaration (``LookupError`` if none)."""
    if key in current(CONTRACT):  # a removed paper's theorem named by a shared entry: none
        return CONTRACT[key].call, dict(CONTRACT[key].valid)
    if key in EXTRA_CALLS:
        return EXTRA_CALLS[key][0], dict(EXTRA_CALLS[key][1])
    call = obj
    owner = _owner_class(key)
    if owner is not None and inspect.isfunction(inspect.getattr_static(owner, key.split(".")[-1])):
        call = getattr(_instance_of(owner), key.split(".")[-1])  # a method: bind an instance
    constraints = _declared(obj)
    args: dict[str, Any] = {"self": getattr(call, "__self__", None)}
    kwargs = {}
    for name, p in inspect.signature(call).parameters.items():
        if name in constraints:
            c = constraints[name]
            try:
                value = c.example(args)
            except LookupError:  # an instance of a class: drawn from the valid objects
                value = next((o for o in POOL if c.convert(o, args) is not None), None)
                if value is None:
                    raise
        elif p.default is not inspect.Parameter.empty or p.kind in (
            p.VAR_POSITIONAL,
            p.VAR_KEYWORD,
        ):
            continue
        else:
            raise LookupError(f"{key}: no valid value for the undeclared '{name}'")
        args[name] = kwargs[name] = value
    return call, kwargs


CHUNK = 1 << 20
"""Entries a result's finiteness check reads at once (a size probe's result fills most of
its address space: the check must not double it)."""


def _finite(result: Any, depth: int = 0) -> bool:
    """Whether a result holds no NaN or inf: a number, an array, a tensor, or a tuple, a
    NamedTuple, a mapping or a dataclass record of them (three levels deep)."""
    if isinstance(result, float | np.floating):
        return math.isfinite(result)
    if isinstance(result, np.ndarray) and result.dtype.kind in "fc":
        flat = result.reshape(-1)  # in chunks: a large result's check allocates 1 MiB
        return all(np.isfinite(flat[i : i + CHUNK]).all() for i in range(0, flat.size, CHUNK))
    if isinstance(result, torch.Tensor) and result.is_floating_point():
        return all(bool(torch.isfinite(c).all()) for c in result.reshape(-1).split(CHUNK))
    if depth < 3 and isinstance(result, tuple | list):  # NamedTuple records included
        return all(_finite(v, depth + 1) for v in result[:20])
    if depth < 3 and isinstance(result, Mapping):
        return all(_finite(v, depth + 1) for v in list(result.values())[:20])
    if depth < 3 and hasattr(result, "__dataclass_fields__") and not isinstance(result, type):
        return all(_finite(getattr(result, f), depth + 1) for f in result.__dataclass_fields__)
    return True


ASSERTIONS = "fedtheory.testing.assertions:"
"""The property-test assertions: an AssertionError is their verdict, not a raw error."""
OVERFLOW_BY_DESIGN = {
    **dict.fromkeys(
        [
            "fedtheory.problems.quadratic:QuadraticProblem.grad",
            "fedtheory.problems.base:FederatedProblem.grad",
            "fedtheory.problems.data_backed:DataProblem.grad",
            "fedtheory.problems.data_backed:DataProblem.indexed_grad",
            "fedtheory.problems.data_backed:DataProblem.batch_losses",
        ],
        "the simulator's inner loop: an "
        "overflowing gradient of a diverging run is reported by the simulator's finiteness check "
        "after the round (DivergenceError naming the round), not refused here",
    ),
    **dict.fromkeys(
        [
            "fedtheory.bounds.divergences:chi_square",
            "fedtheory.bounds.divergences:chi_square_max_ratio_bound",
            "fedtheory.bounds.cafed:decomposition_constants",
        ],
        "chi^2(alpha||p) is infinite where some p_k = 0 < alpha_k (CA-Fed Theorem 1's factor "
        "is unbounded there): the exact value, documented, not an overflow",
    ),
}
"""Callables that may return inf from finite input of huge magnitude (never from hostile
input, which they refuse), each with the reason."""


def _outcome(key: str, call, kwargs: dict, must_refuse: bool) -> str:
    """``refused``, ``ok`` (accepted, finite), ``raw`` (an exception fedtheory did not mean),
    ``silent`` (a hostile value accepted), ``nan`` (a non-finite result) or ``hang``."""
    try:
        with _time_limit(CALL_SECONDS):
            result = call(**kwargs)
    except FedTheoryError:
        return "refused"
    except AssertionError:
        return "refused" if key.startswith(ASSERTIONS) else "raw"
    except Hang:
        return "hang"
    except Exception:  # noqa: BLE001 - counted as raw, shown in the failure
        return "raw"
    if must_refuse:
        return "silent"
    return "ok" if _finite(result) or key in OVERFLOW_BY_DESIGN else "nan"


def fuzz(key: str, obj: Any) -> list[tuple[str, str, str]]:
    """``(parameter, value label, outcome)`` of every generated call to one callable."""
    call, valid = baseline(key, obj)
    rows = []
    for name, constraint in _declared(obj).items():
        for label, value in constraint.hostile():
            rows.append((name, label, _outcome(key, call, {**valid, name: value}, True)))
        for label, value in constraint.edges(valid.get(name)):
            rows.append((name, label, _outcome(key, call, {**valid, name: value}, False)))
    return rows


DECLARED = sorted(k for k, v in PUBLIC.items() if _declared(v) is not None)
BAD = ("raw", "silent", "nan", "hang")


@pytest.fixture(autouse=True)
def budgets(monkeypatch):
    """At most 1 GiB and 60 s of estimated work per call, whatever the machine."""
    monkeypatch.setenv(ENV, "1G")
    monkeypatch.setenv(TIME_ENV, "60")


@pytest.fixture(autouse=True)
def empty_catalogue(monkeypatch):
    """``register``'s valid call adds its theorem to a throw-away catalogue (once each)."""
    from fedtheory.bounds import catalogue

    monkeypatch.setattr(catalogue, "CATALOGUE", {})


@pytest.fixture(autouse=True)
def own_checks(monkeypatch):
    """``register``'s valid call adds its check to a copy of the registry (the checks'
    declared settings and data are read from it)."""
    monkeypatch.setattr(registry, "CHECKS", dict(registry.CHECKS))


def test_generated_fuzz_of_every_declared_callable(capsys):
    """0 raw exceptions, 0 silent accepts, 0 non-finite results, 0 hangs; prints a summary."""
    totals: Counter = Counter()
    failures = []
    for key in DECLARED:
        for name, label, outcome in fuzz(key, PUBLIC[key]):
            totals[outcome] += 1
            if outcome in BAD:
                failures.append(f"{key}({name}={label}): {outcome}")
    with capsys.disabled():
        print(
            f"\nfuzz: {len(DECLARED)} declared of {len(PUBLIC)} public callables, "
            f"{sum(totals.values())} calls: "
            + ", ".join(f"{totals[k]} {k}" for k in ("refused", "ok", *BAD))
        )
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "key", [pytest.param(k, marks=[pytest.mark.paper(p) for p in sorted(NEEDS.get(k, ()))])
            for k in DECLARED]
)  # fmt: skip
def test_every_declared_callable_has_a_valid_call(key):
    """The fuzz's valid call runs (else a hostile value could be refused for another
    reason than its own)."""
    call, valid = baseline(key, PUBLIC[key])
    call(**valid)


# --- the input classes a user can type ----------------------------------------------------
# Each class is derived from a parameter's declaration and its valid value in the baseline
# call: numpy scalars, 0-d arrays and tensors, tensors of every dtype and requiring grad,
# -0.0, integers of 401 digits, NaN and unknown names inside mappings, damaged files for
# path readers, a folder or a path under a file for path writers, one entry more or fewer
# along an axis whose length another argument fixes. A ``True`` third field: the value must
# be refused (no valid call takes it); ``False``: refused or accepted with finite results;
# ``None``: a NaN the declaration accepts by design, refused or accepted (results may hold it).
HUGE_DIGITS = 10**400
"""An integer no float holds: its conversion overflows (a message must not)."""


def _inner(constraint: Constraint) -> Constraint:
    return getattr(constraint, "constraint", constraint)  # Exemplified: the declared kind


def _refuses(constraint: Constraint, value: Any) -> bool:
    """Whether the declaration refuses ``value`` on its own (no other argument known)."""
    try:
        return constraint.convert(value, {}) is None
    except Exception:  # noqa: BLE001 - a refusal by the conversion
        return True


def _tied(constraint: Constraint, axis: int, ndim: int) -> bool:
    """Whether another argument fixes the length of ``axis`` (declared ``shape`` entry that
    names a parameter, or ``like=``)."""
    if getattr(constraint, "like", None) is not None:
        return True
    shape = getattr(constraint, "shape", None)
    if not shape:
        return False
    leading = getattr(constraint, "leading", False)
    if axis < 0 or not leading and len(shape) == ndim:
        k = axis if axis < 0 else axis
        return -len(shape) <= k < len(shape) and isinstance(shape[k], str)
    return False


def _off_by_one(c: Constraint, valid: Any) -> list[tuple[str, Any, bool]]:
    out = []
    ndim = valid.ndim if hasattr(valid, "ndim") else 0
    cat = torch.cat if isinstance(valid, torch.Tensor) else np.concatenate
    for axis in sorted({0, ndim - 1}) if ndim else ():
        n = valid.shape[axis]
        if n == 0:
            continue
        first = valid[(slice(None),) * axis + (slice(0, 1),)]
        tied = _tied(c, axis - ndim if axis == ndim - 1 else axis, ndim)
        out.append((f"one more along axis {axis}", cat([valid, first], axis), tied))
        if n > 1:
            fewer = valid[(slice(None),) * axis + (slice(0, n - 1),)]
            out.append((f"one fewer along axis {axis}", fewer, tied))
    return out


def _files(c: Location, valid: Any, name: str) -> list[tuple[str, Any, bool]]:
    suffix = c.suffixes[0] if c.suffixes else ""
    folder = Path(tempfile.mkdtemp(suffix=suffix))
    if c.exists:
        binary = Path(tempfile.mkdtemp()) / f"binary{suffix}"
        binary.write_bytes(bytes(range(256)) * 4)
        out = [("binary file", binary, True)]
        if isinstance(valid, (str, Path)) and Path(valid).is_file():
            content = Path(valid).read_bytes()
            truncated = Path(tempfile.mkdtemp()) / f"truncated{suffix}"
            truncated.write_bytes(content[: max(len(content) // 2, 1)])
            out.append(("truncated file", truncated, False))
        return [*out, ("folder", folder, True)]
    blocker = Path(tempfile.mkdtemp()) / "a-file"
    blocker.write_text("")
    under = ("under a file", blocker / f"x{suffix}", True)
    if c.folder == "checked":  # the callee checks the path itself (its own tests)
        return []
    if c.folder:  # an existing folder is what it takes
        return [under]
    if name == "folder" or "folder" in name:
        return []
    return [("folder", folder, True), under]


def input_classes(name: str, constraint: Constraint, valid: Any, given: bool):
    """``(label, value, must_refuse)`` of the input classes of one parameter."""
    c = _inner(constraint)
    out: list[tuple[str, Any, bool]] = []
    if isinstance(c, Location):
        return _files(c, valid, name)
    number = isinstance(valid, int | float) and not isinstance(valid, bool)
    if isinstance(c, Real | Integer) or number:
        out += [("10**400", HUGE_DIGITS, True), ("-10**400", -HUGE_DIGITS, True)]
        # NaN accepted by design ("not measured"): then a result may hold it (None)
        out.append(("numpy nan", np.float64("nan"), _refuses(c, math.nan) or None))
    if given and number:
        scalar = np.int64(valid) if isinstance(valid, int) else np.float64(valid)
        out += [("numpy scalar", scalar, False), ("0-d array", np.array(valid), False),
                ("0-d tensor", torch.tensor(valid), False)]  # fmt: skip
        if isinstance(valid, float):
            out += [("-0.0", -0.0, False), ("subnormal", DENORMAL, _refuses(c, DENORMAL))]
    if given and isinstance(valid, np.ndarray) and valid.dtype.kind in "biuf" and valid.ndim:
        out += [("float32 array", valid.astype(np.float32), False),
                ("tensor", torch.as_tensor(valid), False),
                ("tensor requiring grad",
                 torch.tensor(valid, dtype=torch.float64, requires_grad=True), False)]  # fmt: skip
        out += _off_by_one(c, valid)
    if given and isinstance(valid, torch.Tensor) and valid.is_floating_point() and valid.dim():
        for dtype in (torch.float16, torch.float32, torch.float64, torch.int64):
            if dtype != valid.dtype:
                out.append((f"{dtype} tensor", valid.to(dtype), False))
        out.append(("tensor requiring grad", valid.detach().clone().requires_grad_(True), False))
        out += _off_by_one(c, valid)
    if given and isinstance(c, MappingOf) and isinstance(valid, Mapping):
        out.append(("unknown name", {**valid, "no_such_name": 1.0}, False))
        floats = [k for k, v in valid.items() if isinstance(v, float)]
        values = getattr(c, "values", None)  # NaN allowed in its values: may be in the result
        nan_ok = values is None or not all(  # any value, or NaN or NaN arrays accepted
            _refuses(values, v) for v in (math.nan, np.array([math.nan]))
        )
        out.append(
            ("nan value", {**valid, (floats or ["x"])[0]: math.nan}, None if nan_ok else False)
        )
    return out


def fuzz_classes(key: str, obj: Any) -> list[tuple[str, str, str]]:
    """``(parameter, class label, outcome)`` of the input classes of one callable."""
    call, valid = baseline(key, obj)
    rows = []
    for name, constraint in _declared(obj).items():
        for label, value, must in input_classes(name, constraint, valid.get(name), name in valid):
            outcome = _outcome(key, call, {**valid, name: value}, bool(must))
            rows.append((name, label, "ok" if must is None and outcome == "nan" else outcome))
    return rows


def test_every_input_class_is_refused_or_answered(capsys):
    """0 raw, 0 silent, 0 NaN, 0 over the time limit over every declared callable's input
    classes (at most about 20 calls a parameter, derandomised)."""
    totals: Counter = Counter()
    failures = []
    for key in DECLARED:
        for name, label, outcome in fuzz_classes(key, PUBLIC[key]):
            totals[outcome] += 1
            if outcome in BAD:
                failures.append(f"{key}({name}={label}): {outcome}")
    with capsys.disabled():
        print(
            f"\ninput classes: {len(DECLARED)} callables, {sum(totals.values())} calls: "
            + ", ".join(f"{totals[k]} {k}" for k in ("refused", "ok", *BAD))
        )
    assert not failures, "\n".join(failures)


# --- sizes under an address-space limit --------------------------------------------------
PROBE_SIZES = (10**7, 10**8, 10**9)
"""The sizes every declared size parameter is probed with, under :data:`PROBE_LIMIT`."""
PROBE_LIMIT = 2 << 30
"""The probes' address-space limit (``RLIMIT_AS``): 2 GiB."""
PROBE_SECONDS = 5
"""The probes' time budget (``FEDTHEORY_MAX_SECONDS``): a call refused by its time estimate
is refused under it, one accepted finishes within :data:`CALL_SECONDS`."""

SIZE_PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
import tests.test_fuzz_public_api as F
for line in sys.stdin.read().splitlines():
    print(line, F.probe_size(*line.split()), flush=True)
"""


def size_probes() -> list[str]:
    """``key name size`` of every probe: each declared size parameter at each size."""
    out = []
    for key in DECLARED:
        for name, c in _declared(PUBLIC[key]).items():
            if isinstance(_inner(c), Size) and _inner(c).edges(None):  # [] : none by design
                out += [f"{key} {name} {size}" for size in PROBE_SIZES]
    return out


def probe_size(key: str, name: str, size: str) -> str:
    """One probe's outcome (run in the limited process): ``refused``, ``ok``, ``allocated``
    (a MemoryError: the size was not refused before allocating), ``raw``, ``nan``, ``hang``."""
    call, valid = baseline(key, PUBLIC[key])
    try:
        with _time_limit(CALL_SECONDS):
            result = call(**{**valid, name: int(size)})
    except FedTheoryError:
        return "refused"
    except MemoryError:
        return "allocated"
    except Hang:
        return "hang"
    except Exception:  # noqa: BLE001 - counted as raw
        return "raw"
    return "ok" if _finite(result) or key in OVERFLOW_BY_DESIGN else "nan"


def run_size_probes(probes: list[str]) -> dict[str, str]:
    """Every probe's outcome, in processes under the address-space limit; a probe whose
    process dies (a crash) is recorded as ``crash`` and the next process starts after it."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != ENV} | {TIME_ENV: str(PROBE_SECONDS)}
    code = SIZE_PROBE.format(limit=PROBE_LIMIT)
    root = Path(__file__).resolve().parents[1]
    outcomes: dict[str, str] = {}
    todo = list(probes)
    while todo:
        proc = subprocess.run([sys.executable, "-c", code], input="\n".join(todo), text=True,
                              capture_output=True, env=env, cwd=root, check=False)  # fmt: skip
        for line in proc.stdout.splitlines():
            probe, _, outcome = line.rpartition(" ")
            outcomes[probe] = outcome
        todo = [p for p in todo if p not in outcomes]
        if todo:
            if proc.returncode == 0:
                raise AssertionError(f"probes not run: {todo[:3]}; {proc.stderr[-2000:]}")
            outcomes[todo.pop(0)] = f"crash (exit {proc.returncode}: {proc.stderr[-300:]})"
    return outcomes


def test_every_size_is_refused_before_allocating_under_a_2_gib_address_space(capsys):
    """Every declared size parameter at 10^7, 10^8 and 10^9 (567 probes) under RLIMIT_AS
    2 GiB: refused or answered, never a MemoryError, a raw error, a NaN, a hang or a crash."""
    outcomes = run_size_probes(size_probes())
    totals = Counter(o.split(" ")[0] for o in outcomes.values())
    with capsys.disabled():
        print(
            f"\nsize probes: {len(outcomes)}: " + ", ".join(f"{v} {k}" for k, v in totals.items())
        )
    bad = {p: o for p, o in outcomes.items() if o not in ("refused", "ok")}
    assert not bad, "\n".join(f"{p}: {o}" for p, o in bad.items())
