r"""Prose with ASCII math, typeset for a MyST page: ``typeset(text)``.

The code's plain-text strings (a parameter's meaning, a tightness family's attainment, a
statement's title) write math as ASCII, e.g. ``(1 - 4 delta^2)/(1 - 2 delta^2)`` or
``sum_{t=1}^T eta_t^2``; the terminal shows them as they are. On the site each maximal run
of math words becomes ``$...$`` in LaTeX (``\frac``-free: ``/`` stays a slash, as the
papers write inline ratios), the words around it stay text with Markdown's active
characters escaped, and a code identifier (``theorem1_near_tight_point``) becomes code.

A word is math when it holds ``^``, ``_``, ``=``, ``|``, ``~``, ``/``, a comparison or an
arrow, is a Greek letter's name, a single letter (``a`` only before an operator: it is
also the article), a letter and a digit (``x0``), a function (``sum``, ``max``, ``ln``...)
or an operator; a bare number is math next to an operator (``T = 1``), else text
(``Lemma 1``); a word inside an open ``{`` is math (``sum_{k in A_t}``).
"""

from __future__ import annotations

import re

GREEK = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma "
    "tau upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega"
).split()
FUNCTIONS = {
    "sum": r"\sum",
    "max": r"\max",
    "min": r"\min",
    "sup": r"\sup",
    "ln": r"\ln",
    "log": r"\log",
    "kron": r"\bigotimes",
}
OPERATORS = {"-", "+", "=", "<", ">", "<=", ">=", "->", "*", "!="}
_GREEK = re.compile(rf"(?<![A-Za-z\\])({'|'.join(GREEK)})(?![A-Za-z])")
_FUNCTION = re.compile(rf"(?<![A-Za-z\\])({'|'.join(FUNCTIONS)})(?![A-Za-z])")
_CODE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+){2,}")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MATHY = re.compile(
    r"[\^_=|~<>]|->|\w/|/\w|[\w)]/\(|\w[(\[]|^[A-Za-z]$|^[a-z]\d$|^\d+[a-z]$"
    r"|^(grad|zbar|infinity|sqrt)\b"
)
_PAIRS = (("(", ")"), ("[", "]"))
_ACTIVE = re.compile(r"([\\`*_\[\]<>|$])")


def _plain(text: str) -> str:
    """Text with Markdown's active characters escaped."""
    return _ACTIVE.sub(r"\\\1", text)


def _core(word: str) -> str:
    """The word without the punctuation that ends a clause (``,`` ``;`` ``:`` ``'s``) or
    opens a parenthesis: what decides whether it is math."""
    return re.sub(r"(?:'s|[,;:.)\]]+)+$", "", word.lstrip("(["))


def _is_math(word: str, previous: str | None, following: str | None) -> bool:
    core = _core(word)
    if not core or _CODE.fullmatch(core):
        return False
    if previous in {"App.", "Appendix"}:
        return False  # an appendix's letter (App. B)
    if core in OPERATORS or core in GREEK or core in FUNCTIONS:
        return True
    if core == "a":  # the article, unless an operator follows (``a = |x0 - x^*|``)
        return following is not None and _core(following) in OPERATORS
    if core == "A" or (core.isalpha() and core.isupper() and len(core) > 1):
        return False  # an acronym (CEP)
    return bool(_MATHY.search(core))


def latex(math: str) -> str:
    r"""An ASCII formula in LaTeX: Greek names, functions, ``||`` norms, ``E[`` expectations,
    ``^(...)`` superscripts, ``<=``, ``->``, ``zbar`` and ``f~`` accents, multi-letter
    subscripts upright, ``x0`` as ``x_0``, ``in`` inside braces as ``\in``."""
    out = math.replace("||", r"\|")
    out = re.sub(r"\bE(?=\[|\\\|)", r"\\mathbb{E}", out)
    out = re.sub(r"\^\(([^()]*)\)", r"^{(\1)}", out)
    out = re.sub(r"\bsqrt\(([^()]*)\)", r"\\sqrt{\1}", out)
    out = re.sub(r"_([A-Za-z]{2,})(?![A-Za-z({])", lambda m: _sub(m.group(1)), out)
    out = _GREEK.sub(r"\\\1", out)
    out = _FUNCTION.sub(lambda m: FUNCTIONS[m.group(1)] + " ", out)
    out = re.sub(r"\bgrad\s*", r"\\nabla ", out)
    out = re.sub(r"\b([A-Za-z])bar\b", r"\\bar{\1}", out)
    out = re.sub(r"\b([A-Za-z])~", r"\\tilde{\1}", out)
    out = re.sub(r"\b([a-z])(\d)\b", r"\1_\2", out)
    out = re.sub(r"\binfinity\b", r"\\infty", out)
    for ascii_, tex in (("<=", r"\le "), (">=", r"\ge "), ("->", r"\to "), ("!=", r"\ne ")):
        out = out.replace(ascii_, tex)
    out = re.sub(r"(?<=[{ ,])in(?= )", r"\\in", out)
    out = re.sub(r" +", " ", out).replace(" }", "}").replace(" ^", "^").replace(" _", "_")
    return out.strip()


def _sub(name: str) -> str:
    if name in GREEK or name in FUNCTIONS or name in {"bar"}:
        return "_" + name
    return rf"_{{\mathrm{{{name}}}}}"


def _peel(run: str) -> tuple[str, str, str]:
    """``(before, math, after)``: clause punctuation and unbalanced parentheses moved out
    of a run of math words."""
    before = after = ""
    while True:
        tail = re.search(r"(?:'s|[,;:.])$", run)
        if tail:
            run, after = run[: tail.start()], tail.group() + after
        elif any(run.count(o) > run.count(c) and run.startswith(o) for o, c in _PAIRS):
            run, before = run[1:], before + run[0]
        elif any(run.count(c) > run.count(o) and run.endswith(c) for o, c in _PAIRS):
            run, after = run[:-1], run[-1] + after
        else:
            return before, run.strip(), after


def typeset(text: str) -> str:
    """MyST Markdown of ``text``: its math runs as ``$...$``, code identifiers as code,
    the rest as plain text."""
    words = text.split(" ")
    kinds, depth = [], 0
    for i, word in enumerate(words):
        previous = words[i - 1] if i > 0 else None
        following = words[i + 1] if i + 1 < len(words) else None
        kinds.append("math" if depth > 0 or _is_math(word, previous, following) else "text")
        depth = max(0, depth + word.count("{") - word.count("}"))
    for i, word in enumerate(words):  # a number next to an operator, a slash between math
        near = [j for j in (i - 1, i + 1) if 0 <= j < len(words)]
        if kinds[i] == "text" and _NUMBER.fullmatch(_core(word)):
            if any(_core(words[j]) in OPERATORS for j in near):
                kinds[i] = "math"
        elif word == "/" and len(near) == 2 and all(kinds[j] == "math" for j in near):
            kinds[i] = "math"
    parts, i = [], 0
    while i < len(words):
        j = i
        while j < len(words) and kinds[j] == kinds[i]:
            j += 1
        run = " ".join(words[i:j])
        if kinds[i] == "math":
            before, math, after = _peel(run)
            parts.append(f"{_plain(before)}${latex(math)}${_plain(after)}" if math else run)
        else:
            parts.append(" ".join(_text_word(w) for w in words[i:j]))
        i = j
    return " ".join(parts)


def _text_word(word: str) -> str:
    core = _core(word)
    if core and _CODE.fullmatch(core):
        start = word.index(core)
        rest = word[start + len(core) :]
        return f"{_plain(word[:start])}`{core}`{_plain(rest)}"
    return _plain(word)
