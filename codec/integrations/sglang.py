"""SGLang parser plugins: ``codec-<format>`` as a tool-call parser and a reasoning parser.

The ``sglang.srt.plugins`` entry point ``codec`` calls ``register``, which adds a detector per
format to ``FunctionCallParser.ToolCallParserEnum`` and ``ReasoningParser.DetectorMap`` (SGLang
reads its command-line choices from them once a plugin has imported them)::

    sglang serve --model-path zai-org/GLM-5.3-Flash --tool-call-parser codec-glm --reasoning-parser codec-glm

SGLang chains the two by text: the reasoning detector's normal text is the tool detector's
input, and neither is given the other, the request's ``chat_template_kwargs`` or the prompt.
So each parses with its own codec parser, from the format's default generation prompt: while a
tool parser follows, the reasoning detector passes the raw text on, and the tool detector,
parsing the same text with the same grammar, leaves the reasoning to it. docs/engines.md lists
what this loses.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult as ToolResult
from sglang.srt.function_call.core_types import ToolCallItem
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector, ReasoningParser
from sglang.srt.parser.reasoning_parser import StreamingParseResult as ReasoningResult

import codec
from codec.api import Codec
from codec.integrations._session import PREFIX, Delta, Session, fold, text_of


def _calls(delta: Delta) -> list[ToolCallItem]:
    """SGLang's call items: the name in a call's first item, argument text in each."""
    return [ToolCallItem(tool_index=part.index, name=part.name, parameters=part.arguments) for part in delta.calls]


class CodecReasoningDetector(BaseReasoningFormatDetector):
    """The reasoning half of ``codec-<format>``."""

    format_name: ClassVar[str]

    def __init__(self, tool_call_parser_active: bool = False, **kwargs: Any) -> None:
        # No think tokens: codec finds reasoning by its grammar; SGLang's token budget for
        # reasoning (which encodes think_end_token) has nothing to count.
        super().__init__("", "", stream_reasoning=True)
        self.codec: Codec = codec.load(self.format_name)
        self.passes_text_on = tool_call_parser_active
        self.session = Session(self.codec, None, {})

    def detect_and_parse(self, text: str) -> ReasoningResult:
        """The whole reply's reasoning, and its content (or, for the tool parser, the text)."""
        message = self.session.parse(text)
        normal = text if self.passes_text_on else text_of(message)
        return ReasoningResult(normal_text=normal, reasoning_text=message.reasoning)

    def parse_streaming_increment(self, new_text: str) -> ReasoningResult:
        """The reasoning in ``new_text``; the text itself goes on when a tool parser follows."""
        self.session.feed(new_text)
        return self._result(new_text)

    def finish(self) -> ReasoningResult:
        """The end of the output: what the parser held back."""
        self.session.close()
        return self._result("")

    def _result(self, text: str) -> ReasoningResult:
        delta = self.session.take()
        normal = text if self.passes_text_on else delta.content
        return ReasoningResult(normal_text=normal, reasoning_text=delta.reasoning)


class CodecToolDetector(BaseFormatDetector):
    """The tool-call half of ``codec-<format>``: content and calls. Reasoning is left to the
    reasoning detector, which passes this one the whole text."""

    format_name: ClassVar[str]

    def __init__(self) -> None:
        super().__init__()
        self.codec: Codec = codec.load(self.format_name)
        self.session: Session | None = None

    def _session(self, tools: list[Any] | None) -> Session:
        if self.session is None:
            self.session = Session(self.codec, tools, {})
        return self.session

    def detect_and_parse(self, text: str, tools: list[Any]) -> ToolResult:
        """The whole reply's content and calls."""
        message = self._session(tools).parse(text)
        # Whole, SGLang's tool_index is the tool's place in the request (streamed: the call's).
        places = {tool.function.name: place for place, tool in enumerate(tools or ())}
        calls = [
            ToolCallItem(tool_index=places.get(call.name, -1), name=call.name, parameters=call.arguments_json)
            for call in message.tool_calls
        ]
        return ToolResult(normal_text=text_of(message) or "", calls=calls)

    def parse_streaming_increment(self, new_text: str, tools: list[Any]) -> ToolResult:
        """The content and call pieces ``new_text`` completes."""
        session = self._session(tools)
        session.feed(new_text)
        return self._result(session)

    def finish(self, tools: list[Any]) -> ToolResult:
        """The end of the output: held-back text, calls closed."""
        session = self._session(tools)
        session.close()
        return self._result(session)

    def _result(self, session: Session) -> ToolResult:
        delta = session.take()
        return ToolResult(normal_text=delta.content, calls=_calls(delta))

    def has_tool_call(self, text: str) -> bool:
        """Whether ``text`` needs this detector: it holds a call, or anything else that is not
        plain content, such as the reasoning the reasoning detector passed on. SGLang returns
        the text unparsed when this says no. A parse of its own: the session is left alone."""
        delta = fold(_events(self.codec, text))
        return bool(delta.calls) or delta.content != text

    def supports_structural_tag(self) -> bool:
        """codec's constraint is an llguidance grammar, not an xgrammar structural tag."""
        return False

    def structure_info(self) -> Any:
        """Not offered: see ``supports_structural_tag``."""
        raise NotImplementedError("codec formats do not describe calls as structural tags")


def _events(fmt: Codec, text: str) -> list[Any]:
    parser = fmt.stream()
    return parser.feed(text) + parser.close()


def register() -> None:
    """Add ``codec-<format>`` for every format to SGLang's tool-call and reasoning parsers.
    Idempotent: SGLang loads plugins in each of its processes."""
    for name in codec.formats():
        title = "".join(part.title() for part in name.replace("_", "-").split("-"))
        reasoning = type(f"Codec{title}ReasoningDetector", (CodecReasoningDetector,), {"format_name": name})
        tool = type(f"Codec{title}ToolDetector", (CodecToolDetector,), {"format_name": name})
        ReasoningParser.DetectorMap[PREFIX + name] = reasoning
        FunctionCallParser.ToolCallParserEnum[PREFIX + name] = tool
