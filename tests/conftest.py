"""Hypothesis profiles, chosen with the HYPOTHESIS_PROFILE environment variable.

- ``default``: fast, for the edit-test loop;
- ``ci``: derandomized (the same examples every run, so CI is reproducible) and at least 300
  examples per property — the render-parity properties need that many to meet every template
  branch;
- ``thorough``: many more random examples, for long local runs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Conversations are large composite draws; generating them is slow but not a bug.
_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "default", max_examples=60, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.register_profile(
    "ci", max_examples=300, derandomize=True, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
