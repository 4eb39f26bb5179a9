"""The ASGI app of ``codec serve``: ``POST /v1/chat/completions`` and ``GET /v1/models``.

For each chat request: read it (``codec.chat_request``), render the prompt with the format's
template (``Codec.prepare``), ask the engine's ``/v1/completions`` for raw text after it — with
the format's stop strings and special tokens kept, since they are the reply's structure — and
turn that text into OpenAI chat chunks (``Turn.chunk_stream``) or one chat completion.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from codec.api import Codec
from codec.chat_request import ChatRequest, read_request
from codec.chunks import ReasoningField
from codec.errors import CodecError, RequestError
from codec.render.renderer import UnknownOptions
from codec.serve.upstream import Upstream, UpstreamError, text_of
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
class ServeConfig:
    """What one ``codec serve`` serves: a format (``codec.load(...)``) in front of an engine.

    ``upstream`` is the engine's OpenAI base URL (``http://127.0.0.1:8000/v1``). ``model`` is
    the name clients see (``/v1/models``); ``upstream_model`` the one sent to the engine
    (default: the client's). ``reasoning_field`` names the reasoning in replies
    (``reasoning_content``, or ``reasoning`` as vLLM now writes it). ``timeout`` bounds each
    wait for the engine, in seconds. ``unknown_options="ignore"`` drops template options this
    template does not read (``codec.chat_request.read_request``) instead of refusing them.
    ``constrain`` names the engine's request field (dotted: ``structured_outputs.grammar``) that
    gets the turn's llguidance grammar (``Turn.constraint``); with it, ``tool_choice`` may force
    a call and ``parallel_tool_calls: false`` is honoured.
    """

    codec: Codec
    upstream: str
    model: str
    upstream_model: str | None = None
    reasoning_field: ReasoningField = "reasoning_content"
    timeout: float = 600.0
    unknown_options: UnknownOptions = "error"
    constrain: str | None = None


def create_app(config: ServeConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
    """The ASGI app for ``config`` (``transport``: for tests, an httpx transport to the engine)."""
    state: dict[str, Upstream] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx.Timeout(config.timeout, connect=min(config.timeout, 10.0))
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        async with httpx.AsyncClient(timeout=timeout, limits=limits, transport=transport) as client:
            state["upstream"] = Upstream(config.upstream, client)
            yield

    async def chat_completions(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            return error_response(400, f"the request body is not JSON: {error}")
        if not isinstance(body, dict):
            return error_response(400, "the request body must be a JSON object")
        try:
            constrained = config.constrain is not None
            chat = read_request(body, config.codec, unknown_options=config.unknown_options, constrained=constrained)
            turn = config.codec.prepare(chat.messages, tools=chat.tools, **chat.options)
            upstream_body = completion_request(config, chat, turn)
        except CodecError as error:
            return error_response(400, str(error), param=getattr(error, "param", None))
        upstream = state["upstream"]
        model = chat.model or config.model
        if chat.stream:
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = sse_chunks(upstream, upstream_body, turn, model, config.reasoning_field, usage)
            return StreamingResponse(events, media_type="text/event-stream")
        try:
            answer = await upstream.complete(upstream_body)
        except UpstreamError as error:
            return error_response(error.status, error.message, kind="upstream_error")
        text, reason = text_of(answer)
        completion = turn.completion(
            text, model=model, finish_reason=reason, usage=answer.get("usage"), reasoning_field=config.reasoning_field
        )
        return JSONResponse(completion)

    async def models(request: Request) -> Response:
        entry = {"id": config.model, "object": "model", "created": 0, "owned_by": "codec"}
        return JSONResponse({"object": "list", "data": [entry]})

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


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
    if (chat.sampling.get("n") or 1) != 1:
        raise RequestError("n", "codec serve makes one choice per request (n=1)")
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


def _client_stops(stop: Any) -> list[str]:
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and all(isinstance(item, str) for item in stop):
        return list(stop)
    raise RequestError("stop", f"a string or a list of strings, got {type(stop).__name__}")


async def sse_chunks(
    upstream: Upstream,
    body: Mapping[str, Any],
    turn: Turn,
    model: str,
    reasoning_field: ReasoningField,
    include_usage: bool,
) -> AsyncIterator[str]:
    """The server-sent events of one streamed reply: a chunk per event, then ``[DONE]``. When
    the engine fails mid-stream, an ``error`` event ends the stream (OpenAI's clients raise it)."""
    stream = turn.chunk_stream(model=model, reasoning_field=reasoning_field)
    reason: str | None = None
    usage: Mapping[str, Any] | None = None
    try:
        async for event in upstream.stream(body):
            text, finished = text_of(event)
            reason = finished or reason
            usage = event.get("usage") or usage
            for chunk in stream.feed(text):
                yield _sse(chunk)
    except UpstreamError as error:
        yield _sse(error_body(error.message, kind="upstream_error", code=error.status))
        return
    for chunk in stream.close(upstream_finish_reason=reason, usage=usage if include_usage else None):
        yield _sse(chunk)
    yield "data: [DONE]\n\n"


def _sse(data: Mapping[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def error_body(
    message: str, *, kind: str = "invalid_request_error", param: str | None = None, code: Any = None
) -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_response(
    status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None
) -> JSONResponse:
    return JSONResponse(error_body(message, kind=kind, param=param, code=status), status_code=status)


def run(config: ServeConfig, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``config`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(config), host=host, port=port, log_level="info")
