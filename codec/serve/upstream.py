"""The engine behind ``codec serve``: any OpenAI-compatible ``/v1/completions`` endpoint
(vLLM, SGLang, llama.cpp's server, ...), asked for raw text after a prompt codec rendered."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from codec.serve import strict_json
from codec.serve.sse import LineReader, LineTooLong

if TYPE_CHECKING:
    from codec.serve.limits import ServeLimits

_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")
_SHOWN_CHARS = 500  # of what the engine said, in an error message
_ERROR_DEPTH = 16  # OpenAI's error object is two deep


class UpstreamError(Exception):
    """The engine could not be reached, refused the request or broke off its answer.

    ``status`` is the HTTP status to give the client (502: bad gateway, 504: timeout).
    """

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class Upstream:
    """Requests to one engine's ``/v1/completions``, whole or streamed as server-sent events.

    What the engine sends is read as untrusted: JSON strictly (``strict_json``), lines of its
    stream up to ``limits.max_line_bytes``, at most ``limits.max_idle_lines`` lines in a row
    without data and no more than ``timeout`` seconds between data lines — so an engine that
    sends keep-alive comments forever, or one endless line, ends the request with an error.
    """

    def __init__(self, base_url: str, client: httpx.AsyncClient, limits: ServeLimits, timeout: float) -> None:
        self.url = base_url.rstrip("/") + "/completions"
        self._client = client
        self._limits = limits
        self._timeout = timeout

    async def complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The engine's whole ``text_completion`` answer."""
        try:
            response = await self._client.post(self.url, json=dict(body))
        except httpx.TimeoutException:
            raise UpstreamError(f"the engine at {self.url} did not answer in time", 504) from None
        except httpx.HTTPError as error:
            raise UpstreamError(f"cannot reach the engine at {self.url}: {_describe(error)}") from None
        if response.status_code >= 400:
            raise UpstreamError(_refusal(response.status_code, response.text, self.url))
        try:
            answer = strict_json.loads(response.content, max_depth=self._limits.max_json_depth)
        except strict_json.BadJSON as error:
            raise UpstreamError(f"the engine at {self.url} answered with text that is not JSON: {error}") from None
        _check_answer(answer, self.url)
        return dict(answer)

    async def stream(self, body: Mapping[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The engine's streamed chunks, one dict per ``data:`` event, until ``[DONE]``.

        Leaving the loop early (the client went away) closes the connection, which is how an
        engine learns to stop generating.
        """
        try:
            async with self._client.stream("POST", self.url, json=dict(body)) as response:
                if response.status_code >= 400:
                    text = (await response.aread()).decode("utf-8", "replace")
                    raise UpstreamError(_refusal(response.status_code, text, self.url))
                async for data in self._data(response):
                    if data == "[DONE]":
                        return
                    yield self._event(data)
        except httpx.TimeoutException:
            raise UpstreamError(f"the engine at {self.url} stopped answering (timeout)", 504) from None
        except httpx.HTTPError as error:
            raise UpstreamError(f"the stream from the engine at {self.url} broke: {_describe(error)}") from None
        # An engine that closes the stream without [DONE] may have finished or crashed; what it
        # sent is kept, and the last chunk's finish_reason (or its absence) tells which.

    async def _data(self, response: httpx.Response) -> AsyncIterator[str]:
        """What follows ``data:`` on each data line; comments, event names and the blank lines
        between events are skipped, but only so many in a row, and only for so long."""
        reader = LineReader(self._limits.max_line_bytes)
        idle, since = 0, time.monotonic()
        async for chunk in response.aiter_bytes():
            try:
                lines = reader.feed(chunk)
            except LineTooLong as error:
                raise UpstreamError(f"the engine at {self.url} streamed {error}") from None
            for line in lines:
                if line.startswith(b"data:"):
                    idle, since = 0, time.monotonic()
                    yield line[len(b"data:") :].strip().decode("utf-8", "replace")
                    continue
                idle += 1
                if idle > self._limits.max_idle_lines:
                    raise UpstreamError(f"the engine at {self.url} streamed {idle} lines in a row without data")
            if time.monotonic() - since > self._timeout:
                raise UpstreamError(f"the engine at {self.url} streamed no data for {self._timeout:g} s", 504)

    def _event(self, data: str) -> dict[str, Any]:
        try:
            event = strict_json.loads(data, max_depth=self._limits.max_json_depth)
        except strict_json.BadJSON as error:
            raise UpstreamError(f"the engine at {self.url} streamed an event that is not JSON: {error}") from None
        if not isinstance(event, dict):
            raise UpstreamError(f"the engine at {self.url} streamed {type(event).__name__}, not a JSON object")
        if event.get("error"):
            raise UpstreamError(f"the engine at {self.url} failed mid-stream: {_error_message(event['error'])}")
        return event


def _check_answer(answer: Any, url: str) -> None:
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list) or not answer["choices"]:
        raise UpstreamError(f"the engine at {url} answered without choices: {_shown(answer)}")


def _refusal(status: int, text: str, url: str) -> str:
    """What the engine said when it refused: its error's message if it sent OpenAI's shape,
    else the start of its text (read strictly: an engine's error page may be anything)."""
    try:
        answer = strict_json.loads(text, max_depth=_ERROR_DEPTH)
        message = _error_message(answer.get("error", text) if isinstance(answer, dict) else text)
    except strict_json.BadJSON:
        message = text
    return f"the engine at {url} answered HTTP {status}: {message[:_SHOWN_CHARS]}"


def _error_message(error: Any) -> str:
    message = str(error.get("message") or error) if isinstance(error, dict) else str(error)
    return message[:_SHOWN_CHARS]


def _describe(error: httpx.HTTPError) -> str:
    return str(error) or type(error).__name__


def text_of(event: Mapping[str, Any], url: str) -> tuple[str, str | None]:
    """The text and finish reason of a completions chunk or answer (first choice);
    ``UpstreamError`` when they are not a string (or null)."""
    choices = event.get("choices")
    if choices is None or choices == []:
        return "", None  # a usage-only chunk
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise UpstreamError(f"the engine at {url} sent choices that are not a list of objects: {_shown(choices)}")
    text, reason = choices[0].get("text"), choices[0].get("finish_reason")
    if not isinstance(text, str | None) or not isinstance(reason, str | None):
        raise UpstreamError(
            f"the engine at {url} sent a choice whose text or finish_reason is not a string: {_shown(choices[0])}"
        )
    return text or "", reason


def usage_of(event: Mapping[str, Any], url: str) -> Mapping[str, Any] | None:
    """The token counts of a chunk or answer, when it has them; ``UpstreamError`` when they are
    not integers."""
    usage = event.get("usage")
    if usage is None:
        return None
    if not isinstance(usage, dict) or not all(_count(usage.get(name)) for name in _COUNTS):
        raise UpstreamError(f"the engine at {url} sent usage that is not token counts: {_shown(usage)}")
    return usage


def _count(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _shown(value: Any) -> str:
    return json.dumps(value)[:_SHOWN_CHARS]
