r"""Bring your own theorem: a validation built from a ``Theorem`` and a measurement.

:func:`theorem_check` turns a statement (a :class:`~fedtheory.bounds.Theorem`, catalogue or
your own: sympy terms, hypotheses, reference) and a function that measures the quantity it
bounds on an instance into a :class:`~fedtheory.validation.machinery.registry.Check`, the
object every paper's validation is. The runner (:func:`fedtheory.validation.machinery.runner.run`)
then gives it the same machinery: verdict rows (with confidence intervals for random quantities, and
*outside assumptions* where an instance breaks a hypothesis), a bound-vs-measured figure, a
report section, resumable data, ``results.json``.

From Python::

    check = theorem_check(my_theorem, my_measure, name="my-check", instances=[...])
    run([check], out, size="quick")

From the command line, a file that registers its checks::

    # my_checks.py
    from fedtheory.validation import register, theorem_check
    register(theorem_check(...))

    $ fedtheory validate --module my_checks.py --out results --fail-on-violated

The measurement. With ``replicates=None`` (a deterministic quantity)
``measure(**instance) -> float`` (or a :class:`fedtheory.verdict.Measured` with the
magnitude of the computation, for the rounding floor); otherwise
``measure(**instance, replicates=R, seed=s) -> array [R]`` of i.i.d. replicates (vectorise
over them as you like), judged on the mean's confidence interval
(:func:`fedtheory.verdict.compare_mean_upper_bound`: exact binomial for 0/1 outcomes,
Student-t otherwise; *inconclusive* when the interval contains the bound). With
``replicates="auto"`` the replicates are added in doubling batches until the verdict is
decided or ``max_replicates`` is reached
(:func:`fedtheory.verdict.replicate_until_decided`). ``instance`` holds the theorem's
parameters and any extra keys the measurement needs (a problem's dimension, a seed); the
theorem is evaluated on its own parameters only.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from fedtheory.bounds.judgement import Judge
from fedtheory.constraints import (
    Either,
    Function,
    Integer,
    Location,
    Option,
    Real,
    Text,
    declare,
)
from fedtheory.validation.machinery import registry
from fedtheory.validation.machinery.kinds import (
    FolderName,
    InstanceKey,
    Instances,
    Measurable,
    PerSize,
)
from fedtheory.validation.machinery.plots import confidence_bars, legend, panels, series
from fedtheory.validation.machinery.registry import Check
from fedtheory.verdict import AUTO_START, adaptive_looks, replicate_until_decided

__all__ = ["load_checks", "theorem_check"]

_OWNER = "theorem_check"
SAME_BOUND = 1e-3
"""Bound curves of two series equal within this relative difference are drawn once, named
for both (on the figure they would lie on one path)."""
LOG_SPAN = 1e3
"""The figure's vertical axis is logarithmic when the values span this factor or more."""
MAX_REPLICATES = {"tiny": 4096, "quick": 32768, "full": 262144}
"""Default cap of ``replicates="auto"`` at each size."""


def _code_digest(theorem, *functions) -> str:
    """Hash of the statement and of the sources of the measurement (and of the constants'
    function), so that data computed by other code is never reused (a source that cannot be
    read is never reused either)."""
    sources = []
    for fn in functions:
        try:
            sources.append(inspect.getsource(fn))
        except (OSError, TypeError):
            sources.append(secrets.token_hex(16))
    statement = [
        theorem.key,
        theorem.reference,
        theorem.kind,
        *(f"{k}={sp.srepr(e)}" for k, e in theorem.terms.items()),
        *(
            f"{c.text}:{sp.srepr(sp.sympify(c.lhs))}{c.rel}{sp.srepr(sp.sympify(c.rhs))}"
            for c in theorem.conditions
        ),  # fmt: skip
    ]
    return hashlib.sha256("\n".join([*statement, *sources]).encode()).hexdigest()[:16]


_GREEK = re.compile(
    r"(?<![\\$\w])(alpha|beta|gamma|delta|epsilon|zeta|eta|theta|kappa|lambda|mu|nu|xi|rho|"
    r"sigma|tau|phi|chi|psi|omega)(?:_(\w+))?(?![\w$])"
)
"""A Greek letter's name, with an optional subscript (``rho``, ``eta_l``), standing alone."""


def _symbols(text: str) -> str:
    """``text`` for a figure: each Greek letter named alone as mathtext (``delta=0.05`` ->
    ``$\\delta$=0.05``, ``rho_max`` -> ``$\\rho_{max}$``); other text as written."""
    return _GREEK.sub(
        lambda m: f"$\\{m.group(1)}" + (f"_{{{m.group(2)}}}$" if m.group(2) else "$"), text
    )


def _layout(insts: list[dict], x: str | None, group: str | None) -> tuple:
    """The figure's horizontal key and series keys: ``x`` (default: the first key whose
    numeric value varies across the instances; none: the instance's index) and ``group``
    (default: every other key that varies), so that instances of different parameter values
    are never joined into one line."""
    common = [k for k in insts[0] if all(k in inst for inst in insts)]
    varying = [k for k in common if len({json.dumps(inst[k]) for inst in insts}) > 1]
    numeric = [k for k in varying if all(isinstance(inst[k], (int, float)) for inst in insts)]
    xkey = x if x is not None else (numeric[0] if numeric else None)
    gkeys = [group] if group is not None else [k for k in varying if k != xkey]
    return xkey, gkeys


def _label(instance: dict, keys) -> str:
    def fmt(v):
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            return f"{float(v):.6g}"  # np.float64 too: a plain number, never np.float64(...)
        return str(v)

    return ", ".join(f"{k}={fmt(instance[k])}" for k in keys)


@dataclass(frozen=True)
class _UserCheck:
    """The parts of one :func:`theorem_check` (its arguments, checked): the settings at a
    size, and the ``compute``, ``judge`` and ``plot`` a :class:`Check` runs on them."""

    theorem: object
    measure: Callable
    judge_at: Judge
    name: str
    instances: dict  # size -> [instance dict]
    replicates: dict | None  # size -> int or "auto"; None: a deterministic measurement
    max_replicates: dict  # size -> cap of "auto"
    margin: float | None
    seed: int
    x: str | None
    measured: str
    constants: Callable | None
    group: str | None
    digest: str

    def settings(self, size: str) -> dict:
        reps = None if self.replicates is None else self.replicates[size]
        return {
            "theorem": self.theorem.key,
            "instances": self.instances[size],
            "replicates": reps,
            "max_replicates": self.max_replicates[size] if reps == "auto" else None,
            "margin": self.margin,
            "seed": self.seed,
            "code": self.digest,
        }

    def values_of(self, inst: dict) -> dict:
        """The theorem's parameters at an instance (derived by ``constants`` if given)."""
        return inst if self.constants is None else dict(self.constants(**inst))

    # --- compute: one judgement per instance -------------------------------------------
    def compute(self, s: dict) -> dict[str, np.ndarray]:
        judged = [self._judged(s, i, inst) for i, inst in enumerate(s["instances"])]
        js = [j for j, _ in judged]
        return {
            "measured": _padded([m for _, m in judged]),  # [I, R] (R = 1: deterministic)
            "bound": np.array([float(j.bound) for j in js]),  # [I]
            "valid": np.array([j.valid for j in js]),  # [I] hypotheses hold
            "magnitude": np.array([j.magnitude for j in js]),  # [I] largest magnitude
            "scaled": np.array([j.scaled for j in js]),  # [I] the measurement gave it (Measured)
        }

    def _judged(self, s: dict, i: int, inst: dict) -> tuple:
        """The judgement of instance ``i`` and its measured values ``[R]``."""
        where = f"check '{self.name}', instance {_label(inst, inst)}"
        values = self.values_of(inst)
        if s["replicates"] is None:
            j = self.judge_at(values, self.measure(**inst), where=where)
            return j, np.array([j.measured])
        if s["replicates"] == "auto":
            return self._adaptive(s, i, inst, values, where)
        size = s["replicates"]
        drawn = self._draw(s, i, inst, 0, size)
        j = self.judge_at(values, samples=drawn, where=where, shape=(size,))
        return j, j.samples

    def _adaptive(self, s: dict, i: int, inst: dict, values: dict, where: str):
        """Instance ``i`` judged on doubling batches until decided or capped."""

        def look(batch, size):
            drawn = self._draw(s, i, inst, batch, size)
            return self.judge_at(values, samples=drawn, where=where, shape=(size,)).samples

        def decide(samples, level):
            return self.judge_at(values, samples=samples).row(confidence=level)

        _, samples = replicate_until_decided(look, decide, cap=s["max_replicates"])
        return self.judge_at(values, samples=samples), samples

    def _draw(self, s: dict, i: int, inst: dict, batch: int, size: int) -> np.ndarray:
        """``size`` replicates of instance ``i``, batch ``batch`` (seed ``seed + i`` first)."""
        seed = s["seed"] + i
        if batch:
            seed = int(np.random.SeedSequence([s["seed"], i, batch]).generate_state(1)[0])
        return self.measure(**inst, replicates=size, seed=seed)

    # --- judge: one verdict row per instance -------------------------------------------
    def judge(self, data: dict, s: dict) -> list:
        return [self._row(data, s, i, inst) for i, inst in enumerate(s["instances"])]

    def _claim(self, inst: dict) -> str:
        relation = "<=" if self.theorem.kind == "upper bound" else "=="
        claim = f"{self.measured} {relation} {self.theorem.title} at {_label(inst, inst)}"
        if self.constants is None:
            return claim
        derived = self.values_of(inst)  # the derived constants, as plain numbers
        return claim + f" (constants {_label(derived, derived)})"

    def _row(self, data: dict, s: dict, i: int, inst: dict):
        m = data["measured"][i]
        m = m[~np.isnan(m)]
        deterministic = s["replicates"] is None
        j = self.judge_at.of(
            m[0] if deterministic else None,
            data["bound"][i],
            samples=None if deterministic else m,
            valid=bool(data["valid"][i]),
            magnitude=float(data["magnitude"][i]),
            scaled=bool(data["scaled"][i]),
        )
        if s["replicates"] != "auto":
            return j.row(self._claim(inst))
        looks, level = adaptive_looks(s["max_replicates"])
        row = j.row(self._claim(inst), confidence=level)
        k = int(np.searchsorted(looks, m.size)) + 1
        return replace(row, detail=row.detail + (
            f"; adaptive replication: {m.size} replicates after {k} of {len(looks)} "
            f"planned looks (cap {s['max_replicates']}; each look at confidence "
            f"{level:.4g})"))  # fmt: skip

    # --- plot: measured and bound per series, and their ratio --------------------------
    def plot(self, data: dict, s: dict, fig) -> str:
        ax1, ax2 = panels(fig, 2)  # each legend under its panel (the report's style)
        figure = _Figure.of(data, s["instances"], self.x, self.group)
        bounds: dict[tuple, tuple] = {}  # one bound curve per distinct curve, named for all
        shown = _symbols(self.measured)  # the figure's text: Greek names as mathtext
        for j, key in enumerate(figure.keys):  # one series per combination of the others
            figure.draw_series(ax1, ax2, j, key, shown, bounds)
        figure.mark_outside(ax1)
        title = self.theorem.title
        xlabel = _symbols(figure.xlabel)
        ax1.set(xlabel=xlabel, ylabel=shown, title=_symbols(f"{title}: bound and measured"))
        legend(ax1)
        ax2.axhline(1.0, color="k", lw=1, ls=":", label="ratio 1 (bound attained)")
        ax2.set(xlabel=xlabel, ylabel="measured / bound", title="Tightness")
        legend(ax2)
        return figure.caption(title, bounds)


def _padded(samples: list[np.ndarray]) -> np.ndarray:
    """``[I, R]``: each instance's samples, NaN after its own count."""
    out = np.full((len(samples), max(len(v) for v in samples)), np.nan)
    for i, v in enumerate(samples):
        out[i, : len(v)] = v
    return out


@dataclass(frozen=True)
class _Figure:
    """A user check's figure: the horizontal values, the series keys, the measured centre
    (with its confidence bars for replicates) and the bound of every instance."""

    insts: list
    xs: np.ndarray  # [I]
    xlabel: str
    gkeys: list
    keys: list  # the distinct values of gkeys, one series each
    centre: np.ndarray  # [I] measured value or mean
    ci: np.ndarray | None  # [I, 2] confidence interval (replicates) or None
    yerr: np.ndarray | None  # [2, I]
    data: dict

    @classmethod
    def of(cls, data: dict, insts: list, x: str | None, group: str | None) -> _Figure:
        xkey, gkeys = _layout(insts, x, group)
        xs = np.array([inst[xkey] for inst in insts] if xkey else np.arange(len(insts)),
                      dtype=float)  # fmt: skip
        values = data["measured"]  # [I, R], NaN-padded
        ci = yerr = None
        centre = values[:, 0]
        if values.shape[1] > 1:
            ci, yerr = confidence_bars([v[~np.isnan(v)] for v in values])
            centre = ci[:, 0]
        keys = list(dict.fromkeys(tuple(inst[k] for k in gkeys) for inst in insts))
        return cls(insts, xs, xkey or "instance", gkeys, keys, centre, ci, yerr, data)

    def draw_series(self, ax1, ax2, j: int, key: tuple, measured: str, bounds: dict) -> None:
        """Series ``j`` (instances whose group keys are ``key``, joined in order of x):
        measured, bound (drawn once for series of the same bound) and their ratio."""
        idx = [i for i, inst in enumerate(self.insts) if tuple(inst[k] for k in self.gkeys) == key]
        idx = np.array(sorted(idx, key=lambda i: self.xs[i]))
        tag = _symbols(_label(dict(zip(self.gkeys, key, strict=True)), self.gkeys))
        tag = f" ({tag})" if tag else ""
        look = series(j)
        if self.ci is not None:
            ax1.errorbar(self.xs[idx], self.ci[idx, 0], yerr=self.yerr[:, idx], capsize=4,
                         **look, label=f"{measured}, mean and 95% CI{tag}")  # fmt: skip
        else:
            ax1.plot(self.xs[idx], self.centre[idx], **look, label=f"{measured}{tag}")
        _bound_line(ax1, bounds, tuple(self.xs[idx]), self.data["bound"][idx], look, tag)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self.centre[idx] / self.data["bound"][idx]
        ax2.plot(self.xs[idx], ratio, **look, label=f"measured / bound{tag}")

    def mark_outside(self, ax) -> None:
        """A ring around the bound of every instance outside the hypotheses (never over the
        point, under the series); a logarithmic axis where the values span three decades or
        more (three labelled ticks at least)."""
        outside = ~self.data["valid"].astype(bool)
        if outside.any():
            ax.scatter(self.xs[outside], self.data["bound"][outside], s=330, facecolors="none",
                       edgecolors="k", linewidths=1.0, zorder=1.5,
                       label="outside the hypotheses (circled)")  # fmt: skip
        drawn = np.concatenate([self.centre, self.data["bound"]])
        if np.all(drawn > 0) and drawn.max() >= LOG_SPAN * drawn.min():
            ax.set_yscale("log")

    def caption(self, title: str, bounds: dict) -> str:
        per = f", one series per {', '.join(self.gkeys)}" if self.gkeys else ""
        many = self.ci is not None
        what = "mean with its 95% confidence interval" if many else "measured value"
        shared = (
            f" Series whose bounds are equal within {SAME_BOUND:.1%} share one bound line, "
            "named for all of them."
            if any(len(tags) > 1 for _, tags in bounds.values())
            else ""
        )
        return (
            f"{title}: the {what} (solid) and the bound (dashed, hollow markers) "
            f"against {self.xlabel}{per}; right: their ratio.{shared}"
        )


def _bound_line(ax, bounds: dict, xs: tuple, b: np.ndarray, look: dict, tag: str) -> None:
    """Draw the bound ``b`` of one series, or name it on the line of an earlier series whose
    bound is the same within :data:`SAME_BOUND` (on the figure they would lie on one path)."""
    same = next((c for c in bounds if c[0] == xs
                 and np.allclose(c[1], b, rtol=SAME_BOUND, atol=0.0)), None)  # fmt: skip
    if same is None:
        hollow = {**look, "linestyle": "--", "markerfacecolor": "none"}  # past the palette
        (line,) = ax.plot(xs, b, **hollow, label=f"bound{tag}")
        bounds[(xs, tuple(b))] = (line, [tag.strip(" ()")])
        return
    line, tags = bounds[same]
    tags.append(tag.strip(" ()"))
    exact = all(np.array_equal(c[1], b) for c in bounds if bounds[c][0] is line)
    within = "" if exact else f"; equal within {SAME_BOUND:.1%}"
    line.set_label(f"bound ({' and '.join(tags)}{within})")


@declare(
    "seed",
    theorem=Measurable(),
    measure=Function(),
    name=FolderName(),
    constants=Function(none=True),
    instances=PerSize(Instances()),
    x=InstanceKey(none=True),
    group=InstanceKey(none=True),
    replicates=PerSize(Either(Option("auto"), Integer(2)), none=True),
    max_replicates=PerSize(Integer(AUTO_START), none=True),
    margin=Real(0.0, none=True),
    measured=Text(),
    title=Text(none=True),
)
def theorem_check(
    theorem,
    measure: Callable,
    *,
    name: str,
    instances,
    replicates=None,
    max_replicates=None,
    margin: float | None = None,
    seed: int = 0,
    x: str | None = None,
    measured: str = "measured",
    title: str | None = None,
    constants: Callable[..., Mapping] | None = None,
    group: str | None = None,
) -> Check:
    r"""A validation of ``theorem`` against ``measure`` on ``instances``.

    Parameters
    ----------
    theorem : Theorem
        An upper bound or an exact statement (a catalogue theorem or your own).
    measure : callable
        The quantity the theorem speaks of, computed independently of the bound (module
        docstring for its two signatures).
    name : str
        The validation's name (``fedtheory validate --check NAME``, report anchors).
    instances : list of dict, or dict size -> list of dict
        Each dict holds the theorem's parameters (and any extra keys ``measure`` needs);
        JSON-able. One verdict row per instance; an instance outside the theorem's
        hypotheses gets the verdict *outside assumptions*.
    replicates : None, int, "auto", or dict size -> int or "auto"
        ``None``: ``measure`` is deterministic. Otherwise the number of i.i.d. replicates
        (at least 2) per instance at each size (``tiny``/``quick``/``full``), or
        ``"auto"``: batches of ``AUTO_START, AUTO_START, 2 AUTO_START, ...`` replicates
        until the verdict is decided or ``max_replicates`` is reached, every look at a
        Bonferroni-corrected level so that the confidence stays 95% over the looks.
    max_replicates : int or dict size -> int, optional
        Cap of ``replicates="auto"`` (default :data:`MAX_REPLICATES`).
    margin : float, optional
        Equivalence margin of an exact statement on a random quantity: it *holds* when
        the mean's interval lies inside ``prediction ± margin`` (two one-sided tests);
        without one it can only be *violated* or *inconclusive*.
    seed : int
        Seed passed to ``measure`` (instance ``i`` gets ``seed + i``; with
        ``replicates="auto"`` its later batches get seeds drawn from
        ``SeedSequence([seed, i, batch])``).
    x : str, optional
        Instance key on the figure's horizontal axis (default: the instance's index).
    measured : str
        Name of the measured quantity in the verdict rows, e.g. ``"E||w_T - w*||^2"``.
    title : str, optional
        Section title (default: the theorem's title).
    constants : callable, optional
        ``constants(**instance) -> {parameter: value}``: the theorem's parameters derived
        from an instance (a problem, an iterate, weights built from the instance's keys, as
        CA-Fed's :math:`\kappa, \chi^2, \Gamma` are by
        :func:`fedtheory.bounds.cafed.decomposition_constants`); the instances then need not
        hold the theorem's parameters.
    group : str, optional
        Instance key whose values split the figure's instances into separate series (one
        line per value, e.g. one per problem), drawn against ``x``.

    Returns
    -------
    Check
        Run it with ``fedtheory.validation.machinery.runner.run([check], out, size=...)``, or
        ``register`` it in a file given to ``fedtheory validate --module``.
    """
    user = _UserCheck(
        theorem,
        measure,
        Judge(theorem, measure, margin=margin, owner=_OWNER),
        name=name,
        instances=instances,
        replicates=replicates,
        max_replicates=max_replicates or MAX_REPLICATES,
        margin=margin,
        seed=seed,
        x=x,
        measured=measured,
        constants=constants,
        group=group,
        digest=_code_digest(theorem, measure, *([] if constants is None else [constants])),
    )
    claim = f"{theorem.reference}: {theorem.statement or theorem.title}"
    title = title or f"{theorem.title} (user check)"
    return Check(name, title, claim, user.settings, user.compute, user.judge, user.plot,
                 bounds=("bound",))  # fmt: skip


@declare(path=Location(suffixes=(".py",), exists=True))
def load_checks(path) -> list[str]:
    """Import the Python file ``path``, which registers checks (``register(...)``); return
    the names it registered, each marked with ``path`` so that the report's reproduce
    command names it (``fedtheory validate --module PATH --check NAME``). Loading the same
    file again replaces its checks."""
    from fedtheory.io import import_file

    for name in [n for n, c in registry.CHECKS.items() if c.module == str(path)]:
        del registry.CHECKS[name]  # loading a file again replaces its checks
    before = set(registry.CHECKS)
    import_file(path, "load_checks", "fedtheory_user_checks_")
    added = [n for n in registry.CHECKS if n not in before]
    for n in added:
        registry.CHECKS[n] = replace(registry.CHECKS[n], module=str(path))
    return added
