"""vLLM parser plugins: for every codec format, a tool parser and a reasoning parser named
``codec-<format>``.

Importing this module registers them (``--tool-parser-plugin codec.integrations.vllm``); the
``vllm.general_plugins`` entry point ``codec`` calls ``register``. Then::

    vllm serve zai-org/GLM-5.3-Flash --enable-auto-tool-choice \\
        --tool-parser-plugin codec.integrations.vllm --reasoning-parser-plugin codec.integrations.vllm \\
        --tool-call-parser codec-glm --reasoning-parser codec-glm

vLLM builds one ``Parser`` per request from the two classes (``DelegatingParser``): the
reasoning parser first, then the tool parser, each given the tokenizer and the request's
``chat_template_kwargs`` (the tool parser also its tools). The two share one ``Session``, one
codec parser: the reasoning parser registers itself under the ``chat_template_kwargs`` object
vLLM hands both, and the tool parser made next for the same object joins it. Built alone (from a
tokenizer, or with no partner), each parses the whole reply itself. docs/engines.md says what
vLLM's interface cannot carry.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.parser.engine.adapters import ParserEngineToolAdapter
from vllm.reasoning.abs_reasoning_parsers import ReasoningParser, ReasoningParserManager
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

import codec
from codec.api import Codec
from codec.integrations._session import PREFIX, Delta, Session, reasoning_opens, template_options, text_of

# Reasoning parsers waiting for their request's tool parser, by the id of the
# chat_template_kwargs dict both are given (the entry holds the dict, so the id stays its own).
_WAITING: weakref.WeakValueDictionary[int, CodecReasoningParser] = weakref.WeakValueDictionary()


def _delta_message(delta: Delta, reasoning_as_content: bool = False) -> DeltaMessage | None:
    """``delta`` as vLLM's ``DeltaMessage``; ``None`` when it adds nothing."""
    if not delta:
        return None
    reasoning, content = delta.reasoning or None, delta.content or None
    if reasoning_as_content and delta.reasoning:
        reasoning, content = None, delta.reasoning + delta.content
    calls = [
        DeltaToolCall(
            index=part.index,
            id=part.id,
            type="function" if part.id is not None else None,
            function=DeltaFunctionCall(name=part.name, arguments=part.arguments),
        )
        for part in delta.calls
    ]
    return DeltaMessage(reasoning=reasoning, content=content, tool_calls=calls)


class CodecReasoningParser(ReasoningParser):
    """The reasoning half of ``codec-<format>``: the reasoning at the head of the output."""

    format_name: ClassVar[str]
    engine_based_streaming = True  # fed deltas, not the text so far; finish_streaming flushes

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self.codec: Codec = codec.load(self.format_name)
        self._template_kwargs = kwargs.get("chat_template_kwargs")
        self.options = template_options(self.codec, self._template_kwargs)
        self.session = Session(self.codec, None, self.options)
        self.paired = False
        if isinstance(self._template_kwargs, dict):
            _WAITING[id(self._template_kwargs)] = self

    def join(self, tools: Sequence[Any] | None) -> Session:
        """Share this parser's session with the request's tool parser, which brings the tools."""
        self.paired = True
        prompt = self.session.prompt
        self.session = Session(self.codec, tools, self.options)
        self.session.prompt = prompt
        return self.session

    def adjust_request(self, request: Any) -> Any:
        """Keep special tokens in the text: they are the format's markers."""
        request.skip_special_tokens = False
        return request

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """Parse from the prompt vLLM rendered, decoded with its special tokens."""
        self.session.prompt = self.model_tokenizer.decode(list(prompt_token_ids), skip_special_tokens=False)

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """Whether output after ``input_ids`` (the prompt) starts past reasoning: the template's
        generation prompt for the request's options does not open it. Unpaired, never: then
        this parser sees the whole output (vLLM passes on raw text once reasoning has ended)."""
        return self.paired and not reasoning_opens(self.codec, self.options)

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        """Whether reasoning ended in the last step's tokens: the output so far, parsed, has
        moved past its reasoning. Stateful (each step's tokens are fed once), as vLLM's
        structured-output gate calls it once per decode step."""
        if not self.session.reasoning_over:
            self.session.feed(self.model_tokenizer.decode(list(delta_ids), skip_special_tokens=False))
            self.session.take_reasoning()
            self.session.take()  # nobody reads this parser's events: keep none
        return self.session.reasoning_over

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        """Token ids are not split by codec: the text after reasoning reaches the tool parser
        through the shared session, not through ids."""
        return input_ids

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        """The whole reply's reasoning and content (tool calls: ``CodecToolParser``)."""
        message = self.session.parse(model_output)
        return message.reasoning, text_of(message)

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        """The reasoning in ``delta_text``. Paired, what follows it waits for the tool parser;
        alone, it is returned too (vLLM drops tool calls when tools are off)."""
        self.session.feed(delta_text)
        return self._taken()

    def has_engine_confirmed_reasoning_end(self) -> bool:
        """Whether the tool parser takes over: reasoning is over and it has a partner."""
        return self.paired and self.session.reasoning_over

    def finish_streaming(self) -> DeltaMessage | None:
        """vLLM calls this where reasoning ends, for text held past the end marker, and at the
        end of an output that ended inside reasoning. The first is the tool parser's to take."""
        if self.paired and self.session.reasoning_over:
            return None
        self.session.close()
        return self._taken()

    def _taken(self) -> DeltaMessage | None:
        if self.paired:
            return _delta_message(Delta(reasoning=self.session.take_reasoning()))
        return _delta_message(self.session.take())


class CodecToolParser(ParserEngineToolAdapter):
    """The tool-call half of ``codec-<format>``: content and tool calls after reasoning.

    A ``ParserEngineToolAdapter`` only so that vLLM hands it the request's
    ``chat_template_kwargs`` as it does its reasoning parser; vLLM's own engine is not used.
    """

    format_name: ClassVar[str]
    supports_required_and_named = False  # calls come in the format's syntax, never as bare JSON
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None, **kwargs: Any) -> None:
        ToolParser.__init__(self, tokenizer, tools)
        self.codec: Codec = codec.load(self.format_name)
        template_kwargs = kwargs.get("chat_template_kwargs")
        partner = _WAITING.pop(id(template_kwargs), None) if isinstance(template_kwargs, dict) else None
        if partner is not None and partner._template_kwargs is template_kwargs:
            self.session = partner.join(tools)
            self.alone = False
        else:
            self.session = Session(self.codec, tools, template_options(self.codec, template_kwargs))
            self.alone = True

    @property
    def skip_reasoning_parsing(self) -> bool:
        """Without a reasoning parser vLLM reads reasoning as content; so does this parser."""
        return self.alone

    @skip_reasoning_parsing.setter
    def skip_reasoning_parsing(self, value: bool) -> None:
        self.alone = value

    def adjust_request(self, request: Any) -> Any:
        """Keep special tokens in the text: they are the format's markers."""
        request = ToolParser.adjust_request(self, request)
        request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        """The whole reply's tool calls and content (parsed once with the reasoning)."""
        message = self.session.parse(model_output)
        content = text_of(message)
        if self.alone and message.reasoning:
            content = message.reasoning + (content or "")
        calls = [
            ToolCall(
                # A parsed call always has an id (the model's, or one made for it).
                id=call.id or "",
                function=FunctionCall(id=call.id, name=call.name, arguments=call.arguments_json),
            )
            for call in message.tool_calls
        ]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        """What ``delta_text`` adds, with what the reasoning parser's last feed left."""
        self.session.feed(delta_text)
        return _delta_message(self.session.take(), reasoning_as_content=self.alone)

    def finish_streaming(self) -> DeltaMessage | None:
        """The end of the output: what the parser held back, calls closed."""
        self.session.close()
        return _delta_message(self.session.take(), reasoning_as_content=self.alone)


def register() -> None:
    """Register ``codec-<format>`` for every format, as a tool parser and a reasoning parser.
    Idempotent: vLLM loads general plugins in every process."""
    for name in codec.formats():
        title = "".join(part.title() for part in name.replace("_", "-").split("-"))
        reasoning = type(f"Codec{title}ReasoningParser", (CodecReasoningParser,), {"format_name": name})
        tool = type(f"Codec{title}ToolParser", (CodecToolParser,), {"format_name": name})
        ReasoningParserManager.register_module(name=PREFIX + name, module=reasoning)
        ToolParserManager.register_module(name=PREFIX + name, module=tool)


register()
