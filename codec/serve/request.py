"""One chat request, from the client's bytes to the engine's ``/v1/completions`` body.

``prepare`` is all the CPU work before the engine is asked — decoding the JSON, reading the
request (``codec.chat_request``), rendering the prompt (``Codec.prepare``), building the grammar
for ``--constrain`` — in one synchronous call, so that the app runs it off the event loop under
the render time cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from codec.chat_request import ChatRequest, read_request
from codec.errors import CodecError, RequestError
from codec.serve import strict_json
from codec.serve.config import ServeConfig
from codec.serve.errors import ServeError
from codec.serve.limits import check_messages
from codec.turn import Turn

# The sampling fields of a chat request (codec.chat_request.SAMPLING_FIELDS), as the engine's
# /v1/completions takes them: passed on, answered by codec itself, or refused when codec cannot
# give them their meaning (a refusal names the field; nothing is dropped without a word).
_FORWARDED = frozenset(
    {
        "frequency_penalty", "logit_bias", "presence_penalty", "response_format", "seed",
        "temperature", "top_p", "user",
        "ignore_eos", "min_p", "min_tokens", "repetition_penalty", "stop_token_ids", "top_k",
    }
)  # fmt: skip
_ANSWERED = frozenset({"stop", "max_tokens", "max_completion_tokens", "stream_options", "n"})
_BOOKKEEPING = frozenset({"metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier"})
_REFUSED = {
    "logprobs": "token log probabilities are not passed through",
    "top_logprobs": "token log probabilities are not passed through",
    "audio": "audio output is not supported",
    "prediction": "predicted outputs are not supported",
    "web_search_options": "web search is not supported",
    "parallel_tool_calls": "limiting the reply to one call needs constrained decoding (--constrain)",
    "modalities": "only text output is supported",
    "verbosity": "the templates have no verbosity option",
}
_HARMLESS = {"parallel_tool_calls": True, "modalities": ["text"], "logprobs": False}


@dataclass(frozen=True, slots=True)
class Prepared:
    """A request ready for the engine: what it asked (``chat``), the rendered ``turn``, the
    engine's request ``body``, and whether the client wants ``usage`` in its stream."""

    chat: ChatRequest
    turn: Turn
    body: dict[str, Any]
    include_usage: bool


def prepare(config: ServeConfig, raw: bytes) -> Prepared:
    """The request in ``raw`` (the body's bytes), ready for the engine; ``ServeError`` (400)
    naming what is wrong with it. CPU work: call it off the event loop."""
    try:
        body = strict_json.loads(raw, max_depth=config.limits.max_json_depth)
    except strict_json.BadJSON as error:
        raise ServeError(400, f"the request body: {error}", param=error.path) from None
    if not isinstance(body, dict):
        raise ServeError(400, f"the request body must be a JSON object, got {type(body).__name__}")
    check_messages(body, config.limits)
    try:
        constrained = config.constrain is not None
        chat = read_request(body, config.codec, unknown_options=config.unknown_options, constrained=constrained)
        turn = config.codec.prepare(chat.messages, tools=chat.tools, **chat.options)
        upstream_body = completion_request(config, chat, turn)
    except CodecError as error:
        raise ServeError(400, str(error), param=getattr(error, "param", None)) from None
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    return Prepared(chat, turn, upstream_body, include_usage)


def completion_request(config: ServeConfig, chat: ChatRequest, turn: Turn) -> dict[str, Any]:
    """The ``/v1/completions`` body for a chat request: the rendered prompt, the format's stop
    strings before the client's, special tokens kept in the text (vLLM and SGLang read
    ``skip_special_tokens``; engines that do not know it ignore it), and the sampling fields."""
    parallel = chat.sampling.get("parallel_tool_calls") is not False
    for name, value in chat.sampling.items():
        if name == "parallel_tool_calls" and config.constrain is not None:
            continue  # the grammar allows one call
        if name in _REFUSED and value is not None and value != _HARMLESS.get(name):
            raise RequestError(name, f"{_REFUSED[name]} by codec serve")
    for name in ("n", "max_tokens", "max_completion_tokens"):
        _count(name, chat.sampling.get(name))
    if (chat.sampling.get("n") or 1) != 1:
        raise RequestError("n", "codec serve makes one choice per request (n=1)")
    if not isinstance(chat.sampling.get("stream_options"), dict | None):
        raise RequestError("stream_options", f"an object, got {type(chat.sampling['stream_options']).__name__}")
    body: dict[str, Any] = {
        **{name: value for name, value in chat.sampling.items() if name in _FORWARDED and value is not None},
        "prompt": turn.prompt,
        "stop": [*turn.stop, *_client_stops(chat.sampling.get("stop"))],
        "skip_special_tokens": False,
        "stream": chat.stream,
    }
    model = config.upstream_model or chat.model
    if model:
        body["model"] = model
    max_tokens = chat.sampling.get("max_completion_tokens") or chat.sampling.get("max_tokens")
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if chat.stream:
        body["stream_options"] = {"include_usage": True}
    if config.constrain is not None:
        try:
            grammar = turn.constraint(tool_choice=chat.tool_choice, parallel_tool_calls=parallel)
        except CodecError as error:
            raise RequestError("tool_choice", str(error)) from None
        _put(body, config.constrain, grammar)
    return body


def _put(body: dict[str, Any], path: str, value: Any) -> None:
    """``body[a][b] = value`` for the dotted ``path`` ``a.b``."""
    *outer, last = path.split(".")
    for key in outer:
        body = body.setdefault(key, {})
    body[last] = value


def _count(name: str, value: Any) -> None:
    """The fields codec answers itself are checked here: the engine never sees them as sent."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise RequestError(name, f"a positive integer, got {value!r:.40}")


def _client_stops(stop: Any) -> list[str]:
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and all(isinstance(item, str) for item in stop):
        return list(stop)
    raise RequestError("stop", f"a string or a list of strings, got {type(stop).__name__}")
