"""The generated pages' prose shows no ASCII math: meanings, the kind line and references
are typeset (``docs/_ext/prose_math.py``). Without building the site."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra: pip install -e .[docs]")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import fedtheory_docs  # noqa: E402
from prose_math import typeset  # noqa: E402

GREEK = "alpha|beta|gamma|delta|eta|kappa|lambda|mu|rho|sigma|tau|phi|chi|omega|pi"
ASCII_MATH = re.compile(
    r"\b[A-Za-z]\w{0,5}\^[\w{(*]"  # chi^2, delta^2, w^*
    r"|<=|>=|->"
    r"|\bsqrt\("
    r"|\b(?:sum|max|min)_[\w{]"  # sum_{t=1}, max_k
    rf"|\b(?:{GREEK})(?:_\w|\b(?!-))"  # eta_t, a Greek name as a word (not chi-square)
)
"""ASCII math in prose: a power, a comparison or arrow, a root, an indexed sum or maximum,
a Greek letter's name."""


def ascii_math(markdown: str) -> list[str]:
    """The ASCII math of ``markdown``'s prose: outside fenced code, inline code, ``$...$``
    and ``$$...$$`` math, link targets and headings (a page's title is also the sidebar's
    and the browser tab's text, which typeset no math)."""
    text = re.sub(r"^(```|\$\$).*?^\1\s*$", "", markdown, flags=re.S | re.M)
    text = re.sub(r"^#.*$", "", text, flags=re.M)
    text = re.sub(r"`[^`\n]*`|(?<!\\)\$[^$\n]+(?<!\\)\$|\]\([^)\s]*\)", " ", text)
    return [text[max(m.start() - 20, 0) : m.end() + 20] for m in ASCII_MATH.finditer(text)]


def test_the_check_finds_planted_ascii_math_and_passes_typeset_math():
    planted = [
        "ratio (1 - 4 delta^2)/(1 - 2 delta^2)",
        "chi^2 divergence",
        "holds if x <= y",
        "at most sqrt(2 T)",
        "the sum_{t=1}^T eta_t",
        "mixing rho of the chain",
    ]
    for text in planted:
        assert ascii_math(f"Some prose:\n\n{text}\n"), text
    clean = [
        r"ratio $(1 - 4 \delta^2)/(1 - 2 \delta^2)$",
        "`x^2 <= y`",
        "```text\nx^2 <= sqrt(y)\n```",
        "# FedAWE Lemma 2, E[t - tau_i(t)]",
        "chi-square divergence, CA-Fed Lemma 1, [a link](cafed.theorem1.md)",
    ]
    for text in clean:
        assert not ascii_math(f"Some prose:\n\n{text}\n"), text


@pytest.mark.parametrize(
    ("ascii", "typeset_"),
    [
        ("(1 - 4 delta^2)/(1 - 2 delta^2)", r"$(1 - 4 \delta^2)/(1 - 2 \delta^2)$"),
        ("chi-square divergence of alpha from p", r"chi-square divergence of $\alpha$ from $p$"),
        ("sum_{t=1}^T eta_t^2", r"$\sum_{t=1}^T \eta_t^2$"),
        ("sum_{k in A_t} q_k (CA-Fed (22))", r"$\sum_{k \in A_t} q_k$ (CA-Fed (22))"),
        ("fairness quota, in [0, k/K] (E3CS)", r"fairness quota, in \[0, $k/K$\] (E3CS)"),
        ("a = |x0 - x^*|, a coordinate", r"$a = |x_0 - x^*|$, a coordinate"),
        ("E||grad F||^2 <= sqrt(rho)", r"$\mathbb{E}\|\nabla F\|^2 \le \sqrt{\rho}$"),
        ("App. B, Lemma 1 (7): G squared", "App. B, Lemma 1 (7): $G$ squared"),
        (
            "at kappa = 1 (theorem3_attaining_point)",
            r"at $\kappa = 1$ (`theorem3_attaining_point`)",
        ),
        ("local steps (FedAU) / staleness bound", "local steps (FedAU) / staleness bound"),
    ],
)
def test_typeset_puts_the_math_of_prose_in_dollars(ascii, typeset_):
    assert typeset(ascii) == typeset_


def test_the_theorem_pages_and_their_index_show_no_ascii_math():
    """Every generated theorem page (without its verdict rows and captions: the report's
    text, the same as the terminal prints) and the catalogue's index."""
    from fedtheory.bounds import CATALOGUE

    found = {
        key: ascii_math(fedtheory_docs.theorem_page(thm, [], [])) for key, thm in CATALOGUE.items()
    }
    found["index"] = ascii_math(fedtheory_docs.theorem_index(sorted(CATALOGUE)))
    assert not {key: snippets for key, snippets in found.items() if snippets}
