"""An OpenAI chat-completions request body, read for rendering: ``read_request(body, codec)``.

Every top-level field is accounted for, none silently dropped:

- what the prompt depends on: ``messages``, ``tools``, ``tool_choice`` (``"auto"``; ``"none"``:
  the tools are not rendered), ``chat_template_kwargs`` (the template's options) and
  ``reasoning_effort`` (an option, when the template reads it);
- sampling and bookkeeping fields (``SAMPLING_FIELDS``): they do not change the prompt and are
  handed back untouched in ``ChatRequest.sampling`` for whoever calls the engine;
- anything else is a ``RequestError`` naming the field — one the prompt would need that codec
  cannot honour (``tool_choice: "required"`` needs constrained decoding), or one it does not
  know (a typo, or an engine's extension whose effect it cannot vouch for).

``codec render`` and ``codec serve`` both read requests here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from codec.errors import RequestError, describe
from codec.render.renderer import UnknownOptions

if TYPE_CHECKING:
    from codec.api import Codec

SAMPLING_FIELDS = frozenset(
    {
        # OpenAI's chat-completions fields that do not change the prompt
        "audio", "frequency_penalty", "logit_bias", "logprobs", "max_completion_tokens",
        "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
        "presence_penalty", "prompt_cache_key", "response_format", "safety_identifier", "seed",
        "service_tier", "stop", "store", "stream_options", "temperature", "top_logprobs", "top_p",
        "user", "verbosity", "web_search_options",
        # sampling parameters vLLM and SGLang add
        "ignore_eos", "min_p", "min_tokens", "repetition_penalty", "stop_token_ids", "top_k",
    }
)  # fmt: skip
"""Top-level fields passed through in ``ChatRequest.sampling``: rendering ignores them."""

_PROMPT_FIELDS = frozenset({"messages", "tools", "tool_choice", "chat_template_kwargs", "reasoning_effort"})
_OWN_FIELDS = frozenset({"model", "stream"})

# Fields codec knows and refuses, with what to do instead.
_REFUSED = {
    "functions": "the deprecated form of tools; send tools",
    "function_call": "the deprecated form of tool_choice; send tool_choice",
    "chat_template": "the template is the one the codec was loaded with (codec.load(path), --template)",
    "add_generation_prompt": "a chat request always ends with the assistant's generation prompt",
    "continue_final_message": "continuing the last message is not supported; the prompt ends with a new turn",
    "documents": "no bundled template renders documents",
}

ToolChoice = Literal["auto", "none", "required"] | Mapping[str, Any]
"""What ``tool_choice`` a request may carry once read: ``"required"`` and a named function only
for a caller that constrains decoding (``read_request(..., constrained=True)``)."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """What a request body asks for: the prompt's inputs (``messages``, ``tools``, ``options``
    for the template), the ``tool_choice`` honoured, ``stream``, ``sampling`` (the pass-through
    fields, as sent) and the client's ``model`` name."""

    messages: list[Any]
    tools: list[Any] | None
    options: dict[str, Any]
    tool_choice: ToolChoice
    stream: bool
    sampling: dict[str, Any]
    model: str | None


def read_request(
    body: Mapping[str, Any], codec: Codec, *, unknown_options: UnknownOptions = "error", constrained: bool = False
) -> ChatRequest:
    """``body`` read for ``codec``'s template; ``RequestError`` (a ``RenderError``, ``.param``
    the field) for a field that is malformed, cannot be honoured or is not known.

    ``unknown_options="ignore"`` (a router sending one set of options to every model) leaves
    out the template options this template does not read — in ``chat_template_kwargs``, and a
    ``reasoning_effort`` it has no use for — instead of refusing them. ``constrained``: the
    caller constrains decoding with ``Codec.constraint``, so ``tool_choice`` may force a call
    (``"required"``, a named function)."""
    if not isinstance(body, Mapping):
        raise RequestError("body", f"a chat request is a JSON object, got {type(body).__name__}")
    _refuse_unknown(body, codec)
    tool_choice = _tool_choice(body.get("tool_choice"), constrained)
    return ChatRequest(
        messages=_messages(body.get("messages")),
        tools=None if tool_choice == "none" else _tools(body.get("tools")),
        options=_options(body, codec, ignore_unknown=unknown_options == "ignore"),
        tool_choice=tool_choice,
        stream=_stream(body.get("stream")),
        sampling={name: value for name, value in body.items() if name in SAMPLING_FIELDS},
        model=_model(body.get("model")),
    )


def _refuse_unknown(body: Mapping[str, Any], codec: Codec) -> None:
    for name in body:
        if name in _PROMPT_FIELDS or name in _OWN_FIELDS or name in SAMPLING_FIELDS:
            continue
        if name in _REFUSED:
            raise RequestError(name, f"not supported: {_REFUSED[name]}")
        if name in codec.options:
            raise RequestError(name, f"a template option; send it in chat_template_kwargs: {{{name!r}: ...}}")
        raise RequestError(str(name), "unknown field: neither a sampling field nor one the prompt depends on")


def _messages(messages: Any) -> list[Any]:
    if not isinstance(messages, list):
        raise RequestError("messages", f"required: a list of messages, got {_kind(messages)}")
    return messages


def _tools(tools: Any) -> list[Any] | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise RequestError("tools", f"a list of tools, got {_kind(tools)}")
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise RequestError(f"tools[{index}]", f'a tool is an object {{"type": "function", ...}}, got {_kind(tool)}')
    return tools


def _tool_choice(choice: Any, constrained: bool) -> ToolChoice:
    """``"auto"`` (or absent) and ``"none"`` are honoured; forcing a call only when decoding is
    constrained, because only that can make the model call a tool."""
    if choice is None or choice == "auto":
        return "auto"
    if choice == "none":
        return "none"
    if constrained and choice == "required":
        return "required"
    if constrained and isinstance(choice, Mapping) and isinstance(_function_name(choice), str):
        return choice
    if choice == "required" or isinstance(choice, Mapping):
        forced = "a call" if choice == "required" else f"the call {describe(_function_name(choice))}"
        raise RequestError(
            "tool_choice",
            f"forcing {forced} needs constrained decoding (codec serve --constrain); use 'auto' or 'none'",
        )
    raise RequestError(
        "tool_choice", f"expected 'auto', 'none', 'required' or {{'type': 'function', ...}}, got {describe(choice, 60)}"
    )


def _function_name(choice: Mapping[str, Any]) -> Any:
    function = choice.get("function")
    return function.get("name") if isinstance(function, Mapping) else None


def _options(body: Mapping[str, Any], codec: Codec, *, ignore_unknown: bool) -> dict[str, Any]:
    """``chat_template_kwargs``, and ``reasoning_effort`` when the template reads it: each a
    variable the template reads, or a ``RequestError`` listing those it does."""
    kwargs = body.get("chat_template_kwargs")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise RequestError("chat_template_kwargs", f"an object of template options, got {_kind(kwargs)}")
    options = dict(kwargs or {})
    for name in list(options):
        if name in codec.options:
            continue
        if not ignore_unknown:
            raise RequestError(f"chat_template_kwargs.{name}", _not_read(codec))
        del options[name]
    effort = body.get("reasoning_effort")
    if effort is None:
        return options
    if "reasoning_effort" not in codec.options:
        if ignore_unknown:
            return options
        raise RequestError("reasoning_effort", _not_read(codec))
    if options.setdefault("reasoning_effort", effort) != effort:
        raise RequestError(
            "reasoning_effort",
            f"{describe(effort)} differs from chat_template_kwargs.reasoning_effort "
            f"{describe(options['reasoning_effort'])}",
        )
    return options


def _not_read(codec: Codec) -> str:
    reads = ", ".join(sorted(codec.options)) or "no options"
    return f"the {codec.name} template does not read it (it reads: {reads})"


def _stream(stream: Any) -> bool:
    if stream is None or isinstance(stream, bool):
        return bool(stream)
    raise RequestError("stream", f"true or false, got {_kind(stream)}")


def _model(model: Any) -> str | None:
    if model is None or isinstance(model, str):
        return model
    raise RequestError("model", f"a string, got {_kind(model)}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
