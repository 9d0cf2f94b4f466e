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
    ax = fig.subplots()
    y = np.arange(data["key"].size)
    ax.scatter(
        data["recorded"], y, s=120, facecolors="none", edgecolors="k", label="recorded in ERRATA.md"
    )
    ax.scatter(data["recomputed"], y, s=40, color="C3", label="recomputed now")
    ax.set_yticks(y, [str(k) for k in data["key"]], fontsize=8)
    ax.set_xticks(list(CODES.values()), list(CODES))
    ax.set(
        xlim=(-0.3, 1.3),
        xlabel="verdict on the suspected error (confirmed = the paper's statement fails)",
        title="Errata: recorded vs recomputed verdicts",
    )
    ax.invert_yaxis()
    ax.legend(fontsize=8, loc="lower left")


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
