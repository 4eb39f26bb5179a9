"""The ASGI app of ``codec serve``: ``POST /v1/chat/completions`` and ``GET /v1/models``.

For each chat request: read the body up to its cap (``codec.serve.limits``), decode, read and
render it off the event loop under a time cap (``codec.serve.request.prepare``), ask the
engine's ``/v1/completions`` for raw text after the prompt — with the format's stop strings and
special tokens kept, since they are the reply's structure — and turn that text into OpenAI chat
chunks (``Turn.chunk_stream``) or one chat completion. Every refusal is OpenAI's error object
(``codec.serve.errors``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from codec.chunks import ChunkStream
from codec.serve.auth import RequireKey
from codec.serve.config import ServeConfig
from codec.serve.errors import HANDLERS, error_body
from codec.serve.limits import read_body, render_too_slow
from codec.serve.request import Prepared, prepare
from codec.serve.upstream import Upstream, UpstreamError, text_of, usage_of

_T = TypeVar("_T")
_log = logging.getLogger("codec.serve")

# A piece of engine output at least this long is parsed in a worker thread. Engines stream a
# token or a few per event, which parses in microseconds — less than the hop to a thread costs
# (docs/serving.md, "Off the event loop") — so only long pieces are worth moving.
OFF_LOOP_CHARS = 1024


def create_app(config: ServeConfig, *, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
    """The ASGI app for ``config`` (``transport``: for tests, an httpx transport to the engine)."""
    state: dict[str, Upstream] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx.Timeout(config.timeout, connect=min(config.timeout, 10.0))
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        async with httpx.AsyncClient(timeout=timeout, limits=limits, transport=transport) as client:
            state["upstream"] = Upstream(config.upstream, client, config.limits, config.timeout)
            yield

    async def chat_completions(request: Request) -> Response:
        raw = await read_body(request, config.limits)
        prepared = await _prepare_off_loop(config, raw)
        upstream = state["upstream"]
        model = prepared.chat.model or config.model
        if prepared.chat.stream:
            return StreamingResponse(sse_chunks(upstream, prepared, model, config), media_type="text/event-stream")
        answer = await _unless_client_leaves(request, partial(upstream.complete, prepared.body))
        if answer is None:
            return Response(status_code=499)  # nobody is left to read it
        text, reason = text_of(answer, upstream.url)
        usage = usage_of(answer, upstream.url)
        completion = partial(
            prepared.turn.completion,
            text,
            model=model,
            finish_reason=reason,
            usage=usage,
            reasoning_field=config.reasoning_field,
        )
        return JSONResponse(await anyio.to_thread.run_sync(completion))

    async def models(request: Request) -> Response:
        entry = {"id": config.model, "object": "model", "created": 0, "owned_by": "codec"}
        return JSONResponse({"object": "list", "data": [entry]})

    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
    middleware = [] if config.api_key is None else [Middleware(RequireKey, key=config.api_key)]
    return Starlette(routes=routes, middleware=middleware, exception_handlers=HANDLERS, lifespan=lifespan)


async def _prepare_off_loop(config: ServeConfig, raw: bytes) -> Prepared:
    """``prepare`` in a worker thread, so a long render does not hold up other requests; past
    ``render_seconds`` the client gets a 400 (a thread cannot be stopped: it is left to finish,
    and its result dropped)."""
    with anyio.move_on_after(config.limits.render_seconds):
        return await anyio.to_thread.run_sync(prepare, config, raw, abandon_on_cancel=True)
    raise render_too_slow(config.limits)  # only the time cap ends the block without a return


async def _unless_client_leaves(request: Request, work: Callable[[], Awaitable[_T]]) -> _T | None:
    """``work()``, cancelled if the client disconnects first (then ``None``). Cancelling an
    httpx request closes its connection, which is how an engine learns to stop generating;
    Starlette does this for streamed responses, not for a handler awaiting a whole one."""
    outcome: dict[str, Any] = {}

    async def run() -> None:
        try:
            outcome["value"] = await work()
        except Exception as error:  # raised below, outside the task group (which would wrap it)
            outcome["error"] = error
        group.cancel_scope.cancel()

    async def watch() -> None:
        # The body has been read: what the server sends next is the disconnect.
        while (await request.receive())["type"] != "http.disconnect":
            pass
        group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        group.start_soon(watch)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


async def sse_chunks(upstream: Upstream, prepared: Prepared, model: str, config: ServeConfig) -> AsyncIterator[str]:
    """The server-sent events of one streamed reply: a chunk per event, then ``[DONE]``. When
    the engine fails, answers of the wrong shape or stalls — or codec fails — an ``error`` event
    (OpenAI's clients raise it) and ``[DONE]`` end the stream instead of a dropped connection."""
    try:
        async for chunk in _chunks(upstream, prepared, model, config):
            yield _sse(chunk)
    except UpstreamError as error:
        yield _sse(error_body(error.message, kind="upstream_error", code=error.status))
    except Exception as error:  # a bug of ours: the log gets the traceback, the client an ending
        _log.exception("codec serve failed mid-stream")
        yield _sse(error_body(f"codec serve failed: {type(error).__name__}", kind="server_error", code=500))
    yield "data: [DONE]\n\n"


async def _chunks(
    upstream: Upstream, prepared: Prepared, model: str, config: ServeConfig
) -> AsyncIterator[dict[str, Any]]:
    stream = prepared.turn.chunk_stream(model=model, reasoning_field=config.reasoning_field)
    reason: str | None = None
    usage: Mapping[str, Any] | None = None
    async for event in upstream.stream(prepared.body):
        text, finished = text_of(event, upstream.url)
        reason = finished or reason
        usage = usage_of(event, upstream.url) or usage
        for chunk in await _feed(stream, text):
            yield chunk
    close = partial(stream.close, upstream_finish_reason=reason, usage=usage if prepared.include_usage else None)
    for chunk in await anyio.to_thread.run_sync(close):
        yield chunk


async def _feed(stream: ChunkStream, text: str) -> list[dict[str, Any]]:
    if len(text) < OFF_LOOP_CHARS:
        return stream.feed(text)
    return await anyio.to_thread.run_sync(stream.feed, text)


def _sse(data: Mapping[str, Any]) -> str:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def run(config: ServeConfig, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``config`` with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(config), host=host, port=port, log_level="info")
