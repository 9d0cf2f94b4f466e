"""The toy paper's symbol and statement (the theorem layer: bounds only)."""

from __future__ import annotations

import sympy as sp

from fedtheory.bounds.base import Condition, Theorem
from fedtheory.bounds.catalogue import register
from fedtheory.bounds.symbols import Notation, add_notation, symbol

add_notation(
    {
        "toy_gap0": Notation(
            sp.Symbol(r"\Delta_0", nonnegative=True), "toy: squared initial norm", low=0.0
        )
    }
)
eta, L, T, gap0 = (symbol(k) for k in ("eta", "L", "T", "toy_gap0"))

contraction = register(
    Theorem(
        "toy.contraction",
        title="Toy Lemma: toy averaging contracts",
        reference="Toy paper, Lemma 1",
        kind="upper bound",
        terms={"bound": (1 - eta * L) ** (2 * T) * gap0},
        conditions=[Condition("eta L <= 1", eta * L, "<=", sp.Integer(1))],
        statement="||w_T||^2 <= (1 - eta L)^(2T) ||w_0||^2",
    )
)
