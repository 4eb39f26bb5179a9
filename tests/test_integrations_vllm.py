"""codec's vLLM parsers, driven through vLLM's own composition: ``ParserManager.get_parser``
builds the ``Parser`` class from ``--tool-call-parser`` / ``--reasoning-parser`` names, vLLM's
``ChatStreamProcessor`` streams each delta through it as ``OpenAIServingChat`` does, and
``Parser.parse`` + ``assemble_chat_message_fields`` make the non-streaming reply. No GPU, no
model: a tokenizer that knows the format's markers stands in for the model's.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from support.engines import (
    MESSAGES,
    SPLITS,
    TOOLS,
    MarkerTokenizer,
    Rebuilt,
    cases,
    deltas,
    expected,
    model_written_ids,
    same_reply,
)

pytest.importorskip("vllm.parser.abstract_parser", exc_type=ImportError)

from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser.parser_manager import ParserManager
from vllm.reasoning import ReasoningParserManager
from vllm.tool_parsers import ToolParserManager

import codec
from codec.integrations import vllm as plugin

CASES = cases()
NAMES = [f"{fmt}-{case}" for fmt, case, _, _ in CASES]


def parser_class(fmt: str, reasoning: bool = True, tools: bool = True) -> Any:
    """The ``Parser`` class vLLM's chat server builds for ``codec-<fmt>`` at start-up."""
    tokenizer = MarkerTokenizer(fmt)
    return ParserManager.get_parser(
        tool_parser_name=f"codec-{fmt}" if tools else None,
        reasoning_parser_name=f"codec-{fmt}" if reasoning else None,
        enable_auto_tools=True,
        model_name=fmt,
        tokenizer=tokenizer,
    )


def request(tool_choice: str = "auto", stream: bool = True) -> ChatCompletionRequest:
    return ChatCompletionRequest(model="m", messages=MESSAGES, tools=TOOLS, tool_choice=tool_choice, stream=stream)


def streamed(fmt: str, completion: str, options: dict[str, Any], per_delta: int, **kwargs: Any) -> dict[str, Any]:
    """Stream ``completion`` through vLLM's ChatStreamProcessor, one delta per engine step, and
    rebuild the reply from what it sends. ``drop_last`` leaves out the last delta."""
    drop_last = kwargs.pop("drop_last", False)
    tool_choice = kwargs.pop("tool_choice", "auto")
    tokenizer = MarkerTokenizer(fmt)
    parser_cls = parser_class(fmt, **kwargs)
    chat = request(tool_choice)
    parser = parser_cls(tokenizer, chat.tools, chat_template_kwargs=dict(options), model_config=None)
    processor = ChatStreamProcessor(chat, parser, enable_auto_tools=True, parser_cls=parser_cls)
    prompt_ids = tokenizer.encode(codec.load(fmt).render(MESSAGES, tools=TOOLS, **options))
    steps = list(deltas(tokenizer, completion, per_delta))
    if drop_last:
        steps = steps[:-1]
    rebuilt = Rebuilt()
    for number, ids in enumerate(steps, 1):
        finish = "stop" if number == len(steps) else None
        step = processor.step(tokenizer.decode(ids), ids, finish, prompt_ids)
        if step.delta is not None:
            calls = [call.model_dump(exclude_none=True) for call in step.delta.tool_calls]
            rebuilt.add(step.delta.reasoning, step.delta.content, calls)
    return rebuilt.reply()


def whole(fmt: str, completion: str, options: dict[str, Any], tool_choice: str = "auto") -> dict[str, Any]:
    """The non-streaming reply, as OpenAIServingChat assembles it."""
    tokenizer = MarkerTokenizer(fmt)
    parser_cls = parser_class(fmt)
    chat = request(tool_choice, stream=False)
    parser = parser_cls(tokenizer, chat.tools, chat_template_kwargs=dict(options), model_config=None)
    parser.set_prompt_token_ids(tokenizer.encode(codec.load(fmt).render(MESSAGES, tools=TOOLS, **options)))
    reasoning, content, calls = parser.parse(completion, chat, enable_auto_tools=True)
    fields = assemble_chat_message_fields(
        chat, reasoning, content, calls, enable_auto_tools=True, parser_cls=parser_cls
    )
    return {
        "reasoning": fields.reasoning or None,
        "content": fields.content or None,
        "tool_calls": [(call.function.name, call.function.arguments) for call in fields.tool_calls],
        "ids": [call.id for call in fields.tool_calls],
    }


def test_every_format_is_registered_under_both_names() -> None:
    names = {f"codec-{fmt}" for fmt in codec.formats()}
    assert names <= set(ToolParserManager.list_registered())
    assert names <= set(ReasoningParserManager.list_registered())


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("fmt", "case", "completion", "options"), CASES, ids=NAMES)
def test_streamed_reply_is_codecs_parse(
    fmt: str, case: str, completion: str, options: dict[str, Any], split: str
) -> None:
    got = streamed(fmt, completion, options, SPLITS[split])
    same_reply(got, expected(fmt, completion, options), model_written_ids(fmt, completion, options))


@pytest.mark.parametrize(("fmt", "case", "completion", "options"), CASES, ids=NAMES)
def test_whole_reply_is_codecs_parse(fmt: str, case: str, completion: str, options: dict[str, Any]) -> None:
    got = whole(fmt, completion, options)
    same_reply(got, expected(fmt, completion, options), model_written_ids(fmt, completion, options))


@pytest.mark.parametrize(("fmt", "case", "completion", "options"), CASES, ids=NAMES)
def test_dropping_the_last_delta_is_noticed(fmt: str, case: str, completion: str, options: dict[str, Any]) -> None:
    """The comparison above can fail: without the last delta the rebuilt reply is not codec's."""
    got = streamed(fmt, completion, options, SPLITS["one_token"], drop_last=True)
    with pytest.raises(AssertionError):
        same_reply(got, expected(fmt, completion, options), model_written_ids(fmt, completion, options))


@pytest.mark.parametrize("fmt", codec.formats())
def test_tool_choice_none_sends_no_calls(fmt: str) -> None:
    completion = codec.registry.FORMATS[fmt].examples.two_calls
    want = expected(fmt, completion, {})
    for got in (streamed(fmt, completion, {}, 1, tool_choice="none"), whole(fmt, completion, {}, "none")):
        assert got["tool_calls"] == []
        assert (got["reasoning"], got["content"]) == (want["reasoning"], want["content"])


@pytest.mark.parametrize("fmt", codec.formats())
def test_parsers_build_from_a_tokenizer_alone(fmt: str) -> None:
    tokenizer = MarkerTokenizer(fmt)
    parser_cls = parser_class(fmt)  # vLLM builds it once from the tokenizer alone at start-up
    parser = parser_cls(tokenizer)
    assert parser.reasoning_parser is not None and parser.tool_parser is not None
    assert parser.tool_parser.session is not parser.reasoning_parser.session  # nothing to pair by


@pytest.mark.parametrize("fmt", codec.formats())
def test_one_codec_parser_per_request_shared_by_the_two(fmt: str) -> None:
    tokenizer = MarkerTokenizer(fmt)
    parser_cls = parser_class(fmt)
    kwargs: dict[str, Any] = {}
    first = parser_cls(tokenizer, request().tools, chat_template_kwargs=kwargs)
    second = parser_cls(tokenizer, request().tools, chat_template_kwargs=kwargs)  # n=2: same kwargs
    assert first.tool_parser.session is first.reasoning_parser.session
    assert second.tool_parser.session is second.reasoning_parser.session
    assert first.tool_parser.session is not second.tool_parser.session
    assert first.tool_parser.session.tools == TOOLS


def test_adjust_request_keeps_special_tokens() -> None:
    fmt = codec.formats()[0]
    parser = parser_class(fmt)(MarkerTokenizer(fmt), TOOLS, chat_template_kwargs={})
    chat = request()
    chat.skip_special_tokens = True
    assert parser.adjust_request(chat).skip_special_tokens is False


@pytest.mark.parametrize("fmt", codec.formats())
def test_reasoning_parser_alone_sends_reasoning_and_content(fmt: str) -> None:
    """Without --enable-auto-tool-choice vLLM makes no tool parser: the reasoning parser parses
    the reply alone, and vLLM drops the calls."""
    completion = codec.registry.FORMATS[fmt].examples.one_call
    want = expected(fmt, completion, {})
    got = streamed(fmt, completion, {}, 1, tools=False)
    assert (got["reasoning"], got["content"], got["tool_calls"]) == (want["reasoning"], want["content"], [])


def test_the_options_come_from_chat_template_kwargs() -> None:
    for fmt, spec in codec.registry.FORMATS.items():
        if not spec.demo.options:
            continue
        parser = parser_class(fmt)(MarkerTokenizer(fmt), TOOLS, chat_template_kwargs={**spec.demo.options, "x": 1})
        assert parser.tool_parser.session.options == dict(spec.demo.options)


def test_importing_codec_imports_no_engine() -> None:
    script = "import codec, codec.integrations, sys; assert not {'vllm', 'sglang'} & set(sys.modules), sys.modules"
    subprocess.run([sys.executable, "-c", script], check=True)
    assert plugin.register() is None  # registering again is harmless (vLLM loads plugins per process)


@pytest.mark.parametrize("fmt", codec.formats())
def test_the_structured_output_gate_opens_where_reasoning_ends(fmt: str) -> None:
    """vLLM's engine core builds a reasoning parser of its own and asks it, once per decode step,
    whether reasoning has ended: it must say so at the step where codec's parse leaves it."""
    completion = codec.registry.FORMATS[fmt].demo.completion
    options = dict(codec.registry.FORMATS[fmt].demo.options)
    tokenizer = MarkerTokenizer(fmt)
    gate = ReasoningParserManager.get_reasoning_parser(f"codec-{fmt}")(tokenizer, chat_template_kwargs=options)
    parser = codec.load(fmt).stream(tools=TOOLS, **options)
    seen: list[int] = []
    for ids in deltas(tokenizer, completion, 1):
        events = parser.feed(tokenizer.decode(ids))
        over = any(not isinstance(event, codec.ReasoningDelta) for event in events) or (seen and seen[-1])
        seen.append(bool(over))
        assert gate.is_reasoning_end_streaming(ids, ids) == seen[-1]
    assert seen[-1], "every demo completion leaves reasoning"


def test_vllms_plugin_loader_finds_the_entry_point() -> None:
    """vLLM runs every vllm.general_plugins entry point in each process: codec's registers."""
    from vllm.plugins import load_plugins_by_group

    plugins = load_plugins_by_group("vllm.general_plugins")
    if "codec" not in plugins:
        pytest.skip("codec is not installed with its entry points (a checkout without pip install)")
    assert plugins["codec"] is plugin.register
