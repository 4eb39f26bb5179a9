"""OpenAI's error object for every answer ``codec serve`` gives instead of a reply.

``{"error": {"message": ..., "type": ..., "param": ..., "code": ...}}`` is what OpenAI's clients
read (``openai.BadRequestError``, ``.message``, ``.param``); a plain-text 404 or a traceback
becomes an unhelpful ``APIStatusError``. So every refusal — a bad body, a cap, an unknown path,
a wrong method, a missing key, the engine's fault, a bug of ours — is raised as, or turned into,
this shape, with ``code`` the HTTP status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from codec.serve.upstream import UpstreamError

ROUTES = "POST /v1/chat/completions and GET /v1/models"


class ServeError(Exception):
    """A request ``codec serve`` refuses: the HTTP ``status``, the ``message`` the client reads,
    OpenAI's error ``kind`` and the ``param`` (the request field) at fault, when there is one."""

    def __init__(
        self, status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.param = param


def error_body(
    message: str, *, kind: str = "invalid_request_error", param: str | None = None, code: Any = None
) -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_response(
    status: int,
    message: str,
    *,
    kind: str = "invalid_request_error",
    param: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """``error_body`` with ``status`` as the HTTP status and the ``code``."""
    return JSONResponse(error_body(message, kind=kind, param=param, code=status), status_code=status, headers=headers)


async def refused(request: Request, error: Exception) -> Response:
    """Starlette's handler for ``ServeError``."""
    assert isinstance(error, ServeError)  # registered for ServeError only
    return error_response(error.status, error.message, kind=error.kind, param=error.param)


async def engine_failed(request: Request, error: Exception) -> Response:
    """Starlette's handler for ``UpstreamError``: 502, or 504 when the engine timed out."""
    assert isinstance(error, UpstreamError)  # registered for UpstreamError only
    return error_response(error.status, error.message, kind="upstream_error")


async def no_route(request: Request, error: Exception) -> Response:
    """Starlette's handler for its own 404 (no such path) and 405 (wrong method)."""
    assert isinstance(error, HTTPException)  # registered for HTTPException only
    where = f"{request.method} {request.url.path}"
    if error.status_code == 404:
        message = f"no route {where}: codec serve answers {ROUTES}"
    elif error.status_code == 405:
        allowed = (error.headers or {}).get("Allow", "")  # Starlette's 405 names them
        message = f"method not allowed: {where} (allowed: {allowed})"
    else:
        message = f"{where}: {error.detail}"
    return error_response(error.status_code, message, headers=error.headers)


async def internal_error(request: Request, error: Exception) -> Response:
    """The last resort: a bug of ours answers 500 in OpenAI's shape, never a traceback (Starlette
    raises the error again after this answer, so the server logs its traceback)."""
    return error_response(500, f"codec serve failed: {type(error).__name__}", kind="server_error")


HANDLERS: dict[Any, Any] = {
    ServeError: refused,
    UpstreamError: engine_failed,
    HTTPException: no_route,
    Exception: internal_error,
}
"""Starlette's ``exception_handlers`` for the app."""
