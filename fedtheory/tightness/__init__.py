r"""Tightness and counterexample search for upper bounds, the catalogue's and your own.

For an upper bound and a family of instances (``FAMILIES``, one per catalogue key whose
measured side is cheap; :func:`theorem_family` for your own theorem;
:func:`strategy_family` for instances a hypothesis strategy draws), :func:`search` looks
for the instance that maximises measured / bound (hypothesis-guided draws, CMA-ES, then
Nelder-Mead) and returns a :class:`SearchResult`: the worst ratio, the instance attaining it
(in the paper's symbols), whether the bound is *attained* there, the proved supremum where
one is known and, if the ratio exceeds 1 inside the hypotheses beyond rounding, a shrunk
counterexample; ``save`` writes it as a reproducible JSON and :func:`reproduce` re-evaluates
it. :func:`scaled` multiplies a bound by a factor (a deliberately false statement to test
the search on); a family always judges the theorem it holds, so
``dataclasses.replace(FAMILIES[key], theorem=mine)`` searches ``mine``.

Command line: ``fedtheory tightness KEY [--module FILE.py] [--budget N] [--seed S]
[--scale F] [--out FILE]``.

Importing this package is light (no torch, no sympy): the families and the search load on
first use.
"""

from importlib import import_module

_LAZY = {
    "DEFAULT_BUDGET": "engine",
    "Point": "engine",
    "SearchResult": "engine",
    "reproduce": "engine",
    "search": "engine",
    "engine": None,
    "FAMILIES": "families",
    "families": None,
    "Evaluation": "family",
    "Family": "family",
    "Integer": "family",
    "Measurement": "family",
    "Real": "family",
    "scaled": "family",
    "family": None,
    "load_families": "custom",
    "register": "custom",
    "theorem_family": "custom",
    "custom": None,
    "strategy_family": "drawn",
    "drawn": None,
}

__all__ = sorted(n for n, m in _LAZY.items() if m is not None)


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'fedtheory.tightness' has no attribute {name!r}")
    module = import_module(f"fedtheory.tightness.{_LAZY[name] or name}")
    return module if _LAZY[name] is None else getattr(module, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
