"""``ServeLimits``: how much one request may ask of ``codec serve``, and of the engine's answer.

A chat server is open to whoever can reach it. Without caps, one client can make it buffer a
1 GB body, render 100,000 messages while every other request waits, or hold a request open
while an engine sends keep-alive comments forever. Each cap below ends such a request with an
OpenAI-shaped error naming the cap and the ``codec serve`` flag that raises it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from starlette.requests import ClientDisconnect, Request

from codec.errors import CodecError
from codec.serve.errors import ServeError

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServeLimits:
    """The caps of one ``codec serve`` (``ServeConfig.limits``); the defaults are far above what
    a real chat request or engine answer needs.

    ``max_body_bytes``: a request body (413; ``--max-body-bytes``). ``max_messages``: messages in
    one request (400; ``--max-messages``). ``render_seconds``: reading and rendering one request,
    off the event loop (400; ``--render-timeout``). ``max_json_depth``: arrays and objects nested
    in a request body or an engine event (400 / 502). ``max_line_bytes``: one line of the engine's
    server-sent events. ``max_idle_lines``: lines in a row from the engine with no ``data:`` —
    keep-alive comments, event names, blank lines — before the stream counts as stuck.
    """

    max_body_bytes: int = 4 * MIB
    max_messages: int = 2048
    render_seconds: float = 5.0
    max_json_depth: int = 128
    max_line_bytes: int = 1 * MIB
    max_idle_lines: int = 10_000

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise CodecError(f"ServeLimits.{field.name} must be a positive number, got {value!r}")


async def read_body(request: Request, limits: ServeLimits) -> bytes:
    """The request's body, read as it arrives and refused (413) as soon as it passes
    ``max_body_bytes`` — before the rest is read, let alone buffered."""
    cap = limits.max_body_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise ServeError(413, _too_large(f"declares {int(declared)} bytes", cap))
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise ServeError(413, _too_large(f"has more than {cap} bytes", cap))
            chunks.append(chunk)
    except ClientDisconnect:
        raise ServeError(499, "the client went away before sending its whole body") from None  # read by nobody
    return b"".join(chunks)


def check_messages(body: dict[str, Any], limits: ServeLimits) -> None:
    """400 when ``messages`` lists more than ``max_messages`` (the list's contents are checked
    when the request is read)."""
    messages = body.get("messages")
    if isinstance(messages, list) and len(messages) > limits.max_messages:
        raise ServeError(
            400,
            f"{len(messages)} messages, more than this server takes ({limits.max_messages}; "
            "codec serve --max-messages)",
            param="messages",
        )


def render_too_slow(limits: ServeLimits) -> ServeError:
    """The error for a request whose reading and rendering passed ``render_seconds``."""
    return ServeError(
        400,
        f"reading and rendering the request took more than {limits.render_seconds:g} s "
        "(codec serve --render-timeout); send fewer or shorter messages",
    )


def _too_large(what: str, cap: int) -> str:
    return f"the request body {what}, more than this server takes ({cap} bytes; codec serve --max-body-bytes)"
