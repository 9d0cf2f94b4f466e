r"""Values inside a theorem's hypotheses, and a property check of a theorem on them.

:func:`theorem_values` turns a :class:`~fedtheory.bounds.Theorem` into a hypothesis strategy
of keyword dictionaries for ``theorem.evaluate``. Every value lies in its parameter's domain
(the notation table, or the sympy assumptions of a user's own symbol) and every declared
hypothesis holds, so no property test draws an input its theorem excludes.

How the hypotheses are met, not filtered: each hypothesis ``lhs rel rhs`` is solved with
sympy for one of its symbols, its *pivot* (preferring real over integer symbols and the
left-hand side); the other parameters are drawn first, in their boxes, then the pivot's
box is cut at the roots of all its hypotheses (evaluated at the values drawn) and the pivot
is drawn in a piece where they all hold, endpoints included where they hold (a bound is
often tight at ``gamma = 1/(4L)``). A hypothesis that no symbol solves is filtered
(``assume``); every draw is finally re-checked against every hypothesis.

Boxes: a parameter's domain intersected with ``ranges[name]`` or, by default, with
:data:`DEFAULT_BOX` for reals (``[-10, 10]``; positive reals start at
:data:`POSITIVE_FLOOR`) and ``[low, low + 100]`` for integers.
"""

from __future__ import annotations

import hashlib
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import sympy as sp
from hypothesis import HealthCheck, assume, given, target
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from fedtheory.bounds.base import Theorem
from fedtheory.bounds.boxes import DEFAULT_BOX, POSITIVE_FLOOR, Box, parameter_box
from fedtheory.constraints import Bool, Function, Instance, Integer, MappingOf, Real, declare
from fedtheory.errors import NothingMeasured, ParameterError
from fedtheory.testing.assertions import BOUND_RTOL, TIGHT_RTOL, ZERO_ATOL
from fedtheory.tightness.engine import format_values
from fedtheory.tightness.family import rebuildable
from fedtheory.tightness.seeded import seed_only_draws
from fedtheory.verdict import AUTO_START, Verdict, format_ratio, replicate_until_decided

__all__ = [
    "DEFAULT_BOX",
    "DEFAULT_MAX_REPLICATES",
    "DEFAULT_SEARCH_BUDGET",
    "DEFAULT_SEARCH_REPLICATES",
    "POSITIVE_FLOOR",
    "TheoremCheck",
    "check_theorem",
    "theorem_values",
]

DEFAULT_MAX_REPLICATES = 4096
"""Cap of ``check_theorem(..., replicates="auto")``."""
DEFAULT_SEARCH_BUDGET = 400
"""Evaluations of the tightness search that :func:`check_theorem` runs after its examples
(the default budget of :func:`fedtheory.tightness.search`)."""
DEFAULT_SEARCH_REPLICATES = 1024
"""Replicates per point of that search for ``replicates="auto"``."""

_RELATIONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


# --- pivots -------------------------------------------------------------------------------
@dataclass
class _Plan:
    """How to draw: free parameters, then pivots in dependency order."""

    params: tuple[str, ...]
    symbols: tuple[sp.Symbol, ...]
    checks: list  # [(condition, lhs_fn, rhs_fn)] over all parameters
    pivots: dict = field(default_factory=dict)  # name -> [(condition index, [root fns])]
    order: list = field(default_factory=list)  # draw order of the parameters
    filtered: list = field(default_factory=list)  # condition indices met by rejection


def _roots(cond, sym: sp.Symbol, symbols):
    """Root functions of ``lhs = rhs`` in ``sym`` (over all parameters), or None."""
    try:
        sols = sp.solve(sp.Eq(sp.sympify(cond.lhs), sp.sympify(cond.rhs)), sym, dict=False)
    except (NotImplementedError, TypeError, ValueError):
        return None
    sols = [s for s in sols if not isinstance(s, (dict, tuple)) and s.free_symbols <= set(symbols)]
    if not sols or any(sym in s.free_symbols for s in sols):
        return None
    return [sp.lambdify(symbols, s, "numpy") for s in sols]


@cache
def _plan(theorem, fixed_names: frozenset) -> _Plan:
    params = theorem.parameters
    symbols = tuple(theorem.notation[p].symbol for p in params)
    name_of = {s: p for p, s in zip(params, symbols, strict=True)}
    checks = [
        (
            c,
            sp.lambdify(symbols, sp.sympify(c.lhs), "numpy"),
            sp.lambdify(symbols, sp.sympify(c.rhs), "numpy"),
        )
        for c in theorem.conditions
    ]
    plan = _Plan(params, symbols, checks)
    depends: dict[str, set[str]] = {}  # pivot -> names its bounds depend on

    def reaches(a: str, b: str) -> bool:  # does a depend (transitively) on b?
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                todo += list(depends.get(x, ()))
        return False

    for i, c in enumerate(theorem.conditions):
        lhs, rhs = sp.sympify(c.lhs), sp.sympify(c.rhs)
        names = {name_of[s] for s in (lhs.free_symbols | rhs.free_symbols)}
        if c.rel not in _RELATIONS or not names - fixed_names:
            plan.filtered.append(i)  # "!=" or nothing to draw: checked on every draw
            continue
        lhs_names = {name_of[s] for s in lhs.free_symbols}
        candidates = sorted(
            names - fixed_names,
            key=lambda p: (
                p not in plan.pivots,
                theorem.notation[p].integer,
                p not in lhs_names,
                p,
            ),
        )
        for p in candidates:
            others = names - {p}
            if any(reaches(o, p) for o in others):
                continue  # would make a cycle
            roots = _roots(c, theorem.notation[p].symbol, symbols)
            if roots is None:
                continue
            plan.pivots.setdefault(p, []).append((i, roots))
            depends.setdefault(p, set()).update(others)
            break
        else:
            plan.filtered.append(i)
    # draw order: a parameter after everything its bounds depend on
    done: list[str] = []
    while len(done) < len(params):
        ready = [p for p in params if p not in done and depends.get(p, set()) <= set(done)]
        done += ready
    plan.order = done
    return plan


def _holds(checks, indices, args) -> bool:
    for i in indices:
        cond, lhs, rhs = checks[i]
        try:
            with np.errstate(all="ignore"):
                ok = _RELATIONS.get(cond.rel, operator.ne)(float(lhs(*args)), float(rhs(*args)))
        except (OverflowError, ZeroDivisionError):  # a side out of float range: not a draw
            return False
        if not ok:
            return False
    return True


@st.composite
def _values(draw, theorem, fixed: dict, boxes: dict):
    plan = _plan(theorem, frozenset(fixed))
    values: dict[str, float] = dict(fixed)
    for p in plan.order:
        if p in values:
            continue
        box = boxes[p]
        if p not in plan.pivots:
            values[p] = _draw_in(draw, box, box.low, box.high, True, True)
            continue
        indices = [i for i, _ in plan.pivots[p]]

        def args_at(x, p=p):
            return [values.get(q, x) if q != p else x for q in plan.params]

        cuts = {box.low, box.high}
        for _, roots in plan.pivots[p]:
            for root in roots:
                try:
                    with np.errstate(all="ignore"):
                        r = complex(root(*args_at(np.nan)))
                except (OverflowError, ZeroDivisionError):  # a root out of float range
                    continue
                if abs(r.imag) < 1e-12 and math.isfinite(r.real) and box.low < r.real < box.high:
                    cuts.add(r.real)
        cuts = sorted(cuts)
        ok_at = [_holds(plan.checks, indices, args_at(c)) for c in cuts]
        pieces = [(c, c, True, True) for c, ok in zip(cuts, ok_at, strict=True) if ok]
        for j in range(len(cuts) - 1):
            a, b = cuts[j], cuts[j + 1]
            if _holds(plan.checks, indices, args_at(0.5 * (a + b))):
                pieces.append((a, b, ok_at[j], ok_at[j + 1]))
        assume(pieces)  # empty: the other values leave the pivot no room
        a, b, with_a, with_b = draw(st.sampled_from(pieces))
        values[p] = _draw_in(draw, box, a, b, with_a, with_b)
    args = [values[q] for q in plan.params]
    assume(_holds(plan.checks, range(len(plan.checks)), args))  # every hypothesis, once more
    return values


def _draw_in(draw, box: Box, a: float, b: float, with_a: bool, with_b: bool):
    if box.integer:
        lo = math.ceil(a) + (1 if not with_a and float(math.ceil(a)) == a else 0)
        hi = math.floor(b) - (1 if not with_b and float(math.floor(b)) == b else 0)
        assume(lo <= hi)
        return draw(st.integers(lo, hi))
    if a == b:
        return a
    return draw(st.floats(a, b, exclude_min=not with_a, exclude_max=not with_b, allow_nan=False))


def _check_fixed(theorem, fixed: dict, owner: str) -> None:
    """The fixed values lie in their domains and satisfy every hypothesis that involves
    only fixed parameters."""
    theorem._check_inputs({p: fixed.get(p, 1.0) for p in theorem.parameters})
    plan = _plan(theorem, frozenset(fixed))
    args = [fixed.get(p, np.nan) for p in plan.params]
    name_of = {theorem.notation[p].symbol: p for p in plan.params}
    for i in plan.filtered:
        cond = plan.checks[i][0]
        names = sp.sympify(cond.lhs).free_symbols | sp.sympify(cond.rhs).free_symbols
        if {name_of[s] for s in names} <= set(fixed):
            if not _holds(plan.checks, [i], args):
                raise ParameterError(
                    f"The 'fixed' parameter of {owner} must satisfy the hypothesis "
                    f"{cond.text} of {theorem.title}. Got {fixed!r} instead."
                )


@declare(theorem=Instance(Theorem), ranges=MappingOf(), fixed=MappingOf())
def theorem_values(theorem, *, ranges: Mapping | None = None, fixed: Mapping | None = None):
    r"""Hypothesis strategy of keyword dictionaries inside ``theorem``'s hypotheses.

    Parameters
    ----------
    theorem : Theorem
        A catalogue theorem (``fedtheory.bounds.CATALOGUE[key]``) or your own.
    ranges : dict, optional
        ``name -> (low, high)``: draw ``name`` in this box (inside its domain) instead of
        the theorem's ``ranges`` or the default one (module docstring).
    fixed : dict, optional
        ``name -> value``: hold ``name`` fixed (checked against its domain).

    Returns
    -------
    SearchStrategy of dict
        ``{parameter: value}`` such that ``theorem.evaluate(**values)`` raises nothing:
        every value in its domain (ints for integer parameters), every hypothesis true.

    Examples
    --------
    >>> from hypothesis import given
    >>> from fedtheory.bounds import cafed
    >>> @given(theorem_values(cafed.theorem1, ranges={"kappa": (1.0, 50.0)}))
    ... def test(values):
    ...     assert values["kappa"] >= 1.0
    >>> test()
    """
    owner = "theorem_values"
    ranges = {**theorem.ranges, **ranges}  # the theorem's boxes, then the caller's
    for name in [*ranges, *fixed]:
        if name not in theorem.parameters:
            raise ParameterError(
                f"The 'ranges/fixed' parameter of {owner} must name parameters of "
                f"{theorem.title} ({', '.join(theorem.parameters)}). Got {name!r} instead."
            )
    if fixed:
        _check_fixed(theorem, fixed, owner)
    _plan(theorem, frozenset(fixed))  # solve the hypotheses now, not in the first draw
    _ = theorem._numeric  # compile evaluate's functions now, not in the first example (deadlines)
    free = [p for p in theorem.parameters if p not in fixed]
    boxes = {p: parameter_box(p, theorem.notation[p], ranges, owner) for p in free}
    return _values(theorem, fixed, boxes)


def _complete(values: Mapping) -> str:
    """``values`` as text that rebuilds them (:func:`rebuildable`)."""

    def show(v) -> str:
        v = rebuildable(v)
        return v if isinstance(v, str) and v.endswith(")") else repr(v)

    return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in values.items()) + "}"


# --- a property check of a theorem ------------------------------------------------------------
TARGET_DIGITS = 10
"""Significant digits of a ratio that steer the examples and pick the worst one: far more
than a verdict reads, fewer than floating-point rounding changes."""


def _rounded(ratio: float) -> float:
    """``ratio`` to :data:`TARGET_DIGITS` significant digits (inf and NaN as they are)."""
    return float(f"{ratio:.{TARGET_DIGITS}g}") if math.isfinite(ratio) else ratio


def _ratio_text(ratio: float) -> str:
    """A ratio near 1 with its excess ("1 + 3.8e-10", never a bare "1"), else 6 digits."""
    if math.isfinite(ratio) and ratio != 1 and abs(ratio - 1) < 1e-3:
        return format_ratio(ratio, 1.0)
    return f"{ratio:.6g}"


@dataclass(frozen=True)
class TheoremCheck:
    """Outcome of :func:`check_theorem` (it raised nothing: no example and no search point
    was *violated*).

    ``inconclusive`` lists the Monte-Carlo examples whose interval contained the bound, each
    ``{"values": ..., "replicates": n, "needed": m, "detail": ...}`` (``needed``: the
    replicates that would decide it at the measured spread, None when the mean equals the
    bound); ``search`` is the search run after the examples (None when not run) and
    ``search_note`` why it was not."""

    theorem: str
    examples: int  # values drawn and checked
    worst_ratio: float  # largest measured / bound (upper bound) or |measured/expected - 1|
    worst_values: dict  # the values where it was attained
    inconclusive: tuple = ()
    search: object = None  # fedtheory.tightness.SearchResult
    search_note: str = ""
    failures: tuple[str, ...] = ()  # examples where the user's function failed (recorded)

    @property
    def outcome(self) -> str:
        """``"failed"`` when the user's function failed at some example or search point,
        ``"inconclusive"`` when some Monte-Carlo example was, else ``"holds"``."""
        if self.failures or (self.search is not None and self.search.failures):
            return "failed"
        return "inconclusive" if self.inconclusive else "holds"

    def __repr__(self) -> str:
        if math.isfinite(self.worst_ratio):
            ratio = f", worst ratio {_ratio_text(self.worst_ratio)} at {self.worst_values}"
        elif self.examples:  # every bound within the rounding floor of 0, met within it
            ratio = ", no ratio: every bound was 0 (up to rounding) and met within rounding"
        else:
            ratio = ""
        text = f"TheoremCheck({self.theorem}: {self.examples} examples{ratio}"
        if self.inconclusive:
            first = self.inconclusive[0]
            need = first["needed"]
            text += (
                f"; {len(self.inconclusive)} inconclusive (first at {first['values']}: "
                + ("the mean equals the bound" if need is None else f"about {need} replicates")
                + f" would decide it, have {first['replicates']})"
            )
        if self.failures:
            text += (
                f"; your function failed at {len(self.failures)} examples (recorded); first: "
                f"{self.failures[0]}"
            )
        if self.search is not None:
            text += (
                f"; search: {self.search.evaluations} evaluations, "
                f"{self.search.summary()}, no counterexample"
            )
        elif self.search_note:
            text += f"; {self.search_note}"
        return text + ")"


@declare(
    theorem=Instance(Theorem),
    measure=Function(),
    ranges=MappingOf(),
    fixed=MappingOf(),
    rtol=Real(0.0, 1.0, none=True),
    atol=Real(0.0, none=True),
    settings=Instance(hypothesis_settings, none=True),
    constants=Function(none=True),
    instances=Instance(st.SearchStrategy, none=True),
    max_replicates=Integer(AUTO_START),
    margin=Real(0.0, none=True),
    confidence=Real(0.0, 1.0, low_open=True, high_open=True),
    seed=Integer(0),
    fail_on_inconclusive=Bool(),
    fail_on_error=Bool(),
    search_budget=Integer(3),
    min_measured=Real(0.0, 1.0),
)
def check_theorem(
    theorem,
    measure: Callable[..., object],
    *,
    ranges: Mapping | None = None,
    fixed: Mapping | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    settings: hypothesis_settings | None = None,
    constants: Callable[..., Mapping] | None = None,
    instances=None,
    replicates: int | str | None = None,
    max_replicates: int = DEFAULT_MAX_REPLICATES,
    margin: float | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    fail_on_inconclusive: bool = False,
    fail_on_error: bool = False,
    search=True,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    min_measured: float = 0.0,
) -> TheoremCheck:
    r"""Property-test ``theorem`` against ``measure`` on values inside its hypotheses.

    For every ``values`` drawn by :func:`theorem_values` (hypothesis, with the active
    profile without a deadline and without an example database unless ``settings`` is
    given: nothing is written to ``.hypothesis/``; the draws seeded by ``seed``),
    ``measure(**values)`` (the
    quantity the theorem speaks of, computed independently) is judged against the theorem
    by the one judge, :class:`fedtheory.bounds.judgement.Judge` (the rule of the
    validations and of the tightness search): ``measured <= bound`` up to ``rtol`` (default
    :data:`BOUND_RTOL`) and ``atol`` (default 0) for an upper bound, ``|measured - bound|``
    within ``rtol`` (default :data:`TIGHT_RTOL`) and ``atol`` (default :data:`ZERO_ATOL`)
    for an exact statement, both plus the rounding floor: the magnitudes of the
    computation (a :class:`fedtheory.verdict.Measured`'s ``scale``, else the instance's
    parameters), the measured value and the bound's terms (a bound of 0 met by rounding,
    7.7e-34, then holds). Hypothesis's ``target`` pushes towards the largest ratio, and a
    failure (the outcome *violated*) is shrunk to a small
    example and raised (``AssertionError`` naming the values).

    ``fixed`` holds parameters of the theorem fixed (checked against their domains) and
    passes any other key to ``measure`` only, as :func:`fedtheory.tightness.theorem_family`
    does.

    **Your function fails.** An example where ``measure`` (or ``constants``) raises, returns
    a non-number or NaN/inf, or derives a constant outside its declared domain is recorded
    in the result's ``failures`` and the check goes on, as the search does with such points
    (:func:`fedtheory.testing.exit_status` then gives 3); ``fail_on_error=True`` raises
    :class:`fedtheory.bounds.judgement.MeasureError` at the first one instead.

    **Nothing measured.** A check that judged no example, or whose search measured fewer
    than ``min_measured`` of its points (default 0: none at all; every point outside the
    hypotheses, say), proves nothing: it raises :class:`fedtheory.errors.NothingMeasured`
    (status 4), never passes.

    **Derived constants.** When the theorem's constants are computed from an instance (a
    problem, an iterate, weights: CA-Fed's :math:`\kappa`, :math:`F_B(w)-F_B^*`,
    :math:`\chi^2`, :math:`\Gamma`), give ``instances``, a hypothesis strategy of keyword
    dictionaries, and ``constants(**instance) -> {parameter: value}`` (the rule of
    ``Theorem.evaluate``: keys that are not parameters of the theorem are ignored, shown with
    the instance, so one function can serve several theorems; a missing parameter is the
    user's failure at that example, naming the key that looks like it): each instance is
    measured by ``measure(**instance)`` and the theorem evaluated on ``constants(**instance)``
    (an instance where a hypothesis fails is skipped); ``ranges`` and ``fixed`` then do not
    apply.

    **Monte-Carlo claims.** With ``replicates`` (an int >= 2, or ``"auto"``),
    ``measure(**values, replicates=R, seed=s) -> [R]`` returns i.i.d. replicates of a random
    quantity whose *mean* the theorem bounds (``s`` a pure function of ``seed`` and the
    values, so a replayed example draws the same replicates). Each example is judged by the
    rule of the validations: *holds* when the upper confidence limit of the mean is at most
    the bound, *violated* when the lower one is above it, else *inconclusive*, with the
    replicates that would decide it; ``"auto"`` adds replicates in doubling looks up to
    ``max_replicates`` until decided (:func:`fedtheory.verdict.replicate_until_decided`).
    The intervals are Bonferroni-corrected over the examples (``max_examples`` of the
    settings) and the looks, so ``confidence`` is family-wise: a true claim is refuted with
    probability at most ``1 - confidence``. Only *violated* fails; *inconclusive* examples
    are listed in the result, and fail with ``fail_on_inconclusive=True``. ``margin``: the
    equivalence margin of an exact statement on a mean.

    **The search after the examples.** With ``search=True`` (default) an upper bound is
    then searched by the tightness search (:func:`fedtheory.tightness.search`, seeded
    draws, CMA-ES, integer moves, Nelder-Mead; ``search_budget`` evaluations, seed
    ``seed``) over :func:`fedtheory.tightness.theorem_family` of the same theorem, measure,
    ``ranges``, ``fixed`` and ``replicates`` (``"auto"`` searches with
    ``DEFAULT_SEARCH_REPLICATES``), so whether a false bound is caught does not depend on
    the profile's luck; a counterexample is shrunk (small sizes, short decimals) and raised
    in the paper's symbols as ``fedtheory tightness`` prints it. With ``instances``, the
    search runs over the strategy's own choices
    (:func:`fedtheory.tightness.drawn.strategy_family`: the bounded float choices of
    :data:`~fedtheory.tightness.drawn.DRAWS` choice sequences drawn with ``seed``, the
    strategy replayed at every point), no family needed; a family written for
    the instances may be given instead (``search=dataclasses.replace(FAMILIES[key],
    theorem=mine)``). ``search=False`` skips the search.

    Returns
    -------
    TheoremCheck
        Number of examples and the worst ratio seen, with its values; the inconclusive
        examples; the search's result.

    Examples
    --------
    >>> from fedtheory.bounds import fedau
    >>> def weight_error(p, K_cut, t):  # exact E[(p omega_t - 1)^2] of FedAU's Algorithm 2
    ...     return fedau.weight_error_exact(p, K_cut, t + 1)[t]
    >>> check_theorem(
    ...     fedau.theorem3_per_round, weight_error, ranges={"t": (1, 20), "K_cut": (1, 5)}
    ... )
    ... # doctest: +ELLIPSIS
    TheoremCheck(...)

    CA-Fed Theorem 1 on drawn quadratic problems, with its constants derived from each:

    >>> from hypothesis import strategies as st
    >>> from fedtheory.bounds import cafed
    >>> from fedtheory.testing import strategies
    >>> @st.composite
    ... def instances(draw):
    ...     problem = draw(strategies.quadratic_problems(max_clients=3, max_dim=2))
    ...     p = draw(strategies.simplex(problem.num_clients))
    ...     w = draw(st.lists(st.floats(-2, 2), min_size=problem.dim, max_size=problem.dim))
    ...     return {"problem": problem, "w": w, "p": p}
    >>> check_theorem(
    ...     cafed.theorem1,
    ...     lambda problem, w, p: problem.loss(w) - problem.optimum()[1],
    ...     instances=instances(),
    ...     constants=lambda problem, w, p: cafed.decomposition_constants(problem, w, p)
    ...     .as_kwargs(),
    ... )  # doctest: +ELLIPSIS
    TheoremCheck(...)
    """
    owner = "check_theorem"
    upper = getattr(theorem, "kind", None) == "upper bound"
    rtol = (BOUND_RTOL if upper else TIGHT_RTOL) if rtol is None else rtol
    atol = (0.0 if upper else ZERO_ATOL) if atol is None else atol
    replicates = _check_arguments(owner, theorem, measure, rtol, atol, margin, constants,
                                  instances, ranges, fixed, replicates, search)  # fmt: skip
    params = {k: v for k, v in fixed.items() if k in theorem.parameters}
    strategy = instances if constants is not None else theorem_values(
        theorem, ranges=ranges, fixed=params
    )  # fmt: skip
    settings = _example_settings(settings)
    examples = _Examples(theorem, measure, constants, {**fixed}, upper, rtol, atol, margin,
                         replicates, max_replicates, confidence, settings, seed,
                         fail_on_inconclusive, fail_on_error)  # fmt: skip
    examples.run(strategy, seed)
    result, note = _search_after(examples, search, ranges, fixed, instances, search_budget)
    check = TheoremCheck(theorem.key, examples.count, examples.ratio, examples.values,
                         tuple(examples.inconclusive), result, note,
                         tuple(examples.failures))  # fmt: skip
    _require_measured(check, examples.attempts, min_measured)
    return check


def _check_arguments(owner, theorem, measure, rtol, atol, margin, constants, instances,
                     ranges, fixed, replicates, search):  # fmt: skip
    """Refuse what :func:`check_theorem`'s declarations cannot: arguments that go together;
    returns ``replicates`` checked."""
    from fedtheory.bounds.judgement import Judge
    from fedtheory.tightness import Family

    Judge(theorem, measure, rtol=rtol, atol=atol, margin=margin, owner=owner)  # checks them
    if (constants is None) != (instances is None):
        raise ParameterError(
            f"The 'constants' parameter of {owner} must be given together with 'instances' "
            f"(a strategy of instances to derive them from). Got constants={constants!r}, "
            f"instances={instances!r} instead."
        )
    if constants is not None and (ranges or fixed):
        raise ParameterError(
            f"The 'ranges' parameter of {owner} must be omitted with 'instances' (the "
            f"instances say where to look). Got {ranges or fixed!r} instead."
        )
    if search is not True and search is not False and not isinstance(search, Family):
        raise ParameterError(
            f"The 'search' parameter of {owner} must be True, False or a Family. Got "
            f"{search!r} instead."
        )
    if replicates is not None and replicates != "auto":  # an int >= 2 or "auto"
        replicates = Integer(2).check(replicates, "replicates", owner, {})
    return replicates


def _example_settings(settings):
    """The examples' settings: ``settings``, else the active profile without a deadline
    (measurements take time) and without an example database (no ``.hypothesis/`` folder)."""
    if settings is not None:
        return settings
    return hypothesis_settings(
        deadline=None,
        database=None,
        suppress_health_check=[
            *hypothesis_settings().suppress_health_check,
            HealthCheck.too_slow,
        ],
    )


class _Examples:
    """The examples of :func:`check_theorem`: each judged by the one judge, the worst ratio,
    the inconclusive ones and the failures of the user's function kept."""

    def __init__(self, theorem, measure, constants, fixed, upper, rtol, atol, margin,
                 replicates, cap, confidence, settings, seed, fail_on_inconclusive,
                 fail_on_error):  # fmt: skip
        from fedtheory.bounds.judgement import Judge
        from fedtheory.verdict import adaptive_looks

        self.theorem, self.measure, self.constants = theorem, measure, constants
        self.extra = {k: v for k, v in fixed.items() if k not in theorem.parameters}
        self.upper, self.rtol, self.atol, self.margin = upper, rtol, atol, margin
        self.replicates, self.cap, self.seed = replicates, cap, seed
        self.fail_on_inconclusive, self.fail_on_error = fail_on_inconclusive, fail_on_error
        # Monte Carlo: Bonferroni over the examples (and over the looks of "auto")
        self.level = 1.0 - (1.0 - confidence) / max(1, settings.max_examples)
        self.looks, look_level = (
            adaptive_looks(cap, confidence=self.level) if replicates == "auto" else ([], self.level)
        )
        self.judge = Judge(theorem, measure, rtol=rtol, atol=atol, margin=margin,
                           owner="check_theorem", confidence=look_level)  # fmt: skip
        self.settings = settings
        self.count, self.attempts, self.ratio, self.values = 0, 0, -math.inf, {}
        self.inconclusive: list[dict] = []
        self.failures: list[str] = []

    def run(self, strategy, seed: int) -> None:
        """Every example of ``strategy`` (one failure, the first shrunk: an ExceptionGroup
        of several would hide the verdict); the draws seeded by ``seed``. Draws that never
        meet the hypotheses leave no example (counted, never a pass: ``min_measured``)."""
        from hypothesis import seed as hypothesis_seed
        from hypothesis.errors import Unsatisfiable

        quiet = [*self.settings.suppress_health_check, HealthCheck.filter_too_much]
        test = hypothesis_seed(seed)(given(strategy)(self.one))
        try:
            with seed_only_draws():  # the same examples whatever else is imported
                hypothesis_settings(
                    self.settings, report_multiple_bugs=False, suppress_health_check=quiet
                )(test)()
        except Unsatisfiable:  # no draw met the hypotheses: nothing judged
            pass

    def judged(self, values, params, where):
        """The judgement at ``values`` (the instance, measured) of the theorem at ``params``."""
        judge, at = self.judge, {**self.extra, **values}
        if self.replicates is None:
            return judge(params, judge.measure_at(at), where=where)

        def draw(batch, size):
            out = judge.measure_at(at, replicates=size,
                                   seed=_example_seed(self.seed, values, batch))  # fmt: skip
            return judge(params, samples=out, where=where, shape=(size,)).samples

        if self.replicates != "auto":
            return judge(params, samples=draw(0, self.replicates), where=where)
        _, samples = replicate_until_decided(
            draw, lambda x, _: judge(params, samples=x).row(), cap=self.cap,
            confidence=self.level,
        )  # fmt: skip
        return judge(params, samples=samples, where=where)

    def one(self, values) -> None:
        from fedtheory.bounds.judgement import MeasureError

        self.attempts += 1
        where = f"{self.theorem.title} at {_complete(values)}"
        try:
            params = values if self.constants is None else dict(self.constants(**values))
            if self.constants is not None:
                where += f" (constants {format_values(params)})"  # computed: 6 digits
            j = self.judged(values, params, where)
        except MeasureError as err:  # the user's function raised, or gave no finite number
            return self._failed(err, f"{err.function}: {err.error} at {where}")
        except ParameterError as err:  # derived constants outside their declared domains
            if self.constants is None:
                raise
            return self._failed(err, f"constants: {err} at {where}")
        except Exception as err:  # noqa: BLE001 -- the user's constants raised
            if self.constants is None:
                raise
            return self._failed(err, f"constants: {type(err).__name__}: {err} at {where}")
        assume(j.valid)  # derived constants outside the hypotheses: not an example
        self._count(j, values, where)

    def _failed(self, err: Exception, text: str) -> None:
        if self.fail_on_error:
            raise err
        if text not in self.failures:
            self.failures.append(text)

    def _count(self, j, values, where) -> None:
        worst = j.ratio
        # hypothesis steers by the target and the worst is kept by comparison: both read
        # the ratio at TARGET_DIGITS, so that rounding (a BLAS kernel's last bits) changes
        # neither the examples drawn nor which of tied instances is reported (the first)
        key = _rounded(worst)
        if math.isfinite(worst):
            target(key, label="measured / bound" if self.upper else "|measured/expected - 1|")
        self.count += 1
        if key > _rounded(self.ratio):
            self.ratio, self.values = worst, dict(values)
        row = j.row()
        if j.outcome is Verdict.VIOLATED or (
            self.fail_on_inconclusive and j.outcome is Verdict.INCONCLUSIVE
        ):
            what = "upper bound violated" if self.upper else "equality fails"
            if j.outcome is Verdict.INCONCLUSIVE:
                what = "inconclusive (fail_on_inconclusive)"
            raise AssertionError(
                f"{where}: {what}: measured {row.measured:.10g}, bound {row.bound:.10g}; "
                f"{row.detail}"
            )
        if j.outcome is Verdict.INCONCLUSIVE and j.samples is not None:
            entry = {"values": dict(values), "replicates": len(j.samples),
                     "needed": j.needed(), "detail": row.detail}  # fmt: skip
            if entry not in self.inconclusive:
                self.inconclusive.append(entry)


def _search_after(examples: _Examples, search, ranges, fixed, instances, budget: int):
    """The tightness search after the examples (``(result, note)``): a counterexample is
    raised (``AssertionError``); a Monte-Carlo one is judged again like one more example."""
    from fedtheory.tightness import search as run_search

    theorem = examples.theorem
    if search is False:
        return None, "search: not run (search=False)"
    if not examples.upper:
        return None, "search: not run (an exact statement)"
    family = _search_family(theorem, examples.measure, search, examples.constants, instances,
                            ranges, fixed, examples.replicates, examples.seed)  # fmt: skip
    result = run_search(family, budget=budget, seed=examples.seed)
    cex = result.counterexample
    if cex is not None and examples.replicates is not None and search is True:
        at = dict(cex.evaluation.constants)
        rebuild = getattr(family.evaluate, "instance_at", None)  # a drawn instance
        values = at if rebuild is None else rebuild(cex.integers, cex.vector())
        again = examples.judged(values, at, f"{theorem.title} at {_complete(values)}")
        if again.outcome is not Verdict.VIOLATED:
            return None, (
                f"search: its counterexample at {at} was not confirmed by an independent "
                f"measurement at the examples' confidence ({again.outcome.value})"
            )
    if cex is not None:
        lines = "\n".join(result.counterexample_lines())
        raise AssertionError(
            f"{theorem.title}: upper bound violated at a point of the search after "
            f"{examples.count} examples passed ({result.evaluations} evaluations, "
            f"seed {examples.seed}):\n{lines}"
        )
    return result, ""


def _require_measured(check: TheoremCheck, attempts: int, share: float) -> None:
    """Raise :class:`NothingMeasured` when no example was judged or the search measured
    fewer than ``share`` of its points (a ``MeasureError`` when the user's function failed
    at some of them: the cause)."""
    search = check.search
    if (
        check.examples
        and check.examples >= share * attempts
        and (search is None or not search.measured_too_few(share))
    ):
        return
    measured = f"{check.examples} of {attempts} examples judged"
    if search is not None:
        measured += f", {search.measured} of {search.evaluations} search points measured"
    failures = [*check.failures, *(search.failures if search is not None else ())]
    if failures:  # the user's function failed where it was called: that is the cause
        from fedtheory.bounds.judgement import MeasureError

        raise MeasureError(
            f"{check.theorem}: your function failed at {len(failures)} points and too few "
            f"were measured ({measured}); first: {failures[0]}",
            function="measure",
            instance={},
            error=failures[0],
        )
    raise NothingMeasured(
        f"{check.theorem}: nothing measured ({measured}; min_measured {share:g}): the check "
        "proves nothing (every point outside the hypotheses, or your function failed there)"
    )


def _example_seed(seed: int, values: Mapping, batch: int) -> int:
    """The replicates' seed of an example: a pure function of ``seed``, the values and the
    batch (a replayed or shrunk example draws the same replicates)."""
    digest = hashlib.sha256(repr(sorted((k, repr(v)) for k, v in values.items())).encode())
    words = np.frombuffer(digest.digest()[:8], dtype=np.uint32)
    return int(np.random.SeedSequence([seed, *words.tolist(), batch]).generate_state(1)[0])


def _search_family(theorem, measure, search, constants, instances, ranges, fixed, replicates,
                   seed):  # fmt: skip
    """The family searched after the examples: ``search`` when a Family; over the drawn
    instances (:func:`fedtheory.tightness.drawn.strategy_family`) with ``instances``; else
    over the theorem's parameters."""
    from fedtheory.tightness import Family, theorem_family
    from fedtheory.tightness.drawn import strategy_family

    if isinstance(search, Family):
        return search
    reps = DEFAULT_SEARCH_REPLICATES if replicates == "auto" else replicates
    if constants is not None:
        return strategy_family(theorem, measure, instances, constants, replicates=reps, seed=seed)
    return theorem_family(theorem, measure, ranges=ranges, fixed=fixed, replicates=reps)
