"""codec's SGLang parsers, driven the way SGLang's chat server drives them.

SGLang's ``OpenAIServingChat`` cannot be imported without torchvision and a running tokenizer
manager, so its per-chunk composition is replicated here from ``serving_chat.py``
(``_process_reasoning_stream`` then ``_process_tool_call_stream``): SGLang's own
``ReasoningParser`` and ``FunctionCallParser``, looked up by the plugin's names, one of each per
choice; each chunk goes to the reasoning parser, its normal text to the tool-call parser, and the
last chunk flushes both (``parse_stream_end``). SGLang makes call ids itself; so does this.
"""

from __future__ import annotations

from typing import Any

import pytest

from support.engines import MESSAGES, SPLITS, TOOLS, MarkerTokenizer, Rebuilt, cases, deltas, expected, same_reply

pytest.importorskip("sglang.srt.function_call.function_call_parser", exc_type=ImportError)

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

import codec
from codec.integrations import sglang as plugin

plugin.register()  # what the sglang.srt.plugins entry point does in each SGLang process
CASES = cases()
NAMES = [f"{fmt}-{case}" for fmt, case, _, _ in CASES]


def request() -> ChatCompletionRequest:
    return ChatCompletionRequest(model="m", messages=MESSAGES, tools=TOOLS, stream=True)


def streamed(fmt: str, completion: str, per_delta: int, drop_last: bool = False) -> dict[str, Any]:
    """Stream ``completion`` through the two parsers as SGLang's chat server does and rebuild
    the reply from the chunks it would send."""
    chat, tokenizer = request(), MarkerTokenizer(fmt)
    reasoning = ReasoningParser(f"codec-{fmt}", True, None, chat, tool_call_parser_active=True)
    tools = FunctionCallParser(chat.tools, f"codec-{fmt}")
    steps = list(deltas(tokenizer, completion, per_delta))
    if drop_last:
        steps = steps[:-1]
    rebuilt = Rebuilt()
    for number, ids in enumerate(steps, 1):
        finished = number == len(steps)
        thought, text = reasoning.parse_stream_chunk(tokenizer.decode(ids))
        if finished:
            end_thought, end_text = reasoning.parse_stream_end()
            thought, text = (thought or "") + end_thought, (text or "") + end_text
        content, calls = tools.parse_stream_chunk(text or "")
        if finished:
            end_content, end_calls = tools.parse_stream_end()
            content, calls = content + end_content, [*calls, *end_calls]
        rebuilt.add(thought, content, [_wire(call) for call in calls])
    return rebuilt.reply()


def _wire(call: Any) -> dict[str, Any]:
    """A call item as SGLang sends it: an id and the name only in the call's first chunk."""
    first = bool(call.name)
    return {
        "index": call.tool_index,
        "id": f"call_{call.tool_index}" if first else None,
        "function": {"name": call.name if first else None, "arguments": call.parameters},
    }


def whole(fmt: str, completion: str) -> dict[str, Any]:
    """The non-streaming reply: reasoning separated, then calls parsed from the normal text."""
    chat = request()
    thought, text = ReasoningParser(f"codec-{fmt}", True, None, chat, tool_call_parser_active=True).parse_non_stream(
        completion
    )
    content, calls = FunctionCallParser(chat.tools, f"codec-{fmt}").parse_non_stream(text or "")
    return {
        "reasoning": thought or None,
        "content": content or None,
        "tool_calls": [(call.name, call.parameters) for call in calls],
        "ids": [f"call_{number}" for number, _ in enumerate(calls)],  # SGLang numbers calls in order
    }


def test_sglangs_plugin_loader_finds_the_entry_point() -> None:
    """SGLang runs every sglang.srt.plugins entry point in each process: codec's registers."""
    from sglang.srt.plugins import load_plugins_by_group

    plugins = load_plugins_by_group("sglang.srt.plugins")
    if "codec" not in plugins:
        pytest.skip("codec is not installed with its entry points (a checkout without pip install)")
    assert plugins["codec"][0] is plugin.register


def test_every_format_is_registered_under_both_names() -> None:
    names = {f"codec-{fmt}" for fmt in codec.formats()}
    assert names <= set(FunctionCallParser.ToolCallParserEnum)
    assert names <= set(ReasoningParser.DetectorMap)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(("fmt", "case", "completion", "options"), CASES, ids=NAMES)
def test_streamed_reply_is_codecs_parse(
    fmt: str, case: str, completion: str, options: dict[str, Any], split: str
) -> None:
    if options:
        pytest.skip("SGLang hands a parser no chat_template_kwargs: the default options only")
    same_reply(streamed(fmt, completion, SPLITS[split]), expected(fmt, completion, {}), ids_matter=False)


@pytest.mark.parametrize(("fmt", "case", "completion", "options"), CASES, ids=NAMES)
def test_whole_reply_is_codecs_parse(fmt: str, case: str, completion: str, options: dict[str, Any]) -> None:
    if options:
        pytest.skip("SGLang hands a parser no chat_template_kwargs: the default options only")
    same_reply(whole(fmt, completion), expected(fmt, completion, {}), ids_matter=False)


@pytest.mark.parametrize(("fmt", "case", "completion", "options"), CASES, ids=NAMES)
def test_dropping_the_last_delta_is_noticed(fmt: str, case: str, completion: str, options: dict[str, Any]) -> None:
    got = streamed(fmt, completion, SPLITS["one_token"], drop_last=True)
    with pytest.raises(AssertionError):
        same_reply(got, expected(fmt, completion, options), ids_matter=False)


@pytest.mark.parametrize("fmt", codec.formats())
def test_reasoning_parser_alone_sends_content(fmt: str) -> None:
    """Without a tool-call parser the reasoning parser's normal text is the content."""
    completion = codec.registry.FORMATS[fmt].examples.one_call
    want = expected(fmt, completion, {})
    thought, text = ReasoningParser(f"codec-{fmt}", True, None, request()).parse_non_stream(completion)
    assert (thought or None, text or None) == (want["reasoning"], want["content"])
