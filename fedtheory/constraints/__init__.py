r"""Parameters declared once: the check, the message and the hostile test values.

One module per part: :mod:`~fedtheory.constraints.kind` (the base kind and the refusal),
:mod:`~fedtheory.constraints.scalars`, :mod:`~fedtheory.constraints.arrays`,
:mod:`~fedtheory.constraints.tensors`, :mod:`~fedtheory.constraints.objects`,
:mod:`~fedtheory.constraints.containers` and :mod:`~fedtheory.constraints.resources` (the
kinds), :mod:`~fedtheory.constraints.vocabulary`
(names that mean the same everywhere), :mod:`~fedtheory.constraints.declare` (the decorator),
:mod:`~fedtheory.constraints.results` (non-finite results) and
:mod:`~fedtheory.constraints.hostile` (the edge values the fuzz draws).

A public function states its parameters' constraints as data with :func:`declare`; the
decorator checks every declared argument before the body runs (in declaration order, so a
size may refer to a parameter checked before it), hands the body the converted value (a
float, an int, a float64 array, a tensor) and refuses a bad one with one line,

``The 'p' parameter of Bernoulli must be a finite real number in (0, 1]. Got 1.5 (float)
instead.``

naming the parameter, the constraint, the value and its type. The same declaration gives
the values a test must see refused (:meth:`Constraint.hostile`) and a valid value
(:meth:`Constraint.example`), so the suite's fuzz (``tests/test_fuzz_public_api.py``) is
generated from it.

Examples
--------
>>> from fedtheory.errors import ParameterError
>>> @declare(p=Real(0.0, 1.0, low_open=True), rounds=Size())
... def bernoulli(p, rounds):
...     return p * rounds
>>> bernoulli(0.5, 4)
2.0
>>> try:
...     bernoulli(1.5, 4)
... except ParameterError as err:
...     print(err)
The 'p' parameter of bernoulli must be a finite real number in (0, 1]. Got 1.5 (float) instead.
"""

from __future__ import annotations

from fedtheory.constraints.arrays import (
    STOCHASTIC_ATOL,
    Array,
    BoolArray,
    Interval,
    Probabilities,
    StochasticMatrix,
)
from fedtheory.constraints.containers import (
    Column,
    JsonMapping,
    MappingOf,
    Names,
    SequenceOf,
    Texts,
)
from fedtheory.constraints.declare import checking, constraints_of, declare, record, trusted
from fedtheory.constraints.hostile import DENORMAL, HUGE_DIGITS, HUGE_INT
from fedtheory.constraints.kind import Constraint, interval, refuse, shown
from fedtheory.constraints.objects import (
    DefinedFunction,
    Either,
    Exemplified,
    Fields,
    Finite,
    Function,
    Having,
    Instance,
    InstanceOf,
)
from fedtheory.constraints.resources import Bytes, Device, Location
from fedtheory.constraints.results import overflow, refuse_non_finite
from fedtheory.constraints.scalars import (
    MAX_INTEGER,
    MAX_SIZE,
    Bool,
    Integer,
    Label,
    Option,
    Real,
    RealUpTo,
    Size,
    Support,
    Text,
)
from fedtheory.constraints.tensors import Generator, Indices, Mask, Tensor
from fedtheory.constraints.vocabulary import VOCABULARY

__all__ = [
    "MAX_SIZE",
    "STOCHASTIC_ATOL",
    "Names",
    "interval",
    "refuse_non_finite",
    "Array",
    "Bool",
    "BoolArray",
    "Bytes",
    "Column",
    "Constraint",
    "DENORMAL",
    "DefinedFunction",
    "Device",
    "Either",
    "Exemplified",
    "Finite",
    "Fields",
    "Function",
    "Generator",
    "HUGE_DIGITS",
    "HUGE_INT",
    "MAX_INTEGER",
    "Having",
    "Indices",
    "Instance",
    "InstanceOf",
    "Integer",
    "Interval",
    "JsonMapping",
    "Label",
    "Location",
    "MappingOf",
    "Mask",
    "Option",
    "Probabilities",
    "Real",
    "RealUpTo",
    "SequenceOf",
    "Size",
    "StochasticMatrix",
    "Support",
    "Tensor",
    "Text",
    "Texts",
    "VOCABULARY",
    "checking",
    "constraints_of",
    "declare",
    "overflow",
    "record",
    "refuse",
    "shown",
    "trusted",
]
