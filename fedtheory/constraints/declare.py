"""The decorator :func:`declare`: a public callable's parameters stated as
:class:`~fedtheory.constraints.kind.Constraint` objects, checked in declaration order
before the body runs, the body given the converted values; :func:`trusted` skips the
checks for arguments fedtheory built itself, :func:`record` declares a record's fields and
:func:`constraints_of` reads any declaration back (the fuzz is generated from it)."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator

import numpy as np

from fedtheory.constraints.kind import Constraint
from fedtheory.constraints.results import _non_finite, overflow
from fedtheory.constraints.vocabulary import VOCABULARY


def _owner(fn: Callable) -> str:
    """``Bernoulli`` for ``Bernoulli.__init__``, ``QuadraticProblem.grad``, ``local_sgd``."""
    return fn.__qualname__.rpartition("<locals>.")[2].removesuffix(".__init__")


_FACTORY = (
    inspect.signature(
        dataclasses.make_dataclass("_D", [("x", dict, dataclasses.field(default_factory=dict))])
    )
    .parameters["x"]
    .default
)
"""The default a dataclass's ``__init__`` receives for a field with a ``default_factory``
(the field is then built by the factory: nothing to check)."""


_TRUSTED = contextvars.ContextVar("fedtheory_trusted_arguments", default=False)


@contextlib.contextmanager
def trusted() -> Iterator[None]:
    """Within this context declared functions run without their checks: the simulator's
    rounds (:func:`fedtheory.sim.simulate`) call the algorithms' ``step``, the aggregators'
    ``weights`` and the problems' ``grad`` with arguments it built itself, every round, and
    checked them once at the entry (a check per call would cost more than the round)."""
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def checking() -> bool:
    """Whether declared checks run here (``False`` inside :func:`trusted`): a body's own
    check of a relation between its arguments is skipped where the caller built them."""
    return not _TRUSTED.get()


def declare(*names: str, finite_result: bool = False, **constraints: Constraint) -> Callable:
    """Declare a function's parameters (module docstring): each argument named is checked
    by its :class:`Constraint` before the body runs and replaced by its converted value.
    On a class (a dataclass record), its ``__init__`` is declared. ``names`` take their
    constraint from :data:`VOCABULARY`; ``finite_result=True`` also
    refuses a result holding NaN or inf (an overflow from finite input), naming the input
    of largest magnitude. A name the function takes through its ``**options`` (passed on to
    a parent's constructor) is checked when it is given."""
    constraints = {**{n: VOCABULARY[n] for n in names}, **constraints}

    def wrap(fn: Callable) -> Callable:
        if inspect.isclass(fn):  # a record (a dataclass): its generated __init__
            fn.__init__ = wrap(fn.__init__)
            return fn
        signature = inspect.signature(fn)
        options = next(  # a **options parameter: declared names it passes on are checked
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None
        )
        unknown = set(constraints) - set(signature.parameters)
        if unknown and options is None:  # a typo in a declaration fails at import
            raise TypeError(f"{fn.__qualname__} has no parameter {sorted(unknown)}")
        owner = _owner(fn)
        method = next(iter(signature.parameters), None) in ("self", "cls")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            if _TRUSTED.get():
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = bound.arguments
            where = owner
            if method and "self" in values:  # the instance's own class: Bernoulli.sample
                cls = type(values["self"]).__name__
                where = cls if fn.__name__ == "__init__" else f"{cls}.{fn.__name__}"
            passed_on = values.get(options, {}) if options is not None else {}
            for name, constraint in constraints.items():
                if name in unknown:  # passed on through **options, checked where given
                    if name in passed_on:
                        passed_on[name] = constraint.check(passed_on[name], name, where, values)
                    continue
                if values[name] is _FACTORY:  # a dataclass field's default_factory, not given
                    continue
                values[name] = constraint.check(values[name], name, where, values)
            if not finite_result:
                return fn(*bound.args, **bound.kwargs)
            with np.errstate(over="ignore", invalid="ignore"):  # refused just below
                out = fn(*bound.args, **bound.kwargs)
            if _non_finite(out):
                raise overflow(where, values)
            return out

        checked.__constraints__ = dict(constraints)
        return checked

    return wrap


def constraints_of(obj: object) -> dict[str, Constraint] | None:
    """The declared constraints of a function, a method or a class (its ``__init__``), or
    ``None`` where nothing is declared."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    target = getattr(target, "__func__", target)
    return getattr(target, "__constraints__", None)


def record(**constraints: Constraint) -> Callable:
    """Declare a (data)class's constructor parameters: ``@record(...)`` above ``@dataclass``
    is :func:`declare` on the class (kept for the records that use this name)."""
    return declare(**constraints)
