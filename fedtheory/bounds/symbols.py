r"""The notation table: one canonical sympy symbol per quantity, shared by every theorem.

Each entry maps the Python keyword used by ``Theorem.evaluate`` to its sympy symbol
(declared with assumptions), a description, and the domain every numeric value must lie in
(input validation; a theorem's own hypotheses are checked separately).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class Notation:
    symbol: sp.Symbol
    meaning: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False


def _real(latex: str, meaning: str, **domain) -> Notation:
    return Notation(sp.Symbol(latex, real=True), meaning, **domain)


def _pos(latex: str, meaning: str, **domain) -> Notation:
    return Notation(sp.Symbol(latex, positive=True), meaning, low=0.0, low_open=True, **domain)


def _nonneg(latex: str, meaning: str, **domain) -> Notation:
    return Notation(sp.Symbol(latex, nonnegative=True), meaning, low=0.0, **domain)


def _count(latex: str, meaning: str) -> Notation:
    return Notation(sp.Symbol(latex, positive=True, integer=True), meaning, low=1.0, integer=True)


NOTATION: dict[str, Notation] = {
    # FedLaAvg Example 1
    "e1": _real("e_1", "mean of client 1's data (its minimiser)"),
    "e2": _real("e_2", "mean of client 2's data (its minimiser)"),
    "gamma": _pos("gamma", "learning rate"),
    "t1": _count("t_1", "rounds client 1 is available per period"),
    "t2": _count("t_2", "rounds client 2 is available per period"),
    "tau": _count("tau", "common block length (t_1 = t_2 = tau)"),
    # CA-Fed error decomposition
    "kappa": _pos("kappa", "condition number L/mu"),
    "gap_B": _nonneg("Delta_B", "optimisation error F_B(w) - F_B^* of the biased objective"),
    "chi2": _nonneg("chi^2_{alpha||p}", "chi-square divergence of alpha from p"),
    "d_tv": _nonneg("d_TV", "total-variation distance between alpha and p", high=1.0),
    "Gamma": _nonneg("Gamma", "heterogeneity max_k F_k(w^*) - F_k^*"),
    "Gamma_prime": _nonneg("Gamma'", "heterogeneity max_k F_k(w_B^*) - F_k^*"),
}


def symbol(name: str) -> sp.Symbol:
    """The canonical sympy symbol of the keyword ``name``."""
    return NOTATION[name].symbol


def keyword_of(sym: sp.Symbol) -> str:
    """Inverse of :func:`symbol`."""
    for key, entry in NOTATION.items():
        if entry.symbol == sym:
            return key
    raise KeyError(sym)
