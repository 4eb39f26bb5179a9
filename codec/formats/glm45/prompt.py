"""Reads a GLM-4.5 or GLM-4.7 prompt's tree (``glm45.lark``, rule ``conversation``) into a
``Conversation``. What the prompt shows, literally::

    [gMASK]<sop><|system|>\\n# Tools…<tools>\\n{tool JSON}\\n</tools>…</tool_call><|system|>\\nsystem text
    <|user|>\\ntext<|assistant|>\\n<think>R</think>\\nanswer\\n<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>
    <|observation|>\\n<tool_response>\\nresult\\n</tool_response><|assistant|>

GLM-4.7 writes the same without the new lines, ``</think>`` alone for a turn without reasoning,
and ``<|assistant|><think>`` as its generation prompt. The new lines between markers belong to
the markers (the grammar's spellings); those next to text (``FormatSpec.header_break``: after a
system or user header, inside a tool result) are removed here. The tools block is the system
block that ends with the template's call example; each tool is one JSON line. Calls carry no
ids: they are numbered ``call_0``, ``call_1``, ... and a tool result takes the id of the call at
its position after its turn.

A thinking-off generation prompt reads as an empty last assistant turn: GLM-4.7's
``<|assistant|></think>`` always is one; GLM-4.5's ``<|assistant|>\\n<think></think>`` is one
when every user message ends with the ``/nothink`` the template then writes
(``FormatSpec.no_think_suffix``). ``canonical`` decides the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer, Tree

from codec.formats import RenderFn
from codec.formats._prompt import sequential_ids, text_of
from codec.formats.glm.prompt import typed_arguments
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage, UserMessage

if TYPE_CHECKING:
    from codec.registry import FormatSpec

# Reasoning of only white space, as GLM-4.7 reads back: the template writes any such reasoning
# as an empty think block (`reasoning_content.strip()`), and this one writes it again (`''` would
# be no reasoning, the bare closer).
BLANK_THOUGHT = " "


@dataclass
class _Block:
    kind: str
    text: str = ""
    reasoning: str | None = None  # None: no think block's text (GLM-4.7's bare ``</think>``)
    calls: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)
    example: bool = False


class _Tree(Transformer[Token, Any]):
    """One small method per rule of ``glm45.lark``'s prompt section."""

    def tools_example(self, _: list[Any]) -> str:
        return "example"

    def reasoning(self, children: list[Any]) -> str:
        return text_of(children, "REASONING")

    def argument(self, children: list[Any]) -> tuple[str, str]:
        return (text_of(children, "ARG_KEY"), text_of(children, "ARG_VALUE"))

    def tool_call(self, children: list[Any]) -> tuple[str, list[tuple[str, str]]]:
        return (text_of(children, "TOOL_NAME"), [c for c in children if isinstance(c, tuple)])

    def response(self, children: list[Any]) -> str:
        return text_of(children, "CONTENT")

    def system(self, children: list[Any]) -> _Block:
        return _Block("system", text_of(children, "CONTENT"), example="example" in children)

    def user(self, children: list[Any]) -> _Block:
        return _Block("user", text_of(children, "CONTENT"))

    def assistant(self, children: list[Any]) -> _Block:
        reasoning = next((c for c in children if isinstance(c, str) and not isinstance(c, Token)), None)
        calls = [c for c in children if isinstance(c, tuple)]
        return _Block("assistant", text_of(children, "CONTENT"), reasoning=reasoning, calls=calls)

    def observation(self, children: list[Any]) -> _Block:
        return _Block("observation", responses=[c for c in children if isinstance(c, str) and not isinstance(c, Token)])

    def generation(self, children: list[Any]) -> _Block:
        return _Block("generation", text="".join(str(c) for c in children[1:]))


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a GLM-4.5 or GLM-4.7 prompt tree."""
    blocks = [_unbroken(b, spec.header_break) for b in _Tree().transform(tree).children if isinstance(b, _Block)]
    tools, blocks = _tools(blocks)
    options: dict[str, Any] = {}
    generation = bool(blocks) and blocks[-1].kind == "generation"
    if generation:
        blocks = blocks[:-1]
    elif blocks and _thinking_off_prompt(blocks, spec):
        blocks, generation, options = blocks[:-1], True, {"enable_thinking": False}
        blocks = [_Block("user", without_suffix(b.text, spec)) if b.kind == "user" else b for b in blocks]
    if _earlier_reasoning(blocks, spec):
        options["clear_thinking"] = False
    messages = _messages(blocks, tools, spec)
    return Conversation(messages=tuple(messages), tools=tuple(tools), options=options, add_generation_prompt=generation)


def _unbroken(block: _Block, br: str) -> _Block:
    """The block without the template's ``header_break`` after its header (system, user) or
    around each result (``'\\n<tool_response>\\n' + m.content + '\\n</tool_response>'``)."""
    if not br or block.kind not in ("system", "user", "observation"):
        return block
    if block.kind == "observation":
        return _Block("observation", responses=[_trimmed(text, br, br) for text in block.responses])
    return _Block(block.kind, _trimmed(block.text, br, ""), example=block.example)


def _trimmed(text: str, head: str, tail: str) -> str:
    text = text[len(head) :] if text.startswith(head) else text
    return text[: len(text) - len(tail)] if tail and text.endswith(tail) else text


def _thinking_off_prompt(blocks: list[_Block], spec: FormatSpec) -> bool:
    """Whether the last block, an empty assistant turn, is the thinking-off generation prompt:
    GLM-4.7's ``</think>`` alone, or GLM-4.5's ``<think></think>`` after user messages that all
    end with ``/nothink``."""
    last = blocks[-1]
    if last.kind != "assistant" or last.text or last.calls:
        return False
    if spec.bare_think_close:
        return last.reasoning is None
    users = [b.text for b in blocks if b.kind == "user"]
    return last.reasoning == "" and bool(spec.no_think_suffix) and thinking_off_shown(users, spec)


def thinking_off_shown(user_texts: list[str], spec: FormatSpec) -> bool:
    """Whether the user messages all end with the text the template writes after each with
    thinking off (GLM-4.5's ``/nothink``)."""
    return all(text.endswith(spec.no_think_suffix) for text in user_texts)


def without_suffix(text: str, spec: FormatSpec) -> str:
    """A user message's text without the ``/nothink`` written after it."""
    suffix = spec.no_think_suffix
    return text[: -len(suffix)] if suffix and text.endswith(suffix) else text


def _earlier_reasoning(blocks: list[_Block], spec: FormatSpec) -> bool:
    """Whether a turn before the last user message shows its reasoning: only with
    ``clear_thinking`` false (GLM-4.7: ``{%- if ((clear_thinking is defined and not
    clear_thinking) or loop.index0 > ns.last_user_index) and reasoning_content -%}``)."""
    last_user = max((i for i, b in enumerate(blocks) if b.kind == "user"), default=-1)
    return any(b.kind == "assistant" and _reasoning(b, spec) is not None for b in blocks[: max(last_user, 0)])


def _tools(blocks: list[_Block]) -> tuple[list[dict[str, Any]], list[_Block]]:
    """The tools block: one tool as JSON per line between ``<tools>\\n`` and ``</tools>``
    (``{{ tool | tojson(ensure_ascii=False) }}``)."""
    for index, block in enumerate(blocks):
        if block.kind == "system" and block.example:
            listing = block.text.split("<tools>\n", 1)[1].rsplit("</tools>", 1)[0]
            tools = [json.loads(line) for line in listing.split("\n") if line]
            return tools, blocks[:index] + blocks[index + 1 :]
    return [], blocks


def _reasoning(block: _Block, spec: FormatSpec) -> str | None:
    if block.reasoning == "" and spec.bare_think_close:
        return BLANK_THOUGHT  # GLM-4.7 writes an empty think block only for blank reasoning
    return block.reasoning or None


def _messages(blocks: list[_Block], tools: list[dict[str, Any]], spec: FormatSpec) -> list[AnyMessage]:
    new_id = sequential_ids()
    messages: list[AnyMessage] = []
    for block in blocks:
        if block.kind == "system":
            messages.append(SystemMessage(content=block.text))
        elif block.kind == "user":
            messages.append(UserMessage(content=block.text))
        elif block.kind == "assistant":
            calls = tuple(
                ToolCall(id=new_id(name), name=name, arguments=typed_arguments(tools, name, pairs))
                for name, pairs in block.calls
            )
            reasoning = _reasoning(block, spec)
            messages.append(AssistantMessage(content=block.text or None, reasoning=reasoning, tool_calls=calls))
        else:
            messages += _results(block, messages)
    return messages


def _results(block: _Block, messages: list[AnyMessage]) -> list[ToolMessage]:
    previous = messages[-1] if messages else None
    calls = previous.tool_calls if isinstance(previous, AssistantMessage) else ()
    return [
        ToolMessage(content=text, tool_call_id=calls[i].id if i < len(calls) else None)
        for i, text in enumerate(block.responses)
    ]
