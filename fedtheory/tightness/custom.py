r"""Tightness families of your own theorems, and the files that register them.

:func:`theorem_family` builds a :class:`~fedtheory.tightness.Family` from any upper bound (a
:class:`~fedtheory.bounds.Theorem`, catalogue or your own) and a function that measures the
quantity it bounds: the search space is the theorem's own parameters, each in its domain cut
to a box (``ranges``, or the default boxes of :func:`fedtheory.testing.theorem_values`).
A point where a hypothesis fails is *not valid* (never a counterexample; the optimisers see
it as the worst score). For instances richer than the theorem's parameters (a problem, an
iterate, weights), write the family's ``evaluate`` yourself or replace the theorem of a
catalogue family (``dataclasses.replace(FAMILIES[key], theorem=mine)``): a family always
judges the theorem it holds.

A file given to ``fedtheory tightness --module FILE.py KEY`` registers its families::

    # my_bounds.py
    from fedtheory.tightness import register, theorem_family
    register(theorem_family(my_theorem, my_measure, ranges={...}))

:func:`load_families` imports such a file (its folder on ``sys.path``) and marks each
family with it, so that a saved search names the file and replays from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from fedtheory.bounds.base import Theorem
from fedtheory.constraints import Function, Instance, Location, MappingOf, Text, declare
from fedtheory.constraints import Integer as IntegerIn
from fedtheory.constraints import Real as RealIn
from fedtheory.errors import ParameterError
from fedtheory.tightness.family import (
    Family,
    Integer,
    Measurement,
    Real,
    _judged_measurement,
    scaled,
)

_OWNER = "theorem_family"


@declare(
    theorem=Instance(Theorem),
    measure=Function(),
    ranges=MappingOf(),
    fixed=MappingOf(),
    replicates=IntegerIn(2, none=True),
    description=Text(none=True),
    tightness=Text(none=True),
    supremum=RealIn(0.0, low_open=True, none=True),
)
def theorem_family(
    theorem,
    measure: Callable,
    *,
    ranges: Mapping | None = None,
    fixed: Mapping | None = None,
    replicates: int | None = None,
    description: str | None = None,
    tightness: str | None = None,
    supremum: float | None = None,
) -> Family:
    r"""A tightness family over ``theorem``'s own parameters.

    Parameters
    ----------
    theorem : Theorem
        An upper bound (catalogue or your own); the family judges it at every point.
    measure : callable
        The quantity the theorem bounds, computed independently: ``measure(**values) ->
        float`` (or a :class:`fedtheory.verdict.Measured`, whose ``scale`` sets the
        rounding floor where the value can be rounding away from 0), or with ``replicates``
        ``measure(**values, replicates=R, seed=s) -> [R]`` (i.i.d. replicates; the family
        compares their mean's 95% confidence interval).
    ranges : dict, optional
        ``name -> (low, high)``: the box searched for a parameter (inside its domain);
        integer parameters are searched over the integers of their box.
    fixed : dict, optional
        ``name -> value``: held fixed; keys that are not parameters of the theorem are
        passed to ``measure`` only (a dimension, a number of clients...).
    replicates : int, optional
        Monte-Carlo replicates per point (at least 2); ``None``: ``measure`` is exact.
    description : str, optional
        The instances and what is measured (default: the boxes).
    tightness : str, optional
        What is proved about the worst ratio (default: the proved ``supremum`` when given,
        else that no closed form for the worst case is known).
    supremum : float, optional
        The proved supremum of measured / bound, if one is proved.

    Examples
    --------
    >>> from fedtheory.bounds import fedau
    >>> from fedtheory.tightness import search
    >>> def weight_error(p, K_cut, t):  # exact E[(p omega_t - 1)^2] of FedAU's Algorithm 2
    ...     return fedau.weight_error_exact(p, K_cut, t + 1)[t]
    >>> family = theorem_family(
    ...     fedau.theorem3_per_round, weight_error, ranges={"t": (1, 20), "K_cut": (1, 4)}
    ... )
    >>> search(family, budget=30, seed=0).counterexample is None
    True
    """
    from fedtheory.bounds.boxes import parameter_box
    from fedtheory.bounds.judgement import Judge

    judge = Judge(theorem, measure, owner=_OWNER).upper_bound()
    unknown = [name for name in ranges if name not in theorem.parameters]
    if unknown:
        raise ParameterError(
            f"The 'ranges' parameter of {_OWNER} must name parameters of {theorem.title} "
            f"({', '.join(theorem.parameters)}). Got {unknown} instead."
        )
    free = [p for p in theorem.parameters if p not in fixed]
    boxes = {p: parameter_box(p, theorem.notation[p], ranges, _OWNER) for p in free}
    integers = tuple(
        Integer(p, int(b.low), int(b.high), theorem.notation[p].meaning or p)
        for p, b in boxes.items()
        if b.integer
    )
    reals = tuple(Real(p, b.low, b.high) for p, b in boxes.items() if not b.integer)

    def evaluate(ints, x, seed) -> Measurement:
        values = {**fixed, **ints, **{r.name: float(v) for r, v in zip(reals, x, strict=True)}}
        return _judged_measurement(judge, values, values, replicates=replicates, seed=seed)

    shown = ", ".join(f"{p} in [{b.low:g}, {b.high:g}]" for p, b in boxes.items()) + "".join(
        f", {k} = {v}" for k, v in fixed.items()
    )
    return Family(
        theorem,
        description if description is not None else shown,
        integers,
        lambda ints: reals,
        evaluate,
        monte_carlo=replicates is not None,
        tightness=tightness
        if tightness is not None
        else (
            "no closed form for the worst case is known"
            if supremum is None
            else f"proved supremum of measured / bound: {supremum:g}"
        ),
        supremum=supremum,
    )


@declare(family=Instance(Family))
def register(family: Family) -> Family:
    """Add ``family`` to ``fedtheory.tightness.FAMILIES`` under its key (a user family may
    replace a user family of the same key, never a catalogue one); returns it."""
    from fedtheory.tightness.families import CATALOGUE_KEYS, FAMILIES

    if family.key in CATALOGUE_KEYS and FAMILIES[family.key] is not family:
        raise ParameterError(
            f"The 'family' parameter of register must have a key outside the catalogue's "
            f"{sorted(CATALOGUE_KEYS)} (give your theorem its own key). Got {family.key!r} "
            "instead."
        )
    FAMILIES[family.key] = family
    return family


@declare(path=Location(suffixes=(".py",), exists=True))
def load_families(path) -> list[str]:
    """Import the Python file ``path``, which registers families (:func:`register`), with
    its folder on ``sys.path``; return the keys it registered, each family marked with
    ``path`` (a saved search names the file and :func:`fedtheory.tightness.reproduce`
    loads it again)."""
    from fedtheory.io import import_file
    from fedtheory.tightness.families import FAMILIES

    before = {k: f for k, f in FAMILIES.items()}
    import_file(path, "load_families", "fedtheory_user_families_")
    added = [k for k, f in FAMILIES.items() if before.get(k) is not f]
    for key in added:
        FAMILIES[key] = replace(FAMILIES[key], module=str(path))
    return added


def _family_of(data, owner: str) -> Family:
    """The family a saved search ran on (its ``key``, ``scale`` and ``module``)."""
    from fedtheory.tightness.families import FAMILIES

    key = data.get("key") if isinstance(data, Mapping) else None
    if key not in FAMILIES and isinstance(data, Mapping) and data.get("module"):
        load_families(data["module"])
    if key not in FAMILIES:
        raise ParameterError(
            f"The 'saved' parameter of {owner} must be a saved search of a registered family "
            f"({sorted(FAMILIES)}, or one whose 'module' registers it). Got "
            f"{str(data)[:80]!r} instead."
        )
    family = FAMILIES[key]
    return family if data.get("scale", 1.0) == 1.0 else scaled(family, data["scale"])
