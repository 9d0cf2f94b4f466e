r"""Every statement of ``validation/ERRATA.md`` re-checked.

Each erratum of :mod:`fedtheory.validation.errata` is recomputed on its instance; the row shows
the two numbers its finding compares (measured vs bound, with the finding's relation), its
class (``CLASSES``) and what a reader should do. Its verdict (*confirmed* = the
finding holds on the instance, *refuted* = it does not, *inconclusive*) is compared with the
verdict and class recorded in ``ERRATA.md``: the row is *reproduced* when the recomputation
gives what ``ERRATA.md`` records, *violated* when it no longer does. An erratum row never
reads *holds* (it is a finding about a paper's statement, not the statement); the report
lists the errata in a table of their own, by class (:func:`table_rows`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from fedtheory.constraints import Exemplified, Instance, Label, SequenceOf, Text, declare
from fedtheory.validation.errata.catalogue import ERRATA, SIZES
from fedtheory.validation.errata.record import CLASSES, Erratum
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.verdict import Comparison, Verdict

NAME = "errata"
TABLE_ANCHOR = "errata-by-class"
ERRATA_MD = Path(__file__).resolve().parent.parent / "ERRATA.md"
CODES = {"refuted": 0.0, "inconclusive": 0.5, "confirmed": 1.0}
NOT_RECORDED = -1.0
"""The code of the recorded verdict of an erratum ``ERRATA.md`` does not list (a paper
registered from outside the package): its row is *violated* until it is recorded."""


@declare(text=Label())
def recorded_verdicts(text: str) -> dict[str, str]:
    """``key -> verdict`` from the summary table of ``ERRATA.md`` (first word of the last
    column, e.g. ``confirmed (not convex)`` -> ``confirmed``)."""
    rows = re.findall(r"^\| `([^`]+)` \|.*\| (\w+)[^|]*\|\s*$", text, flags=re.M)
    return dict(rows)


@declare(text=Label())
def recorded_classes(text: str) -> dict[str, str]:
    """``key -> class`` from the summary table of ``ERRATA.md`` (the column before the
    verdict)."""
    rows = re.findall(r"^\| `([^`]+)` \|[^|]*\| \*([^|*]+)\* \|[^|]*\|\s*$", text, flags=re.M)
    return dict(rows)


@part("errata")
def settings(size: Size) -> dict:
    """Every erratum check by name with the keyword arguments it takes at ``size`` (its
    module's ``SIZES``; the others run on their own instance)."""
    return {"checks": {c.__name__: SIZES.get(c.__name__, {}).get(size, {}) for c in ERRATA}}


def _run(s: dict) -> list[Erratum]:
    by_name = {c.__name__: c for c in ERRATA}
    return [by_name[name](**kwargs) for name, kwargs in s["checks"].items()]


@part("errata")
def compute(s: dict) -> dict[str, np.ndarray]:
    return data_of(_run(s), ERRATA_MD.read_text(encoding="utf-8"))


@declare(
    results=Exemplified(SequenceOf(Instance(Erratum), plural="errata"), lambda args: []),
    text=Text(),
)
def data_of(results: list[Erratum], text: str) -> dict[str, np.ndarray]:
    """The validation's arrays for the recomputed ``results`` against the verdicts and
    classes the text ``text`` of ``ERRATA.md`` records (:data:`NOT_RECORDED` where it lists
    no row)."""
    recorded, classes = recorded_verdicts(text), recorded_classes(text)
    return {
        "key": np.array([e.key for e in results]),
        "is_erratum": np.array([e.is_erratum for e in results]),
        "source": np.array([e.source for e in results]),
        "kind": np.array([e.kind for e in results]),
        "advice": np.array([e.advice for e in results]),
        "finding": np.array([e.finding for e in results]),
        "statement": np.array([e.statement for e in results]),
        "computed": np.array([e.computed for e in results]),
        "relation": np.array([e.compare[1] for e in results]),
        "measured": np.array([e.measured for e in results]),
        "compared_with": np.array([e.bound for e in results]),
        "names": np.array([f"{e.compare[0]} vs {e.compare[2]}" for e in results]),
        "recomputed": np.array([CODES[e.verdict] for e in results]),
        "recorded": np.array([CODES.get(recorded.get(e.key), NOT_RECORDED) for e in results]),
        "class_recorded": np.array([classes.get(e.key) == e.kind for e in results], dtype=float),
    }


WORDS = {**{code: word for word, code in CODES.items()}, NOT_RECORDED: "nothing"}


def _word(code) -> str:
    return WORDS.get(float(code), f"code {float(code):g}")


@part("errata")
def judge(data, s):
    """One row per erratum: measured and bound are the two recomputed numbers the finding
    compares (e.g. chi2 at the midpoint vs the chord), with the finding's relation; the row
    is *reproduced* when the recomputed verdict equals the one recorded in ERRATA.md (codes
    0 refuted, 0.5 inconclusive, 1 confirmed, in the ``recorded`` array) and ERRATA.md
    gives the same class, else *violated*."""
    rows = []
    for i, key in enumerate(data["key"]):
        agrees = data["recomputed"][i] == data["recorded"][i] and data["class_recorded"][i] == 1
        rows.append(
            Comparison(
                f"{_prefix(data['is_erratum'][i], data['kind'][i])} `{key}` "
                f"[{data['kind'][i]}]: {data['finding'][i]} ({data['names'][i]})",
                f"{str(data['statement'][i]).split(':')[0]} ({data['source'][i]})",
                str(data["relation"][i]),
                float(data["measured"][i]),
                float(data["compared_with"][i]),
                Verdict.REPRODUCED if agrees else Verdict.VIOLATED,
                f"ERRATA.md records {_word(data['recorded'][i])}, recomputed "
                f"{_word(data['recomputed'][i])}; {data['computed'][i]}. Reader: "
                f"{data['advice'][i]}",
            )
        )
    return rows


TABLE_HEADER = (
    "class",
    "erratum",
    "finding",
    "recomputed",
    "fedtheory reproduces this finding",
    "ERRATA.md",
)
"""Columns of the report's errata table (:func:`table_rows`)."""


def _reproduces(code) -> str:
    return "yes" if float(code) == CODES["confirmed"] else f"no ({_word(code)})"


@part(NAME)
def table_rows(data) -> list[tuple[str, ...]]:
    """The report's errata table: one row per erratum, grouped by class in the order of
    ``CLASSES`` (a class added there appears without a change here); "fedtheory
    reproduces this finding" is *yes* when the recomputation confirms it, *no (refuted)* or
    *no (inconclusive)* otherwise; the last column says whether ERRATA.md records the same
    verdict and class."""
    order = {c: i for i, c in enumerate(CLASSES)}
    rows = []
    for i in sorted(
        range(data["key"].size), key=lambda i: (order.get(str(data["kind"][i]), len(order)), i)
    ):
        agrees = data["recomputed"][i] == data["recorded"][i] and data["class_recorded"][i] == 1
        rows.append(
            (
                str(data["kind"][i]),
                f"`{data['key'][i]}`",
                str(data["finding"][i]),
                f"{data['names'][i]}: {float(data['measured'][i]):.4g} "
                f"{data['relation'][i]} {float(data['compared_with'][i]):.4g}",
                _reproduces(data["recomputed"][i]),
                "agrees" if agrees else f"**differs** (records {_word(data['recorded'][i])})",
            )
        )
    return rows


@part(NAME)
def class_counts(data) -> dict[str, int]:
    """How many errata of each class (``CLASSES`` order, empty classes included)."""
    return {c: int(np.sum(data["kind"] == c)) for c in CLASSES}


@part("errata")
def plot(data, s, fig):
    """A table, one row per erratum: its class, the verdict ``ERRATA.md`` records, the
    verdict recomputed now, and whether they agree (a disagreement in bold on orange)."""
    (ax,) = plots.panels(fig, 1)
    ax.axis("off")
    agree = data["recorded"] == data["recomputed"]
    cells = [
        [str(k), str(c), _word(a), _word(b), "agree" if same else "DIFFER"]
        for k, c, a, b, same in zip(
            data["key"], data["kind"], data["recorded"], data["recomputed"], agree, strict=True
        )
    ]
    table = ax.table(
        cellText=cells,
        colLabels=["entry", "class", "recorded in ERRATA.md", "recomputed now", "verdicts"],
        colWidths=[0.3, 0.34, 0.13, 0.13, 0.1],
        loc="upper center",
        cellLoc="left",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1.0, 1.3 * 18 / max(len(cells), 18))  # rows fill the panel
    for (row, _), cell in table.get_celld().items():
        cell.set_edgecolor("0.8")
        if row == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("0.92")
        elif not agree[row - 1]:
            cell.set_facecolor("#fbd9c4")
            cell.set_text_props(weight="bold")
    ax.set_title(
        "Each entry of ERRATA.md (an erratum of a paper, a caveat the paper states, a note of "
        "fedtheory): its verdict recorded and recomputed.\nconfirmed: the entry's finding is "
        "found again (an erratum: the statement fails; a caveat: the stated limit holds; a "
        "note: the observation);\nrefuted: the finding is not found; inconclusive: the "
        "recomputation decides neither way"
    )
    return (
        f"{int(np.sum(agree))} of {data['key'].size} recorded verdicts are reproduced by the "
        "recomputation; what each recomputation found is listed under Observations."
    )


@part("errata")
def notes(data, s):
    return [
        f"`{k}` [{c}]: {text}"
        for k, c, text in zip(data["key"], data["kind"], data["computed"], strict=True)
    ]


register(
    Check(
        NAME,
        "Errata of the papers, re-checked",
        "validation/ERRATA.md, via fedtheory.validation.errata",
        settings,
        compute,
        judge,
        plot,
        bounds=("recorded", "class_recorded"),
        notes=notes,
        cost=3.4,
    )
)


def _prefix(is_erratum: bool, kind: str) -> str:
    """How a row of the errata validation is introduced: erratum, caveat or note."""
    return "erratum" if is_erratum else ("caveat" if kind == "caveat confirmed" else "note")
