"""Sphinx extension of fedtheory's docs: pages generated from the code at build time.

* ``theorems/``: one page per catalogue theorem (statement in LaTeX from its sympy terms,
  hypotheses, parameters with meaning and domain, kind, reference (their ASCII math typeset
  by :func:`prose_math.typeset`), errata, and the verdict
  rows and figure of the validations that evaluate it, run at the ``tiny`` size into
  ``_build/validation-tiny``, where the runner reuses data of the same settings and code),
  written when the builder starts, so a page can never disagree with the code.
* ``api/papers/``: one API page per registered paper (:meth:`fedtheory.papers.Paper.api_page`:
  every module its record names), so a new paper's modules are in the reference without a
  hand-written section.
* ``notebooks/``: the notebooks of the repository, copied; myst-nb shows their stored outputs.
* the ``fedtheory-output`` directive: runs a ``fedtheory`` command and shows the command
  and what it printed, so a page shows the current code's output, never a pasted one;
  ``fedtheory-validation NAME`` does the same for a validation's verdict rows and figure.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import sympy as sp
from docutils import nodes
from docutils.parsers.rst import directives
from prose_math import typeset
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
_KIND = {"upper bound": "Upper bound", "exact": "Exact", "limit": "Limit", "order": "Order"}
_REL = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "!=": r"\ne"}
_LHS = {"upper bound": "bound", "exact": "value", "limit": "limit", "order": "rate"}


def _write_if_changed(path: Path, text: str) -> None:
    """Write only on change, so that Sphinx rebuilds only pages whose source changed."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _domain(n) -> str:
    low = "-\\infty" if n.low is None else f"{n.low:g}"
    high = "\\infty" if n.high is None else f"{n.high:g}"
    left = "(" if n.low is None or n.low_open else "["
    right = ")" if n.high is None or n.high_open else "]"
    where = f"{left}{low}, {high}{right}"
    return ("integer in " if n.integer else "real in ") + f"${where}$"


def _plain(text: str) -> str:
    """Plain text with Markdown's active characters escaped (``w^*``, ``F_k`` stay as typed)."""
    return re.sub(r"([\\`*_\[\]<>|$])", r"\\\1", text)


def errata_rows() -> list[tuple[str, ...]]:
    """The summary table of ``validation/ERRATA.md``: (key, place, class, verdict)."""
    text = (ROOT / "validation" / "ERRATA.md").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"`[\w.]+`", cells[0]):
            rows.append((cells[0].strip("`"), *cells[1:4]))
    return rows


def validations_of() -> dict[str, list[str]]:
    """For each catalogue key, the registered validations whose module evaluates the
    theorem (by any name its paper's module gives it, e.g. ``fedlaavg.end_of_period``)."""
    import importlib
    import inspect

    from fedtheory.bounds import CATALOGUE
    from fedtheory.papers import discover
    from fedtheory.validation.machinery.registry import CHECKS

    sources = {
        name: Path(inspect.getmodule(check.compute).__file__).read_text(encoding="utf-8")
        for name, check in CHECKS.items()
    }
    found = {}
    for key, thm in CATALOGUE.items():
        paper, rest = key.split(".", 1)
        modules = [importlib.import_module(n) for n in discover()[paper].statements]
        names = {a for m in modules for a in dir(m) if getattr(m, a) is thm} | {rest}
        uses = [re.compile(rf"\b{paper}\.{re.escape(a)}\b(?!\.\w)") for a in names]
        uses += [re.compile(rf"\b{paper}\.{re.escape(a)}\.(evaluate|reference)\b") for a in names]
        found[key] = sorted(n for n, text in sources.items() if any(u.search(text) for u in uses))
    return found


def kind(thm) -> str:
    """The kind, with "tight" where a tightness family proves a supremum of measured / bound
    of 1 (:attr:`fedtheory.tightness.Family.proved_supremum`) and what attains it."""
    from fedtheory.tightness import FAMILIES

    family = FAMILIES.get(thm.key)
    if family is None or family.theorem is not thm or family.proved_supremum != 1.0:
        return _KIND[thm.kind]
    how = family.tightness.removeprefix("tight: ")
    return f"{_KIND[thm.kind]}, tight ({typeset(how)}; search it: `fedtheory tightness {thm.key}`)"


def _verdict_cells(r) -> tuple[str, ...]:
    """A verdict row as the report prints it: claim, measured (with its confidence
    interval), bound, ratio, verdict (a loose *holds* says so)."""
    measured = f"{r.measured:.4g}"
    if r.interval is not None:
        measured += f" (CI {r.interval[0]:.4g} to {r.interval[1]:.4g})"
    verdict = f"**{r.outcome_label}**"
    bound = f"{r.relation} {r.bound:.4g}"
    return (_plain(r.claim), _plain(measured), _plain(bound), _plain(r.ratio_text), verdict)


def verdict_section(thm, outcomes: list, size: str) -> list[str]:
    """The verdict rows and figure, for this theorem, of the validations that evaluate it
    (``outcomes``, computed at ``size`` when the site was built): a validation's rows whose
    reference is the theorem's; where no validation has such a row (the statement sets the
    instance, e.g. a step size), every row of the validations that use it."""
    if not outcomes:
        return ["No validation of the report evaluates this statement."]
    own = {o.check.name: [r for r in o.rows if r.reference == thm.reference] for o in outcomes}
    if any(own.values()):
        outcomes = [o for o in outcomes if own[o.check.name]]
    lines = [
        f"Computed when this site was built, by the code it documents, at the `{size}` size "
        "(the smallest, which runs in seconds: fewer replicates and rounds than the report, "
        "so wider intervals and more "
        "*inconclusive* rows). The report's sizes: "
        f"`fedtheory validate {' '.join(f'--check {o.check.name}' for o in outcomes)} "
        "--size quick --out results` (or `--size full`); the report's section of each "
        "validation has the same rows ({doc}`../guide/report`).",
        "",
    ]
    for o in outcomes:
        rows = own[o.check.name]
        lines += [f"### `{o.check.name}`: {_plain(o.check.title)}", ""]
        if rows:
            lines.append(
                f"The rows of this statement ({len(rows)} of the validation's {len(o.rows)}):"
            )
        else:
            rows = o.rows
            lines.append(
                "No row is about this statement itself (the validation uses it to set up its "
                "instances); every row of the validation:"
            )
        lines += ["", "| claim | measured | bound | ratio | verdict |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(_verdict_cells(r)) + " |" for r in rows]
        caption = _plain(o.caption) if o.caption else _plain(o.check.title)
        lines += [
            "",
            f"```{{figure}} /_build/{VALIDATION_FOLDER}/{o.check.name}/figure.png",
            f":alt: {o.check.name} figure",
            "",
            caption,
            "```",
            "",
        ]
    return lines


def theorem_page(thm, errata: list[tuple[str, ...]], outcomes: list, size: str = "tiny") -> str:
    """One theorem's page (MyST Markdown); ``outcomes``: the runner's outcomes of the
    validations that evaluate it, computed at ``size``."""
    lines = [
        f"# `{thm.key}`: {_plain(thm.title)}",
        "",
        f"**Kind:** {kind(thm)}. **Reference:** {typeset(thm.reference)}.",
        "",
    ]
    if thm.statement:
        lines += [
            "## Statement",
            "",
            "As the paper states it (plain text):",
            "",
            "```text",
            thm.statement,
            "```",
            "",
        ]
    lines += [
        "## Formula",
        "",
        "What `evaluate` computes, each term named (the value is their sum):",
        "",
        "$$",
        rf"\text{{{_LHS[thm.kind]}}} = {thm.latex()}",
        "$$",
        "",
        "## Hypotheses",
        "",
    ]
    if thm.conditions:
        lines.append("Checked by `evaluate` (a `HypothesisViolation` names the one that fails):")
        lines.append("")
        for c in thm.conditions:
            lhs, rhs = sp.latex(sp.sympify(c.lhs)), sp.latex(sp.sympify(c.rhs))
            lines.append(f"- ${lhs} {_REL[c.rel]} {rhs}$ (`{c.text}`)")
    else:
        lines.append("None beyond the parameters' domains.")
    lines += [
        "",
        "## Parameters",
        "",
        "Keywords of `evaluate`, with symbol, domain and meaning:",
        "",
    ]
    for p, n in thm.notation.items():
        lines.append(f"- `{p}` (${sp.latex(n.symbol)}$, {_domain(n)}): {typeset(n.meaning)}")
    mine = [e for e in errata if e[0] == thm.key or e[0].startswith(thm.key + ".")]
    lines += ["", "## Errata", ""]
    if mine:
        for key, place, cls, verdict in mine:
            lines.append(f"- `{key}` ({place}): {cls}, {verdict}.")
        lines.append("")
        lines.append("Each entry's instance and numbers: {doc}`../errata`.")
    else:
        lines.append("No erratum of the {doc}`errata page <../errata>` is about this statement.")
    lines += ["", "## Verdicts", "", *verdict_section(thm, outcomes, size)]
    lines += [
        "",
        "## Use it",
        "",
        "```python",
        "from fedtheory.bounds import CATALOGUE",
        "",
        f'theorem = CATALOGUE["{thm.key}"]',
        "help(theorem)  # this page's content as text",
        "theorem.evaluate(...)  # the keywords above; returns the terms and their total",
        "```",
        "",
        "```bash",
        f"fedtheory show {thm.key}           # plain text",
        f"fedtheory show {thm.key} --latex   # LaTeX",
        "```",
        "",
    ]
    return "\n".join(lines)


VALIDATION_SIZE = "tiny"
"""The size the theorem pages' validations run at: the docs build stays short on 2 cores."""
VALIDATION_FOLDER = f"validation-{VALIDATION_SIZE}"
"""Their output folder under ``docs/_build``: the runner reuses its data while the settings
and the code's fingerprint do not change, so each validation is computed once per change."""


def validation_outcomes(names: list[str], out: Path) -> dict:
    """Run (or reuse) the named validations once, at :data:`VALIDATION_SIZE`, into ``out``."""
    from fedtheory.validation.machinery import runner

    outcomes = runner.run(names, out, size=VALIDATION_SIZE, progress=lambda message: None)
    return {o.check.name: o for o in outcomes}


def write_theorem_pages(srcdir: Path) -> None:
    from fedtheory.bounds import CATALOGUE

    folder = srcdir / "theorems"
    errata = errata_rows()
    validations = validations_of()
    needed = sorted({n for names in validations.values() for n in names})
    ran = validation_outcomes(needed, srcdir / "_build" / VALIDATION_FOLDER)
    keys = sorted(CATALOGUE)
    for stale in (
        set(folder.glob("*.md")) - {folder / f"{k}.md" for k in keys} - {folder / "index.md"}
    ):
        stale.unlink()
    for key in keys:
        outcomes = [ran[n] for n in validations[key]]
        page = theorem_page(CATALOGUE[key], errata, outcomes, VALIDATION_SIZE)
        _write_if_changed(folder / f"{key}.md", page)
    _write_if_changed(folder / "index.md", theorem_index(keys))


def theorem_index(keys: list[str]) -> str:
    """The catalogue's index page: the statements by paper, each with its kind and place."""
    from fedtheory.bounds import CATALOGUE

    index = [
        "# Theorem catalogue",
        "",
        "One page per statement of `fedtheory.bounds.CATALOGUE` (`fedtheory list`), generated",
        "from the code when the site is built. **Kind**: *Upper bound* (the measured quantity",
        "must not exceed it; *tight* where a supremum of measured / bound of 1 is proved),",
        "*Exact* (an identity), *Limit* (a limit value), *Order* (a rate up to unstated",
        "constants, not checkable numerically). Each page shows the verdict rows and figure",
        f"of the validations that evaluate the statement, computed at the `{VALIDATION_SIZE}` size",
        "when the site is built.",
        "",
    ]
    by_paper: dict[str, list[str]] = {}
    for key in keys:
        by_paper.setdefault(key.split(".")[0], []).append(key)
    for paper, members in by_paper.items():
        index += [f"## {paper}", ""]
        for key in members:
            thm = CATALOGUE[key]
            where = f"{thm.kind}; {typeset(thm.reference)}"
            index.append(f"- [`{key}`]({key}.md): {typeset(thm.title)} ({where})")
        index.append("")
    index += ["```{toctree}", ":hidden:", "", *keys, "```", ""]
    return "\n".join(index)


def api_pages() -> dict[str, str]:
    """``file name -> text`` of the generated API pages: one per registered paper
    (:data:`fedtheory.papers.PAPERS`) and their index."""
    from fedtheory.papers import discover

    papers = discover()
    pages = {f"{key}.md": paper.api_page() for key, paper in papers.items() if paper.modules}
    index = ["# Papers", "", "One page per registered paper (`fedtheory.papers`): its modules.", ""]
    index += [f"- [{papers[name[:-3]].title}]({name})" for name in pages]
    index += ["", "```{toctree}", ":hidden:", "", *(name[:-3] for name in pages), "```", ""]
    return {**pages, "index.md": "\n".join(index)}


def write_api_pages(srcdir: Path) -> None:
    folder = srcdir / "api" / "papers"
    pages = api_pages()
    for stale in set(folder.glob("*.md")) - {folder / name for name in pages}:
        stale.unlink()
    for name, text in pages.items():
        _write_if_changed(folder / name, text)


def copy_notebooks(srcdir: Path) -> None:
    folder = srcdir / "notebooks"
    folder.mkdir(exist_ok=True)
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        target = folder / nb.name
        if not target.exists() or target.read_bytes() != nb.read_bytes():
            shutil.copyfile(nb, target)


class FedtheoryOutput(SphinxDirective):
    """``fedtheory-output``: the command (its argument) and what it prints now."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"figure": directives.unchanged_required}  # a PNG the command wrote

    def run(self):
        args = shlex.split(self.arguments[0])
        if not args or args[0] != "fedtheory":
            raise self.error("fedtheory-output runs fedtheory commands only")
        done = subprocess.run(
            [sys.executable, "-m", "fedtheory", *args[1:]],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=600,
            check=False,
        )
        if done.returncode not in (0, 1):
            raise self.error(f"{self.arguments[0]} failed:\n{done.stderr}")
        text = f"$ {self.arguments[0]}\n{done.stdout.rstrip()}"
        block = nodes.literal_block(text, text)
        block["language"] = "console"
        if "figure" not in self.options:
            return [block]
        path = (ROOT / self.options["figure"]).resolve()
        if not path.is_file():
            raise self.error(f"{self.arguments[0]} wrote no {self.options['figure']}")
        image = nodes.image(uri="/" + str(path.relative_to(Path(self.env.srcdir))))
        return [block, image]


class FedtheoryValidation(SphinxDirective):
    """``fedtheory-validation NAME``: run a validation at the quick size (its data is reused
    while the code does not change) and show its verdict rows, figure and caption."""

    required_arguments = 1

    def run(self):
        from fedtheory.validation.machinery import runner

        name = self.arguments[0]
        out = Path(self.env.srcdir) / "_build" / "validation"
        outcome = runner.run([name], out, size="quick", progress=lambda message: None)[0]
        table = nodes.table()
        group = nodes.tgroup(cols=3)
        table += group
        group += [nodes.colspec(colwidth=w) for w in (6, 3, 1)]
        head, body = nodes.thead(), nodes.tbody()
        group += [head, body]

        def row(cells):
            r = nodes.row()
            for c in cells:
                entry = nodes.entry()
                entry += nodes.paragraph(text=c)
                r += entry
            return r

        head += row(("claim", "measured vs bound", "verdict"))
        for r in outcome.rows:
            body += row((r.claim, f"{r.measured:.4g} {r.relation} {r.bound:.4g}", r.outcome_label))
        figure = nodes.figure()
        figure += nodes.image(uri=f"/_build/validation/{name}/figure.png")
        figure += nodes.caption(text=outcome.caption)
        return [table, figure]


def _generate(app) -> None:
    srcdir = Path(app.srcdir)
    write_theorem_pages(srcdir)
    write_api_pages(srcdir)
    copy_notebooks(srcdir)


def setup(app):
    app.connect("builder-inited", _generate)
    app.add_directive("fedtheory-output", FedtheoryOutput)
    app.add_directive("fedtheory-validation", FedtheoryValidation)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
