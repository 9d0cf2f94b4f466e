"""The constraint kinds added for the sweeps, the verdicts and the tightness search
(fedtheory.constraints, end block), and what their declarations refuse there."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pandas as pd
import pytest

from fedtheory.constraints import (
    Column,
    DefinedFunction,
    JsonMapping,
    Real,
    SequenceOf,
    Size,
    Support,
    Texts,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.sweep import write_table
from fedtheory.tightness import FAMILIES, search
from fedtheory.verdict import (
    Comparison,
    Verdict,
    compare_mean_upper_bound,
    compare_upper_bound,
    replicate_until_decided,
)

TABLE = pd.DataFrame({"x": [1.0, 2.0], "measured": [0.5, 0.7]})
KINDS = {
    "extended real": Real(nan=True, infinite=True),
    "extended real, no NaN": Real(infinite=True),
    "support": Support(),
    "sequence": SequenceOf(),
    "sequence of sizes": SequenceOf(Size(), min_size=1),
    "texts": Texts(),
    "json mapping": JsonMapping(),
    "defined function": DefinedFunction(),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_hostile_value_of_a_new_kind_is_refused_with_one_line(kind):
    constraint = KINDS[kind]
    constraint.check(constraint.example({}), "x", "f", {})
    refused = {}
    for label, value in constraint.hostile():
        with pytest.raises(ParameterError) as err:
            constraint.check(value, "x", "f", {})
        refused[label] = str(err.value)
    assert all(m.startswith("The 'x' parameter of f must be ") for m in refused.values())
    assert all(re.fullmatch(r"[^\n]* Got .* instead\.", m) for m in refused.values())


def test_extended_reals_keep_nan_and_inf_but_refuse_what_is_not_a_real():
    @declare(m=Real(nan=True, infinite=True), b=Real(infinite=True))
    def f(m, b):
        return m, b

    m, b = f(math.nan, math.inf)
    assert math.isnan(m) and b == math.inf
    for bad in ("0.5", True, 1 + 1j):
        with pytest.raises(ParameterError, match="'m' parameter of f must be a real number"):
            f(bad, 1.0)
    with pytest.raises(ParameterError, match="'b' parameter"):
        f(1.0, math.nan)


def test_supports_sequences_and_texts_convert_without_rewriting():
    assert Support().check([0, math.inf], "s", "f", {}) == (0.0, math.inf)
    assert SequenceOf(Size()).check((2, 3), "r", "f", {}) == (2, 3)  # a tuple stays one
    assert SequenceOf(Size()).check([2, 3], "r", "f", {}) == [2, 3]
    assert Texts().check(["a: b"], "d", "f", {}) == ("a: b",)
    with pytest.raises(ParameterError, match=r"low <= high"):
        Support().check((1.0, 0.0), "s", "f", {})


def test_json_settings_and_defined_functions():
    assert JsonMapping().check({"a": [1, "x", None]}, "fixed", "f", {}) == {"a": [1, "x", None]}
    assert JsonMapping().check(None, "fixed", "f", {}) == {}
    with pytest.raises(ParameterError, match="JSON values"):
        JsonMapping().check({"a": np.inf}, "fixed", "f", {})
    fn = DefinedFunction()
    assert fn.check(lambda s, seed: 0.0, "fn", "f", {})
    with pytest.raises(ParameterError, match="def or lambda"):
        fn.check(functools.partial(max, 1), "fn", "f", {})


def test_columns_name_columns_of_the_table_checked_before():
    @declare(by=Column("table", many=True), measured=Column("table", none=True))
    def f(table, by, measured=None):
        return by, measured

    assert f(TABLE, "x") == (["x"], None)
    assert f(TABLE, ["x", "measured"], "measured") == (["x", "measured"], "measured")
    with pytest.raises(ParameterError, match=r"column name .* of 'table' \['x', 'measured'\]"):
        f(TABLE, ["x", "nope"])


def test_a_table_is_refused_before_a_file_is_written(tmp_path):
    with pytest.raises(ParameterError, match="'path' parameter of write_table"):
        write_table(TABLE, tmp_path / "table.txt")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(ParameterError, match="not a folder"):
        write_table(TABLE, tmp_path / "folder.csv")
    with pytest.raises(ParameterError, match="'table' parameter of write_table"):
        write_table({"x": [1.0]}, tmp_path / "t.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.csv"]


def test_a_search_is_saved_only_to_a_json_path_and_measured_only_inside_its_family(tmp_path):
    family = FAMILIES["divergences.tv_chi_square"]
    result = search(family, budget=3)
    with pytest.raises(ParameterError, match="'path' parameter of SearchResult.save"):
        result.save(tmp_path / "worst.txt")
    assert not list(tmp_path.iterdir())
    point = result.worst
    with pytest.raises(ParameterError, match="'reals' parameter of Family.measure"):
        family.measure(point.integers, np.full(point.vector().shape, 1e308))
    with pytest.raises(ParameterError, match="'integers' parameter of Family.describe"):
        family.describe({"nope": 1}, point.vector())
    assert family.measure(point.integers, point.vector()).ratio == point.ratio


def test_a_nan_measurement_is_violated_by_design_and_a_string_refused():
    row = compare_upper_bound("c", "r", math.nan, 1.0)
    assert row.verdict is Verdict.VIOLATED and math.isnan(row.measured)
    assert Comparison("c", "r", "<=", math.nan, math.inf, Verdict.VIOLATED).bound == math.inf
    with pytest.raises(ParameterError, match="'measured' parameter of Comparison"):
        Comparison("c", "r", "<=", "0.5", 1.0, Verdict.HOLDS)
    for bad in (math.inf, 1 + 1j, True, "1.0"):
        with pytest.raises(ParameterError, match="'bound' parameter of compare_mean_upper_bound"):
            compare_mean_upper_bound("c", "r", np.array([0.1, 0.2]), bad)
    with pytest.raises(ParameterError, match="'bound' parameter .* broadcast against the points"):
        compare_mean_upper_bound("c", "r", np.zeros((4, 2)), np.ones(3))


def test_adaptive_replication_refuses_what_its_functions_return():
    def draw(batch, size):
        return np.zeros(size)

    with pytest.raises(ParameterError, match="'judge' parameter of replicate_until_decided"):
        replicate_until_decided(draw, lambda x, level: 0.0, cap=4, start=2)
    with pytest.raises(ParameterError, match="'draw' parameter .* must return 2 replicates"):
        replicate_until_decided(lambda b, s: np.zeros(s + 1), lambda x, lv: None, cap=4, start=2)
