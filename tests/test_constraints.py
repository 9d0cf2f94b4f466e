"""The declared constraints (fedtheory.constraints): each kind checks, converts, refuses with
the one-line message, and refuses every hostile value it declares."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from fedtheory.constraints import (
    Array,
    Bool,
    Function,
    Generator,
    Instance,
    Integer,
    MappingOf,
    Option,
    Probabilities,
    Real,
    Size,
    Tensor,
    Text,
    constraints_of,
    declare,
)
from fedtheory.errors import ParameterError

KINDS = {
    "real": Real(0.0, 1.0, low_open=True),
    "real, no ends": Real(),
    "integer": Integer(0, 10),
    "size": Size(),
    "bool": Bool(),
    "option": Option("exact", "fast"),
    "text": Text(),
    "array": Array(ndim=1, low=0.0),
    "integer array": Array(ndim=1, integer=True),
    "probabilities": Probabilities(),
    "tensor": Tensor(ndim=2),
    "mapping": MappingOf(),
    "function": Function(),
    "generator": Generator(),
    "instance": Instance(dict),
    "real or not measured": Real(0.0, nan=True),
    "number or array": Array(ndim=1, low=0.0, high=1.0, scalar=True),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_declared_hostile_value_is_refused_with_one_line_naming_it(kind):
    constraint = KINDS[kind]

    @declare(x=constraint)
    def f(x):
        return x

    example = {} if kind == "instance" else constraint.example({})
    f(example)
    for label, value in constraint.hostile():
        with pytest.raises(ParameterError) as err:
            f(value)
        message = str(err.value)
        assert message.startswith("The 'x' parameter of ") and "\n" not in message, label
        assert re.search(r"Got .* instead\.$", message), label


def test_the_message_names_the_constraint_the_value_and_its_type():
    @declare(p=Real(0.0, 1.0, low_open=True))
    def bernoulli(p):
        return p

    with pytest.raises(ParameterError) as err:
        bernoulli(1.5)
    assert str(err.value) == (
        "The 'p' parameter of bernoulli must be a finite real number in (0, 1]. "
        "Got 1.5 (float) instead."
    )
    with pytest.raises(ParameterError, match=r"Got '0\.5' \(str\) instead"):
        bernoulli("0.5")


def test_values_are_converted_and_never_rewritten():
    @declare(x=Real(), k=Size(), a=Array(shape=("k",)), flag=Bool(), t=Tensor(shape=("a[0]",)))
    def f(x, k, a, flag, t):
        return x, k, a, flag, t

    x, k, a, flag, t = f(np.float32(0.5), np.int64(3), [1, 2, 3], np.bool_(True), torch.ones(3,
                         dtype=torch.float64))  # fmt: skip
    assert type(x) is float and type(k) is int and a.dtype == np.float64 and flag is True
    assert isinstance(t, torch.Tensor)
    with pytest.raises(ParameterError, match="Integer|integer"):
        declare(k=Integer())(lambda k: k)(2.0)  # a float is never truncated
    with pytest.raises(ParameterError, match="integers"):
        declare(a=Array(integer=True))(lambda a: a)([1.0, 1.5])


def test_sizes_relative_to_other_parameters():
    @declare(n=Size(), w=Array(shape=("n", None)), v=Array(shape=("w[1]",)))
    def f(n, w, v):
        return w.shape, v.shape

    assert f(2, np.zeros((2, 3)), np.zeros(3)) == ((2, 3), (3,))
    with pytest.raises(ParameterError, match=r"'w' parameter of f must be .* shape \(2, any\)"):
        f(2, np.zeros((3, 3)), np.zeros(3))
    with pytest.raises(ParameterError, match=r"'v' parameter of f must be .* shape \(3,\)"):
        f(2, np.zeros((2, 3)), np.zeros(4))
    g = declare(x=Array(ndim=2), k=Integer(1, "x[1]"))(lambda x, k: k)
    assert g(np.zeros((2, 3)), 3) == 3
    with pytest.raises(ParameterError, match=r"'k' parameter of <lambda> must be an integer in "
                       r"\[1, 3\]\. Got 4 \(int\) instead"):  # fmt: skip
        g(np.zeros((2, 3)), 4)


def test_none_only_where_declared_and_options_exact():
    f = declare(x=Real(none=True), o=Option("a", "b"))(lambda x=None, o="a": (x, o))
    assert f() == (None, "a")
    with pytest.raises(ParameterError, match="one of 'a', 'b'"):
        f(o="c")
    with pytest.raises(ParameterError, match=r"Got None instead"):
        declare(x=Real())(lambda x: x)(None)


def test_probabilities_sum_to_one_and_tensors_keep_their_dtype():
    p = declare(p=Probabilities(size=2))(lambda p: p)
    np.testing.assert_array_equal(p([0.25, 0.75]), [0.25, 0.75])
    with pytest.raises(ParameterError, match="summing to 1"):
        p([0.5, 0.6])
    t = declare(t=Tensor())(lambda t: t)
    with pytest.raises(ParameterError, match="float64 tensor"):
        t(torch.ones(2, dtype=torch.float32))
    with pytest.raises(ParameterError, match=r"Got \[0\.5, nan\] \(Tensor\) instead"):
        t(torch.tensor([0.5, math.nan], dtype=torch.float64))


def test_declarations_are_found_on_functions_methods_and_classes():
    class A:
        @declare(x=Real())
        def __init__(self, x):
            self.x = x

        @declare(y=Size())
        def method(self, y):
            return y

    assert set(constraints_of(A)) == {"x"} and set(constraints_of(A(1.0).method)) == {"y"}
    assert constraints_of(len) is None
    with pytest.raises(ParameterError, match="'x' parameter of A must"):
        A("1")
    with pytest.raises(TypeError, match="no parameter"):
        declare(z=Real())(lambda x: x)


def test_nan_only_where_declared_as_not_measured():
    @declare(x=Real(0.0, nan=True))
    def f(x):
        return x

    assert math.isnan(f(math.nan)) and f(1.5) == 1.5
    for bad in (math.inf, -math.inf, 1 + 1j, "nan", -1.0):
        with pytest.raises(ParameterError, match="finite real number in \\[0, inf\\) or NaN"):
            f(bad)


def test_a_scalar_or_an_array_and_an_upper_end_computed_from_other_arguments():
    @declare(k=Integer(1), sigma=Array(shape=(3,), low=0.0, high=lambda a: a["k"] / 3, scalar=True))
    def f(k, sigma):
        return np.broadcast_to(sigma, (3,))

    np.testing.assert_array_equal(f(1, 0.25), [0.25] * 3)
    np.testing.assert_array_equal(f(3, [0.0, 0.5, 1.0]), [0.0, 0.5, 1.0])
    with pytest.raises(ParameterError, match=r"entries in \[0, 0.333333\]"):
        f(1, 0.5)
    with pytest.raises(ParameterError, match="'sigma'"):
        f(1, [0.1, 0.1])


def test_a_non_finite_result_is_found_inside_mappings_tuples_and_records():
    from typing import NamedTuple

    class Pair(NamedTuple):
        a: float
        b: np.ndarray

    results = [{"loss": np.array([1.0, math.inf])}, Pair(1.0, np.array([math.nan])),
               {"nested": {"x": math.inf}}]  # fmt: skip
    for result in results:

        @declare(x=Real(), finite_result=True)
        def f(x, result=result):
            return result

        with pytest.raises(ParameterError, match="'x' parameter of f must keep the result finite"):
            f(1.0)
    assert declare(x=Real(), finite_result=True)(lambda x: {"a": np.ones(2)})(1.0)["a"].size == 2


def test_a_measurement_is_nan_only_where_not_measured():
    """A family's Measurement: NaN means "outside the hypotheses, not measured"; an
    infinite, complex or textual measured value, or a reversed interval, is refused."""
    from fedtheory.tightness.family import Measurement

    assert math.isnan(Measurement(math.nan, {}).measured)
    assert Measurement(0.5, {"p": 0.1}, (0.4, 0.6), magnitude=1.0).interval == (0.4, 0.6)
    for bad in (math.inf, -math.inf, 1 + 1j, "0.5", None):
        with pytest.raises(ParameterError, match="'measured' parameter of Measurement"):
            Measurement(bad, {})
    for interval in ((0.6, 0.4), (0.4, math.inf), (math.nan, 0.5)):
        with pytest.raises(ParameterError, match="'interval' parameter of Measurement"):
            Measurement(0.5, {}, interval)


def test_a_state_record_is_checked_field_by_field():
    """A NaN inside a record's tensor, a field of the wrong shape or a missing field is
    refused like the same tensor passed alone; ``Fields``' hostile values include them."""
    from fedtheory.constraints import Fields, Mask
    from fedtheory.sim.optimizer import SGDState

    state = Fields(SGDState, buffer=Tensor(like="w"), started=Mask(tensor=True))

    @declare(w=Tensor(ndim=1), state=state)
    def f(w, state):
        return state

    w = torch.zeros(3, dtype=torch.float64)
    good = SGDState(torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.bool))
    assert f(w, good) is good
    for bad in (good._replace(buffer=torch.tensor([0.0, math.nan, 0.0], dtype=torch.float64)),
                good._replace(buffer=torch.zeros(2, dtype=torch.float64)),
                good._replace(started=None), (good.buffer, good.started)):  # fmt: skip
        with pytest.raises(ParameterError, match="'state' parameter of f must be a SGDState"):
            f(w, bad)
    assert {"buffer nan tensor", "started None"} <= {label for label, _ in state.hostile()}


def test_an_option_among_no_registered_names_says_that_none_is_registered():
    """A registry left empty (a copy without the papers that register into it) is named as
    such, not as "one of ." with an empty list."""
    with pytest.raises(ParameterError) as err:
        Option().check("cafed-theorem2", "validation", "parse_config", {})
    assert "must be a registered name, and none is registered. Got 'cafed-theorem2'" in str(
        err.value
    )
