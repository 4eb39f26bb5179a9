"""Hypothesis strategies for conversations, tools and template options (needs ``hypothesis``).

Everything is drawn in the *template form* — what ``apply_chat_template`` is given: OpenAI dicts
with ``None`` keys left out, ``arguments`` as objects, reasoning under both ``reasoning_content``
and ``reasoning``. It is written out here rather than produced by ``codec.models``, so a test
comparing codec with transformers on these inputs does not reuse the code under test.

Text never holds a special token of any bundled format (render refuses those; see
``special_token_texts`` for text that holds one). It does hold their pieces, markup-like text,
unicode and odd whitespace.

Each strategy is built once per set of arguments (``functools.cache``): hypothesis checks a new
strategy object when it is first drawn from, and a conversation draws from hundreds, so
rebuilding them per draw took most of a property's time.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from functools import cache

from hypothesis import strategies as st

from codec._strategy_values import Json, arguments, json_values, names, reserved_tokens, texts, tools
from codec.engine.grammar import special_tokens
from codec.formats import ANY_TEXT
from codec.registry import FORMATS

__all__ = [
    "RenderCase",
    "arguments",
    "call_id",
    "content",
    "conversations",
    "dates",
    "json_values",
    "option_names",
    "options",
    "render_cases",
    "reserved_tokens",
    "special_token_texts",
    "texts",
    "tools",
]


@dataclasses.dataclass(frozen=True)
class RenderCase:
    """One ``render`` call: its messages, tools, template options and generation-prompt flag."""

    messages: list[dict[str, Json]]
    tools: list[dict[str, Json]] | None
    options: dict[str, Json]
    add_generation_prompt: bool


_MEDIA_PARTS = (
    {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    {"type": "image"},
    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    {"type": "audio_url", "audio_url": {"url": "https://example.com/a.mp3"}},
    {"type": "video_url", "video_url": {"url": "https://example.com/v.mp4"}},
    {"type": "video"},
)


@cache
def content(*, parts: bool, controls: bool = False) -> st.SearchStrategy[Json]:
    """Message content: a string, or (when ``parts``) a list of text and media parts."""
    text = texts(controls=controls)
    if not parts:
        return text
    part = st.one_of(text.map(lambda value: {"type": "text", "text": value}), st.sampled_from(_MEDIA_PARTS))
    return st.one_of(text, st.lists(part, min_size=1, max_size=4))


@st.composite
def _calls(draw: st.DrawFn, next_id: list[int]) -> list[dict[str, Json]]:
    """Calls numbered from ``next_id[0]``; ``next_id[1]``: the length their ids must have (0: any)."""
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        next_id[0] += 1
        function = {"name": draw(names()), "arguments": draw(arguments())}
        number = f"call{next_id[0]:0{next_id[1] - 4}d}" if next_id[1] else f"call_{next_id[0]}"
        calls.append({"id": number, "type": "function", "function": function})
    return calls


@st.composite
def _assistant(draw: st.DrawFn, parts: bool, controls: bool, calls: list[dict[str, Json]] | None) -> dict[str, Json]:
    message: dict[str, Json] = {"role": "assistant"}
    if not calls or draw(st.booleans()):
        message["content"] = draw(content(parts=parts, controls=controls))
    if draw(st.booleans()):
        reasoning = draw(texts(controls=controls))
        message["reasoning_content"] = reasoning
        message["reasoning"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return message


@st.composite
def _result(draw: st.DrawFn, parts: bool, call: dict[str, Json]) -> dict[str, Json]:
    message: dict[str, Json] = {"role": "tool", "tool_call_id": call["id"]}
    message["content"] = draw(st.one_of(content(parts=parts), texts(min_size=1)))
    if draw(st.booleans()):
        message["name"] = call["function"]["name"]
    return message


@st.composite
def _tool_round(draw: st.DrawFn, parts: bool, controls: bool, next_id: list[int]) -> list[dict[str, Json]]:
    """An assistant turn with calls, then their results in any order (GLM re-orders them)."""
    calls = draw(_calls(next_id))
    results = [draw(_result(parts, call)) for call in draw(st.permutations(calls))]
    return [draw(_assistant(parts, controls, calls)), *results]


@st.composite
def conversations(draw: st.DrawFn, fmt: str, *, controls: bool = False, reply: bool = False) -> list[dict[str, Json]]:
    """A conversation for format ``fmt``: system, user turns, tool rounds and answers; now and
    then an arbitrary order of messages (consecutive users, a leading tool result, ...).

    ``reply``: it ends with an answer as a model writes it — an assistant message whose
    content, if any, is text (no media) — so the rest is the history that answer follows.
    """
    parts = not FORMATS[fmt].string_content_only
    next_id = [0, FORMATS[fmt].call_id_length or 0]  # ids of the length the template requires
    user = content(parts=parts, controls=controls).map(lambda c: {"role": "user", "content": c})
    system = content(parts=parts, controls=controls).map(lambda c: {"role": "system", "content": c})
    if draw(st.integers(0, 9)) == 0:
        any_message = st.one_of(user, system, _assistant(parts, controls, None), _tool_round(parts, controls, next_id))
        drawn = draw(st.lists(any_message, min_size=1, max_size=6))
        messages = [m for item in drawn for m in (item if isinstance(item, list) else [item])]
    else:
        messages = [draw(system)] if draw(st.booleans()) else []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 7)) == 0:
                messages.append(draw(system))
            messages.append(draw(user))
            for _ in range(draw(st.integers(0, 2))):
                messages.extend(draw(_tool_round(parts, controls, next_id)))
            if draw(st.booleans()):
                messages.append(draw(_assistant(parts, controls, None)))
    if reply:
        if messages and messages[-1]["role"] == "assistant":
            messages.pop()
        messages.append(draw(_assistant(False, controls, None)))
    return messages


def call_id(fmt: str, drawn: str, name: str, index: int) -> str:
    """The id a test gives a call it renders as a completion: ``drawn``; where a name shows
    only in an id of the format's shape, that (``FormatSpec.call_id``: Kimi K2.5's); where the
    template requires ids of one length, ``drawn``'s end, or it padded with ``x``, of that length
    (``FormatSpec.call_id_length``: Mistral v0.3's raises on any other)."""
    spec = FORMATS[fmt]
    if spec.call_id is not None:
        return spec.call_id(name, index)
    length = spec.call_id_length
    return drawn if length is None else drawn.ljust(length, "x")[-length:]


def _option_values(fmt: str) -> dict[str, st.SearchStrategy[Json]]:
    """The registry's values worth testing for each option of ``fmt``, as strategies."""
    return {
        name: st.one_of([texts(max_size=4) if value is ANY_TEXT else st.just(value) for value in values])
        for name, values in FORMATS[fmt].test_options.items()
    }


def option_names(fmt: str) -> frozenset[str]:
    """The options ``options(fmt)`` draws from."""
    return frozenset(FORMATS[fmt].test_options)


def options(fmt: str) -> st.SearchStrategy[dict[str, Json]]:
    """Template options for ``fmt``: any subset of the variables its template reads."""
    return st.fixed_dictionaries({}, optional=_option_values(fmt))


@st.composite
def render_cases(draw: st.DrawFn, fmt: str, *, controls: bool | None = None, reply: bool = False) -> RenderCase:
    """A whole ``render`` call for ``fmt``. ``controls`` (default: where the template reads
    control tags, glm-effort) mixes those tags into the text; ``reply``: the conversation ends
    with a model's answer (``conversations``)."""
    controls = FORMATS[fmt].control_tags if controls is None else controls
    least = 1 if FORMATS[fmt].empty_tools_block else 0  # an empty list only where it reads back
    tool_list = draw(st.one_of(st.none(), st.lists(tools(), min_size=least, max_size=3)))
    return RenderCase(
        messages=draw(conversations(fmt, controls=controls, reply=reply)),
        tools=tool_list,
        options=draw(options(fmt)),
        add_generation_prompt=draw(st.booleans()),
    )


def dates() -> st.SearchStrategy[datetime]:
    """The clock ``render(now=...)`` is given (Solar prints the date)."""
    return st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 12, 31))


@st.composite
def special_token_texts(draw: st.DrawFn, fmt: str) -> tuple[str, str]:
    """Text holding a special token of ``fmt`` somewhere, and that token."""
    token = draw(st.sampled_from(special_tokens(FORMATS[fmt].grammar)))
    return draw(texts()) + token + draw(texts()), token
