r"""One plotting style for every figure of fedtheory (validations, notebooks, README).

Rules it implements: every series visible in black and white (colour, marker and
line style all differ between series, :func:`series`); legends outside the data (one below
each panel, :func:`panels` + :func:`legend`); ticks of a short log axis at the data's grid
with plain labels (:func:`log_ticks`), a short log axis labelled at 1-2-5
(:func:`log_labels`); values below a stated floor drawn on the floor and
labelled :math:`\le` floor (:func:`floored`); symbols in mathtext; PNG at
:data:`PNG_DPI` dpi plus SVG beside it (:func:`save`).

Example
-------
>>> import numpy as np
>>> from matplotlib.figure import Figure
>>> from fedtheory.validation import plots
>>> with plots.style():
...     fig = Figure(figsize=(6, 4), layout="constrained")
...     (ax,) = plots.panels(fig, 1)
...     _ = ax.plot([1, 2, 3], [3, 1, 2], label=r"measured $x_t$", **plots.series(0))
...     ax.set(xlabel=r"round $t$", ylabel=r"$x_t$ (data units)")
...     plots.legend(ax)
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.ticker import (
    FixedLocator,
    FuncFormatter,
    LogFormatterSciNotation,
    LogLocator,
    NullFormatter,
)

from fedtheory.constraints import (
    Array,
    Bool,
    Integer,
    Location,
    MappingOf,
    Option,
    Real,
    SequenceOf,
    Size,
    Support,
    Text,
    declare,
)
from fedtheory.io import atomic_write_bytes
from fedtheory.validation.machinery.kinds import AXES, FIGURE
from fedtheory.verdict import mean_confidence_interval, mean_intervals

PNG_DPI = 160
"""Resolution of every PNG (the SVG beside it is resolution-free)."""

# Okabe & Ito's colour-blind-safe palette; black and grey are kept for references (optimum,
# ratio 1, paper values) so that they never look like a measured series.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
MARKERS_AFTER = ("*", "h", "<", ">", "p", "d", "8")
"""Markers of series 7-13 (hollow), so that no two of up to 14 series look alike."""
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 2)))
REFERENCE = {"color": "black", "linewidth": 1.0}
"""Style of reference lines (optimum, ratio 1): thin black."""

RC = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.titlesize": 11,
    "axes.grid": True,
    "grid.linewidth": 0.5,
    "grid.alpha": 0.35,
    "axes.prop_cycle": mpl.cycler(color=COLORS),
    "lines.linewidth": 1.5,
    "lines.markersize": 6,
    "errorbar.capsize": 3,
    "legend.frameon": False,
    "mathtext.fontset": "dejavusans",
    "savefig.dpi": PNG_DPI,
    "figure.dpi": 100,
    "svg.fonttype": "path",
}
"""The rcParams of the style (``matplotlib.rcParams.update(RC)`` in a notebook)."""


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Context in which figures are created and drawn with :data:`RC`."""
    with mpl.rc_context(RC):
        yield


@declare(i=Integer(0), points=Size(none=True), line=Bool(), marker=Bool(), filled=Bool())
def series(
    i: int,
    *,
    points: int | None = None,
    line: bool = True,
    marker: bool = True,
    filled: bool = True,
) -> dict:
    """Keyword arguments for ``Axes.plot``/``errorbar`` of the ``i``-th series: its own
    colour, marker and line style. With ``points`` (a long curve) markers are spaced to
    about twelve per curve (shifted per series so that coinciding curves keep distinct
    marks); ``line=False`` draws markers only, ``marker=False`` the line only (a closed
    form drawn under measured markers); ``filled=False`` hollow markers."""
    k = i % len(COLORS)
    second = (i // len(COLORS)) % 2 == 1  # past the palette: other markers, hollow
    kw = {
        "color": COLORS[k],
        "marker": (MARKERS_AFTER if second else MARKERS)[k] if marker else "none",
        "linestyle": LINESTYLES[i % len(LINESTYLES)] if line else "none",
    }
    if not filled or second:
        kw["markerfacecolor"] = "none"
    if points is not None and points > 24:
        step = max(1, points // 12)
        kw["markevery"] = (i * step // 4 % step, step)
    return kw


MAX_PANELS = 12
"""The most side-by-side panels a figure holds (each needs room for its axis labels)."""


@declare(fig=FIGURE, n=Integer(1, MAX_PANELS))
def panels(fig: Figure, n: int, **subplot_kw) -> list[Axes]:
    """``n`` side-by-side panels, each in a subfigure of its own so that :func:`legend` can
    put each panel's legend under it (never over the data)."""
    subfigs = np.atleast_1d(fig.subfigures(1, n))
    return [sf.subplots(**subplot_kw) for sf in subfigs]


@declare(ax=AXES, ncols=Size())
def legend(ax: Axes, *, ncols: int = 1, **kw) -> None:
    """The legend of ``ax`` below its panel, outside the axes (needs constrained layout)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.figure.legend(handles, labels, loc="outside lower center", ncols=ncols, **kw)


@declare(ax=AXES, values=Array(low=0.0, low_open=True, min_size=1), axis=Option("x", "y"))
def log_ticks(ax: Axes, values: Iterable[float], *, axis: str = "x") -> None:
    """Major ticks of a log ``axis`` exactly at ``values`` (the data's grid) with plain
    labels, and no minor labels (a log axis spanning about a decade otherwise labels its
    minor ticks and the labels collide)."""
    values = np.unique(np.asarray(list(values), dtype=float))
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(values))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


@declare(ax=AXES, axis=Option("x", "y"))
def log_labels(ax: Axes, *, axis: str = "y") -> None:
    """Label a short log ``axis`` (its current limits spanning under three decades) at 1, 2
    and 5 times each power of ten (at every digit where that gives fewer than three), so that
    at least three ticks carry a value; a longer axis keeps matplotlib's labelled decades.
    Call it once the data and limits are set."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    low, high = sorted((low, high))
    if low <= 0 or np.log10(high / low) >= 3:
        return
    decades = 10.0 ** np.arange(np.floor(np.log10(low)), np.ceil(np.log10(high)) + 1)
    for subs in ((1.0, 2.0, 5.0), np.arange(1.0, 10.0)):  # 1-2-5, else every digit
        values = np.outer(decades, subs).ravel()
        values = values[(values >= low) & (values <= high)]
        if values.size >= 3:
            break
    target.set_major_locator(FixedLocator(values))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


LOG_SLACK = 10**0.1
"""How far (a factor, a tenth of a decade) a plotted point may lie past the outermost
labelled tick of a log axis: :func:`dodge`'s shift of a point at the end of a grid."""


@declare(ax=AXES, axis=Option("x", "y"))
def plotted_values(ax: Axes, axis: str) -> np.ndarray:
    """The positive finite values, along ``axis`` (``"x"`` or ``"y"``), of everything
    ``ax`` plots as data: lines (a reference line ``axhline``/``axvline`` along its one data
    coordinate), error bars and scattered points; shaded bands (a floor) excluded."""
    k = 0 if axis == "x" else 1
    own = ax.get_yaxis_transform() if axis == "y" else ax.get_xaxis_transform()
    found: list[np.ndarray] = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_alpha() == 0:
            continue
        if line.get_linestyle() in ("None", "none", "", " ") and line.get_marker() in (
            "None", "none", "", " ", None):  # fmt: skip
            continue
        tr = line.get_transform()
        if tr is ax.transData or tr is own:
            found.append(np.asarray(line.get_xydata(), dtype=float)[:, k])
    for c in ax.collections:
        if not c.get_visible():
            continue
        if isinstance(c, LineCollection) and c.get_transform() is ax.transData:
            found += [np.asarray(seg, dtype=float)[:, k] for seg in c.get_segments()]
        elif isinstance(c, PathCollection) and c.get_offset_transform() is ax.transData:
            found.append(np.asarray(c.get_offsets(), dtype=float).reshape(-1, 2)[:, k])
    v = np.concatenate(found) if found else np.empty(0)
    return v[np.isfinite(v) & (v > 0)]


@declare(ax=AXES, axis=Option("x", "y"))
def labelled_ticks(ax: Axes, axis: str) -> np.ndarray:
    """Positions of the ticks of ``axis`` that carry a label inside the view (after a draw
    or with the current locators and formatters)."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    ticks = target._update_ticks()  # the ticks drawn (inside the view), labels formatted
    return np.array(
        [
            t.get_loc()
            for t in ticks
            if (t.label1.get_visible() and t.label1.get_text().strip())
            or (t.label2.get_visible() and t.label2.get_text().strip())
        ],
        dtype=float,
    )


@declare(ax=AXES)
def bracket_log(ax: Axes) -> None:
    """Extend each log axis of ``ax`` to the labelled tick just past its plotted values
    (:func:`plotted_values`), so that every point lies between two labelled values (within
    :data:`LOG_SLACK`) and can be read off the axis. A short axis labelled by
    :func:`log_labels` is labelled again over its new range."""
    for name in ("x", "y"):
        for _ in range(3):  # a new range may be labelled more coarsely: extend again
            if not _bracket_once(ax, name):
                break


def _bracket_once(ax: Axes, name: str) -> bool:
    """One extension of :func:`bracket_log` along ``name``; whether it changed the axis."""
    target = ax.xaxis if name == "x" else ax.yaxis
    if target.get_scale() != "log":
        return False
    values = plotted_values(ax, name)
    if not values.size:
        return False
    low, high = float(values.min()), float(values.max())
    get, set_ = (ax.get_xlim, ax.set_xlim) if name == "x" else (ax.get_ylim, ax.set_ylim)
    inverted = get()[0] > get()[1]
    vlow, vhigh = sorted(get())
    labels = labelled_ticks(ax, name)
    need_high = not labels.size or labels.max() * LOG_SLACK < high
    need_low = not labels.size or labels.min() > low * LOG_SLACK
    if not (need_high or need_low):
        return False
    fixed = isinstance(target.get_major_locator(), FixedLocator)
    decades = 10.0 ** np.arange(np.floor(np.log10(low)) - 3, np.ceil(np.log10(high)) + 4)
    short = np.log10(high / low) < 3
    subs = (1.0, 2.0, 5.0) if fixed and short else (1.0,)
    candidates = np.sort(np.outer(decades, subs).ravel())
    pad = 10**0.02  # the labelled end just inside the view
    if need_high:  # the next candidate past the values and past the current end
        beyond = candidates[(candidates >= high) & (candidates * pad > vhigh * (1 + 1e-9))]
        vhigh = float(beyond.min()) * pad if beyond.size else vhigh
    if need_low:
        beyond = candidates[(candidates <= low) & (candidates / pad < vlow * (1 - 1e-9))]
        vlow = float(beyond.max()) / pad if beyond.size else vlow
    set_((vhigh, vlow) if inverted else (vlow, vhigh))
    if fixed:  # labels at the data's grid or at 1-2-5: label the new range
        if np.log10(vhigh / vlow) < 3:
            log_labels(ax, axis=name)
        else:
            target.set_major_locator(LogLocator())
            target.set_major_formatter(LogFormatterSciNotation())
    return True


@declare(values=MappingOf(Array(finite=False), plural="arrays"), rtol=Real(0.0))
def coinciding(values: dict[str, np.ndarray], *, rtol: float = 1e-9) -> list[list[str]]:
    """The names of ``values`` grouped by equal arrays (to ``rtol``), in order: draw each
    group once, named by all its members (``" = ".join(group)``), so that no series lies
    hidden under another with the same data."""
    groups: list[list[str]] = []
    for name, v in values.items():
        v = np.asarray(v, dtype=float)
        same = next(
            (
                g
                for g in groups
                if np.shape(values[g[0]]) == v.shape
                and np.allclose(values[g[0]], v, rtol=rtol, atol=0.0, equal_nan=True)
            ),
            None,
        )
        if same is None:
            groups.append([name])
        else:
            same.append(name)
    return groups


@declare(values=Array(finite=False), floor=Real())
def floored(values: np.ndarray, floor: float) -> np.ndarray:
    """``values`` with everything below ``floor`` raised to it (for drawing only: pair with
    :func:`mark_floor`, which says so on the axis)."""
    return np.maximum(np.asarray(values, dtype=float), floor)


@declare(ax=AXES, floor=Real(1e-300), what=Text())
def mark_floor(ax: Axes, floor: float, *, what: str) -> None:
    r"""Shade the band under ``floor`` on a log y axis and label it ":math:`\le` floor
    (``what``)": points drawn on the floor stand for any value below it."""
    bottom = floor / 100  # two decades of band: room for the label under the floored points
    ax.axhspan(bottom, floor, color="0.88", zorder=0, linewidth=0)
    ax.set_ylim(bottom=bottom)
    exponent = int(np.floor(np.log10(floor)))
    mantissa = floor / 10.0**exponent
    number = (
        f"10^{{{exponent}}}" if np.isclose(mantissa, 1) else rf"{mantissa:g}\times10^{{{exponent}}}"
    )
    ax.text(
        0.02,
        floor / 10,
        rf"values $\leq {number}$ drawn at ${number}$ ({what})",
        transform=ax.get_yaxis_transform(),
        va="center",
        ha="left",
        fontsize=8,
        color="0.25",
    )


@declare(x=Array(), i=Integer(0), n=Size(), log=Bool(), width=Real(0.0))
def dodge(x: np.ndarray, i: int, n: int, *, log: bool, width: float = 0.1) -> np.ndarray:
    """``x`` shifted for the ``i``-th of ``n`` series so that equal points stay side by
    side (multiplicatively on a log axis); ``width`` is the total spread, in decades on a
    log axis and in data units otherwise."""
    shift = (i - (n - 1) / 2) * width / max(n - 1, 1)
    x = np.asarray(x, dtype=float)
    return x * 10.0**shift if log else x + shift


@declare(samples=SequenceOf(Array(min_size=2), min_size=1, plural="sample arrays"))
def confidence_bars(samples: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 95% confidence limits ``[P, 3]`` of each of ``P`` sample arrays, and the
    matching ``yerr [2, P]`` (distances below and above the mean) for ``Axes.errorbar``."""
    ci = np.array([mean_confidence_interval(v) for v in samples])  # [P, 3]
    return ci, np.abs(ci[:, 1:].T - ci[:, 0])


ROW_CONFIDENCE = 0.95
"""The family-wise confidence of a random row (``compare_mean_*``'s default)."""


@declare(samples=Array(ndim=(1, 2), min_size=2), support=Support(none=True))
def row_bars(
    samples: np.ndarray, *, support: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and limits ``[P, 3]`` of ``samples [n, P]`` (replicates at ``P`` points) with the
    family-wise 95% intervals a row over those points is judged on (Bonferroni over the
    points, as :func:`~fedtheory.verdict.compare_mean_upper_bound`), and ``yerr [2, P]``."""
    x = np.asarray(samples, dtype=float).reshape(len(samples), -1)
    ci = mean_intervals(x, 1.0 - (1.0 - ROW_CONFIDENCE) / x.shape[1], support=support)
    limits = np.stack([ci.mean, ci.low, ci.high], axis=1)  # [P, 3]
    return limits, np.abs(limits[:, 1:].T - limits[:, 0])


FORMATS: Sequence[str] = ("png", "svg")
"""The files :func:`save` writes: a PNG and a vector SVG beside it."""


@declare(fig=FIGURE, stem=Location())
def save(fig: Figure, stem: Path) -> list[Path]:
    """Write ``stem.png`` (:data:`PNG_DPI` dpi) and ``stem.svg`` atomically; return both.
    The figure's layout engine (constrained layout) places the panels once, for the PNG;
    the SVG keeps those places (in figure fractions) instead of measuring every text again
    (a sixth of the time a validation's figure takes)."""
    paths, engine = [], fig.get_layout_engine()
    try:
        for fmt in FORMATS:
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, dpi=PNG_DPI)
            fig.set_layout_engine("none")  # the next format keeps this layout
            path = Path(stem).with_suffix(f".{fmt}")
            atomic_write_bytes(path, buf.getvalue())
            paths.append(path)
    finally:
        fig.set_layout_engine(engine)
    return paths
