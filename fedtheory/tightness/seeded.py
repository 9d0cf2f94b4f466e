"""Hypothesis draws that depend on the seed alone.

Hypothesis's generator draws about 5% of its choices from a pool of constants, and the pool
holds the literals of every *local* module loaded so far (a source checkout's modules, never
an installed package's). With it, the same seed gives other examples once another module has
been imported, in a checkout and in an installed copy, or in a copy without some papers. The
searches and checks of fedtheory draw without that pool: :func:`no_constant` is the
generator's constant draw that never draws one, and :func:`seed_only_draws` applies it to
every draw made inside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock


def no_constant(self, choice_type, constraints, *, p: float = 0.05) -> None:
    """``HypothesisProvider._maybe_draw_constant`` that never draws a constant: the choice
    is drawn from the seeded generator as any other."""
    return None


@contextmanager
def seed_only_draws() -> Iterator[None]:
    """Inside it, Hypothesis draws no constant (the draws of ``@given`` and ``find`` depend on
    their seed alone); the generator is restored on leaving."""
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    with mock.patch.object(HypothesisProvider, "_maybe_draw_constant", no_constant):
        yield
