"""Input as real clients send it (docs/input.md): openai SDK dumps with their null fields, the
``developer`` role, ``name`` on user and system messages, llama.cpp's ``tool_responses``, and
options meant for another model (``unknown_options="ignore"``).

Where a template reads what the client sent, the prompt is compared byte for byte with
transformers' ``apply_chat_template`` given the same dicts; where it cannot, the test checks the
documented mapping, and that ``canonical`` still equals ``parse_prompt(render(...))``.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime
from typing import Any

import pytest
from openai.types.chat import (
    ChatCompletionMessage,
    ChatCompletionMessageCustomToolCall,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_audio import ChatCompletionAudio
from openai.types.chat.chat_completion_message import Annotation, AnnotationURLCitation, FunctionCall

import codec
from codec._resources import read_text
from codec.registry import FORMATS
from codec.strategies import RenderCase
from support.calls import call_id
from support.reference import reference_render

NOW = datetime(2026, 3, 1, 9, 30)
FORMAT_NAMES = codec.formats()


def _call_dump(fmt: str | None = None) -> dict[str, Any]:
    """An assistant turn with one tool call, as ``ChatCompletionMessage.model_dump()`` gives it
    (``fmt``: its id as that format's template takes one)."""
    call = ChatCompletionMessageFunctionToolCall(
        id=call_id(fmt, "call_1") if fmt else "call_1",
        type="function",
        function={"name": "get_weather", "arguments": '{"city": "Paris"}'},
    )
    return ChatCompletionMessage(role="assistant", content=None, tool_calls=[call]).model_dump()


def _answer_dump() -> dict[str, Any]:
    return ChatCompletionMessage(role="assistant", content="It is 18 C in Paris.").model_dump()


def _sdk_history(fmt: str | None = None) -> list[dict[str, Any]]:
    user = ChatCompletionUserMessageParam(role="user", content="Weather in Paris?")
    own_id = call_id(fmt, "call_1") if fmt else "call_1"
    result = ChatCompletionToolMessageParam(role="tool", tool_call_id=own_id, content="18 C")
    thanks = ChatCompletionUserMessageParam(role="user", content="Thanks.")
    return [dict(user), _call_dump(fmt), dict(result), _answer_dump(), dict(thanks)]


def _template_form(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client hands transformers: the same dicts, with arguments decoded (templates
    iterate them as a mapping)."""
    decoded = copy.deepcopy(messages)
    for message in decoded:
        for call in message.get("tool_calls") or ():
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return decoded


def _reference(fmt: str, messages: list[dict[str, Any]], **options: Any) -> str:
    return reference_render(fmt, RenderCase(messages, None, dict(options), True), NOW)


def _names_developer(fmt: str) -> bool:
    """The test's own reading of the template: does its code compare a role with 'developer'?"""
    return re.search(r"""['"]developer['"]""", read_text("templates", FORMATS[fmt].template)) is not None


def _round_trips(fmt: str, messages: list[Any]) -> None:
    chosen = codec.load(fmt)
    assert chosen.parse_prompt(chosen.render(messages, now=NOW)) == chosen.canonical(messages, now=NOW)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_sdk_dumps_render_as_transformers_renders_them(fmt: str) -> None:
    """History straight from ``ChatCompletionMessage.model_dump()`` — null refusal, annotations,
    audio, function_call and tool_calls — renders byte for byte as transformers renders it."""
    history = _sdk_history(fmt)
    assert history[3]["refusal"] is None and history[3]["tool_calls"] is None  # the SDK's shape
    assert codec.load(fmt).render(history, now=NOW) == _reference(fmt, _template_form(history))
    _round_trips(fmt, history)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("refusal", "I can't help with that."),
        (
            "annotations",
            [
                Annotation(
                    type="url_citation",
                    url_citation=AnnotationURLCitation(
                        end_index=1, start_index=0, title="t", url="https://example.com"
                    ),
                )
            ],
        ),
        ("audio", ChatCompletionAudio(id="audio_1", data="AAAA", expires_at=0, transcript="hi")),
        ("function_call", FunctionCall(name="get_weather", arguments="{}")),
    ],
)
def test_a_set_field_no_template_prints_is_refused(field: str, value: Any) -> None:
    """A value in one of those fields would be lost: ``RenderError`` names the field and the
    message, in every format."""
    dump = ChatCompletionMessage(role="assistant", content="hi", **{field: value}).model_dump()
    history = [{"role": "user", "content": "hello"}, dump]
    for fmt in FORMAT_NAMES:
        with pytest.raises(codec.RenderError, match=f"'{field}' is set") as caught:
            codec.load(fmt).render(history, now=NOW)
        assert caught.value.message_index == 1


def test_empty_annotations_are_accepted() -> None:
    dump = ChatCompletionMessage(role="assistant", content="hi", annotations=[]).model_dump()
    assert codec.load("glm").render([{"role": "user", "content": "x"}, dump]) == codec.load("glm").render(
        [{"role": "user", "content": "x"}, {"role": "assistant", "content": "hi"}]
    )


def test_a_custom_tool_call_is_refused_by_name() -> None:
    call = ChatCompletionMessageCustomToolCall(id="c1", type="custom", custom={"name": "grep", "input": "x"})
    dump = ChatCompletionMessage(role="assistant", content=None, tool_calls=[call]).model_dump()
    with pytest.raises(codec.RenderError, match="tool call of type 'custom'") as caught:
        codec.load("gemma4").render([{"role": "user", "content": "x"}, dump])
    assert caught.value.message_index == 1


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_developer_role_per_template(fmt: str) -> None:
    """A template that names the developer role gets the message as sent (as transformers
    passes it); any other gets it as a system message, and ``canonical`` says so."""
    developer = {"role": "developer", "content": "Answer in French."}
    history = [developer, *_sdk_history(fmt)]
    chosen = codec.load(fmt)
    prompt = chosen.render(history, now=NOW)
    native = _names_developer(fmt)
    as_sent = _template_form(history)
    as_system = [{**developer, "role": "system"}, *as_sent[1:]]
    assert prompt == _reference(fmt, as_sent if native else as_system)
    # A template may name the role and write nothing of it (FormatSpec.writes_developer).
    written = FORMATS[fmt].writes_developer
    assert ("Answer in French." in prompt) is written
    _round_trips(fmt, history)
    kept = chosen.canonical(history, now=NOW).messages
    if not written:
        assert kept[0].content != "Answer in French."
    elif FORMATS[fmt].system_in_user:  # written inside the last user message, read back as its text
        last_user = [message for message in kept if message.role == "user"][-1]
        assert isinstance(last_user.content, str) and last_user.content.startswith("Answer in French.")
    else:
        assert kept[0].role == "system"
    rules = {loss.rule for loss in chosen.explain_losses(history, now=NOW) if loss.message_index == 0}
    assert ("developer_as_system" in rules) is not native
    dropped = {loss.rule for loss in chosen.explain_losses(history, now=NOW) if loss.message_index is None}
    assert ("developer_dropped" in dropped) is not written  # a rule that drops a message names no index


@pytest.mark.parametrize("fmt", [fmt for fmt in FORMAT_NAMES if _names_developer(fmt)])
def test_a_template_naming_developer_gets_it_unchanged_anywhere(fmt: str) -> None:
    """Later in the conversation too, byte for byte as transformers passes it through."""
    history = [*_sdk_history(), {"role": "developer", "content": "Now answer in French."}]
    assert codec.load(fmt).render(history, now=NOW) == _reference(fmt, _template_form(history))


@pytest.mark.parametrize("fmt", [fmt for fmt in FORMAT_NAMES if not _names_developer(fmt)])
def test_mapping_developer_matters_where_the_template_has_no_such_role(fmt: str) -> None:
    """Passed on unchanged, such a template would lose the instructions (transformers' prompt
    has no trace of them): the mapping is what keeps them."""
    history = [{"role": "developer", "content": "Answer in French."}, {"role": "user", "content": "Hi"}]
    try:
        unmapped = _reference(fmt, history)
    except Exception:  # the template itself refuses the role: mapping it is no worse
        unmapped = ""
    rendered = codec.load(fmt).render(history, now=NOW)
    assert "Answer in French." in rendered
    if "Answer in French." in unmapped:  # a template that writes an unknown role's text bare, outside any turn
        assert unmapped != rendered
    else:
        assert "Answer in French." not in unmapped


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_user_and_system_names_reach_the_template_and_are_not_printed(fmt: str) -> None:
    system = ChatCompletionSystemMessageParam(role="system", content="Be brief.", name="ops")
    user = ChatCompletionUserMessageParam(role="user", content="Hi", name="ann")
    named = [dict(system), dict(user)]
    unnamed = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    chosen = codec.load(fmt)
    assert chosen.render(named, now=NOW) == _reference(fmt, named)
    _round_trips(fmt, named)
    losses = [loss for loss in chosen.explain_losses(named, now=NOW) if loss.rule == "names_not_printed"]
    if FORMATS[fmt].prints_names:  # the names are written (Kimi K2.5's headers) and read back
        assert chosen.render(named, now=NOW) != chosen.render(unnamed, now=NOW)
        assert "ops" in chosen.render(named, now=NOW) and "ann" in chosen.render(named, now=NOW)
        assert chosen.canonical(named, now=NOW).messages[0].name == "ops"
        assert losses == []
    else:
        assert chosen.render(named, now=NOW) == chosen.render(unnamed, now=NOW)
        assert [loss.message_index for loss in losses] == [0, 1]
    reads_name = codec.load(fmt, template="{% for m in messages %}{{ m.role }}={{ m.name }};{% endfor %}")
    assert reads_name.render(named) == "system=ops;user=ann;"


def test_a_special_token_in_a_name_is_refused() -> None:
    with pytest.raises(codec.RenderError, match="special token '<\\|user\\|>' in name"):
        codec.load("glm").render([{"role": "user", "content": "Hi", "name": "<|user|>"}])


def _responses_history(responses: list[dict[str, Any]], fmt: str | None = None) -> list[dict[str, Any]]:
    history = _sdk_history(fmt)
    history[2] = {"role": "tool", "tool_call_id": history[1]["tool_calls"][0]["id"], "tool_responses": responses}
    return history


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_tool_responses_become_content_where_the_template_does_not_read_them(fmt: str) -> None:
    """No bundled template reads ``tool_responses`` on a tool message (Gemma's reads them on an
    assistant message only): content is made from them, and they reach the template too."""
    responses = [{"name": "get_weather", "response": {"temperature": 18, "unit": "C"}}]
    history = _responses_history(responses, fmt)
    derived = {**history[2], "content": '{"temperature": 18, "unit": "C"}', "name": "get_weather"}
    expected = _reference(fmt, _template_form([*history[:2], derived, *history[3:]]))
    assert codec.load(fmt).render(history, now=NOW) == expected
    _round_trips(fmt, history)
    losses = codec.load(fmt).explain_losses(history, now=NOW)
    assert [loss.message_index for loss in losses if loss.rule == "tool_responses_not_printed"] == [2]


def test_tool_responses_reach_a_template_that_reads_them() -> None:
    template = "{% for r in messages[0].tool_responses %}{{ r.name }}:{{ r.response.temperature }};{% endfor %}"
    responses = [{"name": "a", "response": {"temperature": 18}}, {"name": "b", "response": {"temperature": 9}}]
    reads = codec.load("gemma4", template=template)
    assert reads.render([{"role": "tool", "tool_responses": responses}]) == "a:18;b:9;"


def test_several_tool_responses_become_one_json_array_and_a_string_stays_text() -> None:
    several = [{"name": "a", "response": 1}, {"name": "b", "response": "two"}]
    message = codec.ToolMessage.model_validate({"role": "tool", "tool_responses": several})
    assert json.loads(message.content if isinstance(message.content, str) else "") == several
    assert message.name is None  # two names: none is the message's
    one = codec.ToolMessage.model_validate({"role": "tool", "tool_responses": [{"name": "a", "response": "ok"}]})
    assert (one.content, one.name) == ("ok", "a")
    given = {"role": "tool", "content": "kept", "tool_responses": several}
    assert codec.ToolMessage.model_validate(given).content == "kept"


def test_a_tool_response_without_response_is_refused() -> None:
    with pytest.raises(codec.RenderError, match=r"tool_responses\[0\] must be an object with a 'response' key"):
        codec.load("glm").render([{"role": "user", "content": "x"}, {"role": "tool", "tool_responses": [{"a": 1}]}])


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_unknown_options_error_by_default_and_are_dropped_on_ignore(fmt: str) -> None:
    chosen = codec.load(fmt)
    history = [{"role": "user", "content": "Hi"}]
    router_options = {"not_read_by_any_template": 1}
    with pytest.raises(codec.RenderError, match="unknown option 'not_read_by_any_template'"):
        chosen.render(history, now=NOW, **router_options)
    plain = chosen.render(history, now=NOW)
    assert chosen.render(history, now=NOW, unknown_options="ignore", **router_options) == plain
    completion = "Hello there."
    expected = chosen.parse(completion)
    assert chosen.parse(completion, unknown_options="ignore", **router_options) == expected
    stream = chosen.stream(unknown_options="ignore", **router_options)
    stream.feed(completion)
    stream.close()
    assert stream.message == expected
    canonical = chosen.canonical(history, now=NOW, unknown_options="ignore", **router_options)
    assert canonical == chosen.canonical(history, now=NOW)
    assert chosen.explain_losses(history, now=NOW, unknown_options="ignore", **router_options) == (
        chosen.explain_losses(history, now=NOW)
    )
    check = chosen.prefix_check(history, completion, now=NOW, unknown_options="ignore", **router_options)
    assert check == chosen.prefix_check(history, completion, now=NOW)
    for call in (chosen.parse, chosen.stream, chosen.canonical, chosen.explain_losses, chosen.prefix_check):
        arguments: tuple[Any, ...] = {
            chosen.parse: (completion,),
            chosen.stream: (),
            chosen.prefix_check: (history, completion),
        }.get(call, (history,))
        with pytest.raises(codec.RenderError, match="unknown option"):
            call(*arguments, **router_options)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_ignore_keeps_the_options_the_template_reads(fmt: str) -> None:
    reads_colour = codec.load(fmt, template="{{ colour }}")
    assert reads_colour.render([], colour="red", size=3, unknown_options="ignore") == "red"


@pytest.mark.parametrize("bad", ["warn", None, True])
def test_a_wrong_unknown_options_value_is_a_clear_error(bad: Any) -> None:
    chosen = codec.load("glm")
    with pytest.raises(codec.RenderError, match="unknown_options must be 'error' or 'ignore'"):
        chosen.render([{"role": "user", "content": "Hi"}], unknown_options=bad)
    with pytest.raises(codec.RenderError, match="unknown_options must be 'error' or 'ignore'"):
        chosen.parse("Hi", unknown_options=bad)
