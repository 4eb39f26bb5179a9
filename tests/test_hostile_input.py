"""Hostile input: whatever a caller passes, a public call ends in a ``CodecError`` (the CLI in
``codec: error: ...`` and exit 2), never in a raw ``RecursionError``, ``TypeError`` or
``ValueError``, and never in the CLI's exit 70 ("internal error").

The cases below are what the search at the end of this file (and its hand-made forerunner) found
escaping; each failed before its fix. The search stays as a property, with a bounded number of
examples. ``NOW_CODEC_ERRORS`` lists what escaped once, in any module, each now a ``CodecError``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codec
from codec.chat_request import read_request
from codec.cli.main import main
from codec.cli.output import emit
from codec.errors import CodecError, RenderError
from codec.models import to_message, to_messages

FORMATS = codec.formats()
HUGE = 10**5000  # more digits than Python writes (sys.get_int_max_str_digits, 4300)


class _Huge(int):
    """``HUGE`` for hypothesis, which shows each value it draws: only the repr is changed, so
    ``str()`` and ``json.dumps`` still refuse it."""

    def __repr__(self) -> str:
        return "HUGE"


class _DeepList(list[Any]):
    """A list nested 10,000 deep for hypothesis, shown by name (its repr would recurse)."""

    def __repr__(self) -> str:
        return "DEEP_LIST"


class _DeepDict(dict[str, Any]):
    """A dict nested 10,000 deep for hypothesis, shown by name (its repr would recurse)."""

    def __repr__(self) -> str:
        return "DEEP_DICT"


def nested(depth: int, leaf: Any = "x", *, mapping: bool = False) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value} if mapping else [value]
    return value


DEEP_LIST = nested(10_000)
DEEP_DICT = nested(10_000, mapping=True)
USER = {"role": "user", "content": "What is the weather?"}


def calling(arguments: Any) -> list[dict[str, Any]]:
    """A user turn, then an assistant turn calling ``f`` with ``arguments``."""
    function = {"name": "f", "arguments": arguments}
    return [USER, {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": function}]}]


def refused(call: Callable[[], object], kind: type[CodecError] = RenderError) -> CodecError:
    with pytest.raises(kind) as caught:
        call()
    return caught.value


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("messages", [None, 3, 2.5])
@pytest.mark.parametrize("method", ["canonical", "explain_losses"])
def test_messages_that_are_no_list(name: str, messages: Any, method: str) -> None:
    error = refused(lambda: getattr(codec.load(name), method)(messages))
    assert f"messages must be a list of messages, got {type(messages).__name__}" in str(error)


def test_to_messages_refuses_a_single_message() -> None:
    assert "got dict" in str(refused(lambda: to_messages(USER)))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("response", [{1, 2}, object()])
def test_tool_responses_that_are_not_json(name: str, response: Any) -> None:
    messages = [USER, {"role": "tool", "tool_responses": [{"name": "f", "response": response}]}]
    error = refused(lambda: codec.load(name).render(messages))
    assert isinstance(error, RenderError) and error.message_index == 1
    assert "tool_responses are not JSON" in str(error)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("method", ["canonical", "explain_losses"])
def test_arguments_holding_an_integer_too_long_to_write(name: str, method: str) -> None:
    error = refused(lambda: getattr(codec.load(name), method)(calling({"n": HUGE})))
    assert isinstance(error, RenderError) and error.message_index == 1
    assert "more than 4300 digits" in str(error)


def test_arguments_as_json_text_with_a_number_too_long_to_read() -> None:
    error = refused(lambda: to_messages(calling('{"n": ' + "9" * 5000 + "}")))
    assert "arguments cannot be read" in str(error) and "(message 1)" in str(error)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("payload", [DEEP_DICT, {"url": HUGE}], ids=["deep", "huge"])
def test_a_media_payload_json_cannot_write(name: str, payload: Any) -> None:
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": payload}]}]
    error = refused(lambda: codec.load(name).canonical(messages))
    assert isinstance(error, RenderError) and error.message_index == 0
    assert "content.0.image_url: the image_url part's payload" in str(error)


def test_a_bad_content_part_is_named_not_the_string_branch() -> None:
    error = str(refused(lambda: to_message({"role": "user", "content": [{"type": "hologram"}]})))
    assert "at content.0:" in error and "'hologram'" in error
    assert "content.str" not in error


@pytest.mark.parametrize(
    ("results", "said"),
    [
        (5, "results must be a dict"),
        ("c1", "results must be a dict"),
        (None, "results must be a dict"),
        ({"c1": {1, 2}}, "is not JSON"),
        ({"c1": b"18 C"}, "is not JSON"),
        ({"c1": DEEP_DICT}, "nested deeper than"),
        ({"c1": [HUGE]}, "more than 4300 digits"),
    ],
    ids=["int", "str", "none", "set", "bytes", "deep", "huge"],
)
def test_tool_results_that_cannot_become_a_tool_message(results: Any, said: str) -> None:
    conversation = codec.Conversation().followed_by(*calling("{}"))
    assert said in str(refused(lambda: conversation.with_tool_results(results)))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("tools", [DEEP_DICT, HUGE, {"a": [HUGE]}], ids=["deep", "huge", "huge-inside"])
def test_an_error_about_a_value_too_large_to_show_is_still_raised(name: str, tools: Any) -> None:
    assert "too large to show" in str(refused(lambda: codec.load(name).render([USER], tools=tools)))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize(
    "tools",
    [{"a": 1}, "get_weather", 3, [1], [{"type": "function", "function": {"name": "f", "parameters": DEEP_DICT}}]],
    ids=["dict", "str", "int", "list-of-int", "deep"],
)
def test_canonical_checks_tools_as_render_does(name: str, tools: Any) -> None:
    refused(lambda: codec.load(name).canonical([USER], tools=tools))


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("value", [DEEP_DICT, HUGE, [HUGE]], ids=["deep", "huge", "huge-inside"])
def test_canonical_checks_option_values_as_render_does(name: str, value: Any) -> None:
    c = codec.load(name)
    option = min(c.options, default="no_such_option")  # a template without options: an unknown one
    with contextlib.suppress(CodecError):  # refused as render refuses it, or kept: never a raw error
        c.canonical([USER], **{option: value})


@pytest.mark.parametrize("value", [HUGE, DEEP_DICT], ids=["huge", "deep"])
@pytest.mark.parametrize("field", ["role", "tool call type"])
def test_an_unknown_role_or_call_type_too_large_to_show(value: Any, field: str) -> None:
    message = {"role": value} if field == "role" else {**calling("{}")[1], "tool_calls": [{"type": value}]}
    assert "too large to show" in str(refused(lambda: to_message(message)))


@pytest.mark.parametrize("value", [HUGE, DEEP_LIST], ids=["huge", "deep"])
@pytest.mark.parametrize(
    "body",
    [
        lambda v: {"tool_choice": v},
        lambda v: {"tool_choice": {"type": "function", "function": {"name": v}}},
        lambda v: {"reasoning_effort": v, "chat_template_kwargs": {"reasoning_effort": "low"}},
    ],
    ids=["tool_choice", "tool_choice-name", "reasoning_effort"],
)
def test_a_request_field_too_large_to_show(value: Any, body: Callable[[Any], dict[str, Any]]) -> None:
    name = next(name for name in FORMATS if "reasoning_effort" in codec.load(name).options)
    request = {"messages": [USER], **body(value)}
    error = refused(lambda: read_request(request, codec.load(name)))
    assert "too large to show" in str(error)


def test_load_of_a_path_holding_a_nul() -> None:
    assert "embedded null byte" in str(refused(lambda: codec.load(Path("chat\x00template.jinja"))))


@pytest.mark.parametrize("conversation", [3, {"messages": []}, [USER]])
def test_render_conversation_takes_a_conversation(conversation: Any) -> None:
    error = refused(lambda: codec.load(FORMATS[0]).render_conversation(conversation))
    assert "takes a codec.Conversation" in str(error)


def test_a_parsed_lone_surrogate_is_printed_as_an_escape(capsys: pytest.CaptureFixture[str]) -> None:
    """A model may write ``"\\ud800"`` in a JSON argument: UTF-8 cannot carry the lone
    surrogate it decodes to, so the event line writes it as the escape it came as."""
    emit([codec.ToolCallEnd(0, codec.ToolCall(id="c1", name="f", arguments={"city": "\ud800"}))])
    line = capsys.readouterr().out
    assert "\\ud800" in line
    assert json.loads(line)["call"]["function"]["arguments"] == '{"city": "\ud800"}'


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``codec ARGS`` in this process, which must fail as a usage error: its stderr."""
    try:
        status: object = main(list(args))
    except SystemExit as stop:  # argparse's own usage errors
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert "codec: error:" in err or "error: argument" in err, err
    assert "internal error" not in err
    return err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


DEEP_JSON = "[" * 100_000 + "]" * 100_000
LONG_NUMBER = "9" * 5000


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize(
    ("text", "said"),
    [
        (DEEP_JSON, "nested too deeply"),
        ('[{"role": "user", "content": "x", "x": ' + DEEP_JSON + "}]", "nested too deeply"),
        ('[{"role": "user", "content": ' + LONG_NUMBER + "}]", "too long to read"),
    ],
    ids=["deep", "deep-inside", "long-number"],
)
def test_cli_json_the_decoder_cannot_hold(
    name: str, text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "input.json", text)
    assert said in cli(capsys, "render", "-f", name, path)
    completion = write(tmp_path, "completion.txt", "hi")
    assert said in cli(capsys, "parse", "-f", name, "--history", path, completion)
    assert said in cli(capsys, "parse", "-f", name, "--tools", path, completion)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize(
    ("value", "said"),
    [(DEEP_JSON, "nested too deeply"), ("[" * 100_000, "nested too deeply"), (LONG_NUMBER, "too long to read")],
    ids=["deep", "deep-unclosed", "long-number"],
)
def test_cli_option_values_the_decoder_cannot_hold(
    name: str, value: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "input.json", json.dumps([USER]))
    assert said in cli(capsys, "render", "-f", name, "--option", f"enable_thinking={value}", path)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("tools", ["[1]", '["get_weather"]', "[null]", '{"tools": [[]]}'])
@pytest.mark.parametrize("command", ["grammar", "render", "parse"])
def test_cli_tools_that_are_not_objects(
    name: str, tools: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "tools.json", tools)
    inputs = {"grammar": [], "render": [write(tmp_path, "in.json", "[]")], "parse": [write(tmp_path, "c.txt", "")]}
    assert "tools[0] must be a JSON object" in cli(capsys, command, "-f", name, "--tools", path, *inputs[command])


def test_cli_template_config_the_decoder_cannot_hold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path, "tokenizer_config.json", '{"chat_template": ' + DEEP_JSON + "}")
    path = write(tmp_path, "input.json", json.dumps([USER]))
    assert "JSON too large to read" in cli(capsys, "render", "--template", config, path)


@pytest.mark.parametrize("name", FORMATS)
def test_cli_render_of_a_lone_surrogate(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "input.json", '[{"role": "user", "content": "\\ud800"}]')
    assert "lone surrogate, U+D800" in cli(capsys, "render", "-f", name, path)


# What still escapes as a raw exception, each in a module this change leaves to its owner.
# Once escapes, now the documented error in every format (issue 21, item 10).
NOW_CODEC_ERRORS: dict[str, Callable[[Any], object]] = {  # a codec.Codec, typed Any: wrong on purpose
    "parse(completion) of a non-str (api.parse)": lambda c: c.parse(3),
    "StreamParser.feed of bytes (engine)": lambda c: c.stream().feed(b"hi"),
    "parse(tools=) not a list (api._parser)": lambda c: c.parse("hi", tools=3),
    "Limits(max_depth=-HUGE): its error repr()s the value (limits.py)": lambda c: codec.Limits(max_depth=-HUGE),
    "parse(limits=) no Limits (api._stream / engine)": lambda c: c.parse(
        c.spec.demo.completion,
        limits=5,
        **c.spec.demo.options,
    ),
    "parse(id_factory=) not callable (engine)": lambda c: c.parse(
        c.spec.demo.completion,
        id_factory=5,
        **c.spec.demo.options,
    ),
    "Turn.follow_up(tool_results=) neither a dict nor a list (turn._tool_messages)": lambda c: c.prepare(
        [USER]
    ).follow_up("hi", 5),
    "constraint(tools=[1]) (constrain)": lambda c: c.constraint(tools=[1]),
    "canonical of a tool whose function is no object (formats/*/canonical)": lambda c: c.canonical(
        [USER], tools=[{"type": "function", "function": 1}]
    ),
    "canonical of a tool schema holding HUGE (formats/*/canonical json.dumps)": lambda c: c.canonical(
        [USER], tools=[{"type": "function", "function": {"name": "f", "parameters": {"maximum": HUGE}}}]
    ),
    "parse(**options) nested deep (renderer.generation_prompt's repr)": lambda c: c.parse(
        "hi", **{min(c.options, default="no_such_option"): DEEP_DICT}
    ),
    "render(unknown_options=[]) (renderer.select_options)": lambda c: c.render([USER], unknown_options=[]),
    "detect() of a lone surrogate: UnicodeEncodeError (detect._by_hash)": lambda c: codec.detect("\ud800"),
}


@pytest.mark.parametrize("case", NOW_CODEC_ERRORS)
def test_once_escapes_are_codec_errors(case: str) -> None:
    for name in FORMATS:
        with pytest.raises(CodecError):
            NOW_CODEC_ERRORS[case](codec.load(name))


# The search: hostile values in every place a message, a tool call or a tool result holds one.
# Large values are drawn by name, so that hypothesis can show each example it draws.
DEEP_VALUES = {
    "DEEP_LIST": _DeepList(DEEP_LIST),
    "DEEP_DICT": _DeepDict(DEEP_DICT),
    "list nested 300": nested(300),
    "dict nested 300": nested(300, mapping=True),
}
HOSTILE_TEXTS = {
    "DEEP_JSON": DEEP_JSON,
    "unclosed deep JSON": "[" * 100_000,
    "unclosed deep arguments": '{"a": ' + "[" * 100_000,
    "LONG_NUMBER": LONG_NUMBER,
    "arguments with LONG_NUMBER": '{"a": ' + LONG_NUMBER + "}",
    "lone surrogate escape": '["\\ud800"]',
    "NaN and 1e999": "[NaN, 1e999]",
    "empty": "",
    "unclosed": "{",
}
hostile_texts = st.sampled_from(sorted(HOSTILE_TEXTS)).map(HOSTILE_TEXTS.__getitem__)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.just(_Huge(HUGE)),
    st.floats(),
    st.text(max_size=5),
    st.just("\ud800"),
    st.binary(max_size=3),
    st.just(object()),
    st.sets(st.integers(), max_size=2),
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
) | st.sampled_from(sorted(DEEP_VALUES)).map(DEEP_VALUES.__getitem__)
parts = st.one_of(
    values,
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", "hologram"]), "text": values}),
    st.fixed_dictionaries({"type": st.just("image_url"), "image_url": values}),
)
contents = st.one_of(values, st.lists(parts, max_size=3))
arguments = st.one_of(values, hostile_texts, st.dictionaries(st.text(max_size=3), values, max_size=2))
functions = st.one_of(values, st.fixed_dictionaries({"name": values, "arguments": arguments}))
calls = st.one_of(values, st.fixed_dictionaries({"id": values, "type": values, "function": functions}))
messages = st.one_of(
    values,
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "developer", "wizard"]), "content": contents}),
    st.fixed_dictionaries({"role": values}, optional={"content": contents}),
    st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": contents, "tool_calls": values | st.lists(calls, max_size=2)},
        optional={"reasoning_content": values, "refusal": values},
    ),
    st.fixed_dictionaries(
        {"role": st.just("tool"), "content": contents},
        optional={"tool_call_id": values, "tool_responses": values | st.lists(values, max_size=2)},
    ),
)
conversations = st.lists(messages, max_size=3) | values


def _with_results(conversation: Any, results: Any) -> object:
    return codec.Conversation().followed_by(*conversation).with_tool_results(results)


ENTRY_POINTS: dict[str, Callable[[codec.Codec, Any, Any], object]] = {
    "render": lambda c, m, v: c.render(m, now=v if isinstance(v, str) else None),
    "canonical": lambda c, m, v: c.canonical(m, unknown_options="ignore", enable_thinking=v),
    "explain_losses": lambda c, m, v: c.explain_losses(m),
    "prepare": lambda c, m, v: c.prepare(m, unknown_options="ignore", enable_thinking=v),
    "prefix_check": lambda c, m, v: c.prefix_check(m, v if isinstance(v, str) else "hi"),
    "parse(history=)": lambda c, m, v: c.parse("hi", history=m),
    "render(tools=)": lambda c, m, v: c.render([USER], tools=m),
    "prepare(tools=) + follow_up": lambda c, m, v: c.prepare([USER], tools=m).follow_up(v, {}),
    "stream(history=)": lambda c, m, v: c.stream(history=m, tools=v if isinstance(v, list) else None),
    "read_request": lambda c, m, v: read_request({"messages": m, "tool_choice": v, "reasoning_effort": v}, c),
    "codec.explain_losses": lambda c, m, v: codec.explain_losses(c.name, m, now=v if isinstance(v, str) else None),
    "to_messages": lambda c, m, v: to_messages(m),
    "followed_by + with_tool_results": lambda c, m, v: _with_results(m if isinstance(m, list) else [m], v),
    "load": lambda c, m, v: codec.load(v),
    "load(template=)": lambda c, m, v: codec.load(c.name, template=v),
    "openai_delta": lambda c, m, v: codec.openai_delta(v),
}


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(FORMATS),
    entry=st.sampled_from(sorted(ENTRY_POINTS)),
    conversation=conversations,
    value=values,
)
def test_hostile_input_ends_in_a_codec_error(name: str, entry: str, conversation: Any, value: Any) -> None:
    """Given any of it, each entry point returns or raises a ``CodecError`` — nothing else."""
    with contextlib.suppress(CodecError):
        ENTRY_POINTS[entry](codec.load(name), conversation, value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
)
json_messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "wizard"]), "content": json_values},
    optional={"tool_calls": json_values, "tool_responses": json_values},
)
json_texts = st.one_of(
    json_values.map(json.dumps),
    st.lists(json_messages, max_size=2).map(json.dumps),
    st.builds(lambda text: f'{{"messages": [{{"role": "user", "content": {text}}}]}}', hostile_texts),
    hostile_texts,
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(FORMATS),
    command=st.sampled_from(["render", "parse --history", "parse --tools", "stream --tools", "grammar --tools"]),
    text=json_texts,
)
def test_hostile_files_end_the_cli_in_exit_0_or_2(
    name: str, command: str, text: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Whatever JSON (or not) a file holds, a command succeeds or says ``codec: error:``."""
    folder = tmp_path_factory.mktemp("hostile")
    path = write(folder, "input.json", text)
    completion = write(folder, "completion.txt", "hi")
    verb, *flag = command.split()
    inputs = {"render": [path], "grammar": []}.get(verb, [completion])
    argv = [verb, "-f", name, *([*flag, path] if flag else []), *inputs]
    try:
        status: object = main(argv)
    except SystemExit as stop:
        status = stop.code
    assert status in (0, 2)
