"""Hypothesis profiles, and the throw-away format of the new-format checklist.

Profiles, chosen with the HYPOTHESIS_PROFILE environment variable:

- ``default``: fast, for the edit-test loop;
- ``ci``: derandomized (the same examples every run, so CI is reproducible), 100 examples per
  property and per format (the per-format properties run for every registered format, so their
  cost grows with each family: CI's 15-minute budget); the render-parity property keeps 300
  (``tests/test_render_parity.py``), the number it needs to meet every template branch;
- ``thorough``: many more random examples, for long local runs;
- ``mutation``: few examples, derandomized, for mutation testing (``docs/mutation.md``): every
  mutant meets the same examples, and a surviving mutant's full test run stays short.

``pytest --with-throwaway-format`` registers ``THROWAWAY`` (GLM's registry entry under another
name, with no model ids) before the tests are collected. The generic tests parametrize over
``codec.formats()`` at collection time, so they run for it too, as they would for a new family:
``tests/test_new_format_checklist.py`` runs them that way and checks that they did.
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from hypothesis import HealthCheck, settings

from codec import memo, registry

# Conversations are large composite draws; generating them is slow but not a bug.
_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile("default", max_examples=60, deadline=None, suppress_health_check=_SLOW_DATA)
settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, suppress_health_check=_SLOW_DATA)
settings.register_profile(
    "mutation", max_examples=20, derandomize=True, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.register_profile("thorough", max_examples=3000, deadline=None, suppress_health_check=_SLOW_DATA)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

THROWAWAY_OPTION = "--with-throwaway-format"
THROWAWAY = dataclasses.replace(registry.FORMATS["glm"], name="glm-copy", model_ids=(), model_family="glm-copy")
"""A format that only the tests know: an existing template and grammar under a new name."""


@pytest.fixture(autouse=True, scope="module")
def _fresh_memos_under_mutation() -> None:
    """Under mutmut (``docs/mutation.md``) each mutant's tests run in a process forked from one
    whose memos are full: a mutant in a compiled grammar, a primed parser or a call head would
    never run. Emptying them before each test module makes the code run again."""
    if os.environ.get("MUTANT_UNDER_TEST"):
        memo.clear_all()


@pytest.fixture(autouse=True)
def _fresh_memos_for_mutmut_s_map() -> None:
    """mutmut first runs every test once (``MUTANT_UNDER_TEST=stats``) to learn which tests
    reach each function. With the memos emptied only per module, the code that fills one
    (compiling a grammar, finding a call head) would be credited to the first test of each
    module alone, and only that test would meet its mutants; emptied before every test here,
    each test that needs the code is credited with it."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        memo.clear_all()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        THROWAWAY_OPTION,
        action="store_true",
        help=f"register the throw-away format {THROWAWAY.name!r}: the generic tests run for it too",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(THROWAWAY_OPTION):
        registry.register(THROWAWAY)


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.getoption(THROWAWAY_OPTION):
        registry.unregister(THROWAWAY.name)
