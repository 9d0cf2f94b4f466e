r"""Theorems as objects: sympy terms, checkable hypotheses, vectorised numeric evaluation.

A :class:`Theorem` holds each term of a statement once, as a sympy expression over the
canonical symbols of :mod:`fedtheory.bounds.symbols`; its ``total`` is the sum of the terms.
``evaluate`` validates the inputs (``ParameterError``), checks the hypotheses
(``HypothesisViolation``, or a result marked not valid with ``strict=False``) and returns a
:class:`BoundResult`. Numeric evaluation uses cached ``lambdify(..., "numpy")`` functions
that broadcast over grids.
"""

from __future__ import annotations

import difflib
import inspect
import operator
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy as sp

from fedtheory.bounds.symbols import RENAMED, Notation, _TableSymbol, notation_of
from fedtheory.constraints import (
    Array,
    Bool,
    Constraint,
    Function,
    Instance,
    Label,
    MappingOf,
    Option,
    SequenceOf,
    Text,
    declare,
    interval,
)
from fedtheory.errors import HypothesisViolation, ParameterError

KINDS = ("upper bound", "exact", "limit", "order")
_RELATIONS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "!=": operator.ne,
}
_LATEX_RELATIONS = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "!=": r"\ne"}


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
        def fmt(v):  # elementwise: every number of a small array, the ends of a long one
            v = np.asarray(v, dtype=float)
            if v.ndim == 0:
                return f"{float(v):.6g}"
            text = np.array2string(v, separator=", ", threshold=8, edgeitems=3,
                                   formatter={"float_kind": lambda x: f"{x:.6g}"})  # fmt: skip
            text = " ".join(text.split())  # one line
            return text if v.ndim == 1 and v.size <= 8 else f"{text} (shape {v.shape})"

        terms = ", ".join(f"{k}={fmt(v)}" for k, v in self.terms.items())
        flag = "" if self.valid else f", NOT VALID: {self.reason}"
        return f"BoundResult({self.theorem}: total={fmt(self.total)} [{terms}]{flag})"


class _Grid(Array):
    """A number or an array of them (a grid): a theorem's parameter."""

    def describe(self, args):
        return super().describe(args).replace("an array of", "a number or an array of", 1)


def _domain(n: Notation) -> Constraint:
    """A parameter's constraint from its notation entry: finite reals (whole numbers for an
    integer symbol) in its interval, a scalar or an array (grids broadcast)."""
    return _Grid(low=n.low, high=n.high, low_open=n.low_open, high_open=n.high_open,
                 integer=n.integer)  # fmt: skip


def _positional(fn: Callable[..., np.ndarray], names: tuple[str, ...]):
    """``fn`` (keyword arguments ``names``) as a function of positional arguments."""

    def call(*args):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            return fn(**dict(zip(names, args, strict=True)))

    return call


def _nearest(name: str, names) -> list[str]:
    """The parameter ``name`` was probably meant as (case ignored), or none."""
    lower = {n.lower(): n for n in names}
    near = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)
    return [lower[n] for n in near]


def _text(name: str) -> str:
    r"""Plain text as math-mode LaTeX: ``\text{...}`` pieces joined by math-mode ``\_`` and
    ``\hat{}`` where the text has ``_`` and ``^``. An escape inside ``\text`` would show as a
    literal backslash in MathJax (whose text mode runs no macros) and Jupyter; this form
    typesets the same in LaTeX and in MathJax, e.g. ``drift_sigma`` as
    ``\text{drift}\_\text{sigma}``."""
    pieces = re.split(r"([_^])", name)
    marks = {"_": r"\_", "^": r"\hat{}"}
    return "".join(marks[p] if p in marks else rf"\text{{{p}}}" for p in pieces if p)


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
    statement : str
        The statement in plain text.
    numeric : dict of callables, optional
        Numerically stable evaluation of some terms (keyword arguments: the parameters as
        arrays). The sympy term stays the statement; a test checks that each stable form
        equals it (to high precision, at the edges of the domain). Use it where the
        statement's own form cancels catastrophically in float64.
    meanings : dict, optional
        Meanings of symbols (by symbol name), shown by ``help``/``fedtheory show``; they
        replace the notation table's. A plain ``sympy.Symbol`` takes its domain from its
        sympy assumptions, or from the table for a quantity every paper shares (``L``,
        ``T``, ``N``...); a paper's keywords, aliases and meanings never reach it
        (:func:`fedtheory.bounds.symbols.notation_of`).
    ranges : dict, optional
        ``name -> (low, high)``: the box, inside the parameter's domain, in which
        :func:`fedtheory.testing.theorem_values` draws by default (for statements whose
        hypotheses fill a tiny part of the default boxes, e.g. step-size conditions).

    Each instance's ``evaluate`` has the theorem's parameters in its signature
    (``inspect.signature(theorem.evaluate)``), and ``help(theorem)`` lists them with their
    meaning, domain and symbol.
    """

    @declare(
        key=Text(),
        title=Text(),
        reference=Text(),
        kind=Option(*KINDS),
        terms=MappingOf(Instance(sp.Basic), "sympy expressions"),
        conditions=SequenceOf(Instance(Condition), min_size=0, plural="Condition records"),
        statement=Label(),
        numeric=MappingOf(Function(), "callables"),
        meanings=MappingOf(Label(), "strings"),
        ranges=MappingOf(Array(shape=(2,)), "(low, high) pairs"),
    )
    def __init__(
        self,
        key,
        *,
        title,
        reference,
        kind,
        terms,
        conditions=(),
        statement="",
        numeric=None,
        meanings=None,
        ranges=None,
    ):
        self.key, self.title, self.reference, self.kind = key, title, reference, kind
        self.terms: dict[str, sp.Expr] = {k: sp.sympify(e) for k, e in terms.items()}
        self.numeric: dict[str, Callable[..., np.ndarray]] = numeric
        unknown = set(self.numeric) - set(self.terms)
        if unknown:
            raise ParameterError(
                f"The 'numeric' parameter of Theorem must name terms of {key!r} "
                f"({', '.join(self.terms)}). Got {sorted(unknown)} instead."
            )
        self.conditions: tuple[Condition, ...] = tuple(conditions)
        self.statement = statement
        free = set().union(*(e.free_symbols for e in self.terms.values()))
        for c in self.conditions:
            free |= sp.sympify(c.lhs).free_symbols | sp.sympify(c.rhs).free_symbols
        notation: dict[str, Notation] = {}
        for sym in free:
            name, entry = notation_of(sym, meanings.get(sym.name, ""))
            if name in notation:
                raise ParameterError(
                    f"The 'terms' parameter of Theorem must use one symbol per name. Got two "
                    f"symbols named {name!r} ({notation[name].symbol!r} with different "
                    "assumptions) instead."
                )
            notation[name] = entry
        self.parameters: tuple[str, ...] = tuple(sorted(notation))
        self.ranges: dict[str, tuple[float, float]] = {
            k: (float(lo), float(hi)) for k, (lo, hi) in ranges.items()
        }
        if set(self.ranges) - set(self.parameters):
            raise ParameterError(
                f"The 'ranges' parameter of Theorem must name parameters of {key!r} "
                f"({', '.join(self.parameters)}). Got {sorted(self.ranges)} instead."
            )
        self.notation: dict[str, Notation] = {p: notation[p] for p in self.parameters}
        self.constraints: dict[str, Constraint] = {p: _domain(n) for p, n in self.notation.items()}
        """Each parameter's declared constraint (:func:`_domain`), which ``evaluate`` checks."""
        self.__doc__ = self._doc()
        self.evaluate = self._signed_evaluate()

    def _doc(self) -> str:
        """Statement, kind, reference, hypotheses and parameters (shown by ``help(theorem)``)."""
        lines = [f"{self.title} ({self.kind}); {self.reference}.", ""]
        if self.statement:
            lines += [self.statement, ""]
        if self.conditions:
            lines += ["Hypotheses", "----------", *(f"- {c.text}" for c in self.conditions), ""]
        lines += ["Parameters (keywords of ``evaluate``)", "-------------------------------------"]
        for p, n in self.notation.items():
            where = interval(n.low, n.high, low_open=n.low_open, high_open=n.high_open)
            kind = "integer" if n.integer else "real"
            lines += [f"{p} : {kind} in {where}", f"    {n.meaning} (symbol {n.symbol})"]
        return "\n".join(lines)

    def _signed_evaluate(self):
        """``evaluate`` with this theorem's parameters in its signature and docstring."""
        unbound = Theorem.evaluate

        def evaluate(*, strict: bool = True, **values) -> BoundResult:
            return unbound(self, strict=strict, **values)

        keyword = inspect.Parameter.KEYWORD_ONLY
        evaluate.__signature__ = inspect.Signature(
            [inspect.Parameter(p, keyword, annotation="ArrayLike") for p in self.parameters]
            + [inspect.Parameter("strict", keyword, default=True, annotation=bool)],
            return_annotation=BoundResult,
        )
        evaluate.__name__ = "evaluate"
        evaluate.__qualname__ = f"Theorem({self.key!r}).evaluate"
        evaluate.__doc__ = f"Evaluate {self.title}.\n\n{unbound.__doc__}\n\n{self.__doc__}"
        evaluate.__constraints__ = {**self.constraints, "strict": Bool()}  # as declare gives
        return evaluate

    @property
    def expression(self) -> sp.Expr:
        """The total as one sympy expression (sum of the terms)."""
        return sp.Add(*self.terms.values())

    @cached_property
    def _numeric(self):
        syms = [self.notation[p].symbol for p in self.parameters]
        terms = {}
        for k, e in self.terms.items():
            if k in self.numeric:  # a stable form, called with the same positions
                terms[k] = _positional(self.numeric[k], self.parameters)
                continue
            try:
                terms[k] = sp.lambdify(syms, e, "numpy")
            except Exception as err:  # noqa: BLE001 -- sympy has no numpy form for it
                raise ParameterError(
                    f"The 'terms' parameter of Theorem must hold expressions numpy can "
                    f"evaluate (or give a stable form in 'numeric'). Got the term {k!r} of "
                    f"{self.key!r}, {e}, which it cannot ({type(err).__name__}: "
                    f"{str(err).splitlines()[0]}) instead."
                ) from None
        conds = [
            (c, sp.lambdify(syms, c.lhs, "numpy"), sp.lambdify(syms, c.rhs, "numpy"))
            for c in self.conditions
        ]
        return terms, conds

    def _check_inputs(self, values: dict) -> list[np.ndarray]:
        owner = self.title
        for old, new in RENAMED.items():  # deprecated keywords (symbols.RENAMED)
            renamed = new in self.parameters and isinstance(self.notation[new].symbol, _TableSymbol)
            if old in values and old not in self.parameters and renamed:
                if new in values:
                    raise ParameterError(
                        f"{owner} got both '{old}' (the deprecated name) and '{new}'."
                    )
                warnings.warn(
                    f"{owner}: the keyword '{old}' is deprecated; use '{new}'.",
                    DeprecationWarning,
                    stacklevel=5,
                )
                values = {**{k: v for k, v in values.items() if k != old}, new: values[old]}
        unknown = set(values) - set(self.parameters)
        missing = set(self.parameters) - set(values)
        if missing:  # other keys are ignored (a dict of constants shared by theorems)
            hints = [
                f"{k!r}: did you mean {near[0]!r}?"
                for k in sorted(unknown)
                if (near := _nearest(k, sorted(missing)))
            ]
            raise ParameterError(
                f"{owner} takes exactly the parameters {', '.join(self.parameters)} (other "
                f"keys are ignored); missing: {sorted(missing)}, unknown: "
                f"{sorted(unknown) or 'none'}." + (f" {' '.join(hints)}" if hints else "")
            )
        values = {p: values[p] for p in self.parameters}
        arrays = [  # whole numbers too as float64 (an int64 power or factorial overflows)
            np.asarray(c.check(values[p], p, owner, values), dtype=float)
            for p, c in self.constraints.items()
        ]
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

    @declare(strict=Bool())
    def evaluate(self, *, strict: bool = True, **values) -> BoundResult:
        """Evaluate every term at ``values`` (arrays broadcast together).

        ``values`` must give every parameter; a key that is not a parameter is ignored (one
        dictionary of constants can serve several theorems, as ``check_theorem``'s
        ``constants`` does), and a missing parameter is refused, naming the ignored keys
        that look like it (``'Gama': did you mean 'Gamma'?``).

        With ``strict=True`` a failed hypothesis raises :class:`HypothesisViolation`;
        otherwise the result is returned with ``valid=False`` and the reason (its terms may
        then be NaN or inf). Inside the hypotheses a non-finite term is a ParameterError
        naming the input that overflows."""
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
        if valid:  # outside the hypotheses a non-finite term is explained by `reason`
            self._check_finite(args, {**terms, "total": np.asarray(total)})
        return BoundResult(self.title, self.reference, self.kind, terms, total, valid, reason)

    def latex(self) -> str:
        """LaTeX of the total, with the terms named."""
        body = " + ".join(
            rf"\underbrace{{{sp.latex(e)}}}_{{{_text(k)}}}" for k, e in self.terms.items()
        )
        return body

    def statement_markdown(self) -> str:
        r"""The whole statement, for a notebook or a report: title, kind and reference,
        the statement as the paper writes it, the formula fedtheory evaluates (terms
        named) and every hypothesis ``evaluate`` checks, each as LaTeX and as text.

        Jupyter shows it for a theorem alone in a cell (``_repr_markdown_``)."""
        lhs = {"upper bound": "bound", "exact": "value", "limit": "limit", "order": "rate"}
        lines = [
            f"**{self.title}** ({self.kind}; {self.reference})",
            "",
            f"Statement: `{self.statement}`" if self.statement else "",
            "",
            rf"$$\text{{{lhs[self.kind]}}} = {self.latex()}$$",
            "",
        ]
        if self.conditions:
            lines.append("Hypotheses (checked by `evaluate`):")
            lines += [
                f"- ${sp.latex(c.lhs)} {_LATEX_RELATIONS[c.rel]} {sp.latex(c.rhs)}$ (`{c.text}`)"
                for c in self.conditions
            ]
        else:
            lines.append("Hypotheses: none beyond the parameters' ranges.")
        params = ", ".join(f"`{p}`" for p in self.parameters)
        lines += ["", f"Parameters: {params}."]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.statement_markdown()

    def _repr_latex_(self) -> str:
        return f"${_text(self.title)}:\\ {self.latex()}$"

    def __repr__(self) -> str:
        params = ", ".join(self.parameters)
        return f"<Theorem {self.key}: {self.title} ({self.kind}; {self.reference}) ({params})>"
