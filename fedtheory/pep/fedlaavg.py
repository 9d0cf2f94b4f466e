r"""FedLaAvg (Yan et al. 2020) as a PEP: its round, its Example 1 and its Theorem 4.

* The method: :class:`~fedtheory.sim.FedLaAvg` averages every client's latest update over all
  clients (MIFA's table, :func:`fedtheory.pep.methods.rounds`), refreshed only by the
  :math:`K` available clients absent longest (the simulator's ``absent_longest``).
* FedLaAvg's bound on Example 1 (arXiv Theorem 1; journal App. G Theorem 4; catalogue
  ``fedlaavg.example1.fedlaavg_bound``): FedLaAvg (one available client per iteration, exact
  gradients, :math:`\gamma=1/(2\sqrt T)`) on two clients :math:`f_i(x)=\|x-e_i\|^2` with
  :math:`\|e_1-e_2\|\le1` (Example 1 with :math:`e_1=0,e_2=1` and its isometric images in
  :math:`\mathbb R^d`), blocks :math:`t_1,t_2`, :math:`\|x_0-x^*\|\le a`. Criterion
  :math:`\min_{0\le t\le T}\|x_t-x^*\|^2` (:math:`=\min_tF(x_t)-F^*` on this class, the
  paper's :math:`(\hat x-x^*)^2` with :math:`\hat x=\arg\min_{x_t}f(x_t)`). The paper's
  bound is increasing in :math:`a` and :math:`|e_1-e_2|`, so it holds for the whole class
  at its largest values: bound / PEP value is the exact looseness.
* FedAvg on Example 1 (Example 1; journal App. C eq. (16)-(19); catalogue
  ``fedlaavg.example1.end_of_period``): with exact gradients and alternating blocks the
  period-end iterate tends to :math:`X_B\ne x^*`; from :math:`x_0=x^*` it is
  :math:`x_{kP}-x^*=(X_B-x^*)(1-\rho^k)`, :math:`\rho=(1-2\gamma)^{t_1+t_2}`, a value the
  exact worst case of :math:`\|x_{kP}-x^*\|^2` must reach: FedAvg's worst case plateaus
  at a positive level while FedLaAvg's decreases.

The module's :data:`METHODS` and :data:`STATEMENTS` join the PEP layer through FedLaAvg's
record (:mod:`fedtheory.pep.registry`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from fedtheory.constraints import (
    Exemplified,
    Instance,
    Integer,
    MappingOf,
    Mask,
    Real,
    Size,
    Text,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.pep import methods, registry
from fedtheory.pep.classes import Isotropic
from fedtheory.pep.heterogeneity import AtOptimum
from fedtheory.pep.initial import Initial
from fedtheory.pep.participation import Participation
from fedtheory.pep.solve import PepResult, worst_case
from fedtheory.sim.fedlaavg import FedLaAvg, absent_longest

EXAMPLE1 = Isotropic(2.0)
"""The class of Example 1's clients :math:`f_i(x)=\\|x-e_i\\|^2` (Hessian :math:`2I`)."""
EXAMPLE1_CONSTANTS = ("t1", "t2", "T", "x0")
"""The constants of a worst instance of FedLaAvg's Example 1 family."""
FAMILY = "fedlaavg.example1.fedlaavg_bound"
"""The tightness family whose worst instance has an exact worst case here."""


@declare(
    algorithm=Exemplified(Instance(FedLaAvg), lambda args: FedLaAvg(lr=0.1)),
    mask=Mask(ndim=2, min_size=1),
)
def participants(algorithm, mask: np.ndarray) -> np.ndarray:
    """The clients FedLaAvg trains each round ``[T, N]``: of the available ones (all in a
    forced first round), the ``clients_per_round`` absent longest."""
    rows = torch.from_numpy(methods.available(algorithm, mask))
    last = torch.full((1, rows.shape[1]), -1, dtype=torch.int64)
    chosen = []
    for t in range(rows.shape[0]):
        pick = absent_longest(rows[t : t + 1], last, algorithm.clients_per_round)
        last = torch.where(pick, t, last)
        chosen.append(pick)
    return torch.cat(chosen).numpy()


def _run(algorithm, fs, x0, mask: np.ndarray) -> list:
    return methods.rounds(algorithm, fs, x0, participants(algorithm, mask))


def _build(args) -> FedLaAvg:
    return FedLaAvg(clients_per_round=args.per_round, local_steps=args.local_steps, lr=args.lr)


@declare(t1=Size(), t2=Size(), T=Size(), a2=Real(0.0, low_open=True), zeta2=Real(0.0))
def example1_setting(*, t1: int, t2: int, T: int, a2: float, zeta2: float = 1.0) -> dict:
    """Pattern, initial condition and heterogeneity of Example 1 (``a2`` =
    :math:`\\|x_0-x^*\\|^2` bound, ``zeta2`` = :math:`\\|e_1-e_2\\|^2`, since
    :math:`\\nabla f_i(x^*)=\\pm(e_2-e_1)`)."""
    return {
        "participation": Participation.alternating(T, 2, blocks=(t1, t2)),
        "initial": Initial(a2),
        "heterogeneity": AtOptimum(zeta2),
    }


@declare(t1=Size(), t2=Size(), T=Size(), x0=Real())
def theorem4(*, t1: int, t2: int, T: int, x0: float) -> tuple[PepResult, float]:
    """Exact worst case of FedLaAvg on the Example 1 class with ``a = |x0 - 1/2|``
    (:math:`e_1=0, e_2=1`) and the paper's bound at the same constants."""
    from fedtheory.bounds import fedlaavg

    a2 = float(np.square(np.float64(x0) - 0.5)) if abs(x0) < 1e150 else math.inf
    if not math.isfinite(a2):
        raise ParameterError(
            f"The 'x0' parameter of theorem4 must keep (x0 - 1/2)^2 finite. Got {x0!r} instead."
        )
    s = example1_setting(t1=t1, t2=t2, T=T, a2=max(a2, 1e-12))
    alg = FedLaAvg(clients_per_round=1, local_steps=1, lr=1 / (2 * math.sqrt(T)))
    part = s.pop("participation")
    solvers = ("CLARABEL-TIGHT", "CLARABEL", "SCS")  # a 3 x 3 program with tiny values
    # the bound first: constants it refuses (an overflow) are refused before the solve
    bound = fedlaavg.fedlaavg_bound.evaluate(x0=x0, e1=0.0, e2=1.0, t1=t1, t2=t2, T=T).total
    result = worst_case(alg, EXAMPLE1, part, criterion="min_gap", solvers=solvers, **s)
    return result, float(bound)


@declare(
    t1=Size(), t2=Size(), periods=Integer(1), gamma=Real(0.0, 1.0, low_open=True, high_open=True)
)
def example1_plateau(*, t1: int, t2: int, periods: int, gamma: float) -> tuple[float, float]:
    """``(X_B - x*)^2`` (the limit's squared distance) and the squared distance of
    FedAvg's period-end iterate after ``periods`` periods from :math:`x_0=x^*`, on Example 1
    with :math:`e_1=0,e_2=1` (Yan et al. 2020, App. C eq. (16)-(19))."""
    from fedtheory.bounds import fedlaavg

    k = periods
    limit = fedlaavg.end_of_period.evaluate(e1=0.0, e2=1.0, gamma=gamma, t1=t1, t2=t2).total
    rho = (1 - 2 * gamma) ** (t1 + t2)
    gap2 = (float(limit) - 0.5) ** 2
    return gap2, gap2 * (1 - rho**k) ** 2


def _whole(value: object) -> object:
    """A whole float (a JSON number such as ``8.0``) as an int; anything else as given
    (then checked by the function it goes to)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


@declare(family_key=Text(), instance=MappingOf())
def exact(family_key: str, instance: dict) -> PepResult | None:
    """The PEP of :data:`FAMILY`'s worst instance (``instance`` gives ``t1, t2, T, x0``), or
    None for another family."""
    if family_key != FAMILY:
        return None
    missing = [k for k in EXAMPLE1_CONSTANTS if k not in instance]
    if missing:
        raise ParameterError(
            f"The 'instance' parameter of exact_worst_case_for must give {EXAMPLE1_CONSTANTS} "
            f"for {family_key!r}. Got {instance!r} (missing {missing}) instead."
        )
    return theorem4(**{k: _whole(instance[k]) for k in EXAMPLE1_CONSTANTS})[0]


# --- the pep-exact validation's rows and figure ------------------------------------------------
REFERENCES = (
    "Yan et al. 2020 (FedLaAvg), arXiv Theorem 1; journal App. G Theorem 4",
    "Yan et al. 2020 (FedLaAvg), Example 1; journal App. C eq. (16)-(19)",
)


def _settings(size: str) -> dict:
    grid = {
        "tiny": [[1, 1, 4], [2, 1, 6]],
        "quick": [[1, 1, 4], [2, 1, 6], [3, 1, 8], [2, 2, 12]],
        "full": [[1, 1, 4], [2, 1, 6], [3, 1, 8], [2, 2, 12], [5, 1, 18], [9, 1, 24]],
    }[size]
    periods = {"tiny": [1, 2, 4], "quick": [1, 2, 4, 6], "full": [1, 2, 4, 6, 8]}[size]
    return {"grid": grid, "x0": 3.0, "t1": 2, "t2": 1, "gamma": 0.1, "periods": periods}


def _compute(s: dict) -> dict:
    from fedtheory.pep.certificate import record
    from fedtheory.pep.replay import replay
    from fedtheory.sim import AverageParticipating, FedAvg

    out: dict[str, list] = {k: [] for k in ("exact", "bound", "replayed", "seconds")}
    for t1, t2, T in s["grid"]:
        result, bound = theorem4(t1=t1, t2=t2, T=T, x0=s["x0"])
        if not result.ok:
            raise RuntimeError(f"PEP of FedLaAvg Theorem 4 at t1={t1}, t2={t2}, T={T}: {result}")
        out["exact"].append(result.value)
        record(out, "exact", result)
        out["bound"].append(bound)
        out["replayed"].append(replay(result).value)
        out["seconds"].append(result.seconds)
    period = s["t1"] + s["t2"]
    rounds = [k * period for k in s["periods"]]
    algs = {
        "fedavg": FedAvg(AverageParticipating(), local_steps=1, lr=s["gamma"]),
        "fedlaavg": FedLaAvg(clients_per_round=1, local_steps=1, lr=s["gamma"]),
    }
    for name, alg in algs.items():
        values = []
        for T in rounds:
            setting = example1_setting(t1=s["t1"], t2=s["t2"], T=T, a2=1.0)
            r = worst_case(alg, EXAMPLE1, setting.pop("participation"), **setting)
            if not r.ok:
                raise RuntimeError(f"PEP of {name} on Example 1 at T={T}: {r}")
            values.append(r.value)
            record(out, name, r)
        out[name] = values
    plateau = [
        example1_plateau(t1=s["t1"], t2=s["t2"], periods=k, gamma=s["gamma"]) for k in s["periods"]
    ]
    out["trajectory"] = [v for _, v in plateau]
    out["limit"] = [g for g, _ in plateau]
    out["rounds"] = rounds
    return out


def _judge(data, s) -> list:
    from fedtheory.pep.certificate import said
    from fedtheory.verdict import compare_equal, compare_upper_bound, consistency_check

    ref4, ref1 = REFERENCES
    return [
        said(compare_upper_bound(
            "FedLaAvg on Example 1's class: exact worst case of min_t ||x_t - x*||^2 (PEP) "
            f"<= the theorem's bound, grid (t1, t2, T) = {s['grid']}, x0 = {s['x0']:g}",
            ref4,
            data["exact"],
            data["bound"],
            floor=data["exact_accuracy"],
        ), data, "exact"),
        said(consistency_check(compare_equal(
            "the PEP's worst-case instance replayed in the simulator attains the PEP value",
            ref4,
            data["replayed"],
            data["exact"],
            rtol=0.0,
            atol=float(np.max(data["exact_accuracy"])),
        )), data, "exact"),
        said(compare_upper_bound(
            "FedAvg on Example 1 from x0 = x*: (X_B - x*)^2 (1 - rho^k)^2 at the k-th period "
            f"end <= the exact worst case (PEP, ||x0 - x*|| <= 1), gamma = {s['gamma']:g}",
            ref1,
            data["trajectory"],
            data["fedavg"],
            floor=data["fedavg_accuracy"],
        ), data, "fedavg"),
    ]  # fmt: skip


def _notes(data, s) -> list[str]:
    ratio = data["bound"] / data["exact"]
    return [
        f"bound / exact worst case of FedLaAvg Theorem 4 over (t1, t2, T) = {s['grid']}: "
        + ", ".join(f"{r:.4g}" for r in ratio),
        f"exact worst cases at period ends T = {[int(t) for t in data['rounds']]}: FedAvg "
        + ", ".join(f"{v:.4g}" for v in data["fedavg"])
        + f" (limit (X_B - x*)^2 = {data['limit'][0]:.4g}); FedLaAvg "
        + ", ".join(f"{v:.4g}" for v in data["fedlaavg"]),
    ]


def _plot(data, s, axes, style) -> str:
    ax1, ax2 = axes
    T = np.array([g[2] for g in s["grid"]])
    ax1.plot(T, data["bound"], **style.series(0, line=False), label="Theorem 4 bound")
    ax1.plot(T, data["exact"], **style.series(1, line=False), label="exact worst case (PEP)")
    ax1.plot(T, data["replayed"], **style.series(2, line=False, filled=False),
             markersize=9, label="replayed instance (simulator)")  # fmt: skip
    for (t1, t2, t), y in zip(s["grid"], data["exact"], strict=True):
        ax1.annotate(f"$({t1},{t2})$", (t, y), textcoords="offset points", xytext=(6, 6))
    ax1.set(
        yscale="log",
        xlabel="horizon $T$ (iterations); label: blocks $(t_1,t_2)$",
        ylabel=r"$\min_t\|x_t-x^*\|^2$ (squared model units)",
        title="FedLaAvg on Example 1: bound vs exact worst case",
    )
    style.log_labels(ax1)
    style.legend(ax1)
    t = data["rounds"]
    ax2.plot(t, data["fedavg"], **style.series(0), label="FedAvg, exact worst case")
    ax2.plot(t, data["fedlaavg"], **style.series(1), label="FedLaAvg, exact worst case")
    ax2.plot(t, data["trajectory"], **style.series(2), label=r"FedAvg from $x_0=x^*$ (paper)")
    ax2.axhline(data["limit"][0], **style.REFERENCE, label=r"$(X_B-x^*)^2$")
    ax2.set(
        yscale="log",
        xlabel="round $T$ (period ends)",
        ylabel=r"$\|x_T-x^*\|^2$ (squared model units)",
        title=rf"Example 1, $\gamma={s['gamma']:g}$, $t_1={s['t1']}$, $t_2={s['t2']}$",
    )
    style.log_labels(ax2)
    style.legend(ax2)
    tol_exact = float(np.max(data["exact_accuracy"]))
    tol_fedavg = float(np.max(data["fedavg_accuracy"]))
    return (
        "FedLaAvg Theorem 4 panel: one point per grid entry (blocks in brackets); the "
        "replayed instance's open markers sit on the exact worst case. Example 1 panel: "
        "FedAvg's exact worst case stays above the paper's trajectory from x0 = x* and tends "
        "to a positive level (its limit cycle), "
        "FedLaAvg's decreases. Each comparison took the tolerance of the PEP certificates it "
        "uses (the largest over its points: duality gap plus the scaled feasibility error): "
        f"Theorem 4 <= bound and the replayed instance {tol_exact:.1g}; "
        f"FedAvg's trajectory <= its exact worst case {tol_fedavg:.1g}."
    )


def _command(args) -> tuple[PepResult, float, str]:
    result, bound = theorem4(t1=args.t1, t2=args.t2, T=args.rounds, x0=args.x0)
    heading = (
        "FedLaAvg on Example 1 (Yan et al. 2020, arXiv Theorem 1; journal App. G "
        "Theorem 4): min_{t<=T} F(x_t) - F*, which is min_t ||x_t - x*||^2 here "
        "(F the mean of f_i = ||x - e_i||^2), over ||e1 - e2|| <= 1, "
        "||x0 - x*|| <= |x0 - 1/2|, gamma = 1/(2 sqrt T)"
    )
    return result, bound, heading


METHODS = (
    registry.Method(
        FedLaAvg,
        _run,
        participants,
        command="fedlaavg",
        build=_build,
        options=(
            (
                ("--per-round",),
                {
                    "type": int,
                    "default": 1,
                    "help": "fedlaavg: K, the clients per round (default 1)",
                },
            ),
        ),  # fmt: skip
    ),
)
"""FedLaAvg as a PEP method (``fedtheory pep fedlaavg``)."""

STATEMENTS = (
    registry.Statement(
        "fedlaavg",
        "FedLaAvg's Theorem 4 on Example 1 and FedAvg's Example 1 limit",
        _settings,
        _compute,
        _judge,
        notes=_notes,
        bounds=("bound", "exact", "fedavg"),
        panels=2,
        plot=_plot,
        exact=exact,
        command="fedlaavg-theorem4",
        run=_command,
        options=(
            (
                ("--t1",),
                {
                    "type": int,
                    "default": 2,
                    "help": "fedlaavg-theorem4: client 1's block t1 (default 2)",
                },
            ),
            (
                ("--t2",),
                {
                    "type": int,
                    "default": 1,
                    "help": "fedlaavg-theorem4: client 2's block t2 (default 1)",
                },
            ),
            (
                ("--x0",),
                {
                    "type": float,
                    "default": 3.0,
                    "help": "fedlaavg-theorem4: the initial point x0 (e1 = 0, e2 = 1) (default 3)",
                },
            ),
        ),  # fmt: skip
    ),
)
"""Theorem 4 and Example 1 against their exact worst cases (``pep-exact``, the tightness
table's exact column, ``fedtheory pep fedlaavg-theorem4``, which uses only -T, --t1, --t2,
--x0)."""
