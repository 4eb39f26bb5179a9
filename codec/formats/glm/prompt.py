"""Reads a GLM prompt's tree (``glm.lark``, rule ``conversation``) into a ``Conversation``.

Serves ``glm`` and ``glm-effort``. What the prompt shows, literally::

    [gMASK]<sop><|system|>Reasoning Effort: Max<|system|>\\n# Tools…<tools>\\n{function JSON}\\n</tools>…
    <|system|>caller's system text<|user|>text<|assistant|><think>R</think>answer<tool_call>…
    <|observation|><tool_response>result</tool_response><|assistant|><think>

The first system block is the effort header when it is one the template writes (GLM: "Reasoning
Effort: Low/High/Max"; glm-effort: a persona); the tools block is the one that ends with the
template's call example. Calls carry no ids: they are numbered ``call_0``, ``call_1``, ... and a
tool result takes the id of the call at its position in the preceding assistant turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Tree

from codec.arguments.schema import is_plain_string, property_schema, tool_schema, type_text
from codec.engine.whole_prompt import prompt_tree
from codec.formats import RenderFn
from codec.formats._prompt import MediaRules, content_of, sequential_ids, text_of, wrap_tool
from codec.formats.glm.effort import control_as_parts
from codec.memo import memo
from codec.models import (
    AnyMessage,
    AssistantMessage,
    Conversation,
    MediaPart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from codec.registry import FormatSpec

HIDDEN_TOOL: dict[str, Any] = {"defer_loading": True}


@dataclass
class _Block:
    kind: str
    parts: list[str | MediaPart] = field(default_factory=list)
    reasoning: str | None = None
    calls: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    responses: list[list[str | MediaPart]] = field(default_factory=list)
    example: bool = False
    thinking: bool = False


class _Tree(MediaRules):
    """One small method per rule of ``glm.lark``'s prompt section."""

    def tools_example(self, _: list[Any]) -> str:
        return "example"

    def reasoning(self, children: list[Any]) -> tuple[str, str]:
        return ("reasoning", text_of(children, "REASONING"))

    def argument(self, children: list[Any]) -> tuple[str, str]:
        return (text_of(children, "ARG_KEY"), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> tuple[str, list[tuple[str, str]]]:
        return (text_of(children, "TOOL_NAME"), [c for c in children if isinstance(c, tuple)])

    def response(self, children: list[Any]) -> list[str | MediaPart]:
        return _parts(children)

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", _parts(children), example="example" in children)

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", _parts(children))

    def assistant(self, children: list[Any]) -> _Block:
        reasoning = next(c[1] for c in children if isinstance(c, tuple) and c[0] == "reasoning")
        calls = [c for c in children if isinstance(c, tuple) and c[0] != "reasoning"]
        return _Block("assistant", _parts(children), reasoning=reasoning, calls=calls)

    def observation(self, children: list[Any]) -> _Block:
        return _Block("observation", responses=[c for c in children if isinstance(c, list)])

    def generation(self, children: list[Any]) -> _Block:
        return _Block("generation", thinking=any(isinstance(c, Token) for c in children[1:]))


def _parts(children: list[Any]) -> list[str | MediaPart]:
    return [
        c if isinstance(c, MediaPart) else str(c)
        for c in children
        if isinstance(c, MediaPart) or (isinstance(c, Token) and c.type == "CONTENT")
    ]


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a GLM prompt tree (``render``: the format's own renderer, which
    tells which effort headers the template writes)."""
    blocks: list[_Block] = [b for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    options, blocks = _header(blocks, spec, render)
    tools, blocks = _tools(blocks)
    generation = blocks[-1] if blocks and blocks[-1].kind == "generation" else None
    if generation is not None:
        blocks = blocks[:-1]
    elif spec.control_tags and blocks and _empty_assistant(blocks[-1]):
        # `<|assistant|><think></think>` at the end is glm-effort's prompt with thinking off.
        blocks, generation = blocks[:-1], _Block("generation", thinking=False)
        options = {**options, "enable_thinking": False} if options else {"reasoning_effort": "0"}
    if spec.control_tags:
        options = _effort_mode(options, generation)
    messages = _messages(blocks, tools)
    if spec.control_tags:
        messages = [m.model_copy(update={"content": control_as_parts(m.content)}) for m in messages]
    return Conversation(
        messages=tuple(messages), tools=tuple(tools), options=options, add_generation_prompt=generation is not None
    )


def _header(blocks: list[_Block], spec: FormatSpec, render: RenderFn) -> tuple[dict[str, Any], list[_Block]]:
    """The effort header: the first block, if it is one the template writes."""
    if blocks and blocks[0].kind == "system" and not blocks[0].example:
        level = effort_headers(spec, render).get(str(content_of(blocks[0].parts)))
        if level is not None:
            return {"reasoning_effort": level}, blocks[1:]
    return {}, blocks


def _effort_mode(options: dict[str, Any], generation: _Block | None) -> dict[str, Any]:
    """glm-effort without a persona: the regular mode (it also drops the `<think>`)."""
    if "reasoning_effort" in options:
        return options
    return {"regular": True}


_EFFORT_HEADERS: dict[tuple[str, str], dict[str, str]] = memo({})


def effort_headers(spec: FormatSpec, render: RenderFn) -> dict[str, str]:
    """Header text -> the ``reasoning_effort`` value that writes it, by rendering each level
    (once per format and template)."""
    key = (spec.name, render([], add_generation_prompt=False))
    headers = _EFFORT_HEADERS.get(key)
    if headers is None:
        headers = {}
        for level in spec.effort_levels:
            prompt = render([], reasoning_effort=level, add_generation_prompt=False)
            blocks = prompt_blocks(spec, prompt)
            if blocks and blocks[0].kind == "system":
                headers.setdefault(str(content_of(blocks[0].parts)), level)
        if len(_EFFORT_HEADERS) >= 64:
            _EFFORT_HEADERS.clear()
        _EFFORT_HEADERS[key] = headers
    return headers


def prompt_blocks(spec: FormatSpec, prompt: str) -> list[_Block]:
    """The blocks of a prompt, before any interpretation."""
    return [b for b in _Tree().transform(prompt_tree(spec.grammar, prompt)).children if isinstance(b, _Block)]


def _tools(blocks: list[_Block]) -> tuple[list[dict[str, Any]], list[_Block]]:
    """The tools block: one function declaration as JSON per line between <tools> and </tools>."""
    for index, block in enumerate(blocks):
        if block.kind == "system" and block.example:
            text = str(content_of(block.parts))
            listing = text.split("<tools>\n", 1)[1].rsplit("</tools>", 1)[0]
            tools = [wrap_tool(json.loads(line)) for line in listing.split("\n") if line]
            # A block that lists no tool came from tools that were all deferred: one hidden
            # tool stands for them, so the block renders again (canonical does the same).
            return tools or [dict(HIDDEN_TOOL)], blocks[:index] + blocks[index + 1 :]
    return [], blocks


def _empty_assistant(block: _Block) -> bool:
    return block.kind == "assistant" and not block.reasoning and not block.parts and not block.calls


def _messages(blocks: list[_Block], tools: list[dict[str, Any]]) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for block in blocks:
        if block.kind == "system":
            messages.append(SystemMessage(content=content_of(block.parts)))
        elif block.kind == "user":
            messages.append(UserMessage(content=content_of(block.parts)))
        elif block.kind == "assistant":
            messages.append(_assistant(block, tools, new_id))
        else:
            messages += _results(block, messages)
    return messages


def _assistant(block: _Block, tools: list[dict[str, Any]], new_id: Any) -> AssistantMessage:
    calls = tuple(
        ToolCall(id=new_id(name), name=name, arguments=typed_arguments(tools, name, pairs))
        for name, pairs in block.calls
    )
    content = content_of(block.parts)
    return AssistantMessage(content=content or None, reasoning=block.reasoning or None, tool_calls=calls)


def typed_arguments(tools: list[dict[str, Any]], name: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """GLM's raw ``<arg_value>`` texts typed by the tool's schema."""
    parameters = tool_schema(tools, name)
    return {key: written_value(text, property_schema(parameters, key)) for key, text in pairs}


def retyped(tools: list[dict[str, Any]], call: ToolCall) -> dict[str, Any]:
    """A call's arguments as a prompt gives them back: each value written as the template
    writes it (``v | tojson(ensure_ascii=False) if v is not string else v``: GLM's
    ``<arg_value>``, GLM-4.5's, MiniMax-M2's ``<parameter>``) and typed again by the schema."""
    pairs = [
        (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in call.arguments.items()
    ]
    return typed_arguments(tools, call.name, pairs)


def written_value(text: str, schema: Any) -> Any:
    """What an ``<arg_value>`` text in a prompt stood for. The template writes a string raw and
    anything else with ``tojson``, whose output is canonical: text that reads as JSON but is not
    how ``tojson`` writes that value (``1e5``, ``{"a":1}``) was a string. A completion is read
    more loosely (``Codec.parse``): a model may well write ``1e5`` for a number."""
    if is_plain_string(schema):
        return text
    value = type_text(text, schema)
    if isinstance(value, str) or json.dumps(value, ensure_ascii=False) == text:
        return value
    return text


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=content_of(parts), tool_call_id=calls[i].id if i < len(calls) else None)
        for i, parts in enumerate(block.responses)
    ]
