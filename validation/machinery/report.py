"""The report as a list of blocks, rendered to Markdown and to self-contained HTML.

Blocks are tiny frozen records (heading, paragraph, table, image, code, bullet list,
formula);
inline text may use ``**bold**``, ```code``` and in-page links ``[text](#anchor)`` only,
which both writers understand. A heading with an ``anchor`` is a link target. The HTML
embeds every image (base64 PNG), so the file alone shows every figure wherever it is
opened or sent; the Markdown links them by relative path. A :class:`Formula` (a
statement in the paper's notation) is typeset in the HTML as presentation MathML, which
browsers draw natively (no script, no font, nothing fetched: the page stays
self-contained), and written as ``$$...$$`` LaTeX in the Markdown, which GitHub typesets.
No dependency beyond the standard library (the caller gives both forms).
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path

from fedtheory.constraints import (
    Either,
    Exemplified,
    Instance,
    Integer,
    Label,
    Location,
    SequenceOf,
    Text,
    declare,
)


@declare(text=Label(), level=Integer(1, 6), anchor=Label())
@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2
    anchor: str = ""  # link target (``[text](#anchor)``); letters, digits, '-' and '_'


@declare(text=Label())
@dataclass(frozen=True)
class Paragraph:
    text: str


@declare(items=SequenceOf(Label(), plural="strings"))
@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@declare(header=SequenceOf(Label()), rows=SequenceOf(SequenceOf(Label()), plural="rows"))
@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@declare(alt=Label(), path=Text(), caption=Label())
@dataclass(frozen=True)
class Image:
    alt: str
    path: str  # relative to the report's folder
    caption: str = ""


@declare(text=Label())
@dataclass(frozen=True)
class Code:
    text: str


@declare(text=Text(), latex=Text(), mathml=Text())
@dataclass(frozen=True)
class Formula:
    """A displayed formula with a lead-in (``**Theorem 3** (ref.): bound =``): the same
    formula as LaTeX (the Markdown) and as presentation MathML without the ``<math>``
    element (the HTML; ``sympy.mathml(expr, printer="presentation")``)."""

    text: str
    latex: str
    mathml: str


Block = Heading | Paragraph | Bullets | Table | Image | Code | Formula
BLOCKS = Exemplified(
    SequenceOf(Either(*(Instance(k) for k in Block.__args__)), plural="report blocks"),
    lambda args: [Heading("Title", anchor="title"), Paragraph("see [Title](#title)")],
)
"""A report: a list of blocks."""


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@declare(blocks=BLOCKS)
def to_markdown(blocks: list[Block]) -> str:
    """GitHub-flavoured Markdown."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            target = f'<a id="{b.anchor}"></a>\n\n' if b.anchor else ""
            out.append(target + "#" * b.level + " " + b.text)
        elif isinstance(b, Paragraph):
            out.append(b.text)
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {i}" for i in b.items))
        elif isinstance(b, Table):
            lines = ["| " + " | ".join(map(_md_cell, b.header)) + " |"]
            lines.append("|" + "---|" * len(b.header))
            lines += ["| " + " | ".join(map(_md_cell, r)) + " |" for r in b.rows]
            out.append("\n".join(lines))
        elif isinstance(b, Image):
            out.append(f"![{b.alt}]({b.path})" + (f"\n\n*{b.caption}*" if b.caption else ""))
        elif isinstance(b, Code):
            out.append(f"```\n{b.text}\n```")
        elif isinstance(b, Formula):
            out.append(f"{b.text}\n\n$$\n{b.latex}\n$$")
    return "\n\n".join(out) + "\n"


_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")
"""``*word*`` emphasis (a lone ``*`` such as ``F*`` or ``w^*`` is left as typed)."""


def _inline(text: str) -> str:
    """Markdown's inline marks as HTML: code spans (kept literal), ``**strong**``,
    ``*emphasis*`` and links to anchors of the page."""
    parts = re.split(r"(`[^`]+`)", html.escape(text, quote=False))
    for i, s in enumerate(parts):
        if i % 2:  # a code span
            parts[i] = f"<code>{s[1:-1]}</code>"
            continue
        s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
        s = _EMPHASIS.sub(r"<em>\1</em>", s)
        parts[i] = re.sub(r"\[([^\]]+)\]\(#([\w-]+)\)", r'<a href="#\2">\1</a>', s)
    return "".join(parts)


_STYLE = (
    "body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
    "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #bbb;padding:3px 6px}"
    "th{background:#eee}img{max-width:100%}code,pre{background:#f4f4f4}"
    "figure{margin:1em 0}figcaption{font-size:90%;color:#333;max-width:1000px}"
    "a{color:#0550ae}"
    ".holds{background:#dfd}.violated{background:#fdd}.outside{background:#ffd}"
    ".not-reproduced{background:#e8eef8}.inconclusive{background:#eee}"
    ".reproduced{background:#dfd}.reversed{background:#fdd}.loose{background:#efe}"
    ".stand-in{background:#e6f4e6}.contradicted{background:#fde8d8}"
    ".underpowered{background:#f0f0f0;font-style:italic}.depends{background:#f3e8f8}"
    "math.formula{margin:0.3em 0 0.8em 2em;font-size:110%}"
)


_VERDICT_CLASSES = (
    ("holds (loose)", "loose"),
    ("holds", "holds"),
    ("violated", "violated"),
    ("defect of fedtheory", "violated"),
    ("inconclusive", "inconclusive"),
    ("outside assumptions", "outside"),
    ("reproduced on a stand-in", "stand-in"),
    ("reproduced", "reproduced"),
    ("not reproduced at this scale", "not-reproduced"),
    ("reversed", "reversed"),
    ("contradicted at this scale", "contradicted"),
    ("underpowered", "underpowered"),
    ("depends on", "depends"),
)
"""Verdict cells (``**label**``) -> CSS class, by the label's start: a finding's label
carries its reasons (*underpowered: direction agrees in 5 of 6 draws...*, *depends on
clip*, *reproduced on a stand-in: data*), an erratum's evidence *violated (evidence of
erratum ...)*. The first matching start wins (longer starts first)."""


def _verdict_class(cell: str) -> str:
    if not (cell.startswith("**") and cell.endswith("**")):
        return ""
    label = cell.strip("*")
    cls = next((c for start, c in _VERDICT_CLASSES if label.startswith(start)), None)
    return f' class="{cls}"' if cls else ""


def _data_uri(path: Path) -> str:
    kind = {".png": "image/png", ".svg": "image/svg+xml"}[path.suffix.lower()]
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


@declare(blocks=BLOCKS, title=Text(), root=Location(folder=True))
def to_html(blocks: list[Block], *, title: str, root: Path) -> str:
    """One self-contained HTML page: every image, read from ``root / image.path``, is
    embedded as a data URI (no link to any other file)."""
    out = [
        "<!DOCTYPE html>",
        f'<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
        f"<style>{_STYLE}</style></head><body>",
    ]
    for b in blocks:
        if isinstance(b, Heading):
            target = f' id="{b.anchor}"' if b.anchor else ""
            out.append(f"<h{b.level}{target}>{_inline(b.text)}</h{b.level}>")
        elif isinstance(b, Paragraph):
            out.append(f"<p>{_inline(b.text)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            head = "".join(f"<th>{_inline(h)}</th>" for h in b.header)
            body = "".join(
                "<tr>" + "".join(f"<td{_verdict_class(c)}>{_inline(c)}</td>" for c in r) + "</tr>"
                for r in b.rows
            )
            out.append(f"<table><tr>{head}</tr>{body}</table>")
        elif isinstance(b, Image):
            alt, src = html.escape(b.alt), _data_uri(Path(root) / b.path)
            caption = f"<figcaption>{_inline(b.caption)}</figcaption>" if b.caption else ""
            out.append(f'<figure><img src="{src}" alt="{alt}">{caption}</figure>')
        elif isinstance(b, Code):
            out.append(f"<pre>{html.escape(b.text)}</pre>")
        elif isinstance(b, Formula):
            out.append(
                f'<p>{_inline(b.text)}</p><math display="block" class="formula">{b.mathml}</math>'
            )
    out.append("</body></html>")
    return "\n".join(out) + "\n"
