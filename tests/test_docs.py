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

from tests.conftest import paper_marks

pytest.importorskip("sphinx", reason="the docs extra: pip install -e .[docs]")
pytest.importorskip("myst_nb", reason="the docs extra: pip install -e .[docs]")

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


RUN_BY_THE_SITE = "\n".join(
    line
    for page in sorted((ROOT / "docs").rglob("*.md"))
    if "_build" not in page.parts
    for line in page.read_text(encoding="utf-8").splitlines()
    if line.startswith("```{fedtheory-")
)
"""The commands and validations that the site's pages run while it builds (the
``fedtheory-output`` and ``fedtheory-validation`` directives)."""


def needs_the_site(test):
    """Mark a test of the built site with the papers whose examples the site runs (named, or
    owning a validation it runs): in a copy without one of them the site cannot build, and
    the test is left out."""
    for mark in paper_marks(RUN_BY_THE_SITE):
        test = mark(test)
    return test


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


@needs_the_site
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


@needs_the_site
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


@needs_the_site
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
RAW_LATEX = re.compile(r"\$\$|\$[^$\n]+\$|\\frac|\\text|\\_")
"""What MathJax would have typeset: visible text with any of these is raw LaTeX."""
VISIBLE_TEXT = """() => {
  const body = (document.querySelector('div.body') || document.body).cloneNode(true);
  body.querySelectorAll('pre, code, script, style, mjx-container').forEach(e => e.remove());
  return body.innerText;
}"""
"""The page's text as a reader sees it, without code (where `$` and backslashes are literal)
and without MathJax's typeset formulas."""
TYPESET = """() => Array.from(MathJax.startup.document.math)
  .map(m => [m.math, MathJax.startup.toMML(m.root)])"""
"""Each formula MathJax typeset: its TeX source and the MathML it drew (what a reader sees)."""
LITERAL_TEX = re.compile(r"\\[a-zA-Z_^{}]")
"""TeX that MathJax drew as characters: a backslash escape inside ``\\text{...}`` (MathJax's
text mode runs no macros, so ``\\text{drift\\_sigma}`` shows ``drift\\_sigma``)."""


def _raw_latex(page) -> list[str]:
    """Snippets of ``page``'s visible text that show LaTeX source instead of typeset math:
    in its prose, and inside its typeset formulas."""
    found = []
    if page.evaluate("document.querySelector('.math') !== null"):
        page.wait_for_function("window.MathJax && MathJax.startup", timeout=30_000)
        page.evaluate("MathJax.startup.promise")
        for tex, mathml in page.evaluate(TYPESET):
            drawn = html.unescape(re.sub(r"<[^>]+>", " ", mathml))
            found += [f"{m.group()} drawn in ${tex[:200]}$" for m in LITERAL_TEX.finditer(drawn)]
    text = page.evaluate(VISIBLE_TEXT)
    return found + [text[max(m.start() - 30, 0) : m.end() + 30] for m in RAW_LATEX.finditer(text)]


def _browser(pw):
    return pw.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])


def test_the_raw_latex_check_finds_planted_formulas():
    """The text check fails on each form of untypeset math and passes on code and prose."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    planted = [
        r"$\eta \le \frac{1}{L}$",
        r"$$x$$",
        r"\frac{1}{2}",
        r"\text{bound}",
        r"drift\_sigma",
    ]
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


def _mathjax_page(tmp_path: Path, formula: str) -> str:
    """A page typesetting ``formula`` with the MathJax the site serves (the docs extra's
    offline copy), as Sphinx writes inline math."""
    import importlib.util

    offline = importlib.util.find_spec("sphinx-mathjax-offline")
    if offline is None:
        pytest.skip("the docs extra: sphinx-mathjax-offline")
    script = Path(offline.origin).parent / "static" / "mathjax" / "tex-chtml.js"
    path = tmp_path / "math.html"
    path.write_text(
        '<html><head><script>window.MathJax = {"options": {"processHtmlClass": "math"}}'
        f'</script><script defer src="{script.as_uri()}"></script></head><body>'
        f'<div class="body"><p>A bound <span class="math notranslate nohighlight">'
        f"\\({html.escape(formula)}\\)</span>.</p></div></body></html>",
        encoding="utf-8",
    )
    return path.as_uri()


@pytest.mark.paper("fedawe")
@pytest.mark.paper("fedlaavg")
def test_the_raw_latex_check_finds_escapes_drawn_inside_typeset_math(tmp_path):
    """A label written ``\\text{drift\\_sigma}`` is typeset by MathJax with a visible
    backslash; the theorems' labels (:meth:`fedtheory.bounds.Theorem.latex`) are not."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    from fedtheory.bounds import CATALOGUE

    label = CATALOGUE["fedawe.theorem1"].latex()
    assert "drift" in label and "sigma" in label
    with sync_api.sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page()
        for formula in (r"\underbrace{x}_{\text{drift\_sigma}}", r"\text{E[\^{}2]} + x"):
            page.goto(_mathjax_page(tmp_path, formula), wait_until="load")
            assert _raw_latex(page), formula
        for formula in (label, CATALOGUE["fedlaavg.example1.end_of_period"].latex()):
            page.goto(_mathjax_page(tmp_path, formula), wait_until="load")
            assert page.evaluate("document.querySelectorAll('mjx-container').length") == 1
            assert _raw_latex(page) == [], formula
        browser.close()


@needs_the_site
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


CODE_BLOCKS = """() => {
  const column = document.querySelector('div.body');
  if (!column) return [];
  const found = [];
  for (const block of column.querySelectorAll('pre, div.highlight')) {
    const box = block.getBoundingClientRect();
    if (box.width === 0) continue;  // not displayed (a collapsed section)
    const style = getComputedStyle(block);
    const wider = block.scrollWidth - block.clientWidth;
    let cut = null;
    if (wider > 1 && !['auto', 'scroll'].includes(style.overflowX))
      cut = `${wider} px of its lines cut (overflow-x ${style.overflowX})`;
    for (let up = block.parentElement; up && !cut; up = up.parentElement) {
      const clips = up === column || ['hidden', 'clip'].includes(getComputedStyle(up).overflowX);
      const past = box.right - up.getBoundingClientRect().right;
      if (clips && past > 1)
        cut = `${Math.round(past)} px past ${up === column ? 'the column' : up.className}`;
      if (up === column) break;
    }
    if (!cut && box.right > document.documentElement.clientWidth + 1) cut = 'past the window';
    const output = block.tagName === 'PRE' && block.closest(
      'div.highlight-text, div.highlight-console, div.highlight-pycon, div.cell_output') !== null;
    found.push({
      text: block.textContent.trim().slice(0, 60),
      cut: cut,
      scrolls: output && wider > 1 ? `${wider} px wider than its block, not wrapped` : null,
    });
  }
  return found;
}"""
"""Each code block of the page (``pre``, ``div.highlight``): ``cut`` says why part of a line
is out of sight (wider than its block without a horizontal scroll bar, or past the column,
a clipping container or the window); ``scrolls`` says that text a reader reads rather than
copies (a theorem's plain-text statement, messages, console and interpreter sessions,
notebook outputs) is wider than its block: it must wrap, since platforms with overlay scroll
bars show a long line cut, without a bar."""
NOTEBOOK_NOISE = re.compile(r"\w+Warning\b|/tmp/|/var/folders/|ipykernel_\d+")
"""What a notebook's shown outputs must not contain: a warning, a temporary folder."""


def _unreadable_blocks(page) -> list[str]:
    """The code blocks of ``page`` that are cut or scroll where they should wrap."""
    return [
        f"a code block {b['cut'] or b['scrolls']}: {b['text']!r}"
        for b in page.evaluate(CODE_BLOCKS)
        if b["cut"] or b["scrolls"]
    ]


def test_the_code_block_check_finds_planted_cut_blocks():
    """Each way a line can be cut or scroll where it should wrap is found; a block that
    scrolls, a block that wraps and a short line pass."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    long = "x = 1  # " + "a long comment " * 30
    page_of = (
        '<div class="body" style="width: 600px; overflow: visible">{}</div>'.format
    )  # fmt: skip
    planted = {
        "hidden": f'<pre style="overflow-x: hidden">{long}</pre>',
        "visible": f'<pre style="overflow-x: visible">{long}</pre>',
        "clipped by its container": '<div class="highlight" style="overflow: hidden">'
        f'<pre style="overflow-x: visible; width: max-content">{long}</pre></div>',
        "past the column": f'<pre style="overflow-x: auto; width: 900px">{long}</pre>',
        "an output that scrolls": '<div class="highlight-text"><div class="highlight">'
        f'<pre style="overflow-x: auto">{long}</pre></div></div>',
        "a notebook output that scrolls": '<div class="cell_output">'
        f'<pre style="overflow-x: scroll">{long}</pre></div>',
    }
    fine = {
        "code that scrolls": '<div class="highlight-python"><div class="highlight">'
        f'<pre style="overflow-x: auto">{long}</pre></div></div>',
        "an output that wraps": '<div class="highlight-text"><div class="highlight">'
        f'<pre style="white-space: pre-wrap">{long}</pre></div></div>',
        "a short line": '<pre style="overflow-x: hidden">x = 1</pre>',
    }
    with sync_api.sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport=VIEWPORT)
        for what, block in planted.items():
            page.set_content(page_of(block))
            assert _unreadable_blocks(page), what
        for what, block in fine.items():
            page.set_content(page_of(block))
            assert _unreadable_blocks(page) == [], what
        browser.close()


@needs_the_site
def test_the_pages_are_readable_at_a_desktop_size(site):
    """At :data:`VIEWPORT`, on every page: no code block is cut (a long line of code scrolls
    inside its block, never cut or over the sidebar) and text a reader reads (statements,
    messages, sessions, notebook outputs) wraps (:data:`CODE_BLOCKS`); every theorem page's
    figure is drawn at least :data:`LEGIBLE_SCALE` of its natural width; the notebooks'
    outputs show no warning and no temporary folder (:data:`NOTEBOOK_NOISE`). A screenshot
    of one theorem page is kept beside the site for a reader to look at."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra: playwright")
    problems: list[str] = []
    blocks = 0
    with sync_api.sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport=VIEWPORT)
        for path in sorted(site.glob("**/*.html")):
            if path.parent.name in {"_static", "_sources"}:
                continue
            page.goto(path.as_uri(), wait_until="load")
            name = str(path.relative_to(site))
            problems += [f"{name}: {p}" for p in _unreadable_blocks(page)]
            blocks += page.evaluate("document.querySelectorAll('div.body pre').length")
            if path.parent.name == "notebooks":
                outputs = page.evaluate(
                    "[...document.querySelectorAll('div.cell_output')].map(o => o.innerText)"
                )
                problems += [
                    f"{name}: an output shows {m.group()!r}: {text[:120]!r}"
                    for text in outputs
                    for m in NOTEBOOK_NOISE.finditer(text)
                ]
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
    assert blocks >= 300  # every page was checked, the theorem pages' blocks at least


FILE_NAME = re.compile(r"[\w./-]+\.(md|ipynb|html)")
"""A link text that is a source file's name (``pep.md``) rather than words or a title."""


@needs_the_site
def test_the_sidebar_names_each_page_once_and_links_read_as_words(site):
    """The sidebar (the landing page's navigation: every page of the toctrees) names no page
    twice, and no link of any page reads as a file name (:data:`FILE_NAME`)."""
    index = (site / "index.html").read_text(encoding="utf-8")
    nav = index[index.index('class="sphinxsidebar"') :]
    entries = re.findall(r'<a class="reference internal"[^>]*>(.*?)</a>', nav, flags=re.S)
    titles = [_text(e).strip().lower() for e in entries]
    assert len(titles) >= 20, titles  # the guide, reference, notebooks and topics
    repeated = sorted({t for t in titles if titles.count(t) > 1})
    assert not repeated, repeated
    named = []
    for path in sorted(site.glob("**/*.html")):
        if path.parent.name in {"_static", "_sources"}:
            continue
        page = path.read_text(encoding="utf-8")
        for link in re.findall(r"<a [^>]*>(.*?)</a>", page, flags=re.S):
            if FILE_NAME.fullmatch(_text(link).strip()):
                named.append(f"{path.relative_to(site)}: {_text(link).strip()}")
    assert not named, "\n".join(named)


def test_a_theorem_page_shows_the_rows_of_its_statement_else_every_row():
    """Without building: the page keeps a validation's rows citing the theorem's reference
    and drops the others; a validation with no such row is shown whole."""
    from types import SimpleNamespace

    from fedtheory.bounds import CATALOGUE
    from fedtheory.verdict import Comparison, Verdict

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import fedtheory_docs

    thm = CATALOGUE[min(CATALOGUE)]  # any statement: the page's rows are what is tested
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


@needs_the_site
def test_the_theorem_pages_show_no_ascii_math_in_their_prose(site):
    """The built theorem pages' prose shows no ASCII math
    (:data:`tests.test_docs_prose_math.ASCII_MATH`) outside code and typeset math. Exempt:
    headings (the page's title, also the sidebar's and the browser tab's text, which typeset
    no math; a validation's title) and the verdict tables and figure captions (the report's
    text, as the terminal prints it)."""
    from tests.test_docs_prose_math import ASCII_MATH

    exempt = re.compile(
        r"<(pre|code|table|figcaption|h[1-6])\b.*?</\1>"
        r"|<(span|div) class=\"math\b[^\"]*\">.*?</\2>",
        flags=re.S,
    )
    found = []
    for path in sorted((site / "theorems").glob("*.html")):
        body = path.read_text(encoding="utf-8")
        body = body[body.index('<div class="body"') : body.index('<div class="sphinxsidebar"')]
        text = _text(exempt.sub(" ", body))
        found += [f"{path.name}: ...{text[max(m.start() - 30, 0) : m.end() + 30]}..."
                  for m in ASCII_MATH.finditer(text)]  # fmt: skip
    assert not found, "\n".join(found)
