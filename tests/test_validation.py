"""The validation suite at tiny size: verdict logic, report, resume, CLI."""

from __future__ import annotations

import base64
import csv
import json
import os
import re
import shutil
import stat
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from fedtheory.cli import main
from fedtheory.errors import ParameterError
from fedtheory.validation import CHECKS
from fedtheory.validation.errata import CLASSES as errata_classes
from fedtheory.validation.machinery import runner
from fedtheory.validation.machinery.registry import with_wrong_bounds
from fedtheory.validation.machinery.report import (
    Bullets,
    Code,
    Heading,
    Image,
    Paragraph,
    Table,
    to_html,
    to_markdown,
)
from fedtheory.validation.machinery.runner import run, verdicts_frame
from fedtheory.verdict import (
    FINDING_VERDICTS,
    Comparison,
    Verdict,
    compare_equal,
    compare_finding,
    compare_mean_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
    evidence_of,
    finding_label,
    mean_difference,
)

FINDINGS = FINDING_VERDICTS


def test_verdict_logic_detects_a_wrong_bound_and_labels_assumptions():
    assert compare_upper_bound("c", "r", [1.0, 2.0], [2.0, 2.0]).verdict is Verdict.HOLDS
    assert compare_upper_bound("c", "r", [1.0, 2.1], [2.0, 2.0]).verdict is Verdict.VIOLATED
    out = compare_upper_bound("c", "r", [1.0], [2.0], assumptions_hold=False)
    assert out.verdict is Verdict.OUTSIDE
    samples = np.random.default_rng(0).normal(1.0, 0.5, size=50)
    assert compare_mean_upper_bound("c", "r", samples, 1.5).verdict is Verdict.HOLDS
    # the mean is below 1.1 but its upper confidence limit is not: not enough evidence
    assert compare_mean_upper_bound("c", "r", samples, 1.1).verdict is Verdict.INCONCLUSIVE
    assert compare_mean_upper_bound("c", "r", samples, 0.7).verdict is Verdict.VIOLATED
    assert compare_equal("c", "r", 1.0, 1.0 + 1e-12, rtol=1e-9).verdict is Verdict.HOLDS
    assert compare_equal("c", "r", 1.0, 1.1, rtol=1e-9).verdict is Verdict.VIOLATED


def test_mean_upper_bound_at_several_points_reports_the_worst_upper_limit():
    rng = np.random.default_rng(1)
    samples = rng.normal([1.0, 2.0, 3.0], 0.1, size=(200, 3))  # [n, P]
    row = compare_mean_upper_bound("c", "r", samples, [10.0, 2.5, 3.5])
    assert row.verdict is Verdict.HOLDS
    assert row.bound == 3.5 and row.interval[0] < row.measured < row.interval[1]
    # the middle point's interval contains its bound: undecided; below it: violated
    assert compare_mean_upper_bound("c", "r", samples, [10.0, 2.0, 3.5]).verdict is (
        Verdict.INCONCLUSIVE
    )
    assert compare_mean_upper_bound("c", "r", samples, [10.0, 2.0, 3.5]).bound == 2.0
    row = compare_mean_upper_bound("c", "r", samples, [10.0, 1.9, 3.5])
    assert row.verdict is Verdict.VIOLATED and row.bound == 1.9


def test_mean_equal_holds_inside_the_equivalence_margin_only():
    samples = np.random.default_rng(2).normal([0.0, 5.0], 1.0, size=(400, 2))  # [n, P]
    row = compare_mean_equal("c", "r", samples, [0.0, 5.0], margin=0.5)
    assert row.verdict is Verdict.HOLDS and "margin ±0.5" in row.detail
    # the intervals contain the predictions, but no margin is stated (or it is too small)
    assert compare_mean_equal("c", "r", samples, [0.0, 5.0]).verdict is Verdict.INCONCLUSIVE
    assert compare_mean_equal("c", "r", samples, [0.0, 5.0], margin=0.01).verdict is (
        Verdict.INCONCLUSIVE
    )
    row = compare_mean_equal("c", "r", samples, [0.0, 5.5])  # 5 standard errors away
    assert row.verdict is Verdict.VIOLATED and row.bound == 5.5
    outside = compare_mean_equal("c", "r", samples, [0.0, 5.5], assumptions_hold=False)
    assert outside.verdict is Verdict.OUTSIDE and "fails" in outside.detail


@pytest.mark.slow
def test_detectable_difference_is_detected_with_the_stated_power():
    """Simulated experiments (20 + 20 unit-variance replicates) whose true difference is the
    detectable difference at the true spread reject with probability about 80%."""
    rng = np.random.default_rng(4)
    n, sims = 20, 2000
    unit = np.concatenate([np.ones(n // 2), -np.ones(n // 2)])  # exactly unit variance
    unit *= np.sqrt((n - 1) / n)
    delta = mean_difference(unit, unit, power=0.8).detectable
    x = rng.normal(delta, 1.0, size=(sims, n))
    y = rng.normal(0.0, 1.0, size=(sims, n))
    rejected = sum(mean_difference(x[i], y[i]).low > 0 for i in range(sims))
    assert stats.binomtest(rejected, sims, 0.8).pvalue > 1e-3, rejected / sims


@pytest.mark.parametrize("name", list(CHECKS))
def test_check_at_tiny_size_and_a_deliberately_wrong_bound_is_violated(name, tmp_path):
    check = CHECKS[name]
    s = check.settings("tiny")
    data = check.compute(s)
    rows = check.judge(data, s)
    assert rows and all(isinstance(r.verdict, Verdict) for r in rows), rows
    assert all(r.verdict is not Verdict.VIOLATED for r in rows), rows
    assert set(check.bounds) <= set(data)
    broken = check.judge(with_wrong_bounds(check, data), s)
    assert len(broken) == len(rows)
    for before, after in zip(rows, broken, strict=True):
        expected = {Verdict.OUTSIDE: Verdict.OUTSIDE}.get(before.verdict, Verdict.VIOLATED)
        if before.verdict in FINDINGS and name != "errata":  # an ordering, baseline moved away
            # reversed, unless a material set-up difference is open: then contradicted
            # (or where the authors' code, run as the referee, does not agree)
            refuted = "the authors' code does not confirm it" in after.verdict_text
            expected = Verdict.CONTRADICTED if after.setup_differs or refuted else Verdict.REVERSED
            if after.setup_differs:
                assert "the set-up differs materially" in after.detail, after
                assert after.verdict_text.startswith("contradicted at this scale (set-up ")
        assert after.verdict is expected, (before, after)
    _check_figure(check, data, s, rows, tmp_path)


def _check_figure(check, data, s, rows, folder):
    """The figure in both formats, at >= 150 dpi, every legend outside the axes."""
    drawn = []
    plot = check.plot

    def spy(data, settings, fig):
        drawn.append(fig)
        return plot(data, settings, fig)

    caption = runner._save_figure(folder / "figure", replace(check, plot=spy), data, s, rows)
    assert isinstance(caption, str)
    png, svg = folder / "figure.png", folder / "figure.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png.read_bytes()[16:20], "big")  # IHDR width in pixels
    assert width >= 150 * drawn[0].get_figwidth()
    assert b"<svg" in svg.read_bytes()[:1000]
    axes = drawn[0].get_axes()
    assert axes and all(ax.get_legend() is None for ax in axes)  # legends go under panels


class _Page(HTMLParser):
    """Collects the links, image sources and element ids of an HTML page."""

    def __init__(self):
        super().__init__()
        self.links, self.images, self.ids, self.table_links = [], [], set(), []
        self._in_table = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in_table |= tag == "table"
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
            if self._in_table:
                self.table_links.append(attrs["href"])
        if tag in ("img", "script", "link", "iframe"):
            self.images.append(attrs.get("src") or attrs.get("href") or "")

    def handle_endtag(self, tag):
        self._in_table &= tag != "table"


NAMES = ["example1-fedavg", "errata"]
FEDLAAVG = pytest.mark.paper("fedlaavg")
"""The tests that run the quickest statement validation, FedLaAvg's Example 1."""


@pytest.fixture(scope="module")
def report_run(tmp_path_factory):
    """One tiny run of two validations under umask 022: its outcomes, folder, messages."""
    out, messages = tmp_path_factory.mktemp("report"), []
    previous = os.umask(0o022)
    try:
        outcomes = run(NAMES, out, size="tiny", progress=messages.append)
    finally:
        os.umask(previous)
    return outcomes, out, messages


@FEDLAAVG
def test_report_written_and_resume_reuses_data(report_run):
    outcomes, tmp_path, messages = report_run
    names = NAMES
    report = (tmp_path / "report.md").read_text()
    assert "| claim |" in report and "example1-fedavg/figure.png" in report
    assert "--check example1-fedavg --size tiny" in report
    environment = report[report.index("## Environment") :]
    for name in ("numba", "matplotlib", "commit", "logical CPUs", "load average"):
        assert name in environment
    for name in names:  # each validation's compute time, in its section and the table
        assert f"| {name} | " in environment
    assert report.count("Compute time: ") == len(names)
    for name in names:
        assert (tmp_path / name / "figure.png").stat().st_size > 1000
        assert (tmp_path / name / "figure.svg").stat().st_size > 1000
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["validations"][0]["rows"][0]["verdict"] == "holds"
    messages.clear()
    run(names, tmp_path, size="tiny", progress=messages.append)
    assert "data reused" in messages[-1]
    rerun = (tmp_path / "report.md").read_text()  # each section keeps its last compute time
    for o in outcomes:
        when = re.escape(f"Compute time: {o.seconds:.1f} s on ")
        assert re.search(when + r"\d{4}-\d\d-\d\d \d\d:\d\d UTC \(data reused", rerun), o.check.name
    summary = rerun.split('<a id="how-to-read">')[0]  # counts, compute time, look first
    assert "Compute time: none" not in rerun and "(s)" not in summary
    assert f"[{names[0]}/figure.svg]({names[0]}/figure.svg)" in rerun
    assert not list(tmp_path.rglob("*.tmp"))
    # verdicts.csv and the DataFrame: one row per verdict, in report order
    rows = [(o.check.name, r.claim, r.outcome_label) for o in outcomes for r in o.rows]
    with open(tmp_path / "verdicts.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert [(r["validation"], r["claim"], r["verdict"]) for r in csv_rows] == rows
    for source in (outcomes, tmp_path, tmp_path / "results.json"):
        frame = verdicts_frame(source)
        assert list(frame.columns) == list(runner.CSV_COLUMNS)
        assert list(zip(frame.validation, frame.claim, frame.verdict, strict=True)) == rows
    assert np.allclose(frame.measured, [float(r["measured"]) for r in csv_rows])


@FEDLAAVG
def test_report_header_counts_statements_apart_from_the_errata_table(report_run):
    outcomes, tmp_path, _ = report_run
    report = (tmp_path / "report.md").read_text()
    header = report.split("\n\n")[1]  # the summary's counts, one line per kind of row
    fedavg = next(o for o in outcomes if o.check.name == "example1-fedavg")
    errata_rows = next(o for o in outcomes if o.check.name == "errata").rows
    holds = sum(r.verdict is Verdict.HOLDS for r in fedavg.rows)
    assert header.startswith(f"- Statements: {holds} holds")  # the errata are not among them
    caveats = sum(r.claim.startswith(("caveat", "note")) for r in errata_rows)  # not counted
    assert (
        caveats
        and f"Errata ([table by class](#errata-by-class)): {len(errata_rows) - caveats} (" in header
    )
    assert all(r.verdict is not Verdict.HOLDS for r in errata_rows)  # reproduced / violated
    table = report.split("### Errata by class")[1].split("\n\n")[1].splitlines()[2:]
    classes = [line.split(" | ")[0].lstrip("| ") for line in table]
    order = [c for c in errata_classes if c in classes]
    assert classes == sorted(classes, key=order.index) and len(table) == len(errata_rows)
    assert all(line.split(" | ")[4] in ("yes", "no (refuted)", "no (inconclusive)")
               for line in table)  # fmt: skip
    assert "**holds**" not in "\n".join(table) and " nan" not in report


def _outcome(name, rows, data=None, settings=None):
    check = replace(CHECKS[name], notes=None, setups=None)  # these rows alone, without data
    return runner.Outcome(check, settings or {}, rows, data or {}, False, Path("."), 0.0)


def test_report_marks_loose_rows_and_gives_each_upper_bound_its_tightest_instance(tmp_path):
    from fedtheory.bounds import e3cs, fedau

    ref = fedau.theorem3_per_round.reference
    rows = [
        Comparison("loose claim", ref, "<=", 2.8e-6, 1.0, Verdict.HOLDS),
        Comparison("tight claim", "a lemma", "<=", 7.7e-34, 0.0, Verdict.HOLDS),
        Comparison("exact claim", "a lemma", "==", 0.0, 0.0, Verdict.HOLDS),
        Comparison("excess <= 0", e3cs.fact9.reference, "<=", -0.5, 0.0, Verdict.HOLDS),
    ]
    key = "fedau.theorem3.per_round"
    tight = _outcome("tightness", [], {"ratio": np.array([0.995]), "budget": np.array([60])},
                     {"keys": [key]})  # fmt: skip
    blocks = runner.report_blocks([_outcome("fedau-weights", rows), tight], tmp_path, size="tiny")
    text = to_markdown(blocks)
    assert "| 2.8e-06 | **holds (loose)** |" in text and "Statements: 4 holds (1 loose)" in text
    assert "| bound is 0 | **holds** |" in text and "| exact | **holds** |" in text
    assert f"Tightest instance of {ref}: attained within 0.5% (ratio 0.995)" in text
    assert f"family `{key}`" in text
    # without a search in the report: "not searched", the rows' numbers are no tightness claim
    alone = to_markdown(
        runner.report_blocks([_outcome("fedau-weights", rows)], tmp_path, size="tiny")
    )
    assert (
        f"Tightest instance of {ref}: not searched (no tightness family; this validation's "
        "row is not a search: the largest measured/bound among them is 2.8e-06)."
    ) in alone
    assert (
        f"Tightest instance of {e3cs.fact9.reference}: not searched (no tightness family; this "
        "validation's row is not a search: the largest measured - bound among them is -0.5)."
    ) in alone


def test_report_opens_with_a_summary_the_rows_to_look_at_and_the_definitions(tmp_path):
    """Counts first, then the violated, reversed, errata and undecided rows, each linked to
    its section, then the definitions; every finding label gets its CSS class in the HTML,
    and the statements a section checks are typeset (MathML in the HTML, LaTeX in the
    Markdown)."""
    from fedtheory.bounds import fedau

    ref = fedau.theorem3_per_round.reference
    under = finding_label(Verdict.UNDERPOWERED, agree=5, draws=6, difference=-0.08,
                          detectable=0.19, needed=40)  # fmt: skip
    rows = [
        Comparison("tight claim", ref, "<=", 0.5, 1.0, Verdict.HOLDS),
        Comparison("broken claim", ref, "<=", 2.0, 1.0, Verdict.VIOLATED),
        Comparison("open claim", ref, "<=", 0.9, 1.0, Verdict.INCONCLUSIVE),
        Comparison("weak finding", "Table 2", "<", -0.08, 0.0, Verdict.UNDERPOWERED, label=under),
        Comparison("flipped finding", "Table 2", "<", 1.0, 0.0, Verdict.REVERSED,
                   label=finding_label(Verdict.REVERSED)),  # fmt: skip
        Comparison("choice finding", "Table 2", "<", 1.0, 0.0, Verdict.DEPENDS,
                   label=finding_label(Verdict.DEPENDS, depends=("clip",))),  # fmt: skip
        Comparison("proxy finding", "Table 2", "<", 1.0, 0.0, Verdict.CONTRADICTED,
                   label=finding_label(Verdict.CONTRADICTED, differs=("data: a stand-in",))),
    ]  # fmt: skip
    blocks = runner.report_blocks([_outcome("fedau-weights", rows)], tmp_path, size="tiny")
    text = to_markdown(blocks)
    order = [text.index(s) for s in ("- Statements: 1 holds, 1 violated, 1 inconclusive",
             "## Look first at", "## How to read this report", "## Contents",
             "## Verdicts")]  # fmt: skip
    assert order == sorted(order)
    first = text.split("## Look first at")[1].split("## How to read")[0]
    lines = [line for line in first.splitlines() if line.startswith("- ")]
    assert [line.split("**")[1] for line in lines] == [
        "violated",
        "reversed or contradicted at this scale",
        "inconclusive or underpowered",
    ]
    assert "[broken claim](#fedau-weights): *violated*" in lines[0]
    assert "[flipped finding](#fedau-weights)" in lines[1] and "proxy finding" in lines[1]
    assert "[open claim](#fedau-weights)" in lines[2] and "[weak finding](#" in lines[2]
    assert "tight claim" not in first and "choice finding" not in first
    definitions = text.split("## How to read this report")[1].split("## Contents")[0]
    for term in (
        "Bonferroni",
        "Holm",
        "equivalence margin",
        "power",
        "underpowered",
        "contradicted at this scale",
        "depends on",
        "reproduced on a stand-in",
    ):
        assert term in definitions, term  # fmt: skip
    assert "(s)" not in text
    assert r"\underbrace{\frac{2 K \left(1 - p\right)}{t}}_{\text{variance}}" in text
    page = to_html([b for b in blocks if not isinstance(b, Image)], title="t", root=tmp_path)
    assert '<math display="block"' in page and "<mfrac>" in page and "$$" not in page
    for label, cls in (
        (under, "underpowered"),
        ("reversed", "reversed"),
        ("depends on clip", "depends"),
        ("contradicted", "contradicted"),
    ):
        assert re.search(f'<td class="{cls}"><strong>{re.escape(label)}', page), label
    # nothing to look at first: said so
    quiet = to_markdown(runner.report_blocks([_outcome("fedau-weights", rows[:1])], tmp_path,
                                             size="tiny"))  # fmt: skip
    assert "No row is violated, reversed, inconclusive or an erratum." in quiet


@FEDLAAVG
def test_report_html_is_self_contained_with_contents_and_links(report_run, tmp_path):
    _, out, _ = report_run
    names = NAMES
    elsewhere = tmp_path / "report.html"  # the page alone, in another folder
    shutil.copy(out / "report.html", elsewhere)
    page = _Page()
    page.feed(elsewhere.read_text(encoding="utf-8"))
    assert len(page.images) == len(names)  # every figure, each embedded
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert page.links and all(href.startswith("#") for href in page.links)  # no file links
    assert all(href[1:] in page.ids for href in page.links)  # every link has its target
    statements = {f"#{n}" for n in names if n != "errata"}  # the errata have their own table
    assert statements <= set(page.table_links)  # verdict rows -> sections
    assert "#errata-by-class" in page.links  # from the header's counts
    assert "contents" in page.ids and set(names) <= page.ids


@FEDLAAVG
def test_figures_and_reports_follow_the_umask(report_run):
    _, out, _ = report_run  # written under umask 022
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {"report.html", "verdicts.csv", "figure.svg", "data.npz"} <= {p.name for p in files}
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o644}


@FEDLAAVG
def test_changed_settings_are_recomputed(tmp_path):
    run(["example1-fedavg"], tmp_path, size="tiny", progress=lambda m: None)
    messages = []
    run(["example1-fedavg"], tmp_path, size="quick", progress=messages.append)
    assert "data reused" not in messages[-1]


@FEDLAAVG
def test_changed_code_is_recomputed(tmp_path, monkeypatch):
    import fedtheory.validation.machinery.runner as runner

    run(["example1-fedavg"], tmp_path, size="tiny", progress=lambda m: None)
    monkeypatch.setattr(runner, "fingerprint", lambda check: "another version of the code")
    messages = []
    run(["example1-fedavg"], tmp_path, size="tiny", progress=messages.append)
    assert "data reused" not in messages[-1]


@pytest.mark.parametrize(("edited", "check"), [
    pytest.param("theorem2.py", "cafed-weights", marks=pytest.mark.paper("cafed")),
    ("ERRATA.md", "errata"),
])  # fmt: skip
def test_fingerprint_covers_shared_validation_code_and_errata_md(edited, check, monkeypatch):
    # cafed-weights calls CA-Fed's theorem2; errata reads ERRATA.md: an edit of either is a
    # code change for them
    import fedtheory.validation.machinery.runner as runner
    from fedtheory.validation.machinery import dependencies

    read = Path.read_bytes
    dependencies.clear_cache()
    try:
        before = runner.fingerprint(CHECKS[check])
        monkeypatch.setattr(
            Path, "read_bytes", lambda p: read(p) + (b"\nEDITED = 1\n" if p.name == edited else b"")
        )
        dependencies.clear_cache()
        assert runner.fingerprint(CHECKS[check]) != before
    finally:
        monkeypatch.undo()
        dependencies.clear_cache()


@FEDLAAVG
def test_a_crashing_validation_is_not_swallowed(tmp_path, monkeypatch):
    check = CHECKS["example1-fedavg"]

    def crash(s):
        raise RuntimeError("boom")

    monkeypatch.setitem(CHECKS, "example1-fedavg", type(check)(**{**vars(check), "compute": crash}))
    with pytest.raises(RuntimeError, match="boom"):
        run(["example1-fedavg"], tmp_path, size="tiny", progress=lambda m: None)


def test_markdown_and_html_writers(tmp_path):
    blocks = [
        Heading("T", 1),
        Paragraph("a **b** `c` <x>"),
        Bullets(("i", "j")),
        Table(("h1", "h2"), (("a|b", "**holds**"), ("c", "**not reproduced at this scale**"))),
        Image("alt", "f.png"),
        Code("x < 1"),
    ]
    md = to_markdown(blocks)
    assert md.startswith("# T\n\na **b** `c` <x>\n\n- i\n- j\n\n| h1 | h2 |\n|---|---|\n")
    assert "| a\\|b | **holds** |" in md and "![alt](f.png)" in md and "```\nx < 1\n```" in md
    (tmp_path / "f.png").write_bytes(b"\x89PNG fake")
    page = to_html(blocks, title="t", root=tmp_path)
    assert "<strong>b</strong> <code>c</code> &lt;x&gt;" in page
    shown = to_html([Paragraph("a *holds* row; F* <= 2, `w^*` and `*x*` as typed")], title="t",
                    root=tmp_path)  # fmt: skip
    assert "a <em>holds</em> row; F* &lt;= 2, <code>w^*</code> and <code>*x*</code> as" in shown
    assert '<td class="holds"><strong>holds</strong></td>' in page
    assert '<td class="not-reproduced"><strong>not reproduced at this scale</strong>' in page
    src = "data:image/png;base64," + base64.b64encode(b"\x89PNG fake").decode()
    assert "<pre>x &lt; 1</pre>" in page and f'<img src="{src}" alt="alt">' in page
    linked = [Heading("Sec", anchor="sec"), Paragraph("see [Sec](#sec)"), Image("a", "f.png", "c")]
    assert '<h2 id="sec">Sec</h2>' in to_html(linked, title="t", root=tmp_path)
    assert '<a href="#sec">Sec</a>' in to_html(linked, title="t", root=tmp_path)
    assert "<figcaption>c</figcaption>" in to_html(linked, title="t", root=tmp_path)
    assert '<a id="sec"></a>\n\n## Sec' in to_markdown(linked) and "*c*" in to_markdown(linked)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda tmp: run(["example1-fedavg"], tmp, size="huge"), marks=FEDLAAVG),
        lambda tmp: run(["nope"], tmp, size="tiny"),
        lambda tmp: run([], tmp, size="tiny"),
        lambda tmp: compare_mean_upper_bound("c", "r", [1.0, 2.0], 3.0, confidence=1.5),
        lambda tmp: compare_mean_equal("c", "r", [1.0, 2.0], 3.0, confidence=0.0),
        lambda tmp: mean_difference([1.0, 2.0], [3.0, 4.0], power=1.0),
        lambda tmp: compare_finding("c", "r", [[1.0]], [[3.0]]),
    ],
    ids=[
        "size",
        "unknown-check",
        "no-check",
        "confidence-high",
        "confidence-zero",
        "power-one",
        "one-data-draw",
    ],
)
def test_bad_input_raises_parameter_error(call, tmp_path):
    with pytest.raises(ParameterError, match="parameter of"):
        call(tmp_path)


def test_cli_list_and_unknown_check(capsys, tmp_path):
    from fedtheory.bounds import CATALOGUE

    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert CATALOGUE and all(key in listed for key in CATALOGUE)
    assert main(["validate", "--check", "nope", "--out", str(tmp_path)]) == 2


@FEDLAAVG
def test_cli_runs_one_validation_at_tiny_size(capsys, tmp_path):
    assert (
        main(["validate", "--check", "example1-fedavg", "--size", "tiny", "--out", str(tmp_path)])
        == 0
    )
    assert "0 violated" in capsys.readouterr().out
    assert (tmp_path / "report.html").exists()


def test_cli_sizes_are_the_registry_sizes():
    """The CLI keeps the validation sizes without importing the validations (a fast
    ``--help``); they must be the registry's."""
    from fedtheory.cli.validate import SIZES as CLI_SIZES
    from fedtheory.validation.machinery.registry import SIZES

    assert CLI_SIZES == SIZES


E3CS_ERRATUM = pytest.mark.paper("e3cs")  # the evidence rows cite an E3CS erratum


@FEDLAAVG  # the rows are given to FedLaAvg's Example 1 validation
@pytest.mark.parametrize(
    ("rows", "flags", "status"),
    [
        pytest.param("erratum", ["--fail-on-violated"], 0, marks=E3CS_ERRATUM),  # catalogued
        pytest.param("erratum", ["--strict"], 1, marks=E3CS_ERRATUM),  # --strict: all fail
        ("planted", ["--fail-on-violated"], 1),  # a violation no erratum explains
        ("planted", [], 0),  # no gate asked for
    ],
)
def test_cli_gate_fails_on_violations_no_catalogued_erratum_explains(
    rows, flags, status, capsys, tmp_path, monkeypatch
):
    violated = Comparison("claim", "ref", "<=", 2.0, 1.0, Verdict.VIOLATED)
    row = evidence_of("e3cs.sampler", violated) if rows == "erratum" else violated
    outcome = runner.Outcome(CHECKS["example1-fedavg"], {}, [row], {}, False, tmp_path, 0.0)
    monkeypatch.setattr(runner, "run", lambda *args, **kwargs: [outcome])
    args = ["validate", "--check", "example1-fedavg", "--size", "tiny", "--out", str(tmp_path)]
    assert main([*args, *flags]) == status
    printed = capsys.readouterr().out
    assert "1 violated" in printed
    assert ("the evidence of catalogued errata" in printed) is (rows == "erratum")
    assert row.verdict_text.startswith("violated") and row.unexplained_violation is (
        rows == "planted"
    )


def _rows_of_every_label() -> list[Comparison]:
    """One row of each label kind: exact 0, a bound of 0 exceeded, a loose holds, a ratio
    within rounding of 1, a finding whose set-up differs, an erratum's evidence."""
    return [
        Comparison("zero", "ref (1)", "==", 0.0, 0.0, Verdict.HOLDS),
        Comparison("above zero", "ref (2)", "<=", 0.5, 0.0, Verdict.VIOLATED),
        Comparison("loose", "ref (3)", "<=", 1e-5, 1.0, Verdict.HOLDS),
        Comparison("rounding", "ref (4)", "<=", 1.0 + 1e-9, 1.0, Verdict.HOLDS),
        Comparison(
            "finding",
            "ref (5)",
            "<",
            2.0,
            1.0,
            Verdict.STAND_IN,
            setup_differs=("step sizes: the paper's are unknown",),
            label=finding_label(Verdict.STAND_IN, differs=("step sizes: the paper's are unknown",)),
        ),
        evidence_of(
            "an-erratum", Comparison("erratum", "ref (6)", "<=", 2.0, 1.0, Verdict.VIOLATED)
        ),  # fmt: skip
    ]


def _report_labels(report: str) -> list[tuple[str, str]]:
    """(ratio, verdict) of each row of report.md's verdict table."""
    table = report.split('<a id="verdicts"></a>')[1].split("\n\n")[3].splitlines()[2:]
    return [tuple(c.strip() for c in line.strip("|").split(" | ")[-2:]) for line in table]


@FEDLAAVG
def test_csv_summary_line_and_report_agree_on_every_label(report_run, tmp_path):
    """verdicts.csv, the progress line and report.md print each row's one label and ratio,
    on a real tiny run and on rows of every label kind (a bound of 0 among them)."""
    fedavg = CHECKS["example1-fedavg"]
    made = replace(fedavg, name="labels", judge=lambda data, settings: _rows_of_every_label())
    messages: list[str] = []
    made_outcomes = run([made], tmp_path, size="tiny", progress=messages.append)
    for outcomes, out, lines in ((made_outcomes, tmp_path, messages), report_run):
        table = [r for o in outcomes if o.check.name != "errata" for r in o.rows]
        expected = [(r.ratio_text, f"**{r.outcome_label}**") for r in table]
        assert _report_labels((out / "report.md").read_text()) == expected
        with open(out / "verdicts.csv", newline="") as f:
            csv_rows = list(csv.DictReader(f))
        every = [r for o in outcomes for r in o.rows]
        assert [(c["ratio"], c["verdict"]) for c in csv_rows] == [
            (r.ratio_text, r.outcome_label) for r in every
        ]
        assert [c["outcome"] for c in csv_rows] == [r.verdict.value for r in every]
        for o in outcomes:  # the progress line names each label with its count
            line = next(m for m in lines if f"] {o.check.name}: " in m and "running" not in m)
            for label in {r.outcome_label for r in o.rows}:
                n = sum(r.outcome_label == label for r in o.rows)
                assert f"{n} {label}" in line, (line, label)
    labels = [r.outcome_label for r in made_outcomes[0].rows]
    assert labels[2] == "holds (loose)" and labels[4] == "reproduced on a stand-in: step sizes"
    assert [r.ratio_text for r in made_outcomes[0].rows][:2] == ["exact", "bound is 0"]
