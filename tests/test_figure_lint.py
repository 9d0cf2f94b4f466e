"""The figure lint finds each kind of defect it names, planted in an otherwise clean figure,
and every figure of the quick report passes it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from matplotlib.figure import Figure

from fedtheory.validation.machinery import figure_lint, plots, runner
from fedtheory.validation.machinery.registry import CHECKS
from fedtheory.verdict import Comparison, Verdict

T = np.arange(1, 41)


def _clean() -> tuple[Figure, object]:
    """A figure in the report's style with two distinct series on a log axis."""
    fig = Figure(figsize=(12, 5), layout="constrained")
    (ax,) = plots.panels(fig, 1)
    ax.plot(T, 1.0 / T**2, label="measured", **plots.series(0, points=T.size))
    ax.plot(T, 4.0 / np.sqrt(T), label="bound", **plots.series(1, points=T.size))
    ax.set(yscale="log", xlabel="round $t$", ylabel="error (objective units)", title="panel")
    plots.bracket_log(ax)  # as the report's figures are saved: every value between labels
    return fig, ax


def _kinds(fig) -> list[str]:
    with plots.style():
        return [d.kind for d in figure_lint.lint(fig)]


def test_a_clean_figure_passes():
    with plots.style():
        fig, ax = _clean()
        plots.legend(ax)
        assert figure_lint.lint(fig) == []


def test_a_series_under_another_with_the_same_data_is_found():
    with plots.style():
        fig, ax = _clean()
        ax.plot(T, 1.0 / T**2, label="stationary", **plots.series(2))  # a marker on every point
        plots.legend(ax)
    assert _kinds(fig) == ["hidden series"]


def test_coinciding_series_with_markers_at_other_points_are_visible():
    with plots.style():
        fig, ax = _clean()
        ax.plot(T, (1 + 1e-4) / T**2, label="sine", **plots.series(2, points=T.size))
        plots.legend(ax)
    assert _kinds(fig) == []


def test_a_hidden_unlabelled_reference_line_is_found():
    with plots.style():
        fig, ax = _clean()
        for color in plots.COLORS[:2]:  # two dotted bounds at the same level, not in legend
            ax.axhline(2.0, ls=":", color=color)
        plots.legend(ax)
    assert _kinds(fig) == ["hidden series"]


@pytest.mark.parametrize(
    "labels",
    [("bound", "bound"), ("measured", "bound (bound) (bound)"), ("measured", " ")],
    ids=["repeated", "repeated part", "empty"],
)
def test_legend_entries_that_repeat_or_name_nothing_are_found(labels):
    with plots.style():
        fig, ax = _clean()
        for line, label in zip(ax.get_lines(), labels, strict=True):
            line.set_label(label)
        plots.legend(ax)
    assert set(_kinds(fig)) == {"legend"}


def test_a_legend_entry_for_an_empty_series_is_found():
    with plots.style():
        fig, ax = _clean()
        ax.plot([], [], label="never drawn", **plots.series(2))
        plots.legend(ax)
    assert _kinds(fig) == ["legend"]


def test_a_log_axis_with_too_few_labels_is_found():
    with plots.style():
        fig, ax = _clean()
        for line in ax.get_lines():  # every value within reach of a label: 0.1 and 1
            line.set_ydata(np.clip(line.get_ydata(), 0.08, 1.2))
        ax.set_ylim(0.05, 5)  # two decades: 0.1 and 1 labelled, no minor label
        plots.legend(ax)
    assert _kinds(fig) == ["log ticks"]


def test_text_past_the_canvas_is_found():
    with plots.style():
        fig, ax = _clean()
        plots.legend(ax)
        ax.text(1.0, 0.5, "a note written past the right edge", transform=fig.transFigure)
    assert _kinds(fig) == ["outside canvas"]


def test_a_legend_cut_at_the_edge_is_found():
    with plots.style():
        fig, ax = _clean()
        ax.legend(loc="center right", bbox_to_anchor=(1.3, 0.5))
    assert "outside canvas" in _kinds(fig)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CHECKS))
def test_every_figure_of_the_quick_report_passes_the_lint(name, tmp_path):
    """The figure the quick report draws for ``name``, from the quick size's data."""
    check = CHECKS[name]
    s = check.settings("quick")
    data = check.compute(s)
    rows = check.judge(data, s)
    drawn = []

    def spy(data, settings, fig):
        drawn.append(fig)
        drawn.append(check.plot(data, settings, fig))
        return drawn[-1]

    runner._save_figure(tmp_path / "figure", replace(check, plot=spy), data, s, rows)
    with plots.style():
        defects = figure_lint.lint(drawn[0], rows=rows, caption=drawn[1])
    assert not defects, "\n".join(map(str, defects))


def test_an_error_bar_other_than_the_rows_interval_is_found():
    """A per-point interval drawn for a row judged on its (wider) family-wise interval."""
    row = Comparison("E[x]", "ref (1)", "<=", 2.0, 9.0, Verdict.HOLDS, interval=(1.4, 2.6))
    for drawn, kinds in (((1.4, 2.6), []), ((1.9, 2.1), ["interval"])):
        with plots.style():
            fig, ax = _clean()
            low, high = drawn
            ax.errorbar([20.0], [2.0], yerr=[[2.0 - low], [high - 2.0]],
                        label="measured, 95% CI", **plots.series(2, line=False))  # fmt: skip
            plots.legend(ax)
            assert [d.kind for d in figure_lint.lint(fig, rows=[row])] == kinds


@pytest.mark.parametrize(
    ("title", "caption", "missing"),
    [
        ("Theorem 1 and Lemma 6", None, ["Lemma 6"]),
        ("Theorem 1", "Propositions 2-3: see the rows", ["Proposition 2", "Proposition 3"]),
        ("Theorem 1 and Lemma 2", "Theorem 1 and Lemma 2", ["Lemma 2"]),
        ("Theorem 1 and Lemma 6", "Lemma 6: the dashed Theorem 1 bound", ["Lemma 6"]),
        ("Lemma 4 against simulation", None, []),
    ],
    ids=["title", "caption range", "named twice", "caption only", "the subject"],
)
def test_a_statement_named_without_a_series_is_found(title, caption, missing):
    with plots.style():
        fig, ax = _clean()
        ax.get_lines()[1].set_label("Theorem 1 bound")
        fig.suptitle(title)
        plots.legend(ax)
        defects = figure_lint.lint(fig, caption=caption)
    assert [d.kind for d in defects] == ["unplotted statement"] * len(missing)
    assert all(name in str(d) for d, name in zip(defects, missing, strict=True))


@pytest.mark.parametrize("labels", ["decades", "1-2-5"])
def test_a_point_past_the_last_labelled_tick_of_a_log_axis_is_found(labels):
    """A value above the top labelled tick (a short axis labelled at 1-2-5, or decades) is a
    defect; ``plots.bracket_log`` extends the axis to the next labelled value."""
    with plots.style():
        fig = Figure(figsize=(12, 5), layout="constrained")
        (ax,) = plots.panels(fig, 1)
        y = np.linspace(0.04, 0.19, T.size) if labels == "1-2-5" else np.geomspace(0.011, 4, T.size)
        ax.plot(T, y, label="measured", **plots.series(0, points=T.size))
        ax.set(yscale="log", xlabel="round $t$", ylabel="error (objective units)")
        ax.set_ylim(0.039 if labels == "1-2-5" else 0.01, 0.11 if labels == "1-2-5" else 1.05)
        if labels == "1-2-5":
            plots.log_labels(ax)
        plots.legend(ax)
        found = figure_lint.lint(fig)
        assert [d.kind for d in found] == ["log range"] and "above" in str(found[0])
        plots.bracket_log(ax)
        assert figure_lint.lint(fig) == []
        assert max(plots.labelled_ticks(ax, "y")) * plots.LOG_SLACK >= y.max()


@pytest.mark.parametrize(("sizes", "kinds"), [((6, 6), ["hidden series"]), ((10, 6), [])])
def test_equal_series_as_nested_markers_are_visible(sizes, kinds):
    """Two series on one path: equal markers hide the lower one; a larger marker under a
    smaller one (nested) shows both."""
    with plots.style():
        fig = Figure(figsize=(12, 5), layout="constrained")
        (ax,) = plots.panels(fig, 1)
        x = np.array([1.0, 2.0, 3.0])
        for i, size in enumerate(sizes):
            ax.plot(x, x, **plots.series(i), markersize=size, label=f"series {i}")
        ax.set(xlabel="x (units)", ylabel="y (units)")
        plots.legend(ax)
        assert [d.kind for d in figure_lint.lint(fig)] == kinds
