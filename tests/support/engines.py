"""What the engine plugin tests share: completions of every format, a tokenizer that knows the
format's markers, the ways an engine cuts output into deltas, and a client's rebuild of a reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import codec
from codec.engine.grammar import special_tokens
from codec.registry import FORMATS

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_code",
            "description": "Run Python.",
            "parameters": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
        },
    },
]
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris, then Rome?"}]
CODE = 'print("a <b> c")\nfor i in range(3):\n    print(i)'


def cases() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(format, case, completion, options) for every format of the registry: its examples with
    the default options, and its demo completion with the demo's options. A stop token at the
    end is left out, as engines leave it out of the text they parse."""
    found = []
    for name, spec in FORMATS.items():
        examples = spec.examples
        found += [
            (name, "one_call", examples.one_call, {}),
            (name, "two_calls", examples.two_calls, {}),
            (name, "code", examples.code_head + CODE + examples.code_tail, {}),
            (name, "demo", spec.demo.completion, dict(spec.demo.options)),
        ]
        answer = _answer(name)
        if answer is not None:
            found.append((name, "answer", answer, {}))
    return [(name, case, _unstopped(name, text, options), options) for name, case, text, options in found]


def _answer(fmt: str) -> str | None:
    """A reply with reasoning and an answer and no call, as the template writes it after the
    generation prompt, without the markers that end the turn (the model ends it with a stop
    token, which the engine leaves out); ``None`` where the template writes it otherwise."""
    reply = {"role": "assistant", "reasoning_content": "The user wants a forecast.", "content": "Sunny, 18 C."}
    renderer = codec.load(fmt)
    before = renderer.render(MESSAGES, tools=TOOLS)
    after = renderer.render([*MESSAGES, reply], tools=TOOLS, add_generation_prompt=False)
    if not after.startswith(before):
        return None
    completion = after[len(before) :].rstrip()
    while ender := next((m for m in special_tokens(FORMATS[fmt].grammar) if completion.endswith(m)), None):
        completion = completion.removesuffix(ender).rstrip()
    return completion


def _unstopped(fmt: str, completion: str, options: dict[str, Any]) -> str:
    """The completion without a stop token at its end, nor a marker there whose loss changes
    nothing a client sees (a block's closer the parse does without: DeepSeek's end of the calls
    block, Kimi's end of the calls section): the last delta must carry something, or losing it
    could not be noticed. A stop token that closes a call (gpt-oss's ``<|call|>``) stays, as
    such a marker does: without it the call is unfinished (an engine that drops it must say the
    model stopped, ``finish_reason="stop"``)."""
    for stop in FORMATS[fmt].stop_tokens:
        shorter = completion.removesuffix(stop)
        if (
            _seen(expected(fmt, shorter, options))["tool_calls"]
            == _seen(expected(fmt, completion, options))["tool_calls"]
        ):
            completion = shorter
    markers = sorted(special_tokens(FORMATS[fmt].grammar), key=len, reverse=True)
    # White space at the end counts as such a marker (MiniMax's new line after `</invoke>`,
    # which belongs to the block's closer, left out above).
    while (ender := next((m for m in markers if completion.endswith(m)), None) or _blank_end(completion)) is not None:
        shorter = completion[: -len(ender)]
        if _seen(expected(fmt, shorter, options)) != _seen(expected(fmt, completion, options)):
            break
        completion = shorter
    # So does a last character the parse does without (Llama 4's `]`, which it inserts where the
    # list ends with the output).
    while len(completion) > 1 and _seen(expected(fmt, completion[:-1], options)) == _seen(
        expected(fmt, completion, options)
    ):
        completion = completion[:-1]
    return completion


def _blank_end(text: str) -> str | None:
    """The white space ``text`` ends with, if any."""
    trimmed = text.rstrip()
    return text[len(trimmed) :] if len(trimmed) < len(text) else None


def _seen(reply: dict[str, Any]) -> dict[str, Any]:
    """What a client sees of a reply, but the ids codec makes anew at each parse."""
    return {key: value for key, value in reply.items() if key != "ids"}


class MarkerTokenizer:
    """A tokenizer for tests: each of the format's markers is one special token, other text
    goes in tokens of up to three characters. ``decode`` is exact, as vLLM's detokenizer is
    with special tokens kept."""

    def __init__(self, fmt: str) -> None:
        self.markers = special_tokens(FORMATS[fmt].grammar)
        self._split = re.compile("(" + "|".join(map(re.escape, self.markers)) + ")")
        self.vocab: dict[str, int] = {marker: index for index, marker in enumerate(self.markers)}
        self.all_special_tokens = list(self.markers)
        self.eos_token_id = 0

    def _id(self, piece: str) -> int:
        return self.vocab.setdefault(piece, len(self.vocab))

    def tokens(self, text: str) -> list[str]:
        pieces: list[str] = []
        for part in self._split.split(text):
            if part in self.vocab and part in self.markers:
                pieces.append(part)
            else:
                pieces += [part[i : i + 3] for i in range(0, len(part), 3)]
        return pieces

    def encode(self, text: str, add_special_tokens: bool = False, **_: Any) -> list[int]:
        return [self._id(piece) for piece in self.tokens(text)]

    def decode(self, ids: Sequence[int] | int, skip_special_tokens: bool = False, **_: Any) -> str:
        pieces = {index: piece for piece, index in self.vocab.items()}
        ids = [ids] if isinstance(ids, int) else ids
        return "".join(pieces[i] for i in ids if not (skip_special_tokens and pieces[i] in self.markers))

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def convert_tokens_to_ids(self, tokens: str | list[str]) -> int | list[int]:
        if isinstance(tokens, str):
            return self._id(tokens)
        return [self._id(token) for token in tokens]

    def __len__(self) -> int:
        return len(self.vocab)


# How an engine hands the output over: one token per delta, several, or all at once.
SPLITS = {"one_token": 1, "three_tokens": 3, "whole": 0}


def deltas(tokenizer: MarkerTokenizer, completion: str, per_delta: int) -> Iterator[list[int]]:
    """The token ids of each delta."""
    ids = tokenizer.encode(completion)
    step = per_delta or len(ids) or 1
    for start in range(0, len(ids), step):
        yield ids[start : start + step]


def expected(fmt: str, completion: str, options: dict[str, Any]) -> dict[str, Any]:
    """codec's own parse of the completion, as a client sees it."""
    reply = codec.load(fmt).parse(completion, tools=TOOLS, history=MESSAGES, **options)
    return {
        "reasoning": reply.reasoning or None,
        "content": reply.content or None,
        "tool_calls": [(call.name, call.arguments_json) for call in reply.tool_calls],
        "ids": [call.id for call in reply.tool_calls],
    }


def model_written_ids(fmt: str, completion: str, options: dict[str, Any]) -> bool:
    """Whether the calls carry ids the model wrote (two parses agree on them), so that an
    engine must pass them on unchanged."""
    first, second = (expected(fmt, completion, options)["ids"] for _ in range(2))
    return bool(first) and first == second


class Rebuilt:
    """A reply rebuilt from streamed deltas as an OpenAI client does: text joined, each call's
    id and name from its first delta, its arguments joined by index."""

    def __init__(self) -> None:
        self.reasoning = ""
        self.content = ""
        self.calls: dict[int, dict[str, str]] = {}

    def add(self, reasoning: str | None, content: str | None, tool_calls: Sequence[dict[str, Any]]) -> None:
        self.reasoning += reasoning or ""
        self.content += content or ""
        for call in tool_calls:
            slot = self.calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
            function = call.get("function") or {}
            slot["id"] = slot["id"] or call.get("id") or ""
            slot["name"] = slot["name"] or function.get("name") or ""
            slot["arguments"] += function.get("arguments") or ""

    def reply(self) -> dict[str, Any]:
        calls = [self.calls[index] for index in sorted(self.calls)]
        return {
            "reasoning": self.reasoning or None,
            "content": self.content or None,
            "tool_calls": [(call["name"], call["arguments"]) for call in calls],
            "ids": [call["id"] for call in calls],
        }


def same_reply(got: dict[str, Any], want: dict[str, Any], ids_matter: bool) -> None:
    """Assert ``got`` is ``want``: the same text, calls and arguments JSON (byte for byte), and
    the same ids when the model wrote them."""
    assert (got["reasoning"], got["content"]) == (want["reasoning"], want["content"])
    assert got["tool_calls"] == want["tool_calls"]
    for _, arguments in got["tool_calls"]:
        json.loads(arguments)
    if ids_matter:
        assert got["ids"] == want["ids"]
    assert all(got["ids"]), "every call needs an id"
