"""Real HTTP servers for the serving tests: an ASGI app run by uvicorn in a thread on
127.0.0.1 (a free port picked by the OS), and a scripted engine that answers
``/v1/completions`` the way vLLM does — whole, or streamed as server-sent events."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

STARTUP_SECONDS = 10.0


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Run ``app`` on 127.0.0.1 for the block; yields its base URL (``http://127.0.0.1:PORT``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass(frozen=True)
class Reply:
    """What the scripted engine answers: the text, its finish reason, and how it misbehaves.

    ``fail_after``: break the connection after that many chunks (a crashed engine).
    ``delay``: seconds between chunks (to leave time for a client to go away).
    """

    text: str
    finish_reason: str = "stop"
    fail_after: int | None = None
    delay: float = 0.0


@dataclass
class Engine:
    """A scripted ``/v1/completions``: ``script(body)`` gives the ``Reply`` for a request.

    ``requests`` records each body; ``cancelled`` counts streams the caller left before the end.
    """

    script: Callable[[dict[str, Any]], Reply]
    chunk: int = 5
    requests: list[dict[str, Any]] = field(default_factory=list)
    cancelled: int = 0

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/completions", self._completions, methods=["POST"])])

    async def _completions(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append(body)
        reply = self.script(body)
        usage = {"prompt_tokens": len(body["prompt"]) // 4, "completion_tokens": len(reply.text) // 4}
        if not body.get("stream"):
            choice = {"index": 0, "text": reply.text, "finish_reason": reply.finish_reason}
            return JSONResponse({"id": "cmpl-1", "object": "text_completion", "choices": [choice], "usage": usage})
        return StreamingResponse(self._events(reply, usage), media_type="text/event-stream")

    async def _events(self, reply: Reply, usage: dict[str, int]) -> Any:
        pieces = [reply.text[i : i + self.chunk] for i in range(0, len(reply.text), self.chunk)]
        ended = False
        try:
            for number, piece in enumerate(pieces):
                if reply.fail_after is not None and number == reply.fail_after:
                    ended = True
                    raise ConnectionAbortedError("the scripted engine crashed")  # uvicorn drops the connection
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                yield _event({"index": 0, "text": piece, "finish_reason": None})
            yield _event({"index": 0, "text": "", "finish_reason": reply.finish_reason})
            usage_event = {"id": "cmpl-1", "object": "text_completion", "choices": [], "usage": usage}
            yield f"data: {json.dumps(usage_event)}\n\n"
            yield "data: [DONE]\n\n"
            ended = True
        finally:
            if not ended:  # cancelled or closed: the caller went away mid-stream
                self.cancelled += 1


def _event(choice: dict[str, Any]) -> str:
    return f"data: {json.dumps({'id': 'cmpl-1', 'object': 'text_completion', 'choices': [choice]})}\n\n"
