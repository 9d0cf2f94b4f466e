"""The edge values every kind's fuzz draws besides its own: an integer past int64
(:data:`HUGE_INT`), one of 401 digits (:data:`HUGE_DIGITS`) and the smallest subnormal
float (:data:`DENORMAL`)."""

from __future__ import annotations

HUGE_INT = 2**70
"""An integer too large for the machine (an int64 overflows; no allocation can hold it)."""


DENORMAL = 5e-324
"""The smallest positive (subnormal) float: its reciprocal overflows."""


HUGE_DIGITS = 10**400
"""An integer of 401 digits: no float holds it (its conversion overflows), and no message
may overflow writing it."""
