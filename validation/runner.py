"""Run validations, save their data, plots and verdicts, and write the report.

Layout of the output folder::

    report.md / report.html   verdict table, then one section per validation
    results.json              every verdict row, machine-readable
    <name>/data.npz           the computed data (with the settings it was computed from)
    <name>/figure.png, figure.svg   the figure (150+ dpi PNG and vector SVG)
    verdicts.csv              the verdict table (also ``verdicts_frame`` as a DataFrame)

Every file is written atomically. A validation whose ``data.npz`` exists with the same
settings and the same code fingerprint (hash of the ``fedtheory`` sources and of the
``validation`` package with ``ERRATA.md``) is not recomputed, so an interrupted run resumes
where it stopped and a code change is never answered with stale data. An exception
inside a validation propagates (a crashed validation is a bug, never a silent gap).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from fedtheory.errors import ParameterError
from fedtheory.io import atomic_write_bytes, atomic_write_text
from fedtheory.params import check_choice
from fedtheory.sim.record import library_versions
from fedtheory.validation import plots
from fedtheory.validation.registry import CHECKS, SIZES, Check, Size
from fedtheory.validation.report import (
    Block,
    Bullets,
    Code,
    Heading,
    Image,
    Paragraph,
    Table,
    to_html,
    to_markdown,
)
from fedtheory.verdict import Comparison, Verdict


@dataclass(frozen=True)
class Outcome:
    check: Check
    settings: dict
    rows: list[Comparison]
    data: dict
    reused: bool
    folder: Path
    seconds: float  # compute time (0 when the data was reused)
    caption: str = ""  # returned by the check's plot: what coincides, what is floored


@cache
def _code_digest() -> str:
    import fedtheory

    here = Path(__file__).parent
    h = hashlib.sha256()
    for path in [
        *sorted(Path(fedtheory.__file__).parent.rglob("*.py")),
        *sorted(here.glob("*.py")),
        here / "ERRATA.md",
    ]:
        h.update(path.read_bytes())
    return h.hexdigest()


def fingerprint(check: Check) -> str:
    """Hash of the code any validation, ``check`` included, may run: the ``fedtheory``
    sources, every module of ``validation`` (checks share code: ``cafed_weights`` calls
    ``cafed_theorem2``) and ``ERRATA.md`` (read by the ``errata`` check)."""
    return _code_digest()


def _load_if_current(path: Path, settings: dict, code: str) -> dict | None:
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as z:
        if json.loads(str(z["__settings__"])) != settings or "__code__" not in z.files:
            return None
        if str(z["__code__"]) != code:
            return None
        return {k: z[k] for k in z.files if k not in ("__settings__", "__code__")}


def _save_data(path: Path, data: dict, settings: dict, code: str) -> None:
    buf = io.BytesIO()
    np.savez_compressed(
        buf, __settings__=np.array(json.dumps(settings)), __code__=np.array(code), **data
    )
    atomic_write_bytes(path, buf.getvalue())


def _save_figure(stem: Path, check: Check, data: dict, settings: dict, rows) -> str:
    """Draw ``check``'s figure in the shared style, write ``stem.png`` and ``stem.svg``
    and return the caption its ``plot`` gave (empty when none)."""
    with plots.style():
        fig = Figure(figsize=(12, 5), layout="constrained")
        caption = check.plot(data, settings, fig) or ""
        outside = any(r.verdict is Verdict.OUTSIDE for r in rows)
        fig.suptitle(
            check.title
            + ("\n(includes instances OUTSIDE the theorem's assumptions)" if outside else "")
        )
        plots.save(fig, stem)
    return caption


def run_check(check: Check, out: Path, *, size: Size) -> Outcome:
    """Compute (or reuse), judge and plot one validation."""
    settings = check.settings(size)
    folder = out / check.name
    code = fingerprint(check)
    data = _load_if_current(folder / "data.npz", settings, code)
    reused = data is not None
    start = time.perf_counter()
    if data is None:
        data = check.compute(settings)
        _save_data(folder / "data.npz", data, settings, code)
    seconds = 0.0 if reused else time.perf_counter() - start
    rows = check.judge(data, settings)
    caption = _save_figure(folder / "figure", check, data, settings, rows)
    return Outcome(check, settings, rows, data, reused, folder, seconds, caption)


def run(
    names: Iterable[str], out: Path, *, size: Size, progress: Callable[[str], None] = print
) -> list[Outcome]:
    """Run the named validations in order and write the report and ``results.json``."""
    names = list(names)
    check_choice(size, SIZES, "size", "run")
    unknown = [n for n in names if n not in CHECKS]
    if unknown or not names:
        raise ParameterError(
            f"The 'names' parameter of run must be a non-empty list of {sorted(CHECKS)}. "
            f"Got {names!r} instead."
        )
    outcomes = []
    for i, name in enumerate(names, 1):
        progress(f"[{i}/{len(names)}] {name}: running")
        outcome = run_check(CHECKS[name], out, size=size)
        verdicts = ", ".join(r.verdict.value for r in outcome.rows)
        how = " (data reused)" if outcome.reused else f" ({outcome.seconds:.1f} s)"
        progress(f"[{i}/{len(names)}] {name}: {verdicts}{how}")
        outcomes.append(outcome)
    write_report(outcomes, out, size=size)
    return outcomes


def command(names: list[str], out: Path, size: Size) -> str:
    """The command line that reruns exactly these validations at this size, into a folder
    of its own (next to ``out``) so that the full report is not overwritten."""
    checks = " ".join(f"--check {n}" for n in names)
    alone = out.parent / f"{out.name}-{'-'.join(names)}"
    return f"fedtheory validate {checks} --size {size} --out {alone}"


def _measured(r: Comparison) -> str:
    if r.interval is None:
        return f"{r.measured:.4g}"
    return f"{r.measured:.4g} (CI {r.interval[0]:.4g} to {r.interval[1]:.4g})"


def _verdict_rows(o: Outcome) -> list[tuple[str, ...]]:
    return [
        (
            f"{r.claim} [{o.check.name}](#{o.check.name})",
            r.reference,
            _measured(r),
            f"{r.relation} {r.bound:.4g}",
            f"{r.ratio:.3g}",
            f"**{r.verdict.value}**",
        )
        for r in o.rows
    ]


HEADER = ("claim", "paper and equation", "measured", "bound / prediction", "ratio", "verdict")


def report_blocks(outcomes: list[Outcome], out: Path, *, size: Size) -> list[Block]:
    """The report: verdict table on top, then one section per validation."""
    counts = {v: sum(r.verdict is v for o in outcomes for r in o.rows) for v in Verdict}
    blocks: list[Block] = [
        Heading(f"fedtheory validation report ({size} mode)", 1),
        Paragraph(
            ", ".join(f"{n} {v.value}" for v, n in counts.items())
            + f" (compute time {sum(o.seconds for o in outcomes):.0f} s"
            + (", some data reused from an earlier run" if any(o.reused for o in outcomes) else "")
            + "). Ratio = measured / bound (tightness of an upper bound, 1 for an exact "
            "statement). Random quantities: mean over replicates with its confidence "
            "interval (family-wise 95%, Bonferroni over the points of a row); `<=` is judged on "
            'the upper confidence limit. "outside assumptions": '
            "the instance breaks a hypothesis of the theorem, so the row neither confirms "
            "nor refutes it."
        ),
        Heading("Contents", anchor="contents"),
        Bullets(
            ("[Verdicts](#verdicts)",)
            + tuple(f"[{o.check.title}](#{o.check.name})" for o in outcomes)
            + ("[Environment](#environment)",)
        ),
        Heading("Verdicts", anchor="verdicts"),
        Paragraph("Each row links to its section."),
        Table(HEADER, tuple(row for o in outcomes for row in _verdict_rows(o))),
        Paragraph(
            "The same table, one row per verdict: `verdicts.csv` (or "
            "`fedtheory.validation.runner.verdicts_frame(folder)` as a pandas DataFrame)."
        ),
    ]
    for o in outcomes:
        c = o.check
        blocks += [
            Heading(c.title, anchor=c.name),
            Paragraph(f"Claim: {c.claim}."),
            Bullets(
                tuple(
                    f"{r.claim}: measured {_measured(r)} {r.relation} {r.bound:.6g} -> "
                    f"**{r.verdict.value}** ({r.detail})"
                    for r in o.rows
                )
            ),
            *(
                [
                    Paragraph("Observations (measured, no theorem claims them):"),
                    Bullets(tuple(notes)),
                ]
                if (notes := c.notes(o.data, o.settings) if c.notes else [])
                else []
            ),
            Image(c.title, f"{c.name}/figure.png", o.caption),
            Paragraph(f"Vector version: `{c.name}/figure.svg`."),
            Paragraph("Reproduce alone:"),
            Code(command([c.name], out, size)),
            Paragraph(
                f"Data: `{c.name}/data.npz` (arrays: {', '.join(sorted(c.bounds))} are the "
                f"bounds/predictions); settings: `{json.dumps(o.settings)}`"
            ),
        ]
    versions = library_versions()
    blocks += [
        Heading("Environment", anchor="environment"),
        Paragraph(", ".join(f"{k} {v}" for k, v in versions.items())),
    ]
    return blocks


CSV_COLUMNS = (
    "validation",
    "claim",
    "reference",
    "measured",
    "ci_low",
    "ci_high",
    "relation",
    "bound",
    "ratio",
    "verdict",
    "detail",
)
"""Columns of ``verdicts.csv`` and of :func:`verdicts_frame`, one row per verdict."""


def _records(validations: Iterable[tuple[str, Iterable[dict]]]) -> list[dict]:
    """One flat record per verdict row (``Comparison.as_dict`` form) of each validation."""
    records = []
    for name, rows in validations:
        for r in rows:
            low, high = r["interval"] if r["interval"] is not None else (None, None)
            records.append({"validation": name, **r, "ci_low": low, "ci_high": high})
    return [{k: rec[k] for k in CSV_COLUMNS} for rec in records]


def _outcome_records(outcomes: list[Outcome]) -> list[dict]:
    return _records((o.check.name, [r.as_dict() for r in o.rows]) for o in outcomes)


def _csv(records: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


def verdicts_frame(source):
    """The verdict table as a pandas DataFrame, one row per verdict (columns
    :data:`CSV_COLUMNS`).

    Parameters
    ----------
    source : list of Outcome, or path
        What :func:`run` returned, or an output folder (or its ``results.json``).

    Examples
    --------
    >>> from fedtheory.validation.runner import verdicts_frame
    >>> frame = verdicts_frame("results/")  # doctest: +SKIP
    >>> frame.groupby("verdict").size()  # doctest: +SKIP
    """
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - pandas is in the test extra
        raise ImportError(
            "verdicts_frame needs pandas, an optional dependency of fedtheory: install it "
            "with `pip install pandas` (or read verdicts.csv with the csv module)."
        ) from e
    if isinstance(source, (str, Path)):
        path = Path(source)
        path = path / "results.json" if path.is_dir() else path
        if not path.is_file():
            raise ParameterError(
                "The 'source' parameter of verdicts_frame must be a list of outcomes, an "
                f"output folder or its results.json. Got {str(source)!r} (no such file)."
            )
        results = json.loads(path.read_text(encoding="utf-8"))
        records = _records((v["name"], v["rows"]) for v in results["validations"])
    elif isinstance(source, list) and all(isinstance(o, Outcome) for o in source):
        records = _outcome_records(source)
    else:
        raise ParameterError(
            "The 'source' parameter of verdicts_frame must be a list of outcomes, an output "
            f"folder or its results.json. Got {type(source).__name__} instead."
        )
    return pd.DataFrame.from_records(records, columns=list(CSV_COLUMNS))


def write_report(outcomes: list[Outcome], out: Path, *, size: Size) -> None:
    """``report.md``, ``report.html`` (self-contained), ``results.json`` and
    ``verdicts.csv`` (atomically)."""
    blocks = report_blocks(outcomes, out, size=size)
    atomic_write_text(out / "report.md", to_markdown(blocks))
    atomic_write_text(
        out / "report.html", to_html(blocks, title="fedtheory validation report", root=out)
    )
    atomic_write_text(out / "verdicts.csv", _csv(_outcome_records(outcomes)))
    results = {
        "size": size,
        "versions": library_versions(),
        "validations": [
            {
                "name": o.check.name,
                "settings": o.settings,
                "seconds": o.seconds,
                "rows": [r.as_dict() for r in o.rows],
            }
            for o in outcomes
        ],
    }
    atomic_write_text(out / "results.json", json.dumps(results, indent=2))
