r"""A tightness family over the instances a hypothesis strategy draws.

When a theorem's constants come from drawn instances (a problem, an iterate, weights:
CA-Fed's :math:`\kappa`, :math:`F_B(w)-F_B^*`, :math:`\chi^2`, :math:`\Gamma`), the space
to search is the strategy's, not the theorem's parameters. :func:`strategy_family` reads
that space off the strategy itself: hypothesis builds every value from a sequence of
*choices* (integers, floats, booleans...), each with its constraints, so

* ``draws`` choice sequences are drawn from a generator seeded by ``seed``, sorted from the
  smallest (fewest choices, integers nearest their lower ends: worst cases are often
  small); the family's integer ``draw`` picks one of them;
* the reals of draw ``k`` are its float choices whose constraints give a finite box
  ``[min_value, max_value]`` (``st.floats(-2, 2)`` gives ``[-2, 2]``, ``kappa=(1, 50)``
  gives ``[1, 50]``) and its integer choices with a finite range (at most
  :data:`WHOLE_RANGE` values: not a seed) that the choices after them do not depend on
  (``st.integers(1, 1000)`` for a horizon ``T``: the strategy replays with it at both ends
  of its range), searched as reals and rounded to the nearest integer; the other choices
  (sizes, branches, seeds, booleans, unbounded floats) are held at their drawn values;
* a point is evaluated by replaying the strategy on the choices with those floats
  replaced: the instance it builds is measured (``measure(**instance)``) and the theorem
  evaluated on ``constants(**instance)``. A replay that the strategy rejects (a filter, an
  ``assume``) or derived constants outside the theorem's hypotheses are *not valid* (never
  a counterexample), counted as outside.

So :func:`fedtheory.tightness.search` (CMA-ES, Nelder-Mead, shrinking of a counterexample)
runs on the user's strategy alone, without a family written for it. The draws come from
hypothesis's generator without the constants it mixes in from the loaded modules, so they
depend on ``seed`` only. What it cannot see:
a region reached only by changing a choice that shapes the rest (a number of clients, a
branch) to a value no draw made, or a choice with an unbounded range.

This reads hypothesis's choice sequences through its internal API
(``hypothesis.internal.conjecture``: ``ConjectureData.for_choices``, the choice nodes'
``constraints``), as of hypothesis 6.170; a change there shows in the tests of this module.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

from hypothesis.strategies import SearchStrategy

from fedtheory.bounds.base import Theorem
from fedtheory.constraints import Function, Instance, declare
from fedtheory.constraints import Integer as IntegerIn
from fedtheory.errors import ParameterError
from fedtheory.tightness.family import (
    Family,
    Integer,
    Measurement,
    Real,
    _judged_measurement,
    rebuildable,
)
from fedtheory.tightness.seeded import provider

__all__ = ["DRAWS", "WHOLE_RANGE", "strategy_family"]

DRAWS = 8
"""Choice sequences drawn by :func:`strategy_family`."""

WHOLE_RANGE = 10**6
"""Integer choices with more values than this (a seed drawn in ``[0, 2**31)``) are held as
drawn: nearby seeds give unrelated instances, nothing a search can climb."""

_OWNER = "strategy_family"


def _replay(strategy, choices: Sequence | None, rng: random.Random | None = None):
    """``(value, choices)`` of ``strategy`` drawn from ``choices`` (or from ``rng``), or
    ``(None, ())`` where the strategy rejects them (a filter, an ``assume``, too few)."""
    from hypothesis.control import BuildContext
    from hypothesis.errors import StopTest, UnsatisfiedAssumption
    from hypothesis.internal.conjecture.data import ConjectureData, Status

    if choices is None:
        data = ConjectureData(random=rng, provider=provider())
    else:
        data = ConjectureData.for_choices(tuple(choices))
    try:
        with BuildContext(data, wrapped_test=_replay):
            value = data.draw(strategy)
    except (StopTest, UnsatisfiedAssumption):
        return None, ()
    if data.status is not Status.VALID or data.misaligned_at is not None:
        return None, ()
    return value, tuple(data.nodes)


def _box(node) -> tuple[float, float] | None:
    """The finite box of a float choice, None for any other."""
    if node.type != "float" or node.was_forced:
        return None
    low, high = node.constraints["min_value"], node.constraints["max_value"]
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        return None
    return float(low), float(high)


def _whole_range(strategy, nodes, i: int) -> tuple[int, int] | None:
    """The range ``(low, high)`` of integer choice ``i`` when it is searched: a finite range
    of 2 to :data:`WHOLE_RANGE` values, and the strategy replays with the choice at either
    end (the choices after it do not depend on it: not a size or a branch); else None."""
    node = nodes[i]
    if node.type != "integer" or node.was_forced:
        return None
    low, high = node.constraints["min_value"], node.constraints["max_value"]
    if low is None or high is None or not 0 < high - low < WHOLE_RANGE:
        return None
    choices = [n.value for n in nodes]
    for end in (low, high):
        replayed = _replay(strategy, [*choices[:i], end, *choices[i + 1 :]])[1]
        if len(replayed) != len(nodes):
            return None
    return int(low), int(high)


def _size(nodes) -> tuple:
    """Smaller first: fewer choices, then integers nearer their lower ends."""
    ints = [
        abs(int(n.value) - int(n.constraints.get("min_value") or 0))
        for n in nodes
        if n.type == "integer"
    ]
    return len(nodes), sum(min(v, 10**6) for v in ints)


@declare(
    theorem=Instance(Theorem),
    measure=Function(),
    instances=Instance(SearchStrategy),
    constants=Function(),
    replicates=IntegerIn(2, none=True),
    seed=IntegerIn(0),
    draws=IntegerIn(1, 1000),
)
def strategy_family(
    theorem,
    measure: Callable,
    instances,
    constants: Callable[..., Mapping],
    *,
    replicates: int | None = None,
    seed: int = 0,
    draws: int = DRAWS,
) -> Family:
    r"""A :class:`Family` over the instances ``instances`` draws (module docstring).

    Parameters
    ----------
    theorem : Theorem
        An upper bound; the family judges it at every point.
    measure : callable
        ``measure(**instance)``, the quantity the theorem bounds (with ``replicates``,
        ``measure(**instance, replicates=R, seed=s) -> [R]``).
    instances : SearchStrategy
        A hypothesis strategy of keyword dictionaries (the instances).
    constants : callable
        ``constants(**instance) -> {parameter: value}``, the theorem's parameters at an
        instance.
    replicates : int, optional
        Monte-Carlo replicates per point.
    seed : int
        Seeds the draws of the choice sequences.
    draws : int
        Choice sequences drawn (at least 1).

    Examples
    --------
    >>> from hypothesis import strategies as st
    >>> from fedtheory.bounds import divergences
    >>> from fedtheory.testing import strategies
    >>> from fedtheory.tightness import search
    >>> pairs = st.fixed_dictionaries({"alpha": strategies.simplex(3),
    ...                                "p": strategies.simplex(3)})
    >>> family = strategy_family(
    ...     divergences.tv_chi_square,
    ...     lambda alpha, p: divergences.total_variation(alpha, p),
    ...     pairs,
    ...     lambda alpha, p: {"chi2": divergences.chi_square(alpha, p)},
    ... )
    >>> search(family, budget=40, seed=0).counterexample is None
    True
    """
    from fedtheory.bounds.judgement import Judge

    judge = Judge(theorem, measure, owner=_OWNER).upper_bound()
    derive = Judge(theorem, constants, owner=_OWNER)  # its failures are the user's, recorded
    drawn = {}
    for k in range(draws):
        _, nodes = _replay(instances, None, random.Random(seed * 7919 + k))
        if nodes:
            drawn.setdefault(tuple(n.value for n in nodes), nodes)
    if not drawn:
        raise ParameterError(
            f"The 'instances' parameter of {_OWNER} must draw values (every one of "
            f"{draws} draws was rejected). Got {instances!r} instead."
        )
    skeletons = sorted(drawn.values(), key=_size)
    boxes = [
        [(i, b, False) for i, n in enumerate(nodes) if (b := _box(n))]
        + [(i, b, True) for i in range(len(nodes)) if (b := _whole_range(instances, nodes, i))]
        for nodes in skeletons
    ]

    def reals(ints) -> tuple[Real, ...]:
        return tuple(Real(f"choice[{i}]", lo, hi) for i, (lo, hi), _ in boxes[ints["draw"]])

    def instance_at(ints, x):
        nodes = skeletons[ints["draw"]]
        choices = [n.value for n in nodes]
        for (i, _, whole), v in zip(boxes[ints["draw"]], x, strict=True):
            choices[i] = round(float(v)) if whole else float(v)
        return _replay(instances, choices)[0]

    def evaluate(ints, x, seed) -> Measurement:
        drawn = instance_at(ints, x)
        if drawn is None:  # the strategy rejects these choices: not an instance
            return Measurement(math.nan, {})
        values = dict(derive.measure_at(drawn))
        return _judged_measurement(judge, values, drawn, replicates=replicates, seed=seed)

    evaluate.instance_at = instance_at  # the instance at a point, to measure it again

    def describe(ints, x) -> dict:
        drawn = instance_at(ints, x)
        if drawn is None:
            return {"instance": "rejected by the strategy"}
        return {k: rebuildable(v) for k, v in drawn.items()}

    described = getattr(instances, "__name__", None) or repr(instances)[:60]
    return Family(
        theorem,
        f"the instances of {described}: {len(skeletons)} choice sequences drawn (seed {seed}),"
        " their bounded float choices searched",
        (Integer("draw", 0, len(skeletons) - 1, "choice sequence, smallest first"),),
        reals,
        evaluate,
        monte_carlo=replicates is not None,
        instance=describe,
    )
