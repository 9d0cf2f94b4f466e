"""Property testing of theorem statements: hypothesis strategies for instances with exact
constants (``strategies``) and registered hypothesis profiles (``profiles``).

Requires hypothesis (a dependency of fedtheory).
"""

from fedtheory.testing import strategies
from fedtheory.testing.profiles import DEFAULT_PROFILE, PROFILES, register_profiles

__all__ = ["DEFAULT_PROFILE", "PROFILES", "register_profiles", "strategies"]
