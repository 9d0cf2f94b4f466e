r"""Bring your own theorem: a validation built from a ``Theorem`` and a measurement.

:func:`theorem_check` turns a statement (a :class:`~fedtheory.bounds.Theorem`, catalogue or
your own: sympy terms, hypotheses, reference) and a function that measures the quantity it
bounds on an instance into a :class:`~fedtheory.validation.registry.Check`, the object every
paper's validation is. The runner (:func:`fedtheory.validation.runner.run`) then gives it
the same machinery: verdict rows (with confidence intervals for random quantities, and
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
import os
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import sympy as sp

from fedtheory.bounds.judgement import Judge
from fedtheory.constraints import Integer, Text
from fedtheory.errors import ParameterError
from fedtheory.validation import registry
from fedtheory.validation.plots import confidence_bars, legend, panels, series
from fedtheory.validation.registry import SIZES, Check
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


def _per_size(value, name: str, kind: Callable) -> dict:
    """``value`` for every size: one value, or a mapping with every size as key."""
    if isinstance(value, Mapping):
        missing = [s for s in SIZES if s not in value]
        if missing:
            raise ParameterError(
                f"The '{name}' parameter of {_OWNER} must give a value for every size "
                f"{SIZES}. Got {sorted(value)!r} instead."
            )
        return {s: kind(value[s], s) for s in SIZES}
    return {s: kind(value, s) for s in SIZES}


def _instances(value, size: str) -> list[dict]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise ParameterError(
            f"The 'instances' parameter of {_OWNER} must be a non-empty list of dicts "
            f"(or a dict of such lists per size). Got {value!r} instead."
        )
    out = []
    for inst in value:
        if not isinstance(inst, Mapping):
            raise ParameterError(
                f"The 'instances' parameter of {_OWNER} must hold dicts of values. "
                f"Got {inst!r} instead."
            )
        out.append({k: (v.item() if isinstance(v, np.generic) else v) for k, v in inst.items()})
    try:
        json.dumps(out)  # the settings of a validation are saved (JSON) with its data
    except TypeError:
        raise ParameterError(
            f"The 'instances' parameter of {_OWNER} must hold JSON-able values (numbers, "
            f"strings, lists). Got {value!r} instead."
        ) from None
    return out


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
        Run it with ``fedtheory.validation.runner.run([check], out, size=...)``, or
        ``register`` it in a file given to ``fedtheory validate --module``.
    """
    judge_at = Judge(theorem, measure, margin=margin, owner=_OWNER)
    if not isinstance(name, str) or not name or any(c in name for c in " /\\"):
        raise ParameterError(
            f"The 'name' parameter of {_OWNER} must be a non-empty string without spaces or "
            f"slashes (it names a folder). Got {name!r} instead."
        )
    Text().check(measured, "measured", _OWNER, {})
    if title is not None:
        Text().check(title, "title", _OWNER, {})
    per_size = _per_size(instances, "instances", _instances)
    if constants is not None and not callable(constants):
        raise ParameterError(
            f"The 'constants' parameter of {_OWNER} must be callable. Got {constants!r} instead."
        )
    for insts in per_size.values():
        for inst in insts:
            missing = set() if constants is not None else set(theorem.parameters) - set(inst)
            if group is not None and group not in inst:
                raise ParameterError(
                    f"The 'group' parameter of {_OWNER} must be a key of every instance. "
                    f"Got {group!r} instead."
                )
            if missing:
                raise ParameterError(
                    f"The 'instances' parameter of {_OWNER} must give every parameter of "
                    f"{theorem.title} ({', '.join(theorem.parameters)}). Got {inst!r} "
                    f"(missing {sorted(missing)}) instead."
                )
            if x is not None and x not in inst:
                raise ParameterError(
                    f"The 'x' parameter of {_OWNER} must be a key of every instance. "
                    f"Got {x!r} instead."
                )
    reps = None
    if replicates is not None:
        reps = _per_size(
            replicates,
            "replicates",
            lambda v, _: v if v == "auto" else Integer(low=2).check(v, "replicates", _OWNER, {}),
        )
    caps = _per_size(
        MAX_REPLICATES if max_replicates is None else max_replicates,
        "max_replicates",
        lambda v, _: Integer(low=AUTO_START).check(v, "max_replicates", _OWNER, {}),
    )
    seed = Integer(0).check(seed, "seed", _OWNER, {})
    digest = _code_digest(theorem, measure, *([] if constants is None else [constants]))
    upper = theorem.kind == "upper bound"
    relation = "<=" if upper else "=="

    def settings(size):
        return {
            "theorem": theorem.key,
            "instances": per_size[size],
            "replicates": None if reps is None else reps[size],
            "max_replicates": caps[size] if reps is not None and reps[size] == "auto" else None,
            "margin": margin,
            "seed": seed,
            "code": digest,
        }

    def values_of(inst):
        """The theorem's parameters at an instance (derived by ``constants`` if given)."""
        return inst if constants is None else dict(constants(**inst))

    def draw(inst, i, s, batch, size):
        """``size`` replicates of instance ``i``, batch ``batch`` (seed ``seed + i`` first)."""
        seed_i = s["seed"] + i
        if batch:
            seed_i = int(np.random.SeedSequence([s["seed"], i, batch]).generate_state(1)[0])
        return measure(**inst, replicates=size, seed=seed_i)

    def compute(s):
        measured, bound, valid, magnitude, scaled = [], [], [], [], []
        for i, inst in enumerate(s["instances"]):
            where = f"check '{name}', instance {_label(inst, inst)}"
            values = values_of(inst)
            if s["replicates"] is None:
                j = judge_at(values, measure(**inst), where=where)
                samples = np.array([j.measured])
            elif s["replicates"] == "auto":

                def look(batch, size, inst=inst, i=i, values=values, where=where):
                    drawn = draw(inst, i, s, batch, size)
                    return judge_at(values, samples=drawn, where=where, shape=(size,)).samples

                def decide(x, level, values=values):
                    return judge_at(values, samples=x).row(confidence=level)

                _, samples = replicate_until_decided(look, decide, cap=s["max_replicates"])
                j = judge_at(values, samples=samples)
            else:
                size = s["replicates"]
                j = judge_at(values, samples=draw(inst, i, s, 0, size), where=where,
                             shape=(size,))  # fmt: skip
                samples = j.samples
            measured.append(samples)
            bound.append(float(j.bound))
            valid.append(j.valid)
            magnitude.append(j.magnitude)
            scaled.append(j.scaled)
        width = max(len(v) for v in measured)
        padded = np.full((len(measured), width), np.nan)  # [I, R] (NaN after an instance's R)
        for i, v in enumerate(measured):
            padded[i, : len(v)] = v
        return {
            "measured": padded,  # [I, R] (R = 1: deterministic)
            "bound": np.array(bound),  # [I]
            "valid": np.array(valid),  # [I] hypotheses hold
            "magnitude": np.array(magnitude),  # [I] largest magnitude of the computation
            "scaled": np.array(scaled),  # [I] the measurement gave its magnitude (Measured)
        }

    def judge(data, s):
        rows = []
        for i, inst in enumerate(s["instances"]):
            claim = f"{measured} {relation} {theorem.title} at {_label(inst, inst)}"
            if constants is not None:  # the derived constants, as plain numbers
                derived = values_of(inst)
                claim += f" (constants {_label(derived, derived)})"
            m = data["measured"][i]
            m = m[~np.isnan(m)]
            deterministic = s["replicates"] is None
            j = judge_at.of(
                m[0] if deterministic else None,
                data["bound"][i],
                samples=None if deterministic else m,
                valid=bool(data["valid"][i]),
                magnitude=float(data["magnitude"][i]),
                scaled=bool(data["scaled"][i]),
            )
            if s["replicates"] == "auto":
                looks, level = adaptive_looks(s["max_replicates"])
                row = j.row(claim, confidence=level)
                k = int(np.searchsorted(looks, m.size)) + 1
                row = replace(row, detail=row.detail + (
                    f"; adaptive replication: {m.size} replicates after {k} of {len(looks)} "
                    f"planned looks (cap {s['max_replicates']}; each look at confidence "
                    f"{level:.4g})"))  # fmt: skip
            else:
                row = j.row(claim)
            rows.append(row)
        return rows

    def plot(data, s, fig):
        ax1, ax2 = panels(fig, 2)  # each legend under its panel (the report's style)
        insts = s["instances"]
        xkey, gkeys = _layout(insts, x, group)
        xs = np.array([inst[xkey] for inst in insts] if xkey else np.arange(len(insts)),
                      dtype=float)  # fmt: skip
        xlabel = _symbols(xkey) if xkey else "instance"
        shown = _symbols(measured)  # the figure's text: Greek names as mathtext
        measured_values = data["measured"]  # [I, R], NaN-padded
        many = measured_values.shape[1] > 1
        if many:
            ci, yerr = confidence_bars([v[~np.isnan(v)] for v in measured_values])
            centre = ci[:, 0]
        else:
            centre = measured_values[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = centre / data["bound"]
        keys = list(dict.fromkeys(tuple(inst[k] for k in gkeys) for inst in insts))
        bounds: dict[tuple, tuple] = {}  # one bound curve per distinct curve, named for all
        for j, key in enumerate(keys):  # one series per combination of the other parameters
            idx = [i for i, inst in enumerate(insts) if tuple(inst[k] for k in gkeys) == key]
            idx = np.array(sorted(idx, key=lambda i: xs[i]))  # joined in order of x
            tag = _symbols(_label(dict(zip(gkeys, key, strict=True)), gkeys))
            tag = f" ({tag})" if tag else ""
            look = series(j)
            if many:
                ax1.errorbar(xs[idx], ci[idx, 0], yerr=yerr[:, idx], capsize=4, **look,
                             label=f"{shown}, mean and 95% CI{tag}")  # fmt: skip
            else:
                ax1.plot(xs[idx], centre[idx], **look, label=f"{shown}{tag}")
            b = data["bound"][idx]
            same = next((c for c in bounds if c[0] == tuple(xs[idx])
                         and np.allclose(c[1], b, rtol=SAME_BOUND, atol=0.0)), None)  # fmt: skip
            if same is not None:  # the same bound for another series: drawn once, named for both
                line, tags = bounds[same]
                tags.append(tag.strip(" ()"))
                exact = all(np.array_equal(c[1], b) for c in bounds if bounds[c][0] is line)
                within = "" if exact else f"; equal within {SAME_BOUND:.1%}"
                line.set_label(f"bound ({' and '.join(tags)}{within})")
            else:
                hollow = {**look, "linestyle": "--", "markerfacecolor": "none"}  # past the
                (line,) = ax1.plot(xs[idx], b, **hollow, label=f"bound{tag}")  # palette: hollow
                bounds[(tuple(xs[idx]), tuple(b))] = (line, [tag.strip(" ()")])
            ax2.plot(xs[idx], ratio[idx], **look, label=f"measured / bound{tag}")
        outside = ~data["valid"].astype(bool)
        if outside.any():  # a ring around the point (never over it), under the series
            ax1.scatter(xs[outside], data["bound"][outside], s=330, facecolors="none",
                        edgecolors="k", linewidths=1.0, zorder=1.5,
                        label="outside the hypotheses (circled)")  # fmt: skip
        drawn = np.concatenate([centre, data["bound"]])
        if np.all(drawn > 0) and drawn.max() >= LOG_SPAN * drawn.min():
            ax1.set_yscale("log")  # three decades or more: three labelled ticks at least
        ax1.set(xlabel=xlabel, ylabel=shown, title=_symbols(f"{theorem.title}: bound and measured"))
        legend(ax1)
        ax2.axhline(1.0, color="k", lw=1, ls=":", label="ratio 1 (bound attained)")
        ax2.set(xlabel=xlabel, ylabel="measured / bound", title="Tightness")
        legend(ax2)
        per = f", one series per {', '.join(gkeys)}" if gkeys else ""  # the caption: plain text
        what = "mean with its 95% confidence interval" if many else "measured value"
        shared = (
            f" Series whose bounds are equal within {SAME_BOUND:.1%} share one bound line, "
            "named for all of them."
            if any(len(tags) > 1 for _, tags in bounds.values())
            else ""
        )
        return (
            f"{theorem.title}: the {what} (solid) and the bound (dashed, hollow markers) "
            f"against {xlabel}{per}; right: their ratio.{shared}"
        )

    return Check(
        name,
        title or f"{theorem.title} (user check)",
        f"{theorem.reference}: {theorem.statement or theorem.title}",
        settings,
        compute,
        judge,
        plot,
        bounds=("bound",),
    )


def load_checks(path) -> list[str]:
    """Import the Python file ``path``, which registers checks (``register(...)``); return
    the names it registered, each marked with ``path`` so that the report's reproduce
    command names it (``fedtheory validate --module PATH --check NAME``). Loading the same
    file again replaces its checks."""
    from fedtheory.io import import_file

    file = Path(path) if isinstance(path, (str, os.PathLike)) else None
    if file is None or not file.is_file() or file.suffix != ".py":
        raise ParameterError(
            f"The 'path' parameter of load_checks must be an existing .py file. "
            f"Got {str(path)!r} instead."
        )
    for name in [n for n, c in registry.CHECKS.items() if c.module == str(file)]:
        del registry.CHECKS[name]  # loading a file again replaces its checks
    before = set(registry.CHECKS)
    import_file(file, "load_checks", "fedtheory_user_checks_")
    added = [n for n in registry.CHECKS if n not in before]
    for n in added:
        registry.CHECKS[n] = replace(registry.CHECKS[n], module=str(file))
    return added
