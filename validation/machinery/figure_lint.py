r"""Checks that a drawn figure shows what it claims to show (the figure rules of
:mod:`fedtheory.validation.machinery.plots`, as a lint over matplotlib's figure objects).

:func:`lint` draws the figure once and returns every :class:`Defect` of seven kinds:

``hidden series``
    two series of a panel drawn on the same path (every point within :data:`COINCIDE_PT`
    points of the other's on the canvas) where the upper one covers the lower one: its line
    over the lower's line and its markers over the lower's markers. A reader sees one
    series. Coinciding series are drawn once and named together, kept apart by markers at
    other points (``plots.series(i, points=...)``), drawn as a line under markers only
    (a closed form under measured points), or as nested markers (each at least
    :data:`NESTED_PT` points larger than the one over it).
``legend``
    a legend entry whose text repeats another entry of the same legend (``bound``,
    ``bound``), a label repeating a parenthesised part (``(bound) (bound)``), or an
    entry that names no drawn series (empty text, or a handle with no finite point).
``log ticks``
    a log axis with fewer than :data:`MIN_LOG_LABELS` labelled ticks in view: a reader
    cannot read a value off it.
``outside canvas``
    a text (title, axis or tick label, legend entry, annotation) that extends past the
    figure's edge, or a figure whose tight bounding box exceeds its size: cut in the PNG.
``interval``
    an error bar centred on a row's measured value (``rows=``, within
    :data:`SAME_RTOL`) whose ends differ from the interval the row's verdict used (a
    per-point 95% interval drawn for a row judged on its family-wise interval, say).
``log range``
    a plotted value of a log axis (a line's point, an error bar's end, a reference line)
    past its outermost labelled tick by more than
    :data:`~fedtheory.validation.machinery.plots.LOG_SLACK`: a reader cannot read it off the
    axis (``plots.bracket_log`` extends the axis to the next labelled value; the report's
    figures get it when they are saved).
``unplotted statement``
    a statement (*Theorem 1*, *Lemmas 5-6*, *Proposition 2*) named in a figure title or the
    caption (``caption=``) that no legend entry, panel title, axis or tick label names,
    where they name several: the figure promises a series it does not draw (a single
    statement named is the figure's subject, which every series shows).

Example
-------
>>> from matplotlib.figure import Figure
>>> from fedtheory.validation import figure_lint
>>> fig = Figure(figsize=(4, 3))
>>> ax = fig.subplots()
>>> _ = ax.plot([1, 2], [1, 2], label="bound")
>>> _ = ax.plot([1, 2], [2, 3], label="bound")
>>> _ = ax.legend()
>>> [d.kind for d in figure_lint.lint(fig)]
['legend']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure, SubFigure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.text import Text

from fedtheory.constraints import Exemplified, Instance, Label, Option, SequenceOf, declare
from fedtheory.constraints import Text as NonEmpty
from fedtheory.validation.machinery.kinds import FIGURE
from fedtheory.verdict import Comparison

COINCIDE_PT = 1.0
"""Two paths closer than this many points everywhere are one line on the canvas."""
NESTED_PT = 2.0
"""A marker at least this many points larger than the one drawn over it shows around it."""
MIN_LOG_LABELS = 3
"""Fewest labelled ticks a log axis needs to be read."""
EDGE_PX = 1.0
"""Slack (pixels) before a text counts as past the figure's edge."""

SAME_RTOL = 1e-6
"""Relative difference below which an error bar's centre or end is the row's number."""
STATEMENT = re.compile(
    r"\b(Theorem|Lemma|Proposition|Corollary|Example)s?\s+"
    r"(\d+)((?:\s*(?:,|and|[-\u2013])\s*\d+)*)"
)
"""A statement's name in a title or caption: kind, first number, further numbers or range."""

KINDS = (
    "hidden series",
    "legend",
    "log ticks",
    "log range",
    "outside canvas",
    "interval",
    "unplotted statement",
)


ROWS = Exemplified(SequenceOf(Instance(Comparison), plural="verdict rows"), lambda args: ())
"""The verdict rows a figure shows."""


@declare(kind=Option(*KINDS), where=Label(), what=NonEmpty())
@dataclass(frozen=True)
class Defect:
    """One defect: its kind (one of :data:`KINDS`), the panel or legend it is in, what."""

    kind: str
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.kind} [{self.where}]: {self.what}"


@declare(
    fig=FIGURE,
    rows=ROWS,
    caption=Label(none=True),
)
def lint(fig: Figure, *, rows: Sequence = (), caption: str | None = None) -> list[Defect]:
    """Every :class:`Defect` of ``fig`` (drawn once with Agg, at its own dpi); ``rows``: the
    verdict rows the figure shows (``Comparison``: their intervals), ``caption``: its
    caption (the statements it names)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    defects: list[Defect] = []
    for ax in fig.axes:  # those of subfigures included
        defects += _hidden_series(ax)
        defects += _log_ticks(ax)
        defects += _log_range(ax)
        defects += _unnamed_entries(ax)
    for legend in _legends(fig):
        defects += _legend_texts(legend)
    defects += _outside(fig, renderer)
    defects += _intervals(fig, rows)
    defects += _unplotted(fig, caption)
    return defects


def _panel(ax: Axes) -> str:
    return ax.get_title() or ax.get_ylabel() or "a panel"


def _drawn(line: Line2D) -> bool:
    """``line`` draws something: visible, with a line or markers, and a finite point."""
    if not line.get_visible() or line.get_alpha() == 0:
        return False
    if not _has_line(line) and line.get_marker() in ("None", "none", "", " ", None):
        return False
    xy = np.asarray(line.get_xydata(), dtype=float)
    return bool(xy.size and np.isfinite(xy).all(axis=1).any())


def _hollow(line: Line2D) -> bool:
    """Markers without fill: a filled marker under them still shows."""
    return str(line.get_markerfacecolor()).lower() == "none"


def _has_line(line: Line2D) -> bool:
    return line.get_linestyle() not in ("None", "none", "", " ")


def _marks(line: Line2D, xy: np.ndarray) -> np.ndarray:
    """Canvas positions of the markers ``line`` draws (its ``markevery`` applied)."""
    if line.get_marker() in ("None", "none", "", " ", None):
        return np.empty((0, 2))
    every = line.get_markevery()
    index = np.arange(len(xy))
    if isinstance(every, int):
        index = index[::every]
    elif isinstance(every, tuple) and len(every) == 2 and all(isinstance(v, int) for v in every):
        index = index[every[0] :: every[1]]
    elif every is not None:
        index = index[every]
    return xy[index]


def _hidden_series(ax: Axes) -> list[Defect]:
    caps = {id(cap) for c in ax.containers if isinstance(c, ErrorbarContainer) for cap in c[1]}
    lines = [line for line in ax.get_lines() if _drawn(line) and id(line) not in caps]
    scale = ax.figure.dpi / 72.0  # pixels per point
    paths = [ax.transData.transform(np.asarray(line.get_xydata(), dtype=float)) for line in lines]
    defects = []
    for (a, pa), (b, pb) in combinations(zip(lines, paths, strict=True), 2):
        if pa.shape != pb.shape:
            continue
        ok = np.isfinite(pa).all(axis=1) & np.isfinite(pb).all(axis=1)
        if not ok.any() or np.max(np.hypot(*(pa[ok] - pb[ok]).T)) > COINCIDE_PT * scale:
            continue
        lower, upper = (a, b) if a.get_zorder() <= b.get_zorder() else (b, a)
        p_lower, p_upper = (pa, pb) if lower is a else (pb, pa)
        lower_marks, upper_marks = _marks(lower, p_lower), _marks(upper, p_upper)
        separate = any(
            np.min(np.hypot(*(upper_marks - m).T), initial=np.inf) > COINCIDE_PT * scale
            for m in lower_marks
        )
        shows = _has_line(lower) and not _has_line(upper)  # a curve under markers only
        shows |= bool(len(lower_marks)) and _hollow(upper) and not _hollow(lower)
        nested = upper.get_markersize() + NESTED_PT <= lower.get_markersize()
        shows |= bool(len(lower_marks)) and nested  # a larger marker around a smaller one
        if not (separate or shows):
            defects.append(
                Defect(
                    "hidden series",
                    _panel(ax),
                    f"{_name(lower)!r} lies under {_name(upper)!r} (same path on the canvas)",
                )
            )
    return defects


def _name(line: Line2D) -> str:
    label = str(line.get_label())
    return "an unlabelled line" if label.startswith("_") else label


def _log_ticks(ax: Axes) -> list[Defect]:
    defects = []
    for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        if axis.get_scale() != "log" or not axis.get_visible() or not ax.axison:
            continue
        ticks = axis._update_ticks()  # the ticks drawn (inside the view), labels formatted
        labelled = [
            t
            for t in ticks
            if (t.label1.get_visible() and t.label1.get_text().strip())
            or (t.label2.get_visible() and t.label2.get_text().strip())
        ]
        if len(labelled) < MIN_LOG_LABELS:
            shown = ", ".join(t.label1.get_text() or t.label2.get_text() for t in labelled)
            defects.append(
                Defect(
                    "log ticks",
                    _panel(ax),
                    f"log {name} axis with {len(labelled)} labelled ticks ({shown or 'none'}); "
                    f"at least {MIN_LOG_LABELS} needed",
                )
            )
    return defects


def _log_range(ax: Axes) -> list[Defect]:
    """Plotted values of a log axis past its outermost labelled ticks (beyond the slack)."""
    from fedtheory.validation.machinery.plots import LOG_SLACK, labelled_ticks, plotted_values

    defects = []
    for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        if axis.get_scale() != "log" or not axis.get_visible() or not ax.axison:
            continue
        values, labels = plotted_values(ax, name), labelled_ticks(ax, name)
        if not values.size or not labels.size:
            continue  # no labelled tick at all is a "log ticks" defect
        for past, bound, side in (
            (values[values > labels.max() * LOG_SLACK], labels.max(), "above"),
            (values[values * LOG_SLACK < labels.min()], labels.min(), "below"),
        ):
            if past.size:
                worst = past.max() if side == "above" else past.min()
                defects.append(
                    Defect(
                        "log range",
                        _panel(ax),
                        f"log {name} axis: {past.size} plotted "
                        + ("value" if past.size == 1 else "values")
                        + f" {side} its outermost "
                        f"labelled tick {bound:g} (as far as {worst:.3g})",
                    )
                )
    return defects


def _unnamed_entries(ax: Axes) -> list[Defect]:
    """Legend entries (``ax``'s labelled artists) that name no drawn series."""
    defects = []
    for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
        if not label.strip():
            defects.append(Defect("legend", _panel(ax), "an entry with no text"))
        elif isinstance(handle, Line2D) and not _drawn(handle):
            defects.append(Defect("legend", _panel(ax), f"{label!r} names no drawn series"))
    return defects


def _legends(fig: Figure | SubFigure) -> list[Legend]:
    found = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    for sub in fig.subfigs:
        found += _legends(sub)
    return list(dict.fromkeys(found))


def _legend_texts(legend: Legend) -> list[Defect]:
    texts = [t.get_text() for t in legend.get_texts()]
    where = f"legend {legend.get_title().get_text() or ', '.join(texts[:2])}"
    defects = [
        Defect("legend", where, f"{text!r} appears {texts.count(text)} times")
        for text in dict.fromkeys(texts)
        if texts.count(text) > 1
    ]
    defects += [
        Defect("legend", where, f"{text!r} repeats {m.group(1)!r}")
        for text in texts
        if (m := re.search(r"(\([^()]+\))\s*\1", text))
    ]
    return defects


def _texts(fig: Figure | SubFigure) -> list[Text]:
    """The texts ``fig`` draws: figure texts and titles, every panel's titles, axis labels,
    drawn tick labels and annotations, every legend's texts."""
    found = list(fig.texts)
    for attr in ("_suptitle", "_supxlabel", "_supylabel"):
        if getattr(fig, attr, None) is not None:
            found.append(getattr(fig, attr))
    for ax in fig.axes:
        found += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis) if ax.axison else ():  # axis("off") draws none
            if not axis.get_visible():
                continue
            found += [axis.label, axis.offsetText]
            for tick in axis._update_ticks():
                found += [tick.label1, tick.label2]
    for legend in _legends(fig):
        found += [legend.get_title(), *legend.get_texts()]
    for sub in fig.subfigs:
        found += _texts(sub)
    return found


def _outside(fig: Figure, renderer) -> list[Defect]:
    box = fig.bbox
    defects = []
    for text in dict.fromkeys(_texts(fig)):
        if not text.get_visible() or not text.get_text().strip():
            continue
        ext = text.get_window_extent(renderer)
        if (
            ext.x0 < box.x0 - EDGE_PX
            or ext.y0 < box.y0 - EDGE_PX
            or ext.x1 > box.x1 + EDGE_PX
            or ext.y1 > box.y1 + EDGE_PX
        ):
            defects.append(
                Defect("outside canvas", "figure", f"{text.get_text()!r} extends past the edge")
            )
    tight = fig.get_tightbbox(renderer).transformed(fig.dpi_scale_trans)
    size = fig.bbox
    if not defects and (
        tight.x0 < -EDGE_PX
        or tight.y0 < -EDGE_PX
        or tight.x1 > size.width + EDGE_PX
        or tight.y1 > size.height + EDGE_PX
    ):
        defects.append(
            Defect(
                "outside canvas",
                "figure",
                f"drawn extent {tight.width:.0f} x {tight.height:.0f} px exceeds the canvas "
                f"{size.width:.0f} x {size.height:.0f} px",
            )
        )
    return defects


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= SAME_RTOL * max(abs(a), abs(b), 1e-300)


def _bars(ax: Axes) -> list[tuple[float, float, float]]:
    """(centre, low, high) in data units of each vertical error bar drawn in ``ax``."""
    found = []
    for c in ax.containers:
        if not isinstance(c, ErrorbarContainer) or not c.has_yerr or c.lines[0] is None:
            continue  # no y bars, or no drawn centre to tell which row a bar shows
        centres = np.asarray(c.lines[0].get_ydata(), dtype=float)
        segments = c.lines[2][-1].get_segments()  # the y bars come after the x bars
        for y, seg in zip(centres, segments, strict=False):
            low, high = sorted(float(v) for v in np.asarray(seg)[:, 1])
            found.append((float(y), low, high))
    return found


def _intervals(fig: Figure, rows: Sequence) -> list[Defect]:
    """Error bars centred on a row's measured value with other ends than its interval."""
    judged = [r for r in rows if getattr(r, "interval", None) is not None]
    defects = []
    for ax in fig.axes:
        for y, low, high in _bars(ax):
            for r in judged:
                lo, hi = r.interval
                if _same(y, r.measured) and not (_same(low, lo) and _same(high, hi)):
                    defects.append(
                        Defect(
                            "interval",
                            _panel(ax),
                            f"a bar at {y:.4g} spans [{low:.4g}, {high:.4g}] where the row "
                            f"{r.claim!r} is judged on [{lo:.4g}, {hi:.4g}]",
                        )
                    )
    return defects


def _statements(text: str) -> set[str]:
    """The statements ``text`` names, one ``"Lemma 5"`` each (ranges and lists expanded)."""
    names = set()
    for m in STATEMENT.finditer(text):
        numbers = [int(m.group(2))]
        rest = m.group(3)
        for sep, n in re.findall(r"(,|and|[-\u2013])\s*(\d+)", rest):
            if sep in "-\u2013":
                numbers += range(numbers[-1] + 1, int(n) + 1)
            else:
                numbers.append(int(n))
        names |= {f"{m.group(1)} {n}" for n in numbers}
    return names


def _unplotted(fig: Figure, caption: str | None) -> list[Defect]:
    """Statements a figure title or the caption names, where they name several, that no
    series, panel or axis names."""
    titles = [fig.get_suptitle()] if isinstance(fig, Figure) else []
    titles += [sub.get_suptitle() for sub in fig.subfigs]
    named = _statements(" ".join(titles + [caption or ""]))
    if len(named) < 2:  # the figure's subject: every series shows it
        return []
    shown: set[str] = set()
    for ax in fig.axes:
        texts = [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += ax.get_legend_handles_labels()[1]
        texts += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        if ax.get_lines() or ax.collections or ax.patches or ax.containers:
            shown |= _statements(" ".join(texts))
    for legend in _legends(fig):
        shown |= _statements(" ".join(t.get_text() for t in legend.get_texts()))
    return [
        Defect("unplotted statement", "figure", f"{name} is named but no series shows it")
        for name in sorted(named - shown)
    ]
