"""Messages, tool calls and conversations: frozen pydantic models with OpenAI wire forms.

Each model accepts the OpenAI chat-completions dict for it and gives it back with
``to_openai()``. The wire forms, literally::

    {"role": "system", "content": "You are terse."}
    {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                 {"type": "image_url", "image_url": {"url": "..."}}]}
    {"role": "assistant", "content": null, "reasoning_content": "The user wants...",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]}
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C"}

``arguments`` may be a JSON string (as OpenAI sends it) or an object; it is held as a dict.
Reasoning may come as ``reasoning_content`` or ``reasoning``; it is held as ``reasoning``.

Longer than ~300 lines: every model of the wire format, each beside its literal wire form, and
the role-discriminated union that validates them; apart, each would import all the others.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from codec._client_input import with_responses_content, without_unprintable
from codec._nesting import MAX_VALUE_DEPTH, NestedTooDeep, deeper_than, holds_long_integer, unwritable
from codec.errors import RenderError, describe


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


_Model = TypeVar("_Model", bound=BaseModel)


def built(model: type[_Model], fields: dict[str, Any], private: dict[str, Any] | None = None) -> _Model:
    """An instance of ``model`` from values ``codec`` made and typed itself (the parser's
    messages): what ``model.model_construct(**fields)`` makes, then ``private`` set, without
    its walk over every field's aliases and defaults (``fields`` gives every field, in order,
    and ``private`` every private attribute). ``tests/test_pinned_builder.py`` checks the two agree."""
    instance = model.__new__(model)
    object.__setattr__(instance, "__dict__", fields)
    object.__setattr__(instance, "__pydantic_fields_set__", set(fields))
    object.__setattr__(instance, "__pydantic_extra__", None)
    object.__setattr__(instance, "__pydantic_private__", private)
    return instance


class TextPart(_Frozen):
    """A text part of a multi-part content list: ``{"type": "text", "text": "..."}``."""

    type: Literal["text"] = "text"
    text: str


class MediaPart(BaseModel):
    """An image, audio or video part. Templates print only a placeholder for it.

    Extra keys are allowed here (and only here) because they carry the payload in whatever shape
    the caller's API uses (``image_url: {"url": ...}``, ``input_audio: {...}``); they are kept so
    that ``to_openai()`` gives the part back unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="allow")
    type: Literal["image", "image_url", "audio", "input_audio", "audio_url", "video", "video_url"]

    @model_validator(mode="after")
    def _bounded(self) -> MediaPart:
        problem = unwritable(self.model_extra or {})  # dumps and error messages would fail on it
        if problem is not None:
            raise ValueError(f"the {self.type} part's payload {problem}")
        return self


ContentPart = Annotated[TextPart | MediaPart, Field(discriminator="type")]
Content = str | tuple[ContentPart, ...]


def content_to_openai(content: Content | None) -> Any:
    """The wire form of message content: a string, or a list of part dicts."""
    if content is None or isinstance(content, str):
        return content
    return [part.model_dump(exclude_none=True) for part in content]


def content_text(content: Content | None) -> str:
    """The text of ``content`` with media parts left out."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.text for part in content if isinstance(part, TextPart))


class ToolCall(_Frozen):
    """One function call: ``{"id", "type": "function", "function": {"name", "arguments"}}``."""

    id: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_openai(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("type", "function") != "function":
            # openai's SDK also dumps custom tool calls: {"type": "custom", "custom": {...}}
            raise ValueError(
                f"a tool call of type {describe(data['type'])} cannot be rendered; only 'function' calls can"
            )
        if not isinstance(data, Mapping) or "function" not in data:
            return data
        function = data["function"]
        if not isinstance(function, Mapping):
            raise ValueError("'function' must be an object with 'name' and 'arguments'")
        return {
            "id": data.get("id"),
            "name": function.get("name"),
            "arguments": _arguments_object(function.get("arguments")),
        }

    @field_validator("arguments")
    @classmethod
    def _bounded(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        if deeper_than(arguments, MAX_VALUE_DEPTH):  # json.dumps and templates would recurse past it
            raise NestedTooDeep(f"arguments nested deeper than {MAX_VALUE_DEPTH} levels")
        if holds_long_integer(arguments):  # arguments_json could not write it
            raise ValueError(f"arguments {unwritable(arguments)}")
        return arguments

    @property
    def arguments_json(self) -> str:
        """The arguments as the JSON text OpenAI sends (``ensure_ascii=False``, default separators)."""
        return json.dumps(self.arguments, ensure_ascii=False)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI wire form, with ``arguments`` as a JSON string."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments_json}}

    def to_template(self) -> dict[str, Any]:
        """What chat templates read: the OpenAI shape with ``arguments`` as a mapping."""
        call: dict[str, Any] = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        if self.id is None:
            del call["id"]
        return call


def _arguments_object(arguments: Any) -> Any:
    """Arguments arrive as a JSON string (OpenAI) or an object; both become a dict."""
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as error:
            raise ValueError(f"arguments are not valid JSON: {error}") from None
        except RecursionError:
            raise NestedTooDeep(f"arguments nested deeper than {MAX_VALUE_DEPTH} levels") from None
        except ValueError as error:  # an integer longer than int() reads (sys.get_int_max_str_digits)
            raise ValueError(f"arguments cannot be read: {error}") from None
    if not isinstance(arguments, Mapping):
        raise ValueError(f"arguments must be a JSON object, got {type(arguments).__name__}")
    return dict(arguments)


class SystemMessage(_Frozen):
    """``{"role": "system", "content": ..., "name": ...}`` (``name`` optional), or the same with
    ``"role": "developer"``, OpenAI's newer name for the instructions a system message gives.

    ``role`` keeps which of the two was sent: ``render`` passes ``developer`` on to a template
    that handles that role and writes it as ``system`` for one that does not (docs/input.md).
    """

    role: Literal["system", "developer"] = "system"
    content: Content
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI wire form (``name`` only when set)."""
        return _with_name({"role": self.role, "content": content_to_openai(self.content)}, self.name)

    def to_template(self) -> dict[str, Any]:
        """What chat templates read (the wire form; media parts keep their payload keys)."""
        return self.to_openai()


class UserMessage(_Frozen):
    """``{"role": "user", "content": ..., "name": ...}`` (``name`` optional; it is passed to the
    template, and no bundled template prints it)."""

    role: Literal["user"] = "user"
    content: Content
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI wire form (``name`` only when set)."""
        return _with_name({"role": "user", "content": content_to_openai(self.content)}, self.name)

    def to_template(self) -> dict[str, Any]:
        """What chat templates read."""
        return self.to_openai()


def _with_name(wire: dict[str, Any], name: str | None) -> dict[str, Any]:
    if name is not None:
        wire["name"] = name
    return wire


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A deviation lenient parsing repaired: ``code``, where (``offset`` into the completion)
    and what was done."""

    code: str
    offset: int
    message: str


FinishReason = Literal["stop", "tool_calls", "length"]


class AssistantMessage(_Frozen):
    """What the model wrote: visible ``content``, hidden ``reasoning`` and ``tool_calls``.

    A parsed reply also says how the output ended — outside equality and ``to_openai()``, since
    they describe the parse, not the message: ``finish_reason`` (``"length"`` when the output
    was cut off inside a structure, else ``"tool_calls"`` when there are calls, else ``"stop"``),
    ``truncated_call`` (a call the output cut off: what arrived of it, never in ``tool_calls``,
    so it cannot be executed by mistake), ``incomplete_calls`` (every call that did not finish:
    the truncated one, and any stopped at a parsing limit) and ``diagnostics`` (the repairs
    lenient parsing made, and limits reached).
    """

    role: Literal["assistant"] = "assistant"
    content: Content | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason | None = Field(default=None, exclude=True, repr=False)
    truncated_call: ToolCall | None = Field(default=None, exclude=True, repr=False)
    incomplete_calls: tuple[ToolCall, ...] = Field(default=(), exclude=True, repr=False)
    diagnostics: tuple[Diagnostic, ...] = Field(default=(), exclude=True, repr=False)

    _parsed: tuple[Any, ...] | None = PrivateAttr(default=None)

    @property
    def is_model_output(self) -> bool:
        """Whether this is a reply ``parse``/``stream`` returned, unchanged since: ``render``
        passes its text back unchecked (it was already in the model's context, so it forges
        nothing). A message built or changed by the caller is checked like any other."""
        return self._parsed is not None and self._parsed == self._message_fields()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AssistantMessage):
            return NotImplemented
        return self._message_fields() == other._message_fields()

    def __hash__(self) -> int:
        return hash((self.content, self.reasoning, self.tool_calls))

    def _message_fields(self) -> tuple[Any, ...]:
        return (self.content, self.reasoning, self.tool_calls)

    @model_validator(mode="before")
    @classmethod
    def _from_openai(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        data = without_unprintable(data)
        if data.get("tool_calls") is None:  # the SDK dumps "tool_calls": null
            data.pop("tool_calls", None)
        if "reasoning_content" in data:
            alias = data.pop("reasoning_content")
            if data.get("reasoning") is None:
                data["reasoning"] = alias
        return data

    def to_openai(self) -> dict[str, Any]:
        """``{"role", "content", "reasoning_content"?, "tool_calls"?}`` (absent keys are empty)."""
        wire: dict[str, Any] = {"role": "assistant", "content": content_to_openai(self.content)}
        if self.reasoning is not None:
            wire["reasoning_content"] = self.reasoning
        if self.tool_calls:
            wire["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        return wire

    def to_template(self) -> dict[str, Any]:
        """What chat templates read: reasoning under both names (Solar reads only ``reasoning``,
        GLM only ``reasoning_content``), arguments as mappings, ``None`` keys left out."""
        message: dict[str, Any] = {"role": "assistant"}
        if self.content is not None:
            message["content"] = content_to_openai(self.content)
        if self.reasoning is not None:
            message["reasoning_content"] = self.reasoning
            message["reasoning"] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = [call.to_template() for call in self.tool_calls]
        return message


class ToolMessage(_Frozen):
    """A tool's result: ``{"role": "tool", "tool_call_id": ..., "content": ...}``.

    It may instead carry ``tool_responses``, llama.cpp's Gemma convention::

        {"role": "tool", "tool_responses": [{"name": "get_weather", "response": {"temp": 18}}]}

    No bundled template reads ``tool_responses`` on a tool message, so when ``content`` is
    missing it is made from them: one response's ``response`` (a string as it is, anything else
    as JSON), or several as a JSON array of the entries; ``name`` is taken from a single
    response too. ``tool_responses`` stay on the message and reach the template as given.
    """

    role: Literal["tool"] = "tool"
    content: Content
    tool_call_id: str | None = None
    name: str | None = None
    tool_responses: tuple[dict[str, Any], ...] | None = None

    @model_validator(mode="before")
    @classmethod
    def _content_from_responses(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or data.get("tool_responses") is None:
            return data
        return with_responses_content(data)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI wire form (``name``, ``tool_call_id`` and ``tool_responses`` only when set)."""
        wire: dict[str, Any] = {"role": "tool", "content": content_to_openai(self.content)}
        if self.tool_call_id is not None:
            wire["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            wire["name"] = self.name
        if self.tool_responses is not None:
            wire["tool_responses"] = [dict(entry) for entry in self.tool_responses]
        return wire

    def to_template(self) -> dict[str, Any]:
        """What chat templates read."""
        return self.to_openai()


AnyMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage
Message = Annotated[AnyMessage, Field(discriminator="role")]
_MESSAGE = TypeAdapter(Message)


class Conversation(_Frozen):
    """A whole conversation: messages, the tools offered, the template options in force, and
    whether the prompt ends with a generation prompt."""

    messages: tuple[Message, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    options: dict[str, Any] = Field(default_factory=dict)
    add_generation_prompt: bool = True

    def to_openai(self) -> list[dict[str, Any]]:
        """The messages in OpenAI wire form."""
        return [message.to_openai() for message in self.messages]

    def followed_by(self, *messages: Any) -> Conversation:
        """A new conversation with ``messages`` (dicts or models) appended; it ends with them,
        so ``add_generation_prompt`` is set again (the next prompt asks for a reply)."""
        added = tuple(to_message(m, len(self.messages) + i) for i, m in enumerate(messages))
        return self.model_copy(update={"messages": self.messages + added, "add_generation_prompt": True})

    def with_tool_results(self, results: Mapping[str, Any]) -> Conversation:
        """The conversation after running the last assistant message's calls: one tool message
        per call, in call order, from ``results`` keyed by call id (a string result is used as
        it is, anything else as JSON). ``RenderError`` names a call without a result, or one
        that cannot be written as JSON."""
        if not isinstance(results, Mapping):
            raise RenderError(f"results must be a dict of tool results keyed by call id, got {type(results).__name__}")
        last = self.messages[-1] if self.messages else None
        if not isinstance(last, AssistantMessage) or not last.tool_calls:
            raise RenderError("the conversation does not end with tool calls", message_index=len(self.messages) - 1)
        replies = []
        for call in last.tool_calls:
            if call.id is None or call.id not in results:
                raise RenderError(f"no result for call {call.id!r} ({call.name})", message_index=len(self.messages) - 1)
            text = _result_text(results[call.id], call)
            replies.append(ToolMessage(content=text, tool_call_id=call.id, name=call.name))
        return self.followed_by(*replies)


def _result_text(result: Any, call: ToolCall) -> str:
    """A tool's result as the tool message's text: a string as it is, anything else as JSON."""
    if isinstance(result, str):
        return result
    problem = unwritable(result)
    if problem is None:
        try:
            return json.dumps(result, ensure_ascii=False)
        except (TypeError, ValueError) as error:  # a set, a date, a cycle: not JSON
            problem = f"is not JSON ({error})"
    raise RenderError(f"the result for call {call.id!r} ({call.name}) {problem}; pass a string, or JSON values")


def to_message(message: Any, index: int = 0) -> AnyMessage:
    """One message from an OpenAI dict or a model; a ``RenderError`` names what is wrong."""
    if isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolMessage)):
        return message
    if not isinstance(message, Mapping):
        raise RenderError(
            f"a message must be a dict or a codec message, got {type(message).__name__}", message_index=index
        )
    role = message.get("role")
    if role not in ("system", "developer", "user", "assistant", "tool"):
        raise RenderError(
            f"unknown role {describe(role)}; expected system, developer, user, assistant or tool", message_index=index
        )
    try:
        validated: AnyMessage = _MESSAGE.validate_python(dict(message))
        return validated
    except ValidationError as error:
        where, text = _furthest(error)
        at = f" at {where}" if where else ""
        raise RenderError(f"invalid {role} message{at}: {text}", message_index=index) from None


def _furthest(error: ValidationError) -> tuple[str, str]:
    """Where and what of the problem validation got furthest into the message. Content is a
    string or a list of parts, and pydantic reports both branches: for a bad part, "not a
    string" (the first) says less than what is wrong with the part. Branch labels (``str``,
    ``tuple[...]``) are left out of the path."""
    details = error.errors()
    deepest = max(details, key=lambda detail: len(detail["loc"]))  # the first of the longest
    path = [part for part in deepest["loc"][1:] if not _branch_label(part)]
    return ".".join(map(str, path)), deepest["msg"].removeprefix("Value error, ")  # a validator's own words


def _branch_label(part: str | int) -> bool:
    return part == "str" or (isinstance(part, str) and "[" in part)


def to_messages(messages: Iterable[Any]) -> list[AnyMessage]:
    """Validate a list of OpenAI dicts or models into message models."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise RenderError(f"messages must be a list of messages, got {type(messages).__name__}")
    return [to_message(message, index) for index, message in enumerate(messages)]
