"""The constraint kinds added for the PEP and theorem layers (``fedtheory.constraints``:
``SequenceOf``, ``Either``, ``Exemplified``, ``RealUpTo``): each refuses its hostile values
with one line naming the parameter, accepts its example and converts what it accepts."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fedtheory.constraints import (
    Array,
    Bool,
    Either,
    Exemplified,
    Instance,
    Real,
    RealUpTo,
    SequenceOf,
    StochasticMatrix,
    declare,
)
from fedtheory.errors import ParameterError

KINDS = {
    "sequence": SequenceOf(StochasticMatrix(), min_size=1),
    "sequence, may be empty": SequenceOf(Real(), min_size=0),
    "either": Either(Bool(), SequenceOf(Real(), min_size=1)),
    "either, or None": Either(Array(), Instance(complex), none=True),
    "exemplified": Exemplified(Instance(dict), lambda args: {"made": True}),
    "real up to": RealUpTo(0.0, 1.0, high_open=True),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_hostile_values_are_refused_with_one_line_and_the_example_accepted(kind):
    constraint = KINDS[kind]
    f = declare(x=constraint)(lambda x: x)
    f(constraint.example({}))
    assert constraint.hostile()
    for label, value in constraint.hostile():
        with pytest.raises(ParameterError) as err:
            f(value)
        message = str(err.value)
        named = re.match(r"The 'x(\[\d+\])?' parameter of ", message)  # x[k]: an item
        assert named and "\n" not in message, label
        assert re.search(r"Got .* instead\.$", message), label


def test_a_sequence_reads_a_set_or_an_array_as_its_entries():
    f = declare(ms=SequenceOf(StochasticMatrix(), min_size=1, plural="matrices"))(lambda ms: ms)
    with pytest.raises(ParameterError, match=r"'ms' parameter .* at least 1 matrices, each"):
        f([np.eye(2), [[0.5, 0.6], [0.5, 0.5]]])
    stacked = f(np.stack([np.eye(2), np.eye(2)]))  # an array: its first axis
    assert isinstance(stacked, list) and len(stacked) == 2
    flags = declare(x=SequenceOf(Real()))(lambda x: x)({1.0})
    assert flags == [1.0]
    with pytest.raises(ParameterError, match="at least 1"):
        f([])


def test_either_converts_with_the_first_alternative_that_accepts():
    f = declare(x=Either(Bool(), SequenceOf(Real(), min_size=1)))(lambda x: x)
    assert f(True) is True and f((1, 2.5)) == (1.0, 2.5)  # the entries converted
    with pytest.raises(ParameterError, match="a bool or a list"):
        f(1)
    assert ("None", None) in Either(Bool()).hostile()
    assert ("None", None) not in Either(Bool(), none=True).hostile()


def test_an_upper_end_read_from_another_parameter():
    @declare(L=Real(0.0, low_open=True), mu=RealUpTo(0.0, "L", high_open=True))
    def f(mu, L):
        return mu, L

    assert f(0.5, 1.0) == (0.5, 1.0)
    with pytest.raises(ParameterError, match=r"'mu' parameter of f must be .* in \[0, 1\)"):
        f(1.0, 1.0)
    assert RealUpTo(0.0, "L").example({}) < 1.0  # below L's own example: a meaningful pair
    assert RealUpTo(0.0, "L").example({"L": 4.0}) == 2.0


def test_a_made_example_and_the_wrapped_check():
    made = Exemplified(Real(0.0), lambda args: 2 * args["k"])
    assert made.example({"k": 3}) == 6
    f = declare(x=made)(lambda x: x)
    with pytest.raises(ParameterError, match=r"in \[0, inf\)"):
        f(-1.0)


def test_fedawe_probabilities_whose_step_underflows_are_named():
    """Denormal availability probabilities leave conditions (11) no positive local step: the
    error names 'probabilities' and delta, not the algorithm's learning rate."""
    from fedtheory.pep.fedawe import statement as fedawe_statement

    with pytest.raises(ParameterError, match=r"'probabilities' .* delta = 4\.94066e-324"):
        fedawe_statement("fedawe_zbar", np.full((3, 2), 5e-324), s=1, L=1.0, zeta2=0.0)
