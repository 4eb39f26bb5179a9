"""Hostile input: whatever a caller passes, a public call ends in a ``CodecError`` (the CLI in
``codec: error: ...`` and exit 2), never in a raw ``RecursionError``, ``TypeError`` or
``ValueError``, and never in the CLI's exit 70 ("internal error").

The cases below are what the search at the end of this file (and its hand-made forerunner) found
escaping; each failed before its fix. The search stays as a property, with a bounded number of
examples. ``KNOWN_ESCAPES`` lists what still escapes, in modules this change does not own: each
is a strict xfail, so it fails the run the day it is fixed, and the entry can go.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import codec
from codec.cli.main import main
from codec.cli.output import emit
from codec.errors import CodecError, RenderError
from codec.models import to_message, to_messages

FORMATS = codec.formats()
HUGE = 10**5000  # more digits than Python writes (sys.get_int_max_str_digits, 4300)


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
    conversation = codec.Conversation(messages=calling("{}"))
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
    option = sorted(c.options)[0]
    with contextlib.suppress(CodecError):  # refused as render refuses it, or kept: never a raw error
        c.canonical([USER], **{option: value})


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
        status = main(list(args))
    except SystemExit as stop:  # argparse's own usage errors
        status = stop.code  # type: ignore[assignment]
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
    assert "lone surrogate (U+D800" in cli(capsys, "render", "-f", name, path)
