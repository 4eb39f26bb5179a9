"""``--api-key``: every request must carry ``Authorization: Bearer <key>``, or gets a 401.

A pure ASGI middleware, outside the routes, so that no path — ``/v1/models``, an unknown one —
tells a caller without the key anything. The key is compared with ``hmac.compare_digest``,
whose time does not depend on how much of it a guess got right.
"""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from codec.serve.errors import error_response


class RequireKey:
    """Pass HTTP requests that bring ``key`` as a bearer token on to ``app``; answer the others
    401 in OpenAI's error shape."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self._key = key.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self._problem(Headers(scope=scope).get("authorization"))
        if problem is None:
            await self.app(scope, receive, send)
            return
        response = error_response(401, problem, headers={"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)

    def _problem(self, authorization: str | None) -> str | None:
        """Why ``authorization`` (the header's value) does not let the request in, or ``None``."""
        if not authorization:
            return "no API key: send the header Authorization: Bearer <key>"
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return f"the Authorization header must use the Bearer scheme, not {scheme[:20]!r}"
        # Starlette decodes header bytes as latin-1: encoding back gives the bytes sent.
        if not hmac.compare_digest(token.strip().encode("latin-1"), self._key):
            return "the API key is not this server's"
        return None
