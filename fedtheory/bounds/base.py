r"""Theorems as objects: sympy terms, checkable hypotheses, vectorised numeric evaluation.

A :class:`Theorem` holds each term of a statement once, as a sympy expression over the
canonical symbols of :mod:`fedtheory.bounds.symbols`; its ``total`` is the sum of the terms.
``evaluate`` validates the inputs (``ParameterError``), checks the hypotheses
(``HypothesisViolation``, or a result marked not valid with ``strict=False``) and returns a
:class:`BoundResult`. Numeric evaluation uses cached ``lambdify(..., "numpy")`` functions
that broadcast over grids.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy as sp

from fedtheory.bounds.symbols import NOTATION, keyword_of
from fedtheory.errors import HypothesisViolation, ParameterError
from fedtheory.params import check_array, check_bool, check_choice, check_str, interval

KINDS = ("upper bound", "exact", "limit", "order")
_RELATIONS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "!=": operator.ne,
}


@dataclass(frozen=True)
class Condition:
    """A hypothesis ``lhs rel rhs`` with its plain-text form."""

    text: str
    lhs: sp.Expr
    rel: str
    rhs: sp.Expr


@dataclass(frozen=True)
class BoundResult:
    """Evaluated statement: named terms, their total, validity and the reference."""

    theorem: str
    reference: str
    kind: str
    terms: Mapping[str, np.ndarray]
    total: np.ndarray
    valid: bool
    reason: str = ""

    def __repr__(self) -> str:
        def fmt(v):
            v = np.asarray(v)
            return f"{float(v):.6g}" if v.ndim == 0 else f"array{v.shape}"

        terms = ", ".join(f"{k}={fmt(v)}" for k, v in self.terms.items())
        flag = "" if self.valid else f", NOT VALID: {self.reason}"
        return f"BoundResult({self.theorem}: total={fmt(self.total)} [{terms}]{flag})"


def _text(name: str) -> str:
    """Escape plain text for LaTeX's ``\\text{...}``."""
    return name.replace("_", r"\_").replace("^", r"\^{}")


class Theorem:
    r"""One statement of a paper.

    Parameters
    ----------
    key : str
        Catalogue key, e.g. ``"cafed.theorem1"``.
    title : str
        Human name, e.g. ``"CA-Fed Theorem 1"``.
    reference : str
        Paper, theorem and equation, e.g. ``"Rodio et al. 2023, Theorem 1"``.
    kind : {"upper bound", "exact", "limit", "order"}
    terms : dict of sympy expressions
        The named terms; the statement's value is their sum.
    conditions : sequence of Condition
        Hypotheses checked at evaluation.
    """

    def __init__(self, key, *, title, reference, kind, terms, conditions=(), statement=""):
        check_choice(kind, KINDS, "kind", "Theorem")
        for name, value in (("key", key), ("title", title), ("reference", reference)):
            check_str(value, name, "Theorem")
        if not isinstance(terms, Mapping) or not all(
            isinstance(k, str) and isinstance(e, sp.Basic) for k, e in terms.items()
        ):
            raise ParameterError(
                "The 'terms' parameter of Theorem must be a mapping from term names to sympy "
                f"expressions. Got {type(terms).__name__} instead."
            )
        self.key, self.title, self.reference, self.kind = key, title, reference, kind
        self.terms: dict[str, sp.Expr] = dict(terms)
        self.conditions: tuple[Condition, ...] = tuple(conditions)
        self.statement = statement
        free = set().union(*(e.free_symbols for e in self.terms.values()))
        for c in self.conditions:
            free |= c.lhs.free_symbols | sp.sympify(c.rhs).free_symbols
        self.parameters: tuple[str, ...] = tuple(sorted(keyword_of(s) for s in free))

    @property
    def expression(self) -> sp.Expr:
        """The total as one sympy expression (sum of the terms)."""
        return sp.Add(*self.terms.values())

    @cached_property
    def _numeric(self):
        syms = [NOTATION[p].symbol for p in self.parameters]
        terms = {k: sp.lambdify(syms, e, "numpy") for k, e in self.terms.items()}
        conds = [
            (c, sp.lambdify(syms, c.lhs, "numpy"), sp.lambdify(syms, c.rhs, "numpy"))
            for c in self.conditions
        ]
        return terms, conds

    def _check_inputs(self, values: dict) -> list[np.ndarray]:
        owner = self.title
        unknown = set(values) - set(self.parameters)
        missing = set(self.parameters) - set(values)
        if unknown or missing:
            raise ParameterError(
                f"{owner} takes exactly the parameters {', '.join(self.parameters)}; "
                f"missing: {sorted(missing) or 'none'}, unknown: {sorted(unknown) or 'none'}."
            )
        arrays = []
        for p in self.parameters:
            n = NOTATION[p]
            a = check_array(
                values[p],
                p,
                owner,
                low=n.low,
                high=n.high,
                low_open=n.low_open,
                high_open=n.high_open,
            )
            if n.integer and np.any(a != np.round(a)):
                where = interval(n.low, n.high, low_open=n.low_open, high_open=n.high_open)
                raise ParameterError(
                    f"The '{p}' parameter of {owner} must be an integer in {where}. "
                    f"Got {values[p]} instead."
                )
            arrays.append(a)
        shape: tuple[int, ...] = ()
        for p, a in zip(self.parameters, arrays, strict=True):
            try:
                shape = np.broadcast_shapes(shape, a.shape)
            except ValueError:
                raise ParameterError(
                    f"The '{p}' parameter of {owner} must be a scalar or an array whose shape "
                    f"broadcasts with the other parameters' {shape}. Got shape {a.shape} "
                    "instead."
                ) from None
        return arrays

    def _check_finite(self, args: list[np.ndarray], terms: dict[str, np.ndarray]) -> None:
        """Finite inputs must give finite terms: an overflow is reported, never returned
        as inf or NaN; the message names the input of largest magnitude."""
        for key, value in terms.items():
            if np.all(np.isfinite(value)):
                continue
            sizes = [float(np.max(np.abs(a), initial=0.0)) for a in args]
            i = int(np.argmax(sizes)) if sizes else 0
            name = self.parameters[i] if self.parameters else "values"
            bad = np.asarray(value)[~np.isfinite(value)].flat[0]
            raise ParameterError(
                f"The '{name}' parameter of {self.title} must be small enough for every term "
                f"to be finite (the term '{key}' is {bad:g}). Got {sizes[i] if sizes else 0:g} "
                "instead."
            )

    def evaluate(self, *, strict: bool = True, **values) -> BoundResult:
        """Evaluate every term at ``values`` (arrays broadcast together).

        With ``strict=True`` a failed hypothesis raises :class:`HypothesisViolation`;
        otherwise the result is returned with ``valid=False`` and the reason."""
        strict = check_bool(strict, "strict", self.title)
        args = self._check_inputs(values)
        term_fns, cond_fns = self._numeric
        shape = np.broadcast_shapes(*(a.shape for a in args)) if args else ()
        valid, reason = True, ""
        for cond, lhs_fn, rhs_fn in cond_fns:
            with np.errstate(all="ignore"):  # an overflowing side compares as inf
                lhs = np.broadcast_to(np.asarray(lhs_fn(*args), dtype=float), shape)
                rhs = np.broadcast_to(np.asarray(rhs_fn(*args), dtype=float), shape)
            ok = _RELATIONS[cond.rel](lhs, rhs)
            if not np.all(ok):
                i = np.unravel_index(np.argmin(ok), shape) if shape else ()
                if strict:
                    raise HypothesisViolation(self.title, cond.text, lhs[i], rhs[i])
                valid = False
                reason = f"hypothesis {cond.text} fails (left {lhs[i]:g}, right {rhs[i]:g})"
                break
        with np.errstate(all="ignore"):  # overflow is reported by _check_finite
            terms = {
                k: np.broadcast_to(np.asarray(f(*args), dtype=float), shape)
                for k, f in term_fns.items()
            }
            total = sum(terms.values())
        self._check_finite(args, {**terms, "total": np.asarray(total)})
        return BoundResult(self.title, self.reference, self.kind, terms, total, valid, reason)

    def latex(self) -> str:
        """LaTeX of the total, with the terms named."""
        body = " + ".join(
            rf"\underbrace{{{sp.latex(e)}}}_{{\text{{{_text(k)}}}}}" for k, e in self.terms.items()
        )
        return body

    def _repr_latex_(self) -> str:
        return f"$\\text{{{_text(self.title)}}}:\\ {self.latex()}$"

    def __repr__(self) -> str:
        return f"<{self.title} ({self.kind}; {self.reference})>"
