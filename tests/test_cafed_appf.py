"""CA-Fed's App. F validation reuses a ">" run from its ">=" twin only where the twin met
no tie: the reused numbers are those the ">" run gives on its own (bit for bit), and a
twin that met ties (the running minimum from the first reports: every gap 0 in round 0)
is not reused."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.validation import cafed_appf as appf


@pytest.mark.parametrize(
    "strict, code, reused",
    [("code set-up: CA-Fed, >", True, True), ("CA-Fed paper, min from first, >", False, False)],
)
def test_a_strict_run_is_its_twins_only_without_ties(strict, code, reused):
    s = appf.settings("tiny")
    draw = appf._setup(s, 0, code=code)
    twin, steps = appf.STRICT_TWIN[strict], appf.CODE_PAIRS.get(strict, (0.1, 1.0))
    (acc_twin, used_twin, no_tie), (acc, used, _) = appf._runs(
        s, draw, [twin, strict], [steps, steps], replicates=2, seed=0
    )
    assert no_tie is reused
    alone = appf._algorithm(strict, s, draw[0], draw[2], *steps)
    acc_alone, used_alone, _ = appf._run(s, draw, alone, replicates=2, seed=0)
    np.testing.assert_array_equal(acc, acc_alone)
    np.testing.assert_array_equal(used, used_alone)
    if reused:  # the twin's own numbers stand for the strict run
        np.testing.assert_array_equal(acc_twin, acc)
