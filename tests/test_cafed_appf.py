"""CA-Fed's App. F validation reuses a ">" run from its ">=" twin only where the twin met
no tie: the reused numbers are those the ">" run gives on its own (bit for bit), and a
twin that met ties (the running minimum from the first reports: every gap 0 in round 0)
is not reused."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.validation.papers.cafed import appf


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


def test_the_code_logs_28_rounds_and_fig3_averages_them():
    """run_experiment.py logs before training, every third round among the first 40 (2, 5,
    ..., 38) and every tenth (10, ..., 150): 28 rounds of 150, the points of Fig. 3."""
    expected = {0} | set(range(2, 39, 3)) | set(range(10, 151, 10))
    rounds = appf.logged_rounds(150)
    assert rounds.tolist() == sorted(expected) and rounds.size == 28
    assert appf.logged_rounds(30).tolist() == sorted(r for r in expected if r <= 30)


def test_the_code_row_starts_from_torchs_seeded_default_linear_layer():
    import torch

    before = torch.random.get_rng_state()
    w0 = appf.code_initial_models(3, 10, bias=True)  # [R, d + 1]: weights, then the bias
    assert torch.equal(torch.random.get_rng_state(), before)  # the global generator kept
    assert w0.shape == (3, 11) and np.all(np.abs(w0) <= 1 / np.sqrt(10))
    torch.manual_seed(2)
    layer = torch.nn.Linear(10, 1)
    np.testing.assert_array_equal(w0[2, :10], layer.weight.detach().numpy().ravel())
    assert w0[2, 10] == layer.bias.item()
    np.testing.assert_array_equal(appf.code_initial_models(3, 10, bias=False), w0[:, :10])


def test_the_set_up_tables_cite_the_code_and_vary_the_unforced_choices():
    s = appf.settings("tiny")
    from fedtheory.validation import CHECKS

    # the set-up reads the step sizes; a check's data holds its bound arrays too (declared)
    data = {key: np.zeros(1) for key in CHECKS["cafed-appf"].bounds}
    data |= {"lr": np.full(len(appf.ALGORITHMS), 0.1), "server_lr": np.ones(len(appf.ALGORITHMS))}
    paper, code = appf.setup(data, s, code=False), appf.setup(data, s, code=True)
    assert paper.unforced() == (appf.INITIALISATION, appf.TIME_AVERAGE)
    assert code.unforced() == () and appf.CODE_COMMIT[:7] in code.title()
    assert all(a.fixed_by == "code" and ":" in a.cite for a in code.aspects)
    rows = {r[0]: r for r in code.table_rows()}
    assert "1/150 hard-coded" in rows["baselines given"][3]
    assert "utils/utils.py:436" in rows["baselines given"][1]


def test_the_authors_code_referees_the_code_row(tmp_path, monkeypatch):
    """The record's accuracy interval (CA-Fed minus F3AST) is the error row's with the sign
    flipped; the std row's is the std's; no record, no referee."""
    import json

    record = {"accuracy": [0.8, 0.1, 1.5], "std": [0.9, 0.3, 1.6]}
    path = tmp_path / "authors_code.json"
    path.write_text(json.dumps({"cafed-appf": record}))
    monkeypatch.setattr(appf, "AUTHORS_CODE_FILE", path)
    assert appf._referee("error") == (-1.5, -0.1) and appf._referee("std") == (0.3, 1.6)
    monkeypatch.setattr(appf, "AUTHORS_CODE_FILE", tmp_path / "none.json")
    assert appf._referee("std") is None
