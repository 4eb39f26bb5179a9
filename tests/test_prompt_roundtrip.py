"""The prompt round trip, per format (docs/architecture.md, invariants 2 and 3), as hypothesis properties:

- ``parse_prompt(render(c)) == canonical(c)``: the prompt gives back exactly what the format keeps;
- ``render(parse_prompt(p)) == p``: and that is enough to write the same prompt again;
- the completion delta: render the history with the generation prompt, and with the final
  assistant message; the difference, up to the model's stop token, parses to that message's
  canonical form.

Every format of the registry is tested; ``completion_after`` and ``expected_reply`` state the
completion delta once, for every format, and ``test_parse_properties`` uses them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

import codec
from codec.engine.grammar import compiled
from codec.models import TextPart
from codec.registry import FORMATS
from codec.strategies import dates, render_cases

SLOW = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
MADE_UP = "made_up_"
"""The prefix of the ids the parser is told to make up for calls written without one."""


def made_up_id(index: int) -> str:
    return f"{MADE_UP}{index}"


def completion_after(
    c: codec.Codec, history: list[Any], message: Any, tools: Any, now: datetime, options: dict[str, Any]
) -> str | None:
    """What the template adds for ``message`` after ``history`` and its generation prompt, or
    None where it cannot say (a render error, or a prompt that the history with the message does
    not start with: ``prefix_check`` says why).

    The model stops at a stop token (``FormatSpec.stop_tokens``): white space the template
    writes after the last one separates turns and is no part of the completion (Gemma's new
    line after ``<turn|>``). Where there is no generation prompt, the model goes on in the turn
    the history ended in (Gemma after a tool result), and white space the template writes
    first joins two messages of that turn: the model does not write it either. White space the
    message's content starts with, written as it is (DeepSeek-V3.1 writes a reply after a tool
    result with nothing before it), is the model's own and stays."""
    message = as_written(c, history, message, tools, now, options)
    try:
        prompt = c.render(history, tools=tools, now=now, **options)
        bare = c.render(history, tools=tools, add_generation_prompt=False, now=now, **options)
        full = c.render([*history, message], tools=tools, add_generation_prompt=False, now=now, **options)
    except codec.RenderError:
        return None
    if not full.startswith(prompt):
        return _after_prefilled_thought(c, prompt, bare, full)
    completion = full[len(prompt) :]
    ends = [completion.rfind(token) + len(token) for token in c.stop_tokens if token in completion]
    if ends and completion[max(ends) :].isspace():
        completion = completion[: max(ends)]
    if prompt != bare or _own_white_space(c, history, message, tools, now, options, prompt, completion):
        return completion
    return completion.lstrip()


def _after_prefilled_thought(c: codec.Codec, prompt: str, bare: str, full: str) -> str | None:
    """The completion where the template writes a reply's empty thought shorter than the
    generation prompt pre-fills it (``FormatSpec.reply_thought_close``: DeepSeek-V3.2's prompt
    ends ``<think></think>``, its reply reads ``</think>answer``): the reply after that marker,
    up to the stop token; ``None`` for any other template, or where they differ otherwise."""
    if c.spec.reply_thought_close is None or not full.startswith(bare):
        return None
    close = compiled(c.spec.grammar).display(c.spec.reply_thought_close)
    generation, written = prompt[len(bare) :], full[len(bare) :]
    if not generation.endswith(close) or close not in written:
        return None
    completion = written[written.index(close) + len(close) :]
    ends = [completion.rfind(token) + len(token) for token in c.stop_tokens if token in completion]
    return completion[: max(ends)] if ends and completion[max(ends) :].isspace() else completion


REPLY_REASONING = "The user asked; I answer."
"""The thought a reply is given where its template writes it only with one (``as_written``)."""
_REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


def as_written(
    c: codec.Codec, history: list[Any], message: Any, tools: Any, now: datetime, options: dict[str, Any]
) -> Any:
    """The reply a model writes for ``message``: the message itself, or, where the template
    writes it after its generation prompt only with a thought (MiniMax-M2's prompt opens
    ``<think>``, and the template writes that only around reasoning), the message with one."""
    if (
        not isinstance(message, dict)
        or message.get("role") != "assistant"
        or any(k in message for k in _REASONING_KEYS)
    ):
        return message
    thinking = {**message, "reasoning_content": REPLY_REASONING}
    try:
        prompt = c.render(history, tools=tools, now=now, **options)
        plain = c.render([*history, message], tools=tools, add_generation_prompt=False, now=now, **options)
        written = c.render([*history, thinking], tools=tools, add_generation_prompt=False, now=now, **options)
    except codec.RenderError:
        return message
    return thinking if not plain.startswith(prompt) and written.startswith(prompt) else message


def _own_white_space(
    c: codec.Codec,
    history: list[Any],
    message: Any,
    tools: Any,
    now: datetime,
    options: dict[str, Any],
    prompt: str,
    completion: str,
) -> bool:
    """Whether ``completion`` starts with the white space of the message's content, written as
    it is: the same message without it is written as the rest of the completion."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content[:1].isspace() or not completion.startswith(content[:1]):
        return False
    lead = len(content) - len(content.lstrip())
    trimmed = {**message, "content": content.lstrip()}
    try:
        again = c.render([*history, trimmed], tools=tools, add_generation_prompt=False, now=now, **options)
    except codec.RenderError:
        # Without it the message cannot be written (Mistral refuses an empty answer): the white
        # space is its own when a visible character in its place is written in its place.
        marked = {**message, "content": "_" * lead + content[lead:]}
        try:
            again = c.render([*history, marked], tools=tools, add_generation_prompt=False, now=now, **options)
        except codec.RenderError:
            return False
        return again.startswith(prompt) and again[len(prompt) :].startswith("_" * lead + completion[lead:])
    return again.startswith(prompt) and again[len(prompt) :].startswith(completion[lead:])


def expected_reply(
    c: codec.Codec, messages: Sequence[Any], tools: Any, now: datetime, options: dict[str, Any]
) -> codec.AssistantMessage:
    """The last message of ``canonical(messages)``, as a completion gives it back (the reply
    as the model writes it: ``as_written``)."""
    messages = [*messages[:-1], as_written(c, list(messages[:-1]), messages[-1], tools, now, options)]
    canonical = c.canonical(messages, tools=tools, add_generation_prompt=False, now=now, **options)
    if canonical.add_generation_prompt:  # an empty last turn reads as the generation prompt (glm-effort)
        return codec.AssistantMessage()
    expected = canonical.messages[-1]
    assert isinstance(expected, codec.AssistantMessage)
    if expected.content == "":
        # A template that cannot print an answer without content keeps "" in prompts (Solar);
        # a completion's empty answer is no answer (None), as in every format.
        expected = expected.model_copy(update={"content": None})
    if expected.reasoning == "":
        # Likewise reasoning: a template that writes an empty analysis for "" (gpt-oss's
        # `"thinking" in message`) keeps "" in prompts; a completion's empty reasoning is none.
        expected = expected.model_copy(update={"reasoning": None})
    if c.spec.bare_think_close and expected.reasoning is not None and not expected.reasoning.strip():
        # A template that writes no reasoning as a bare `</think>` writes reasoning of only
        # white space as an empty think block (GLM-4.7), which a prompt keeps as blank
        # reasoning; in a completion that block is empty reasoning, which is none.
        expected = expected.model_copy(update={"reasoning": None})
    if isinstance(expected.content, tuple) and len(expected.content) == 1:
        # A prompt may keep text as a one-part list (glm-effort's control tags: a canonical rule
        # about re-rendering); a completion's text is just text.
        [part] = expected.content
        assert isinstance(part, TextPart), "a completion's content has no media"
        expected = expected.model_copy(update={"content": part.text})
    return expected


def with_ids_of(
    reply: codec.AssistantMessage, expected: codec.AssistantMessage, completion: str, fmt: str | None = None
) -> codec.AssistantMessage:
    """``reply`` (parsed with ``made_up_id``) with the expected id on each call the completion
    wrote without one; an id the completion holds must have been read, not made up — unless the
    format writes it where a stream cannot read it (``FormatSpec.unread_call_id``, ``fmt``'s)."""
    unread = fmt is not None and FORMATS[fmt].unread_call_id is not None
    calls = []
    for call, wanted in zip(reply.tool_calls, expected.tool_calls, strict=False):
        if call.id is not None and call.id.startswith(MADE_UP):
            assert unread or wanted.id is None or wanted.id not in completion, "the call's id was written, not read"
            call = call.model_copy(update={"id": wanted.id})
        calls.append(call)
    return reply.model_copy(update={"tool_calls": tuple(calls)})


def _render(
    c: codec.Codec, messages: list[Any], tools: Any, generation: bool, now: Any, options: dict[str, Any]
) -> str:
    try:
        return c.render(messages, tools=tools, add_generation_prompt=generation, now=now, **options)
    except codec.RenderError:
        assume(False)  # input this format cannot express at all is render's business, not ours
        raise


def _again(c: codec.Codec, conversation: codec.Conversation) -> str:
    return c.render(
        list(conversation.messages),
        tools=list(conversation.tools) or None,
        add_generation_prompt=conversation.add_generation_prompt,
        **conversation.options,
    )


@pytest.mark.parametrize("fmt", codec.formats())
def test_parse_prompt_gives_the_canonical_conversation_and_renders_back(fmt: str) -> None:
    c = codec.load(fmt)

    @SLOW
    @given(case=render_cases(fmt), now=dates())
    def check(case: Any, now: Any) -> None:
        prompt = _render(c, case.messages, case.tools, case.add_generation_prompt, now, case.options)
        parsed = c.parse_prompt(prompt)
        expected = c.canonical(
            case.messages, tools=case.tools, add_generation_prompt=case.add_generation_prompt, now=now, **case.options
        )
        assert parsed == expected
        assert _again(c, parsed) == prompt

    check()


@pytest.mark.parametrize("fmt", codec.formats())
def test_completion_delta_parses_to_the_canonical_message(fmt: str) -> None:
    c = codec.load(fmt)

    @SLOW
    @given(case=render_cases(fmt, reply=True), now=dates())
    def check(case: Any, now: Any) -> None:
        messages = case.messages
        # The conversation ends with a reply: an assistant message with text (a model writes
        # text, not media placeholders).
        assert messages[-1]["role"] == "assistant" and not isinstance(messages[-1].get("content"), list)
        history = messages[:-1]
        assume(any(m["role"] == "user" for m in history))
        completion = completion_after(c, history, messages[-1], case.tools, now, case.options)
        assume(completion is not None)
        assert completion is not None
        expected = expected_reply(c, messages, case.tools, now, case.options)
        reply = c.parse(
            completion, tools=case.tools, strict=True, history=history, id_factory=made_up_id, **case.options
        )
        assert with_ids_of(reply, expected, completion, fmt) == expected

    check()
