"""Hypothesis draws that depend on the seed alone.

Hypothesis's generator draws about 5% of its choices from a pool of constants, and the pool
holds the literals of every *local* module loaded so far (a source checkout's modules, never
an installed package's). With it, the same seed gives other examples once another module has
been imported, in a checkout and in an installed copy, or in a copy without some papers. The
searches and checks of fedtheory draw without that pool: :func:`provider` is the generator
that never draws a constant (for a ``ConjectureData`` of one's own) and
:func:`seed_only_draws` makes every draw inside it (``@given``) draw none.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from unittest import mock


def _no_constant(self, choice_type, constraints, *, p: float = 0.05) -> None:
    """``HypothesisProvider._maybe_draw_constant`` that never draws a constant: the choice
    is drawn from the seeded generator as any other."""
    return None


@cache
def provider() -> type:
    """Hypothesis's generator (``HypothesisProvider``) without the constants' pool."""
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    return type("SeedOnly", (HypothesisProvider,), {"_maybe_draw_constant": _no_constant})


@contextmanager
def seed_only_draws() -> Iterator[None]:
    """Inside it, Hypothesis draws no constant (the draws of ``@given`` depend on their seed
    alone); its generator is restored on leaving."""
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    with mock.patch.object(HypothesisProvider, "_maybe_draw_constant", _no_constant):
        yield
