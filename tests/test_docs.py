"""The documentation site builds without warnings and renders in a browser.

The site is built once per session exactly as ``./scripts/docs`` builds it (Sphinx, warnings
as errors, notebooks executed), into a temporary folder. Headless Chromium then opens every
page and checks that it loads, that MathJax (served from the site itself, no network) typeset
its math without errors, and that every image decoded.

Chromium is Debian's package: ``./scripts/test`` installs it with apt-get when it is missing
(CI runs as root) and prints that it does; without it these tests skip, saying why.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra: pip install -e .[docs]")
pytest.importorskip("myst_nb", reason="the docs extra: pip install -e .[docs]")

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q"]
        + ["docs", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3000,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-6000:]
    return out


def test_there_is_a_page_for_every_catalogue_theorem(site):
    from fedtheory.bounds import CATALOGUE

    for key, theorem in CATALOGUE.items():
        page = (site / "theorems" / f"{key}.html").read_text(encoding="utf-8")
        assert theorem.title.split(":")[0] in page and theorem.kind.capitalize() in page


def _text(html_page: str) -> str:
    """The page's text: tags dropped, entities decoded, typographic quotes made plain."""
    text = html.unescape(re.sub(r"<[^>]+>", "", html_page))
    return text.translate(
        str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2026": "..."})
    )


def test_every_theorem_page_shows_its_verdict_rows_and_figure(site):
    """The rows a page must show, derived again from the build's ``results.json``: those of
    the validations evaluating the theorem whose reference is the theorem's (all their rows
    where none is); each claim and verdict is on the page, with the validation's figure."""
    from fedtheory.bounds import CATALOGUE

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import fedtheory_docs

    folder = ROOT / "docs" / "_build" / fedtheory_docs.VALIDATION_FOLDER
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert results["size"] == fedtheory_docs.VALIDATION_SIZE
    rows_of = {v["name"]: v["rows"] for v in results["validations"]}
    shown = 0
    for key, names in fedtheory_docs.validations_of().items():
        page = (site / "theorems" / f"{key}.html").read_text(encoding="utf-8")
        if not names:
            assert "No validation of the report evaluates this statement" in page
            continue
        own = {
            n: [r for r in rows_of[n] if r["reference"] == CATALOGUE[key].reference] for n in names
        }
        if any(own.values()):
            expected = {n: rows for n, rows in own.items() if rows}
        else:
            expected = {n: rows_of[n] for n in names}
        text = _text(page)
        assert f"at the {fedtheory_docs.VALIDATION_SIZE} size" in text, key
        assert "--size quick --out results" in text, key
        body = page[page.index('id="verdicts"') :]
        assert body.count("<tr") == sum(len(r) for r in expected.values()) + len(expected), key
        images = re.findall(r'<img[^>]+src="([^"]+)"', body)
        assert len(images) == len(expected), key  # one figure per validation shown
        assert all((site / "theorems" / src).resolve().is_file() for src in images), key
        for rows in expected.values():
            for r in rows:
                assert r["claim"] in text, (key, r["claim"])
                assert r["verdict"] in text, (key, r["verdict"])
                shown += 1
    assert shown >= len(CATALOGUE) // 2  # most statements have rows


def test_the_site_serves_mathjax_itself(site):
    page = (site / "theorems" / "cafed.theorem1.html").read_text(encoding="utf-8")
    assert 'src="../_static/mathjax/tex-chtml.js"' in page
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    assert not any("cdn.jsdelivr" in p.read_text(encoding="utf-8") for p in site.glob("**/*.html"))


def _chromium() -> str:
    """Path of a Chromium binary (``./scripts/test`` installs Debian's package with apt-get
    where it can, and says so); skips, saying why, where there is none."""
    found = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found is None:
        pytest.skip(
            "no Chromium on PATH: ./scripts/test installs it as root with apt-get, or "
            "install it yourself (apt-get install chromium)"
        )
    return found


VIEWPORT = {"width": 1440, "height": 900}
"""A common desktop window: the layout checks below are made at this size."""
LEGIBLE_SCALE = 0.55
"""Smallest rendered / natural width of a figure: its 9 pt text, drawn 20 px high at the
figures' 160 dpi, stays at least 11 px high on screen."""
RAW_LATEX = re.compile(r"\$\$|\$[^$\n]+\$|\\frac|\\text")
"""What MathJax would have typeset: visible text with any of these is raw LaTeX."""
VISIBLE_TEXT = """() => {
  const body = (document.querySelector('div.body') || document.body).cloneNode(true);
  body.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
  return body.innerText;
}"""
"""The page's text as a reader sees it, without code (where `$` and backslashes are literal)
and without MathJax's typeset formulas."""


def _raw_latex(page) -> list[str]:
    """Snippets of ``page``'s visible text that show LaTeX source instead of typeset math."""
    if page.evaluate("document.querySelector('.math') !== null"):
        page.wait_for_function("window.MathJax && MathJax.startup", timeout=30_000)
        page.evaluate("MathJax.startup.promise")
    text = page.evaluate(VISIBLE_TEXT)
    return [text[max(m.start() - 30, 0) : m.end() + 30] for m in RAW_LATEX.finditer(text)]


def _browser(pw):
    return pw.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])


def test_the_raw_latex_check_finds_planted_formulas():
    """The text check fails on each form of untypeset math and passes on code and prose."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    planted = [r"$\eta \le \frac{1}{L}$", r"$$x$$", r"\frac{1}{2}", r"\text{bound}"]
    with sync_api.sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page()
        for latex in planted:
            page.set_content(f'<div class="body"><p>Hypothesis {html.escape(latex)}.</p></div>')
            assert _raw_latex(page), latex
        clean = '<div class="body"><p>costs $5</p><pre>$ fedtheory list</pre><code>$x$</code></div>'
        page.set_content(clean)
        assert _raw_latex(page) == []
        browser.close()


def test_every_page_renders_its_math_and_images_in_a_browser(site):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    pages = sorted(site.glob("**/*.html"))
    pages = [
        p
        for p in pages
        if p.parent.name not in {"_static", "_sources"}
        and p.name not in {"search.html", "genindex.html", "py-modindex.html"}
    ]
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page()
        failed: list[str] = []
        page.on("requestfailed", lambda r: failed.append(r.url))
        checked_math = 0
        for path in pages:
            failed.clear()
            page.goto(path.as_uri(), wait_until="load")
            name = str(path.relative_to(site))
            if page.evaluate("document.querySelector('.math') !== null"):
                page.wait_for_function("window.MathJax && MathJax.startup", timeout=30_000)
                page.evaluate("MathJax.startup.promise")
                typeset = page.evaluate("document.querySelectorAll('mjx-container').length")
                errors = page.evaluate("document.querySelectorAll('mjx-merror').length")
                if typeset == 0 or errors:
                    problems.append(f"{name}: {typeset} formulas typeset, {errors} errors")
                checked_math += 1
            problems += [f"{name}: untypeset LaTeX ...{snippet}..." for snippet in _raw_latex(page)]
            broken = page.evaluate(
                "[...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
                ".map(i => i.src)"
            )
            problems += [f"{name}: image not rendered {src}" for src in broken]
            problems += [f"{name}: failed to load {url}" for url in failed]
        browser.close()
    assert not problems, "\n".join(problems)
    assert checked_math >= 10  # the theorem pages at least


def test_the_pages_are_readable_at_a_desktop_size(site):
    """At :data:`VIEWPORT`: every code block lies inside the content column (a long line
    scrolls inside its block, never cut or over the sidebar), and every theorem page's
    figure is drawn at least :data:`LEGIBLE_SCALE` of its natural width (a screenshot of
    one theorem page is kept beside the site for a reader to look at)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport=VIEWPORT)
        for path in sorted(site.glob("**/*.html")):
            if path.parent.name in {"_static", "_sources"}:
                continue
            page.goto(path.as_uri(), wait_until="load")
            name = str(path.relative_to(site))
            blocks = page.evaluate(
                """() => {
                  const column = document.querySelector('div.body');
                  if (!column) return [];
                  const right = column.getBoundingClientRect().right;
                  return [...column.querySelectorAll('pre')].map(p => [
                    p.getBoundingClientRect().right - right,
                    p.scrollWidth > p.clientWidth,
                    getComputedStyle(p).overflowX,
                  ]);
                }"""
            )
            for past, overflows, overflow in blocks:
                if past > 1 or (overflows and overflow not in ("auto", "scroll")):
                    problems.append(f"{name}: a code block {past:.0f} px past the column, "
                                    f"overflow-x {overflow}")  # fmt: skip
            if path.parent.name == "theorems":
                sizes = page.evaluate(
                    "[...document.querySelectorAll('div.body img')]"
                    ".map(i => [i.getBoundingClientRect().width, i.naturalWidth])"
                )
                problems += [
                    f"{name}: figure drawn at {shown:.0f} of its {natural} px"
                    for shown, natural in sizes
                    if shown < LEGIBLE_SCALE * natural
                ]
        page.goto((site / "theorems" / "cafed.theorem1.html").as_uri(), wait_until="load")
        page.locator("div.body img").first.scroll_into_view_if_needed()
        page.screenshot(path=str(site / "theorem-page-screenshot.png"))
        browser.close()
    assert not problems, "\n".join(problems)


def test_a_theorem_page_shows_the_rows_of_its_statement_else_every_row():
    """Without building: the page keeps a validation's rows citing the theorem's reference
    and drops the others; a validation with no such row is shown whole."""
    from types import SimpleNamespace

    from fedtheory.bounds import CATALOGUE
    from fedtheory.verdict import Comparison, Verdict

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import fedtheory_docs

    thm = CATALOGUE["cafed.theorem1"]
    mine = Comparison("mine <= bound", thm.reference, "<=", 0.01, 2.0, Verdict.HOLDS)
    other = Comparison("other |x| == 1", "elsewhere", "==", 1.0, 1.0, Verdict.INCONCLUSIVE)
    check = SimpleNamespace(name="some-check", title="Some check")
    outcome = SimpleNamespace(check=check, rows=[mine, other], caption="")
    page = fedtheory_docs.theorem_page(thm, [], [outcome], "tiny")
    verdicts = page[page.index("## Verdicts") : page.index("## Use it")]
    assert "| mine \\<= bound | 0.01 | \\<= 2 | 0.005 | **holds (loose)** |" in verdicts
    assert "other" not in verdicts and "/_build/validation-tiny/some-check/figure.png" in verdicts
    alone = SimpleNamespace(check=check, rows=[other], caption="")
    verdicts = fedtheory_docs.theorem_page(thm, [], [alone], "tiny")
    assert "| other \\|x\\| == 1 | 1 | == 1 | 1 | **inconclusive** |" in verdicts
    assert "No validation" in fedtheory_docs.theorem_page(thm, [], [], "tiny")
