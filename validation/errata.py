r"""Every statement of ``validation/ERRATA.md`` re-checked (SPEC ⚠ marks, §8.9).

Each erratum of :mod:`fedtheory.bounds.errata` is recomputed on its instance and its
verdict (*confirmed* = the paper's statement is wrong on the instance, *refuted* = it
survives, *inconclusive*) is compared with the verdict recorded in ``ERRATA.md``. A row is
*violated* when the recomputation no longer supports what ``ERRATA.md`` records.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from fedtheory.bounds import errata
from fedtheory.validation import plots
from fedtheory.validation.registry import Check, Size, register
from fedtheory.verdict import compare_equal

ERRATA_MD = Path(__file__).resolve().parent / "ERRATA.md"
CODES = {"refuted": 0.0, "inconclusive": 0.5, "confirmed": 1.0}


def recorded_verdicts(text: str) -> dict[str, str]:
    """``key -> verdict`` from the summary table of ``ERRATA.md`` (first word of the last
    column, e.g. ``confirmed (not convex)`` -> ``confirmed``)."""
    rows = re.findall(r"^\| `([^`]+)` \|.*\| (\w+)[^|]*\|\s*$", text, flags=re.M)
    return dict(rows)


def settings(size: Size) -> dict:
    # the lambda-estimator check needs long chains for its limit; tiny runs a shorter one
    return {"lambda_rounds": {"tiny": 4000, "quick": 20_000, "full": 100_000}[size]}


def _run(s: dict) -> list[errata.Erratum]:
    out = []
    for check in errata.ERRATA:
        if check is errata.cafed_lambda_estimator_limit:
            out.append(check(rounds=s["lambda_rounds"]))
        else:
            out.append(check())
    return out


def compute(s: dict) -> dict[str, np.ndarray]:
    results = _run(s)
    recorded = recorded_verdicts(ERRATA_MD.read_text(encoding="utf-8"))
    missing = [e.key for e in results if e.key not in recorded]
    if missing:
        raise KeyError(f"errata without a recorded verdict in {ERRATA_MD.name}: {missing}")
    return {
        "key": np.array([e.key for e in results]),
        "finding": np.array([e.finding for e in results]),
        "statement": np.array([e.statement for e in results]),
        "computed": np.array([e.computed for e in results]),
        "recomputed": np.array([CODES[e.verdict] for e in results]),
        "recorded": np.array([CODES[recorded[e.key]] for e in results]),
    }


WORDS = {code: word for word, code in CODES.items()}


def _word(code) -> str:
    return WORDS.get(float(code), f"code {float(code):g}")


def judge(data, s):
    """One row per erratum: measured = the recomputed verdict code, prediction = the code
    recorded in ERRATA.md (0 refuted, 0.5 inconclusive, 1 confirmed); the claim carries
    the finding and the numbers recomputed on the instance."""
    return [
        compare_equal(
            f"erratum `{key}` ({_word(data['recorded'][i])} in ERRATA.md: {finding}) "
            f"recomputed: {computed}",
            str(statement).split(":")[0],
            data["recomputed"][i],
            data["recorded"][i],
            rtol=0.0,
        )
        for i, (key, finding, statement, computed) in enumerate(
            zip(data["key"], data["finding"], data["statement"], data["computed"], strict=True)
        )
    ]


def plot(data, s, fig):
    (ax,) = plots.panels(fig, 1)
    y = np.arange(data["key"].size)
    names = {v: k for k, v in CODES.items()}
    for c, column in enumerate(("recorded", "recomputed")):
        for i, code in enumerate(CODES.values()):
            rows = y[data[column] == code]
            ax.plot(np.full(rows.size, c), rows, **plots.series(i, line=False), markersize=9,
                    label=names[code] if c == 0 else None)  # fmt: skip
    for row, (a, b) in enumerate(zip(data["recorded"], data["recomputed"], strict=True)):
        ax.text(2, row, "agree" if a == b else "DIFFER", va="center", ha="center",
                color="black" if a == b else plots.COLORS[1])  # fmt: skip
    ax.set_yticks(y, [str(k) for k in data["key"]])
    ax.set_xticks(
        [0, 1, 2], ["recorded in\nERRATA.md", "recomputed\nnow", "recorded vs\nrecomputed"]
    )
    ax.set(xlim=(-0.5, 2.6), title="Verdict on each suspected error (confirmed = the paper's "
           "statement fails on the instance)")  # fmt: skip
    ax.invert_yaxis()
    ax.grid(False)
    plots.legend(ax, ncols=len(CODES), title="verdict")
    agree = int(np.sum(data["recorded"] == data["recomputed"]))
    return (
        f"{agree} of {data['key'].size} recorded verdicts are reproduced by the "
        "recomputation; what each recomputation found is listed under Observations."
    )


def notes(data, s):
    return [f"`{k}`: {c}" for k, c in zip(data["key"], data["computed"], strict=True)]


register(
    Check(
        "errata",
        "Errata of the five papers, re-checked",
        "validation/ERRATA.md (SPEC ⚠ marks), via fedtheory.bounds.errata",
        settings,
        compute,
        judge,
        plot,
        bounds=("recorded",),
        notes=notes,
    )
)
