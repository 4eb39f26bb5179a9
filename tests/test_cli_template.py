"""The command line with any template and any request (issue 10, part 5).

- ``render``, ``parse``, ``stream`` and ``roundtrip`` take ``--template PATH`` (a model
  directory, a ``tokenizer_config.json``, a ``.jinja`` file); without ``-f`` its format is
  recognised from it;
- ``parse`` and ``stream`` take ``--history FILE``, the conversation the completion continues;
- ``render`` reads an OpenAI request body as ``codec serve`` does (``codec.chat_request``): the
  template options, ``reasoning_effort``, ``tools`` and ``tool_choice`` are honoured or refused
  by name, sampling fields pass, and any other field is an error naming it;
- ``roundtrip`` fails when nothing rendered, and checks a user template against its family's
  ``canonical``.

Each runs ``codec.cli.main(argv)`` in this process, for every format of the registry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import codec
from codec._resources import read_text
from codec.chat_request import SAMPLING_FIELDS, read_request
from codec.cli import main
from codec.errors import RequestError
from codec.formats._demo_scenario import HISTORY, NOW, TOOLS
from codec.models import to_messages
from codec.registry import FORMATS
from codec.strategies import RenderCase
from support.reference import reference_render

FORMATS_ = codec.formats()
CONTINUED = HISTORY[:5]  # ends with the two tool results: the model goes on after them


def continued(fmt: str) -> list[dict[str, Any]]:
    """The format's demo conversation up to its first answer: it ends with the tool results."""
    messages = list(FORMATS[fmt].demo.messages)
    answer = next(i for i, m in enumerate(messages) if m["role"] == "assistant" and "tool_calls" not in m)
    return messages[:answer]


REPLY = "Lisbon looks dry; take the umbrella to Porto."


def owner(fmt: str) -> str:
    """The first format of the registry with ``fmt``'s template: the one detection names."""
    return next(name for name, spec in FORMATS.items() if spec.template == FORMATS[fmt].template)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status, out, err = cli(capsys, *args)
    assert status == 0, err
    return out


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The error line of a command the user must fix (exit 2, no traceback)."""
    status, _, err = cli(capsys, *args)
    assert status == 2, err
    assert err.startswith("codec: error: ") and "Traceback" not in err
    return err


def write_json(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def edited(fmt: str) -> str:
    """The format's template with a local edit that changes its hash but not its output."""
    return "{# edited locally #}" + read_text("templates", FORMATS[fmt].template)


def options(fmt: str) -> list[str]:
    return [arg for key, value in FORMATS[fmt].demo.options.items() for arg in ("-o", f"{key}={json.dumps(value)}")]


@pytest.mark.parametrize("fmt", FORMATS_)
def test_render_with_a_model_directory_alone_detects_the_format_and_matches_transformers(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    write_json(model / "tokenizer_config.json", {"chat_template": edited(fmt)})
    history = list(FORMATS[fmt].demo.messages)
    conversation = write_json(tmp_path / "request.json", {"messages": history, "tools": TOOLS})
    prompt = ok(capsys, "render", "--template", str(model), "--now", NOW.isoformat(), *options(fmt), conversation)
    template_form = [message.to_template() for message in to_messages(history)]
    case = RenderCase(template_form, TOOLS, dict(FORMATS[fmt].demo.options), True)
    assert prompt == reference_render(fmt, case, NOW, chat_template=edited(fmt))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_render_pairs_a_named_format_with_a_template_file(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "chat_template.jinja"
    template.write_text("{{ messages | length }} messages{% if tools %} and tools{% endif %}", encoding="utf-8")
    conversation = write_json(tmp_path / "request.json", {"messages": HISTORY, "tools": TOOLS})
    assert ok(capsys, "render", "-f", fmt, "--template", str(template), conversation) == "7 messages and tools"


def test_a_template_of_no_known_format_says_what_was_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "plain.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}", encoding="utf-8")
    err = refused(capsys, "render", "--template", str(template), write_json(tmp_path / "m.json", HISTORY))
    assert "plain.jinja" in err and "Looked for" in err
    assert all(name in err for name in FORMATS_)


def test_without_a_format_or_a_template_the_command_says_to_give_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(capsys, "render", write_json(tmp_path / "m.json", HISTORY))
    assert "-f NAME" in err and "--template PATH" in err


@pytest.mark.parametrize("command", ["parse", "stream"])
@pytest.mark.parametrize("fmt", FORMATS_)
def test_parse_and_stream_continue_the_history_given(
    command: str, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the CLI gives is the library's parse after that history (tools and options too)."""
    (tmp_path / "reply.txt").write_text(REPLY, encoding="utf-8")
    history = write_json(tmp_path / "history.json", continued(fmt))
    tools = write_json(tmp_path / "tools.json", TOOLS)
    out = ok(
        capsys, command, "-f", fmt, "--tools", tools, "--history", history, *options(fmt), str(tmp_path / "reply.txt")
    )
    expected = codec.load(fmt).parse(REPLY, tools=TOOLS, history=continued(fmt), **FORMATS[fmt].demo.options)
    if command == "parse":
        assert json.loads(out) == expected.to_openai()
    else:
        events = [json.loads(line) for line in out.splitlines()]
        assert "".join(e["text"] for e in events if e["event"] == "ReasoningDelta") == (expected.reasoning or "")
        assert "".join(e["text"] for e in events if e["event"] == "ContentDelta") == (expected.content or "")


@pytest.mark.parametrize("command", ["parse", "stream"])
def test_history_decides_where_gemma4_continues(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a tool result, Gemma 4 with thinking on goes on inside a thought channel: the same
    text is reasoning after that history and content after a user message."""
    (tmp_path / "reply.txt").write_text(REPLY, encoding="utf-8")
    history = write_json(tmp_path / "history.json", {"messages": CONTINUED})
    common = [command, "-f", "gemma4", "-o", "enable_thinking=true", str(tmp_path / "reply.txt")]
    with_history, without = ok(capsys, *common, "--history", history), ok(capsys, *common)
    assert REPLY in with_history and REPLY in without
    if command == "parse":
        assert json.loads(with_history)["reasoning_content"] == REPLY
        assert json.loads(without)["content"] == REPLY
    else:
        assert '"ReasoningDelta"' in with_history and '"ReasoningDelta"' not in without


@pytest.mark.parametrize("fmt", FORMATS_)
def test_render_uses_chat_template_kwargs_and_passes_sampling_fields(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo_options = dict(FORMATS[fmt].demo.options)
    sampling = {"model": "m", "temperature": 0.2, "max_tokens": 64, "stream": True, "stop": ["x"], "seed": 1}
    history = list(FORMATS[fmt].demo.messages)
    body = {"messages": history, "tools": TOOLS, "chat_template_kwargs": demo_options, **sampling}
    prompt = ok(capsys, "render", "-f", fmt, "--now", NOW.isoformat(), write_json(tmp_path / "r.json", body))
    assert prompt == codec.load(fmt).render(history, tools=TOOLS, now=NOW, **demo_options)


@pytest.mark.parametrize("fmt", FORMATS_)
def test_reasoning_effort_is_an_option_when_the_template_reads_it_else_an_error(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = write_json(tmp_path / "r.json", {"messages": HISTORY, "reasoning_effort": "low"})
    c = codec.load(fmt)
    if "reasoning_effort" not in c.options:
        assert "reasoning_effort" in refused(capsys, "render", "-f", fmt, body)
        return
    prompt = ok(capsys, "render", "-f", fmt, "--now", NOW.isoformat(), body)
    assert prompt == c.render(HISTORY, now=NOW, reasoning_effort="low")
    assert prompt != c.render(HISTORY, now=NOW, reasoning_effort="high")


@pytest.mark.parametrize("fmt", FORMATS_)
@pytest.mark.parametrize("choice", ["auto", "none", None])
def test_tool_choice_auto_renders_the_tools_and_none_leaves_them_out(
    fmt: str, choice: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = list(FORMATS[fmt].demo.messages)
    body = {"messages": history, "tools": TOOLS, **({} if choice is None else {"tool_choice": choice})}
    prompt = ok(capsys, "render", "-f", fmt, "--now", NOW.isoformat(), write_json(tmp_path / "r.json", body))
    c = codec.load(fmt)
    with_tools, without = c.render(history, tools=TOOLS, now=NOW), c.render(history, now=NOW)
    if with_tools == without:  # the template never writes the tools (canonical drops them)
        assert not c.canonical(history, tools=TOOLS).tools
        pytest.skip("the template writes no tools: nothing for tool_choice to leave out")
    assert prompt == (without if choice == "none" else with_tools)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("tool_choice", "required", "tool_choice: forcing a call needs constrained decoding"),
        ("tool_choice", {"type": "function", "function": {"name": "get_weather"}}, "'get_weather'"),
        ("tool_choice", "sometimes", "tool_choice: expected 'auto', 'none'"),
        ("chat_template_kwargs", {"no_such_option": 1}, "chat_template_kwargs.no_such_option"),
        ("tempreature", 0.5, "tempreature: unknown field"),
        ("functions", [], "functions: not supported"),
        ("stream", "yes", "stream: true or false"),
    ],
)
def test_a_request_field_that_cannot_be_honoured_is_named(
    field: str, value: Any, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = write_json(tmp_path / "r.json", {"messages": HISTORY, "tools": TOOLS, field: value})
    assert named in refused(capsys, "render", "-f", "glm", body)


@pytest.mark.parametrize("fmt", FORMATS_)
def test_read_request_sorts_every_field(fmt: str) -> None:
    c = codec.load(fmt)
    sampling = {name: 1 for name in sorted(SAMPLING_FIELDS)}
    body = {"messages": HISTORY, "tools": TOOLS, "model": "m", "stream": True, **sampling}
    request = read_request(body, c)
    assert (request.messages, request.tools, request.options) == (HISTORY, TOOLS, {})
    assert (request.tool_choice, request.stream, request.model, request.sampling) == ("auto", True, "m", sampling)
    if not c.options:
        pytest.skip("the template reads no option")
    option = sorted(c.options)[0]
    with pytest.raises(RequestError, match="send it in chat_template_kwargs") as raised:
        read_request({"messages": HISTORY, option: True}, c)
    assert raised.value.param == option


def test_reasoning_effort_given_twice_must_agree() -> None:
    glm = codec.load("glm")
    body = {"messages": HISTORY, "reasoning_effort": "low", "chat_template_kwargs": {"reasoning_effort": "low"}}
    assert read_request(body, glm).options == {"reasoning_effort": "low"}
    with pytest.raises(RequestError, match="differs"):
        read_request({**body, "reasoning_effort": "high"}, glm)


@pytest.mark.parametrize("fmt", FORMATS_)
def test_roundtrip_detects_the_format_of_a_template_alone(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "chat_template.jinja"
    template.write_text(edited(fmt), encoding="utf-8")
    out = ok(capsys, "roundtrip", "--template", str(template), "--examples", "10")
    assert out.startswith(f"{owner(fmt)} (the chat template in {template}, recognised by tokens)")
    assert "all agree" in out


def test_roundtrip_fails_when_the_template_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "empty.jinja"
    template.write_text("", encoding="utf-8")
    status, out, _ = cli(capsys, "roundtrip", "-f", "glm", "--template", str(template), "--examples", "5")
    assert status == 1
    assert "writes: the template wrote nothing" in out


def test_roundtrip_fails_when_render_refuses_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "refuses.jinja"
    template.write_text("{{ raise_exception('not today') }}", encoding="utf-8")
    status, out, _ = cli(capsys, "roundtrip", "-f", "glm", "--template", str(template), "--examples", "5")
    assert status == 1
    assert "nothing was rendered" in out


def test_roundtrip_checks_a_user_template_against_its_familys_canonical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A GLM template that upper-cases user text parses and renders back consistently, but
    keeps less than GLM's canonical says: only the canonical check can see it."""
    source = read_text("templates", "glm.jinja")
    shouting = source.replace("<|user|>{{ visible_text(m.content) }}", "<|user|>{{ visible_text(m.content) | upper }}")
    assert shouting != source
    template = tmp_path / "shouting.jinja"
    template.write_text(shouting, encoding="utf-8")
    status, out, _ = cli(capsys, "roundtrip", "--template", str(template), "--examples", "30", "--seed", "2")
    assert status == 1, out
    assert out.startswith("glm (")
    assert "- canonical: first difference" in out
