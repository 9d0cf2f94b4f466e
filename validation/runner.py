"""Run validations, save their data, plots and verdicts, and write the report.

Layout of the output folder::

    report.md        verdict table, then one section per validation
    results.json     every verdict row, machine-readable
    <name>/data.npz  the computed data (with the settings it was computed from)
    <name>/figure.png

Every file is written atomically. A validation whose ``data.npz`` exists with the same
settings is not recomputed, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from fedtheory.io import atomic_write_bytes, atomic_write_text
from fedtheory.sim.record import library_versions
from fedtheory.verdict import Comparison
from validation.registry import CHECKS, Check


@dataclass(frozen=True)
class Outcome:
    check: Check
    settings: dict
    rows: list[Comparison]
    reused: bool
    folder: Path


def _load_if_current(path: Path, settings: dict) -> dict | None:
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as z:
        if json.loads(str(z["__settings__"])) != settings:
            return None
        return {k: z[k] for k in z.files if k != "__settings__"}


def _save_data(path: Path, data: dict, settings: dict) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, __settings__=np.array(json.dumps(settings)), **data)
    atomic_write_bytes(path, buf.getvalue())


def _save_figure(path: Path, check: Check, data: dict, settings: dict) -> None:
    fig = Figure(figsize=(12, 4.5), layout="constrained")
    check.plot(data, settings, fig)
    fig.suptitle(check.title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    atomic_write_bytes(path, buf.getvalue())


def run_check(check: Check, out: Path, *, quick: bool) -> Outcome:
    """Compute (or reuse), judge and plot one validation."""
    settings = check.settings(quick)
    folder = out / check.name
    data = _load_if_current(folder / "data.npz", settings)
    reused = data is not None
    if data is None:
        data = check.compute(settings)
        _save_data(folder / "data.npz", data, settings)
    rows = check.judge(data, settings)
    _save_figure(folder / "figure.png", check, data, settings)
    return Outcome(check, settings, rows, reused, folder)


def run(
    names: Iterable[str], out: Path, *, quick: bool, progress: Callable[[str], None] = print
) -> list[Outcome]:
    """Run the named validations in order and write ``report.md`` and ``results.json``."""
    names = list(names)
    outcomes = []
    for i, name in enumerate(names, 1):
        progress(f"[{i}/{len(names)}] {name}: running")
        outcome = run_check(CHECKS[name], out, quick=quick)
        verdicts = ", ".join(r.verdict.value for r in outcome.rows)
        progress(
            f"[{i}/{len(names)}] {name}: {verdicts}" + (" (data reused)" if outcome.reused else "")
        )
        outcomes.append(outcome)
    write_report(outcomes, out, quick=quick)
    return outcomes


def _command(names: list[str], out: Path, quick: bool) -> str:
    checks = " ".join(f"--check {n}" for n in names)
    return f"fedtheory validate {checks} {'--quick' if quick else '--full'} --out {out}"


def write_report(outcomes: list[Outcome], out: Path, *, quick: bool) -> None:
    """Markdown report with the verdict table on top, and ``results.json``."""
    mode = "quick" if quick else "full"
    lines = [
        f"# fedtheory validation report ({mode} mode)",
        "",
        "| claim | paper and equation | measured | relation | bound / prediction "
        "| ratio | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        for r in o.rows:
            lines.append(
                f"| {r.claim} | {r.reference} | {r.measured:.6g} | {r.relation} | "
                f"{r.bound:.6g} | {r.ratio:.4g} | **{r.verdict.value}** |"
            )
    for o in outcomes:
        c = o.check
        lines += ["", f"## {c.title}", "", f"Claim: {c.claim}.", ""]
        lines += [
            f"- {r.claim}: measured {r.measured:.6g} {r.relation} {r.bound:.6g} -> "
            f"**{r.verdict.value}** ({r.detail})"
            for r in o.rows
        ]
        lines += [
            "",
            f"![{c.name}]({c.name}/figure.png)",
            "",
            f"Reproduce alone: `{_command([c.name], out, quick)}`  ",
            f"Data: `{c.name}/data.npz`; settings: `{json.dumps(o.settings)}`",
        ]
    versions = library_versions()
    lines += ["", "## Environment", "", ", ".join(f"{k} {v}" for k, v in versions.items()), ""]
    atomic_write_text(out / "report.md", "\n".join(lines))
    results = {
        "mode": mode,
        "versions": versions,
        "validations": [
            {"name": o.check.name, "settings": o.settings, "rows": [r.as_dict() for r in o.rows]}
            for o in outcomes
        ],
    }
    atomic_write_text(out / "results.json", json.dumps(results, indent=2))
