"""Registered hypothesis profiles.

- ``ci`` (the default of the project's test command): derandomised, so a run is the same on
  every machine and a failure is reproduced by rerunning;
- ``dev``: random examples (a fresh exploration each run; failures are replayed from
  ``.hypothesis/``);
- ``thorough``: random and ten times more examples, for exploring a statement.

Choose one with ``HYPOTHESIS_PROFILE=NAME`` or ``settings.load_profile(NAME)``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

PROFILES = ("ci", "dev", "thorough")
DEFAULT_PROFILE = "ci"


def register_profiles() -> None:
    """Register the ``ci``, ``dev`` and ``thorough`` profiles with hypothesis."""
    quiet = [HealthCheck.too_slow]
    settings.register_profile(
        "ci", derandomize=True, max_examples=60, deadline=None, suppress_health_check=quiet
    )
    settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=quiet)
    settings.register_profile(
        "thorough", max_examples=600, deadline=None, suppress_health_check=quiet
    )
