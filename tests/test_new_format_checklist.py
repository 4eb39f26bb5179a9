"""The new-format checklist, run: a format added to the registry is tested by the generic tests
without editing them.

``pytest --with-throwaway-format`` registers a format that only the tests know (GLM's template
and grammar under the name ``glm-copy``: see tests/conftest.py) before collection. This test
runs the generic test files that way in a subprocess, selecting the throw-away format's tests,
and checks that they passed — and that they ran: every file, and each property, known failure,
linear-cost and CLI test below, has a test id for it, so an empty selection cannot pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import THROWAWAY, THROWAWAY_OPTION

ROOT = Path(__file__).resolve().parent.parent
GENERIC_FILES = [
    "tests/test_parse_properties.py",
    "tests/test_known_failures.py",
    "tests/test_linear.py",
    "tests/test_cli.py",
    "tests/test_parse_errors.py",
    "tests/test_prompt_roundtrip.py",
    "tests/test_scanner.py",
    "tests/test_render_errors.py",
    "tests/test_render_parity.py",
    "tests/test_roundtrip_command.py",
]
MUST_RUN = [
    "test_parse_properties.py::test_completion_round_trip",
    "test_parse_properties.py::test_chunking_invariance",
    "test_parse_properties.py::test_totality",
    "test_parse_properties.py::test_repairs_depend_on_text_not_on_chunks",
    "test_parse_properties.py::test_lenient_parse_keeps_every_word",
    "test_known_failures.py::test_two_complete_calls_in_one_chunk_are_both_kept_with_their_own_index",
    "test_known_failures.py::test_a_long_string_argument_streams_before_the_call_ends",
    "test_known_failures.py::test_streaming_and_batch_agree_on_types",
    "test_known_failures.py::test_special_tokens_never_leak_into_content",
    "test_known_failures.py::test_parallel_calls_to_one_tool_are_not_merged",
    "test_linear.py::test_function_calls_grow_linearly_with_the_argument",
    "test_cli.py::test_render_prints_exactly_what_render_returns",
    "test_cli.py::test_parse_prints_the_openai_message",
    "test_cli.py::test_stream_events_fold_to_the_parsed_message",
    "test_prompt_roundtrip.py::test_parse_prompt_gives_the_canonical_conversation_and_renders_back",
    "test_prompt_roundtrip.py::test_completion_delta_parses_to_the_canonical_message",
    "test_render_parity.py::test_render_matches_transformers",
    "test_roundtrip_command.py::test_bundled_templates_agree_with_their_grammars",
    "test_roundtrip_command.py::test_the_unmodified_template_passed_as_a_file_agrees",
]
_RESULT = re.compile(r"^tests/(\S+?)::(\w+)\[([^\]]*)\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)", re.MULTILINE)


def test_generic_tests_run_for_a_format_only_the_registry_knows() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-v",
            "-x",
            THROWAWAY_OPTION,
            "-k",
            THROWAWAY.name,
            *GENERIC_FILES,
        ],
        cwd=ROOT,
        env={**os.environ, "HYPOTHESIS_PROFILE": "default"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    results = [match.groups() for match in _RESULT.finditer(done.stdout)]
    mine = [(path, name, outcome) for path, name, ids, outcome in results if THROWAWAY.name in ids]
    assert mine and len(mine) == len(results), "only the throw-away format's tests were selected"
    assert {outcome for _, _, outcome in mine} == {"PASSED"}
    assert {f"tests/{path}" for path, _, _ in mine} == set(GENERIC_FILES)
    ran = {f"{path}::{name}" for path, name, _ in mine}
    assert set(MUST_RUN) <= ran, sorted(set(MUST_RUN) - ran)
