"""The report as a list of blocks, rendered to Markdown and to standalone HTML.

Blocks are tiny frozen records (heading, paragraph, table, image, code, bullet list);
inline text may use ``**bold**`` and ```code``` only, which both writers understand. No
dependency beyond the standard library.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    alt: str
    path: str


@dataclass(frozen=True)
class Code:
    text: str


Block = Heading | Paragraph | Bullets | Table | Image | Code


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block]) -> str:
    """GitHub-flavoured Markdown."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append("#" * b.level + " " + b.text)
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
            out.append(f"![{b.alt}]({b.path})")
        elif isinstance(b, Code):
            out.append(f"```\n{b.text}\n```")
    return "\n\n".join(out) + "\n"


def _inline(text: str) -> str:
    s = html.escape(text, quote=False)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", s)


_STYLE = (
    "body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
    "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #bbb;padding:3px 6px}"
    "th{background:#eee}img{max-width:100%}code,pre{background:#f4f4f4}"
    ".holds{background:#dfd}.violated{background:#fdd}.outside{background:#ffd}"
    ".not-reproduced{background:#e8eef8}"
)


_VERDICT_CLASSES = {
    "holds": "holds",
    "violated": "violated",
    "outside assumptions": "outside",
    "not reproduced at this scale": "not-reproduced",
}


def _verdict_class(cell: str) -> str:
    cls = _VERDICT_CLASSES.get(cell.strip("*"))
    return f' class="{cls}"' if cls else ""


def to_html(blocks: list[Block], *, title: str) -> str:
    """One standalone HTML page (images referenced by relative path)."""
    out = [
        "<!DOCTYPE html>",
        f'<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
        f"<style>{_STYLE}</style></head><body>",
    ]
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{_inline(b.text)}</h{b.level}>")
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
            alt, src = html.escape(b.alt), html.escape(b.path)
            out.append(f'<p><img src="{src}" alt="{alt}"></p>')
        elif isinstance(b, Code):
            out.append(f"<pre>{html.escape(b.text)}</pre>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
