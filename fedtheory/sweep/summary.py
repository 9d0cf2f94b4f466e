r"""A sweep table per point: the mean of a measured quantity with its confidence interval,
the bound next to it and the tightness ratio; drawn as a heatmap over two swept settings
or as lines over one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from fedtheory.constraints import Column, InstanceOf, Label, MappingOf, declare
from fedtheory.errors import ParameterError
from fedtheory.sweep.store import TABLE
from fedtheory.verdict import mean_confidence_interval

__all__ = ["plot_summary", "summarise"]


def _check_columns(table, names: Sequence[str], name: str, owner: str) -> None:
    """``table`` has the columns ``names`` (given by parameter ``name``)."""
    missing = [n for n in names if n not in table.columns]
    if missing:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must name columns of the table "
            f"{list(table.columns)}. Got {missing} instead."
        )


@declare(
    table=TABLE,
    by=Column("table", many=True),
    measured=Column("table", none=True),
    bound=Column("table"),
    inside=Column("table", none=True),
)
def summarise(
    table,
    by: Sequence[str],
    *,
    measured: str | None = "measured",
    bound: str = "bound",
    inside: str | None = "inside",
):
    r"""One row per point (the settings ``by``): ``n`` samples, their ``mean``, 95%
    confidence limits ``low``/``high`` (Student t, as
    :func:`fedtheory.verdict.mean_confidence_interval`), the ``bound`` (one value per
    point), ``ratio`` = mean / bound and ``high_ratio`` = high / bound (the tightness of an
    upper bound, judged on the upper limit as in the validation report), and ``inside``
    (the theorem's hypotheses hold on every sample).
    With ``measured=None`` only the bound is summarised (a theorem swept on its own).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"lam": [0, 0, 1, 1], "measured": [1.0, 3.0, 2.0, 2.0],
    ...                   "bound": [4.0, 4.0, 8.0, 8.0]})
    >>> summarise(t, ["lam"], inside=None)[["lam", "mean", "ratio"]]
       lam  mean  ratio
    0    0   2.0   0.50
    1    1   2.0   0.25
    """
    rows = []
    for key, group in table.groupby(by, sort=False):
        point = dict(zip(by, key, strict=True))
        b = group[bound].to_numpy()
        if not np.all(b == b[0]):
            raise ParameterError(
                f"The 'bound' parameter of summarise must name a column constant within each "
                f"point. Got values from {b.min():g} to {b.max():g} at {point} instead."
            )
        row = point | {"bound": float(b[0])}
        if measured is not None:
            m = group[measured].to_numpy(dtype=float)
            if not np.isfinite(m).all():
                raise ParameterError(
                    f"The '{measured}' column of summarise must hold finite measurements. Got "
                    f"{int((~np.isfinite(m)).sum())} NaN or inf of {m.size} at {point} instead "
                    "(a failed or diverged run has no mean: judge it on its own or drop it)."
                )
            mean, low, high = mean_confidence_interval(m) if m.size > 1 else (m[0],) * 3
            row |= {"n": m.size, "mean": mean, "low": low, "high": high}
            row |= {"ratio": mean / b[0], "high_ratio": high / b[0]}
        if inside is not None:
            row["inside"] = bool(group[inside].all())
        rows.append(row)
    import pandas as pd

    return pd.DataFrame(rows)


@declare(
    summary=TABLE,
    x=Column("summary"),
    y=Column("summary", none=True),
    fig=InstanceOf("matplotlib.figure:Figure", none=True),
    labels=MappingOf(Label(), "axis labels"),
    title=Label(),
)
def plot_summary(
    summary,
    x: str,
    y: str | None = None,
    *,
    fig: Figure | None = None,
    labels: Mapping[str, str] | None = None,
    title: str = "",
) -> Figure:
    r"""Draw a :func:`summarise` table: with two settings ``x``, ``y``, a heatmap of the
    tightness ratio (upper 95% limit / bound, log colour scale, each cell annotated; cells
    outside the theorem's assumptions hatched); with one setting ``x``, the measured mean
    with its confidence interval and the bound against ``x`` (log scale) and the ratio
    below. A summary without measurements shows the bound itself. ``labels`` maps a
    setting to its axis label (mathtext and units welcome).
    """
    fig = fig or Figure(figsize=(7, 5) if y else (7, 7), layout="constrained")
    has_measured = "high_ratio" in summary.columns
    value, name = (
        ("high_ratio", "tightness: upper 95% limit / bound") if has_measured else ("bound", "bound")
    )
    _check_columns(summary, [value], "summary", "plot_summary")
    if y is not None:
        xs, ys = list(dict.fromkeys(summary[x])), list(dict.fromkeys(summary[y]))
        cells = summary.set_index([y, x])
        grid = np.array([[cells.loc[(b, a), value] for a in xs] for b in ys], dtype=float)
        ax = fig.subplots()
        positive = grid[grid > 0]
        norm = LogNorm(positive.min(), positive.max()) if positive.size else None
        image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis", norm=norm)
        fig.colorbar(image, ax=ax, label=name)
        for i, b in enumerate(ys):
            for j, a in enumerate(xs):
                light = norm is not None and norm(grid[i, j]) > 0.6  # viridis: light at top
                ax.annotate(f"{grid[i, j]:.2g}", (j, i), ha="center", va="center",
                            color="black" if light else "white", fontsize=8)  # fmt: skip
                if "inside" in cells.columns and not cells.loc[(b, a), "inside"]:
                    ax.add_patch(_hatch(j, i))
        ax.set_xticks(range(len(xs)), [f"{a:g}" if _number(a) else a for a in xs])
        ax.set_yticks(range(len(ys)), [f"{b:g}" if _number(b) else b for b in ys])
        ax.set(xlabel=labels.get(x, x), ylabel=labels.get(y, y), title=title)
        return fig
    order = summary.sort_values(x)
    xs = order[x].to_numpy()
    if not has_measured:
        ax = fig.subplots()
        ax.plot(xs, order["bound"], "s--", label="bound")
        ax.set(yscale="log", xlabel=labels.get(x, x), ylabel=name, title=title)
        ax.legend()
        return fig
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    yerr = np.abs(order[["low", "high"]].to_numpy().T - order["mean"].to_numpy())
    ax1.errorbar(xs, order["mean"], yerr=yerr, fmt="o-", capsize=3, label="measured (mean, 95% CI)")
    ax1.plot(xs, order["bound"], "s--", label="bound")
    ax1.set(yscale="log", ylabel=labels.get("measured", "measured and bound"), title=title)
    ax1.legend()
    ax2.plot(xs, order["high_ratio"], "o-")
    ax2.set(yscale="log", xlabel=labels.get(x, x), ylabel=name)
    return fig


def _number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _hatch(j: int, i: int):
    from matplotlib.patches import Rectangle

    return Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="//", edgecolor="red",
                     label="outside assumptions")  # fmt: skip
