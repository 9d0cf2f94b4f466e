"""Run validations, save their data, plots and verdicts, and write the report.

Layout of the output folder::

    report.md / report.html   verdict table, then one section per validation
    results.json              every verdict row, machine-readable
    <name>/data.npz           the computed data (with the settings it was computed from)
    <name>/figure.png, figure.svg   the figure (150+ dpi PNG and vector SVG)
    <name>/figure.json        the figure's key (data, settings, drawing code) and caption
    verdicts.csv              the verdict table (also ``verdicts_frame`` as a DataFrame)

Every file is written atomically. A validation whose ``data.npz`` exists with the same
settings and the same code fingerprint (hash of the code its compute may run, found by
:mod:`fedtheory.validation.machinery.dependencies`, and of the library versions) is not recomputed,
so an interrupted run resumes where it stopped, a code change is never answered with stale
data, and an edit of a verdict rule, a figure or a docstring re-judges and re-plots from
the stored data; the figure is redrawn only when its data, settings or drawing code
changed (a no-change rerun re-judges and reuses every figure). Every ``data.npz`` carries
a checksum of its arrays: a damaged (truncated, empty, bit-flipped, garbage) or edited
file is reported and recomputed, never reused. Temporary files a killed run left are
removed by the next run; Ctrl-C writes the report of what finished. An exception inside a
validation propagates (a crashed validation is a bug, never a silent gap).
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import html
import io
import json
import math
import os
import platform
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from fedtheory import threads
from fedtheory.constraints import (
    Bool,
    Either,
    Exemplified,
    Function,
    Instance,
    Integer,
    Label,
    Location,
    MappingOf,
    Option,
    Real,
    SequenceOf,
    Text,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.io import (
    DamagedFileError,
    atomic_write_text,
    checksum,
    folder_lock,
    load_npz,
    remove_temporaries,
    save_npz,
)
from fedtheory.sim.record import library_versions
from fedtheory.sweep.executor import Executor, Sequential
from fedtheory.validation import errata
from fedtheory.validation.errata import CAVEATS
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.dependencies import compute_digest, drawing_digest
from fedtheory.validation.machinery.kinds import SIZE, CheckName
from fedtheory.validation.machinery.registry import CHECKS, Check, Size
from fedtheory.validation.machinery.report import (
    Block,
    Bullets,
    Code,
    Formula,
    Heading,
    Image,
    Paragraph,
    Table,
    to_html,
    to_markdown,
)
from fedtheory.validation.machinery.setups import SETUP_HEADER
from fedtheory.verdict import FINDING_VERDICTS, LOOSE_RATIO, Comparison, Verdict, format_ratio


@declare(
    check=Instance(Check),
    settings=MappingOf(),
    rows=Exemplified(SequenceOf(Instance(Comparison), plural="verdict rows"), lambda a: []),
    data=MappingOf(),
    reused=Bool(),
    folder=Location(folder="checked"),
    seconds=Real(0.0),
    caption=Label(),
    computed=SequenceOf(none=True),
)
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
    computed: tuple[float, str] | None = None  # (seconds, UTC time) of the compute that
    # made the data, this run's or the earlier run's whose data is reused


OUTCOMES = Exemplified(SequenceOf(Instance(Outcome), plural="outcomes"), lambda args: [])
"""What :func:`run` returned: a list of outcomes."""


@declare(check=Instance(Check))
def fingerprint(check: Check) -> str:
    """Hash of the code ``check``'s compute may run (its module and the ``fedtheory``
    modules it imports, without docstrings, verdict rules, figures and the report:
    :func:`fedtheory.validation.machinery.dependencies.compute_digest`) and of the versions of the
    libraries the numbers depend on (:func:`library_versions`)."""
    versions = json.dumps(library_versions(), sort_keys=True)
    return hashlib.sha256(f"{compute_digest(check)}\0{versions}".encode()).hexdigest()


def _load_if_current(path: Path, settings: dict, code: str) -> tuple[dict | None, str | None]:
    """``(data, None)`` if ``path`` holds intact data of these settings and code;
    ``(None, why)`` if it exists but cannot be reused (damaged, edited, stale);
    ``(None, None)`` if there is none."""
    try:
        z = load_npz(path)
    except FileNotFoundError:
        return None, None
    except DamagedFileError as err:
        return None, f"{path.name} is damaged or was edited ({err.reason})"
    try:
        stored = json.loads(str(z.pop("__settings__")))
        stored_code = str(z.pop("__code__"))
    except (KeyError, ValueError):
        return None, f"{path.name} has no readable settings"
    if stored != settings:
        return None, f"{path.name} was computed with other settings"
    if stored_code != code:
        return None, f"{path.name} was computed by other code or library versions"
    return z, None


def _save_data(path: Path, data: dict, settings: dict, code: str, computed) -> None:
    save_npz(path, {"__settings__": np.array(json.dumps(settings)), "__code__": np.array(code),
                    "__computed__": np.array(json.dumps(computed)), **data})  # fmt: skip


def _save_figure(stem: Path, check: Check, data: dict, settings: dict, rows) -> str:
    """Draw ``check``'s figure in the shared style, write ``stem.png`` and ``stem.svg``
    and return the caption its ``plot`` gave (empty when none). The figure is keyed on
    the data (:func:`~fedtheory.io.checksum`), the settings, the title and the drawing code
    (:func:`~fedtheory.validation.machinery.dependencies.drawing_digest`); when ``stem.json`` holds
    that key and both files exist, they are kept and the stored caption returned."""
    outside = any(r.verdict is Verdict.OUTSIDE for r in rows)
    key = hashlib.sha256(checksum({k: np.asarray(v) for k, v in data.items()}).encode())
    key.update(json.dumps([check.title, outside, settings, library_versions()]).encode())
    key.update(drawing_digest(check).encode())
    index = stem.with_suffix(".json")
    drawn = [stem.with_suffix(f".{fmt}") for fmt in plots.FORMATS]
    try:
        stored = json.loads(index.read_text())
        if stored["key"] == key.hexdigest() and all(p.is_file() for p in drawn):
            return stored["caption"]
    except (FileNotFoundError, ValueError, KeyError, TypeError):
        pass
    with plots.style():
        fig = Figure(figsize=(12, 5), layout="constrained")
        caption = check.plot(data, settings, fig) or ""
        for ax in fig.axes:  # every plotted value between two labelled values of a log axis
            plots.bracket_log(ax)
        fig.suptitle(
            check.title
            + ("\n(includes instances OUTSIDE the theorem's assumptions)" if outside else "")
        )
        plots.save(fig, stem)
    atomic_write_text(index, json.dumps({"key": key.hexdigest(), "caption": caption}))
    return caption


@declare(
    check=Instance(Check), out=Location(folder="checked"), size=SIZE, progress=Function(none=True)
)
def run_check(
    check: Check, out: Path, *, size: Size, progress: Callable[[str], None] | None = None
) -> Outcome:
    """Compute (or reuse), judge and plot one validation; ``progress`` hears why stored
    data is not reused. The settings are taken in their stored (JSON) form, so that a tuple
    in them compares equal to the list it is stored as."""
    settings = json.loads(json.dumps(check.settings(size)))
    folder = out / check.name
    code = fingerprint(check)
    data, why = _load_if_current(folder / "data.npz", settings, code)
    if why is not None and progress is not None:
        progress(f"{check.name}: {why}; recomputing")
    reused = data is not None
    start = time.perf_counter()
    if data is None:
        with threads.fitted_to_load():  # no more threads than the machine has idle cores
            data = check.compute(settings)
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        computed = (time.perf_counter() - start, when)
        _save_data(folder / "data.npz", data, settings, code, computed)
    else:  # the earlier run's compute time and date (none in data of an older fedtheory)
        stored = data.pop("__computed__", None)
        computed = tuple(json.loads(str(stored))) if stored is not None else None
    seconds = 0.0 if reused else computed[0]
    rows = check.judge(data, settings)
    caption = _save_figure(folder / "figure", check, data, settings, rows)
    return Outcome(check, settings, rows, data, reused, folder, seconds, caption, computed)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`: the report of the validations that finished is written
    (``outcomes``); the message says where and how to resume."""

    def __init__(self, message: str, outcomes: list[Outcome]) -> None:
        super().__init__(message)
        self.outcomes = outcomes


@declare(out=Location(folder="checked"), owner=Text())
def check_output_folder(out: Path, owner: str = "run") -> Path:
    """Create ``out`` if needed and check that a file can be written in it, before any
    compute; else a ParameterError naming the folder and the reason."""
    out = Path(out)

    def refuse(reason: str) -> ParameterError:
        return ParameterError(
            f"The 'out' parameter of {owner} must be a writable folder. Got '{out}' ({reason}) "
            "instead."
        )

    if out.exists() and not out.is_dir():
        raise refuse("a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-test.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise refuse(err.strerror or type(err).__name__) from None
    return out


def _remove_leftovers(out: Path, names: list[str]) -> int:
    """Remove the temporary files an earlier, killed run left (report and data folders)."""
    return sum(len(remove_temporaries(folder)) for folder in [out, *(out / n for n in names)])


@declare(
    names=SequenceOf(Either(Instance(Check), CheckName()), min_size=1, plural="checks"),
    out=Location(folder="checked"),
    size=SIZE,
    progress=Function(),
)
def run(
    names: Iterable[str | Check],
    out: Path,
    *,
    size: Size,
    progress: Callable[[str], None] = print,
    executor: Executor | None = None,
) -> list[Outcome]:
    """Run the validations and write the report and ``results.json``.

    ``names`` holds registered names (``CHECKS``) and/or ``Check`` objects, such as a
    user's own (``fedtheory.validation.custom.theorem_check``), run without registering.
    The output folder is checked for writability before any compute; temporary files an
    earlier killed run left are removed; stored data that is damaged or edited is reported
    through ``progress`` and recomputed. Ctrl-C writes the report of what finished and
    raises :class:`Interrupted`.

    The validations are independent: with an ``executor`` from
    :func:`fedtheory.sweep.open_executor` (a Dask cluster) they run in parallel, each on a
    worker that writes its ``data.npz`` and figure under ``out`` (on a remote cluster,
    ``out`` must be on a filesystem the workers share), the longest first
    (:func:`longest_first`); the report lists them in the order of ``names`` and is the
    one a sequential run writes, compute times aside.
    """
    checks = [n if isinstance(n, Check) else CHECKS[n] for n in names]
    out = check_output_folder(out)
    with folder_lock(out):  # one run per output folder (a second is refused, naming this one)
        return _run_locked(checks, out, size, progress, executor)


def _run_locked(checks, out, size, progress, executor) -> list[Outcome]:
    """:func:`run` after its checks, holding the output folder's lock."""
    if removed := _remove_leftovers(out, [c.name for c in checks]):
        progress(f"removed {removed} temporary file(s) left by an interrupted run")
    n, done = len(checks), {}
    parallel = executor is not None and not isinstance(executor, Sequential)
    order = longest_first(checks, out, size) if parallel else list(range(n))
    try:
        tasks = (executor or Sequential()).map(
            partial(run_check, out=out, size=size, progress=progress),
            [checks[i] for i in order],
            submitted=lambda j: progress(f"[{order[j] + 1}/{n}] {checks[order[j]].name}: running"),
        )
        for j, outcome in tasks:
            i = order[j]
            verdicts = _summary_line(outcome.rows)
            how = " (data reused)" if outcome.reused else f" ({outcome.seconds:.1f} s)"
            progress(f"[{i + 1}/{n}] {checks[i].name}: {verdicts}{how}")
            done[i] = outcome
    except KeyboardInterrupt:
        finished = [done[i] for i in sorted(done)]
        write_report(finished, out, size=size)
        first = min(i for i in range(n) if i not in done)  # the one running (sequentially)
        raise Interrupted(
            f"interrupted during {checks[first].name} ({first + 1}/{n}); the report of the "
            f"{len(finished)} finished validation(s) is in {out / 'report.md'}; "
            "rerun the same command to resume",
            finished,
        ) from None
    except Exception:  # a check failed: the report of those that finished, then the error
        write_report([done[i] for i in sorted(done)], out, size=size)
        raise
    outcomes = [done[i] for i in range(n)]
    write_report(outcomes, out, size=size)
    return outcomes


@declare(checks=Exemplified(SequenceOf(Instance(Check)), lambda args: []),
         out=Location(folder="checked"), size=SIZE)  # fmt: skip
def longest_first(checks: list[Check], out: Path, size: Size) -> list[int]:
    """The order (indices into ``checks``) in which a parallel run starts them: the longest
    expected compute first, so that no long validation starts last while the other workers
    idle (list scheduling, longest processing time first). The expected time of a check is
    the compute time the report in ``out`` measured at this size, else its declared
    :attr:`~fedtheory.validation.machinery.registry.Check.cost`; a check with neither (e.g. a user's
    own) may be long and starts first. Ties keep the order of ``checks``."""
    measured = _measured_seconds(out, size)

    def expected(i: int) -> float:
        seconds = measured.get(checks[i].name) or checks[i].cost
        return math.inf if seconds is None else seconds

    return sorted(range(len(checks)), key=expected, reverse=True)  # stable: ties in order


def _measured_seconds(out: Path, size: Size) -> dict[str, float]:
    """Name -> compute time (s) of the validations the report in ``out`` computed at
    ``size`` (those whose data it reused are left out); empty without an intact report."""
    try:
        results = _verified_results(out / "results.json")
    except DamagedFileError:  # none yet, or damaged: the declared costs decide
        return {}
    if results.get("size") != size:
        return {}
    return {v["name"]: float(v["seconds"]) for v in results["validations"] if v["seconds"] > 0}


@declare(
    names=SequenceOf(Text(), min_size=1, plural="names"),
    out=Location(folder="checked"),
    size=SIZE,
    module=Label(),
)
def command(names: list[str], out: Path, size: Size, module: str = "") -> str:
    """The command line that reruns exactly these validations at this size, into a folder
    of its own (next to ``out``) so that the full report is not overwritten; ``module``:
    the user's file that registers them (``--module``)."""
    checks = " ".join(f"--check {n}" for n in names)
    alone = out.parent / f"{out.name}-{'-'.join(names)}"
    where = f"--module {module} " if module else ""
    return f"fedtheory validate {where}{checks} --size {size} --out {alone}"


def _reproduce(check: Check, out: Path, size: Size) -> str:
    """How to rerun ``check`` alone: the command line, or for a check defined in Python
    and not registered from a file, the call."""
    if check.module or CHECKS.get(check.name) is check:
        return command([check.name], out, size, module=check.module)
    alone = out.parent / f"{out.name}-{check.name}"
    return (
        f"fedtheory.validation.machinery.runner.run([check], Path({str(alone)!r}), size={size!r})"
    )


def _measured(r: Comparison) -> str:
    if r.interval is None:
        return f"{r.measured:.4g}"
    return f"{r.measured:.4g} (CI {r.interval[0]:.4g} to {r.interval[1]:.4g})"


def _verdict_text(r: Comparison) -> str:
    """The verdict as the report prints it: the row's :attr:`~Comparison.outcome_label`."""
    return f"**{r.outcome_label}**"


def _summary_line(rows: Iterable[Comparison]) -> str:
    """The labels of ``rows`` as ``fedtheory validate``'s progress line prints them: each
    :attr:`~Comparison.outcome_label` once, in order of first appearance, with its count
    (``"3 holds; 1 holds (loose)"``)."""
    counts = Counter(r.outcome_label for r in rows)
    return "; ".join(f"{n} {label}" for label, n in counts.items())


def _verdict_rows(o: Outcome) -> list[tuple[str, ...]]:
    return [
        (
            f"{r.claim} [{o.check.name}](#{o.check.name})",
            r.reference,
            _measured(r),
            f"{r.relation} {r.bound:.4g}",
            r.ratio_text,
            _verdict_text(r),
        )
        for r in o.rows
    ]


HEADER = ("claim", "paper and equation", "measured", "bound / prediction", "ratio", "verdict")
STATEMENT_VERDICTS = (Verdict.HOLDS, Verdict.VIOLATED, Verdict.INCONCLUSIVE, Verdict.OUTSIDE)
FINDING_OUTCOMES = FINDING_VERDICTS
ATTAINED = 0.9
"""A tightest instance whose ratio reaches this is reported as "attained within x%"."""


def _papers(outcomes: list[Outcome]) -> bool:
    """Whether the report holds a validation of the papers (not only the user's own
    ``theorem_check`` checks, whose report leaves out the papers' findings and errata)."""
    return any(o.check.compute.__module__ != "fedtheory.validation.custom" for o in outcomes)


def _plural(n: int, noun: str) -> str:
    """``"1 caveat"``, ``"3 caveats"``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _counts(outcomes: list[Outcome]) -> list[str]:
    """The summary's counts, one line per kind of row: statement verdicts, empirical-finding
    outcomes (those that occur), the errata apart (findings about the papers, listed by
    class in their own table)."""
    every = [r for o in outcomes if o.check.name != errata.NAME for r in o.rows]
    rows = [r for r in every if getattr(r, "source", "paper") == "paper"]
    ours = [r for r in every if getattr(r, "source", "paper") != "paper"]
    loose = sum(r.loose for r in rows)
    statements = ", ".join(
        f"{sum(r.verdict is v for r in rows)} {v.value}"
        + (f" ({loose} loose)" if v is Verdict.HOLDS and loose else "")
        for v in STATEMENT_VERDICTS
    )
    findings = ", ".join(
        f"{n} {v.value}" for v in FINDING_OUTCOMES if (n := sum(r.verdict is v for r in rows))
    )
    lines = [f"Statements: {statements}."]
    if _papers(outcomes) or any(r.verdict in FINDING_OUTCOMES for r in rows):
        lines.append(f"Empirical findings of the papers: {findings or 'none in this run'}.")
    for source, what in (
        ("comparison", "Comparisons between algorithms that no paper states"),
        ("fedtheory", "Consistency checks of fedtheory against itself"),
    ):
        mine = [r for r in ours if getattr(r, "source", "paper") == source]
        numbers = {v: sum(r.verdict is v for r in mine) for v in Verdict}
        counts = ", ".join(f"{n} {text_of(v, source, n)}" for v, n in numbers.items() if n)
        if mine:
            lines.append(f"{what}: {counts}.")
    for o in outcomes:
        if o.check.name == errata.NAME:
            caveat = CAVEATS  # the papers' own caveats: listed, not counted
            counts = errata.class_counts(o.data).items()
            by_class = ", ".join(f"{n} {c}" for c, n in counts if n and c not in caveat)
            caveats = sum(n for c, n in counts if c == "caveat confirmed")
            notes = sum(n for c, n in counts if c in caveat and c != "caveat confirmed")
            table = [row for row in errata.table_rows(o.data) if row[0] not in caveat]
            confirmed = sum(row[4] == "yes" for row in table)
            lines.append(
                f"Errata ([table by class](#{errata.TABLE_ANCHOR})): {len(table)} ({by_class}), "
                f"fedtheory reproduces {confirmed} of these findings; and "
                f"{_plural(caveats, 'caveat')} the papers state themselves, confirmed"
                + (
                    f"; {_plural(notes, 'note')} of fedtheory, not errata of the papers."
                    if notes
                    else "."
                )
            )
    return lines


@declare(verdict=Option(*Verdict), source=Text(), n=Integer(0))
def text_of(verdict: Verdict, source: str, n: int = 1) -> str:
    """A verdict as a count of ``n`` names it: *violated* of a consistency check of
    fedtheory is a *defect of fedtheory* (*defects* for ``n`` other than 1)."""
    if source == "fedtheory" and verdict is Verdict.VIOLATED:
        return "defect of fedtheory" if n == 1 else "defects of fedtheory"
    return verdict.value


def _tightness_text(ratio: float, searched: str) -> str:
    """ "attained within x%" or "the largest ratio found ... is r (searched)"."""
    if ratio > 1:
        return f"a ratio of {format_ratio(ratio, 1.0)} was found inside the hypotheses"
    if ratio >= ATTAINED:
        return f"attained within {100 * (1 - ratio):.2g}% (ratio {format_ratio(ratio, 1.0)})"
    return f"the largest ratio found inside the hypotheses is {ratio:.3g} ({searched})"


def _tightest_lines(o: Outcome, tight: Outcome | None) -> list[str]:
    """One line per catalogue upper bound this validation checks: its tightest instance
    inside the hypotheses, from the tightness search of this report (``tightness``
    validation, :mod:`fedtheory.tightness`) where the bound has a family, else the largest
    ratio among this validation's own instances inside the hypotheses."""
    from fedtheory.bounds import CATALOGUE
    from fedtheory.tightness import FAMILIES

    upper = {t.reference: key for key, t in CATALOGUE.items() if t.kind == "upper bound"}
    families = {f.theorem.reference: key for key, f in FAMILIES.items()}
    grouped: dict[str, list[Comparison]] = {}
    for r in o.rows:
        if r.relation == "<=" and r.verdict is not Verdict.OUTSIDE and r.reference in upper:
            grouped.setdefault(r.reference, []).append(r)
    lines = []
    for ref, rows in grouped.items():
        key = families.get(ref)
        if tight is not None and key in tight.settings["keys"]:
            j = tight.settings["keys"].index(key)
            budget = int(tight.data["budget"][j])
            text = _tightness_text(float(tight.data["ratio"][j]), f"search budget {budget}")
            how = (
                f"search of the [tightness](#{tight.check.name}) section, family `{key}`; "
                f"known: {FAMILIES[key].tightness}"
            )
        else:  # neither a search nor a proof: no tightness claim, the rows' numbers only
            ratios = [r.ratio for r in rows if r.bound > 0]
            if ratios:
                seen = f"the largest measured/bound among them is {max(ratios):.3g}"
            else:  # e.g. "excess <= 0": the distance to the bound instead of a ratio
                gap = max(r.measured - r.bound for r in rows)
                seen = f"the largest measured - bound among them is {gap:.3g}"
            text = (
                "not searched (no tightness family; this validation's "
                + ("row is" if len(rows) == 1 else f"{len(rows)} rows are")
                + f" not a search: {seen})"
            )
            how = ""
        lines.append(f"Tightest instance of {ref}: {text}" + (f" ({how})." if how else "."))
    return lines


LOOK_FIRST = (
    ("violated", (Verdict.VIOLATED,)),
    ("reversed or contradicted at this scale", (Verdict.REVERSED, Verdict.CONTRADICTED)),
    ("inconclusive or underpowered", (Verdict.INCONCLUSIVE, Verdict.UNDERPOWERED)),
)
"""The groups of rows the summary lists first (each row linked to its section), the
errata between the orderings and the undecided rows."""


def _look_first(outcomes: list[Outcome]) -> list[str]:
    """One bullet per group of :data:`LOOK_FIRST` that has rows, and one for the errata:
    each row's claim linked to its section, its label and the paper's reference."""
    items = []

    def line(what: str, rows: list[str]) -> None:
        if rows:
            items.append(f"**{what}** ({len(rows)}): " + "; ".join(rows) + ".")

    def row(o: Outcome, r: Comparison) -> str:
        return f"[{r.claim}](#{o.check.name}): *{r.outcome_label}* ({r.reference})"

    statements = [(o, r) for o in outcomes if o.check.name != errata.NAME for r in o.rows]
    for what, verdicts in LOOK_FIRST[:2]:
        line(what, [row(o, r) for o, r in statements if r.verdict in verdicts])
    for o in outcomes:
        if o.check.name == errata.NAME:
            table = [t for t in errata.table_rows(o.data) if t[0] not in CAVEATS]
            classes = dict.fromkeys(t[0] for t in table)
            if table:
                items.append(
                    f"**errata of the papers** ({len(table)}, "
                    f"[table by class](#{errata.TABLE_ANCHOR})): "
                    + "; ".join(
                        f"{c}: " + ", ".join(t[1] for t in table if t[0] == c) for c in classes
                    )
                    + "."
                )
    what, verdicts = LOOK_FIRST[2]
    line(what, [row(o, r) for o, r in statements if r.verdict in verdicts])
    return items


def _how_to_read(outcomes: list[Outcome]) -> list[str]:
    """The definitions the verdicts use, one bullet each."""
    items = [
        "**Ratio** = measured / bound: the tightness of an upper bound, 1 for an exact "
        'statement; "exact" where both are 0, "bound is 0" where only the bound is, '
        '"1 + 2.1e-09" where it exceeds 1 by rounding. A **holds** row marked *loose* has a '
        f"ratio below {LOOSE_RATIO:g}: it could not detect an error of a constant factor.",
        "**Confidence intervals.** A random quantity is the mean over replicates with its "
        "confidence interval, family-wise 95% over the points of a row (Bonferroni: each "
        "of the row's k points at level 1 - 0.05/k; exact binomial for 0/1 outcomes). An "
        "error bar drawn at a row's measured value is that row's interval; a figure's "
        "other bars are per-point 95% intervals, as its title or legend says.",
        "**Upper bounds** (`<=`): *holds* when the upper confidence limit is at most the "
        "bound, *violated* when the lower limit is above it, *inconclusive* otherwise (the "
        "row says how many replicates would decide it).",
        "**Exact statements** (`==`): *holds* when the interval lies inside the "
        "**equivalence margin** around the prediction (the row prints the margin: the "
        "largest difference the statement tolerates at this size), *violated* when it lies "
        "outside it, *inconclusive* otherwise.",
        "**Outside assumptions**: the instance breaks a hypothesis of the theorem, so the "
        "row neither confirms nor refutes it.",
    ]
    if _papers(outcomes):
        items += [
            "**Empirical findings** (`<` rows: a paper's ordering, e.g. a table's ranking) "
            "are judged over the rows of one table with Holm's step-down correction "
            "(family-wise 95%: the i-th smallest p-value at level 0.05/(m - i + 1), "
            "stopping at the first that fails). Their labels:",
            "*reproduced*: the ordering is significant on the set-up the row is judged "
            "against (the paper's or its authors' code's), across every unforced choice; "
            "*reproduced on a stand-in*: the same, on a set-up that differs in the aspects "
            "named (data, model...).",
            "*reversed*: the opposite ordering is significant, larger than the smallest "
            "difference the comparison detects, on the set-up; *contradicted at this scale*: "
            "the opposite ordering is significant but not every condition of *reversed* is "
            "met (a stand-in, too few draws, smaller than detectable).",
            "*underpowered*: neither ordering is significant; the label gives the draws that "
            "agree in direction, the difference, the smallest difference detected with 80% "
            "**power** (the chance of detecting a true difference of that size) and the "
            "draws that would decide it.",
            "*depends on <choice>*: an unforced set-up choice (clipping, step sizes...) whose "
            "values change the outcome; the row's detail gives the outcome at each value.",
            "**Errata**: findings about the papers (a wrong constant, a typo...), each "
            "recomputed and listed by class in its own table; the papers' own caveats and "
            "fedtheory's notes are listed there too, not counted as errata.",
        ]
    return items


_LHS = {"upper bound": "bound", "exact": "value", "limit": "limit", "order": "rate"}


def _mathml(theorem) -> str:
    """``theorem``'s total as presentation MathML, each term under a brace named by its key
    (as :meth:`~fedtheory.bounds.Theorem.latex` writes it in LaTeX)."""
    import sympy as sp

    def term(key: str, expr) -> str:
        body = sp.mathml(expr, printer="presentation")
        name = html.escape(key.replace("_", " "))
        return (
            f'<munder><munder accentunder="true"><mrow>{body}</mrow><mo>&#x23DF;</mo>'
            f"</munder><mtext>{name}</mtext></munder>"
        )

    terms = "<mo>+</mo>".join(term(k, e) for k, e in theorem.terms.items())
    return f"<mrow><mtext>{_LHS[theorem.kind]}</mtext><mo>=</mo>{terms}</mrow>"


def _formulas(o: Outcome) -> list[Formula]:
    """The catalogue statements ``o``'s rows check, each in the paper's notation: its title,
    reference and statement as text, then the formula fedtheory evaluates, typeset."""
    from fedtheory.bounds import CATALOGUE

    by_reference = {t.reference: t for t in CATALOGUE.values()}
    seen = dict.fromkeys(r.reference for r in o.rows if r.reference in by_reference)
    blocks = []
    for ref in seen:
        t = by_reference[ref]
        said = f", stated as `{t.statement}`" if t.statement else ""
        blocks.append(
            Formula(
                f"**{t.title}** ({ref}){said}; fedtheory evaluates:",
                rf"\text{{{_LHS[t.kind]}}} = {t.latex()}",
                _mathml(t),
            )
        )
    return blocks


@declare(outcomes=OUTCOMES, out=Location(folder="checked"), size=SIZE)
def report_blocks(outcomes: list[Outcome], out: Path, *, size: Size) -> list[Block]:
    """The report, top-down: a summary (counts by outcome, then the rows to look at
    first, each linked), how to read it (the definitions), contents, the verdict table
    (errata apart), then one section per validation."""
    tight = next((o for o in outcomes if o.check.name == "tightness"), None)
    first = _look_first(outcomes)
    blocks: list[Block] = [
        Heading(f"fedtheory validation report ({size} mode)", 1),
        Bullets(tuple(_counts(outcomes))),
        Paragraph(
            f"Compute time {sum(o.seconds for o in outcomes):.0f} s"
            + (
                f"; {_plural(len(reused), 'validation')} reused data of an earlier run, whose "
                f"compute took {sum(o.computed[0] for o in reused):.0f} s"
                if (reused := [o for o in outcomes if o.reused and o.computed])
                else ""
            )
            + ". Definitions: [How to read this report](#how-to-read)."
        ),
        Heading("Look first at", anchor="look-first"),
        *(
            [Bullets(tuple(first))]
            if first
            else [Paragraph("No row is violated, reversed, inconclusive or an erratum.")]
        ),
        Heading("How to read this report", anchor="how-to-read"),
        Bullets(tuple(_how_to_read(outcomes))),
        Heading("Contents", anchor="contents"),
        Bullets(
            ("[Look first at](#look-first)", "[How to read this report](#how-to-read)")
            + ("[Verdicts](#verdicts)",)
            + tuple(f"[{o.check.title}](#{o.check.name})" for o in outcomes)
            + ("[Environment](#environment)",)
        ),
        Heading("Verdicts", anchor="verdicts"),
        Paragraph(
            "Each row links to its section"
            + (
                "; the errata have a table of their own."
                if any(o.check.name == errata.NAME for o in outcomes)
                else "."
            )
        ),
        Table(
            HEADER,
            tuple(row for o in outcomes if o.check.name != errata.NAME for row in _verdict_rows(o)),
        ),
        Paragraph(
            "The same table, one row per verdict: `verdicts.csv` (or "
            "`fedtheory.validation.machinery.runner.verdicts_frame(folder)` as a pandas DataFrame)."
        ),
    ]
    for o in outcomes:
        c = o.check
        rows = Bullets(
            tuple(
                f"{r.claim}: measured {_measured(r)} {r.relation} {r.bound:.6g} (ratio "
                f"{r.ratio_text}) -> {_verdict_text(r)} ({r.detail})"
                for r in o.rows
            )
        )
        if c.name == errata.NAME:
            rows = Table(errata.TABLE_HEADER, tuple(errata.table_rows(o.data)))
        blocks += [
            Heading(c.title, anchor=c.name),
            Paragraph(f"Claim: {c.claim}."),
            *_formulas(o),
            *(
                [Heading("Errata by class", 3, errata.TABLE_ANCHOR)]
                if c.name == errata.NAME
                else []
            ),
            rows,
            *(
                [Bullets(tuple(lines))]
                if (lines := _tightest_lines(o, tight) if c.name != "tightness" else [])
                else []
            ),
            *(
                [
                    block
                    for setup in setups
                    for block in (
                        Paragraph(setup.title()),
                        Table(SETUP_HEADER, tuple(setup.table_rows())),
                    )
                ]
                if (setups := c.setups(o.data, o.settings) if c.setups else [])
                else []
            ),
            *(
                [
                    Paragraph("Observations (measured, no theorem claims them):"),
                    Bullets(tuple(notes)),
                ]
                if (notes := c.notes(o.data, o.settings) if c.notes else [])
                else []
            ),
            Paragraph(_timing(o)),
            Image(c.title, f"{c.name}/figure.png", o.caption),
            Paragraph(f"Vector version: [{c.name}/figure.svg]({c.name}/figure.svg)."),
            Paragraph("Reproduce alone:"),
            Code(_reproduce(c, out, size)),
            Paragraph(
                f"Data: `{c.name}/data.npz` (arrays: {', '.join(sorted(c.bounds))} are the "
                f"bounds/predictions); settings: `{json.dumps(o.settings)}`"
            ),
        ]
    blocks += [
        Heading("Environment", anchor="environment"),
        Paragraph(", ".join(f"{k} {v}" for k, v in environment().items())),
        Table(
            ("validation", "compute time"),
            tuple((o.check.name, _timing(o).removeprefix("Compute time: ")[:-1]) for o in outcomes),
        ),
    ]
    return blocks


def _timing(o: Outcome) -> str:
    """The compute time of the data shown: this run's, or the earlier run's with its date."""
    if not o.reused:
        return f"Compute time: {o.seconds:.1f} s."
    if o.computed is None:
        return "Compute time: not recorded (data reused from an earlier run)."
    seconds, when = o.computed
    return f"Compute time: {seconds:.1f} s on {when} (data reused from that run)."


def _commit() -> str:
    """The git commit of the fedtheory sources (``+ local changes`` when the tree differs
    from it), or ``unknown`` outside a git checkout."""
    import fedtheory

    root = Path(fedtheory.__file__).resolve().parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
        )
        return done.stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return head + (" + local changes" if dirty else "")


def environment() -> dict[str, str]:
    """What the report's Environment section names: the library versions of the
    fingerprint, numba and matplotlib, the commit, the machine and its load."""
    import matplotlib
    import numba

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        **library_versions(),
        "numba": numba.__version__,
        "matplotlib": matplotlib.__version__,
        "commit": _commit(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} logical CPUs",
        "load average (1 min) at the end": f"{load[0]:.2f}" if load else "unknown",
    }


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
    "outcome",
    "setup_differs",
    "detail",
)
"""Columns of ``verdicts.csv`` and of :func:`verdicts_frame`, one row per verdict: ``ratio``
as the report prints it (:func:`~fedtheory.verdict.format_ratio`: ``exact``, ``bound is 0``),
``verdict`` the row's label as the report prints it
(:attr:`~fedtheory.verdict.Comparison.outcome_label`), ``outcome`` the outcome it counts
under (:class:`~fedtheory.verdict.Verdict`'s value, for grouping)."""


def _records(validations: Iterable[tuple[str, Iterable[dict]]]) -> list[dict]:
    """One flat record per verdict row (``Comparison.as_dict`` form) of each validation."""
    records = []
    for name, rows in validations:
        for r in rows:
            low, high = r["interval"] if r["interval"] is not None else (None, None)
            records.append({"validation": name, "setup_differs": "", **r, "ci_low": low,
                            "ci_high": high, "outcome": r["verdict"],
                            "verdict": r["outcome_label"],
                            "ratio": format_ratio(r["measured"], r["bound"])})  # fmt: skip
    return [{k: rec[k] for k in CSV_COLUMNS} for rec in records]


def _outcome_records(outcomes: list[Outcome]) -> list[dict]:
    return _records((o.check.name, [r.as_dict() for r in o.rows]) for o in outcomes)


def _csv(records: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


@declare(source=Either(OUTCOMES, Location(folder="checked")))
def verdicts_frame(source):
    """The verdict table as a pandas DataFrame, one row per verdict (columns
    :data:`CSV_COLUMNS`).

    Parameters
    ----------
    source : list of Outcome, or path
        What :func:`run` returned, or an output folder (or its ``results.json``, read only
        if its checksum verifies: an edited or damaged file raises
        :class:`~fedtheory.io.DamagedFileError` naming it).

    Examples
    --------
    >>> from fedtheory.validation.machinery.runner import verdicts_frame
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
    if isinstance(source, Path):
        path = source / "results.json" if source.is_dir() else source
        if not path.is_file():
            raise ParameterError(
                "The 'source' parameter of verdicts_frame must be a list of outcomes, an "
                f"output folder or its results.json. Got {str(source)!r} (no such file)."
            )
        results = _verified_results(path)
        records = _records((v["name"], v["rows"]) for v in results["validations"])
    else:  # a list of outcomes (declared)
        records = _outcome_records(source)
    return pd.DataFrame.from_records(records, columns=list(CSV_COLUMNS))


@declare(outcomes=OUTCOMES, out=Location(folder="checked"), size=SIZE)
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
        "environment": environment(),
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
    results["checksum"] = _results_checksum(results)
    atomic_write_text(out / "results.json", json.dumps(results, indent=2))


def _results_checksum(results: dict) -> str:
    """SHA-256 of ``results.json``'s content (canonical JSON, its checksum left out)."""
    content = {k: v for k, v in results.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def _verified_results(path: Path) -> dict:
    """``results.json`` after checking its checksum; else DamagedFileError naming it."""
    try:
        results = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise DamagedFileError(path, f"unreadable ({type(err).__name__}: {err})") from None
    if not isinstance(results, dict) or "checksum" not in results:
        raise DamagedFileError(path, "no checksum (written by an older fedtheory?)")
    if results["checksum"] != _results_checksum(results):
        raise DamagedFileError(path, "its content does not match its checksum")
    return results
