"""The seed corpus (``python fuzz/run.py --make-seeds`` writes it to ``fuzz/corpus/<target>/seed-*``).

Completions in each format's own syntax: the family's ``EXAMPLES`` and demo completion, the
parse goldens (``tests/golden/parse/*/<format>.txt``; glm-effort reads glm's, the same syntax),
and what the template writes for a few assistant messages after the generation prompt, under
every option set. Prompts: the prompt goldens and a few conversations rendered by every format.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import harness

import codec
from codec.registry import FORMATS

NOW = datetime(2026, 11, 30)
GOLDEN = harness.ROOT / "tests" / "golden"

_CALL = {
    "id": "call_abc123",
    "type": "function",
    "function": {
        "name": "search",
        "arguments": {
            "query": "late dinner <b>",
            "exact": True,
            "filters": {"tags": ["food", "open late"], "limit": 3},
        },
    },
}
_WEATHER = {"name": "get_weather", "arguments": {"city": "São Paulo", "days": 3, "units": "C"}}
_CODE = {"name": "run_code", "arguments": {"code": "print('{x}')\n", "timeout": 1.5}}
ASSISTANT: list[dict[str, Any]] = [
    {"role": "assistant", "reasoning_content": "The user wants weather.\nCall the tool.",
     "content": "Let me check.", "tool_calls": [{"id": "call_0", "type": "function", "function": _WEATHER},
                                                {"id": "call_1", "type": "function", "function": _CODE}]},
    {"role": "assistant", "reasoning_content": "Think about it", "content": "It is sunny: {\"a\": [1, 2]} < 3"},
    {"role": "assistant", "content": "", "tool_calls": [_CALL]},
    {"role": "assistant", "content": "Plain answer with <tags> and naïve “quotes”."},
]  # fmt: skip

CONVERSATIONS: list[list[dict[str, Any]]] = [
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Weather in Paris?"},
     *harness.HISTORY[1:], {"role": "assistant", "content": "21 degrees."}, {"role": "user", "content": "Thanks"}],
    [{"role": "user", "content": "Search for dinner"}, ASSISTANT[2],
     {"role": "tool", "tool_call_id": "call_abc123", "content": "[\"Casa\", \"Tasca\"]"}],
    [{"role": "user", "content": "hi"}, ASSISTANT[1], {"role": "user", "content": "more <think> please"}],
]  # fmt: skip

CHUNKINGS = (b"", b"\x01", b"\x03\x07", b"\xf3\x01\x10\x0f")  # never a NUL: it ends the text


def _index(fmt: str, options: dict[str, Any]) -> int:
    sets = harness.option_sets(fmt)
    return sets.index(options) if options in sets else 0


def _rendered_completions(fmt: str) -> Iterator[tuple[str, int]]:
    c = codec.load(fmt)
    history = [{"role": "user", "content": "Go."}]
    for index, options in enumerate(harness.option_sets(fmt)):
        options = dict(options)
        previous = options.pop("history", None)
        before = previous or history
        for message in ASSISTANT:
            try:
                prompt = c.render(before, tools=harness.TOOLS, now=NOW, **options)
                full = c.render(
                    [*before, message], tools=harness.TOOLS, add_generation_prompt=False, now=NOW, **options
                )
            except codec.CodecError:
                continue
            if full.startswith(prompt) and len(full) > len(prompt):
                yield full[len(prompt) :], index


def _completions(fmt: str) -> Iterator[bytes]:
    spec = FORMATS[fmt]
    examples = spec.examples
    texts = [(examples.one_call, 0), (examples.two_calls, 0), (examples.code_head, 0),
             (examples.code_head + "x = {'a': 1}\nprint(x)" + examples.code_tail, 0),
             (examples.typing_trap, 0), (spec.demo.completion, _index(fmt, dict(spec.demo.options)))]  # fmt: skip
    golden_name = "glm" if fmt == "glm-effort" else fmt
    for path in sorted((GOLDEN / "parse").glob(f"*/{golden_name}.txt")):
        options = json.loads(path.with_suffix(".json").read_text()).get("options", {})
        texts.append((path.read_text(encoding="utf-8"), _index(fmt, options)))
    texts += list(_rendered_completions(fmt))
    seen = set()
    for number, (text, index) in enumerate(texts):
        data = harness.encode(fmt, text, index, CHUNKINGS[number % len(CHUNKINGS)])
        if data not in seen:
            seen.add(data)
            yield data


def _prompts() -> Iterator[bytes]:
    for path in sorted((GOLDEN / "prompt").glob("*/*.prompt.txt")):
        yield path.read_bytes()
    for fmt in codec.formats():
        c = codec.load(fmt)
        for number, messages in enumerate(CONVERSATIONS):
            sets = harness.option_sets(fmt)
            options = dict(sets[number % len(sets)])
            options.pop("history", None)
            for tools in (harness.TOOLS, None):
                with contextlib.suppress(codec.CodecError):
                    yield c.render(messages, tools=tools, now=NOW, **options).encode()


def seeds(target: str) -> list[bytes]:
    found = _prompts() if target == harness.PROMPT_TARGET else _completions(target[len(harness.PARSE_PREFIX) :])
    return list(dict.fromkeys(found))
