"""The engine behind ``codec serve``: any OpenAI-compatible ``/v1/completions`` endpoint
(vLLM, SGLang, llama.cpp's server, ...), asked for raw text after a prompt codec rendered."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx


class UpstreamError(Exception):
    """The engine could not be reached, refused the request or broke off its answer.

    ``status`` is the HTTP status to give the client (502: bad gateway, 504: timeout).
    """

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class Upstream:
    """Requests to one engine's ``/v1/completions``, whole or streamed as server-sent events."""

    def __init__(self, base_url: str, client: httpx.AsyncClient) -> None:
        self.url = base_url.rstrip("/") + "/completions"
        self._client = client

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
            answer = response.json()
        except json.JSONDecodeError:
            raise UpstreamError(f"the engine at {self.url} answered with text that is not JSON") from None
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
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue  # comments, event names and the blank lines between events
                    data = line[len("data:") :].strip()
                    if data == "[DONE]":
                        return
                    yield _event(data, self.url)
        except httpx.TimeoutException:
            raise UpstreamError(f"the engine at {self.url} stopped answering (timeout)", 504) from None
        except httpx.HTTPError as error:
            raise UpstreamError(f"the stream from the engine at {self.url} broke: {_describe(error)}") from None
        # An engine that closes the stream without [DONE] may have finished or crashed; what it
        # sent is kept, and the last chunk's finish_reason (or its absence) tells which.


def _event(data: str, url: str) -> dict[str, Any]:
    try:
        event = json.loads(data)
    except json.JSONDecodeError:
        raise UpstreamError(f"the engine at {url} streamed an event that is not JSON: {data[:120]!r}") from None
    if not isinstance(event, dict):
        raise UpstreamError(f"the engine at {url} streamed {type(event).__name__}, not a JSON object")
    if event.get("error"):
        raise UpstreamError(f"the engine at {url} failed mid-stream: {_error_message(event['error'])}")
    return event


def _check_answer(answer: Any, url: str) -> None:
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list) or not answer["choices"]:
        raise UpstreamError(f"the engine at {url} answered without choices: {str(answer)[:200]}")


def _refusal(status: int, text: str, url: str) -> str:
    try:
        message = _error_message(json.loads(text).get("error", text))
    except (json.JSONDecodeError, AttributeError):
        message = text[:500]
    return f"the engine at {url} answered HTTP {status}: {message}"


def _error_message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _describe(error: httpx.HTTPError) -> str:
    return str(error) or type(error).__name__


def text_of(event: Mapping[str, Any]) -> tuple[str, str | None]:
    """The text and finish reason of a completions chunk or answer (first choice)."""
    choices = event.get("choices") or []
    if not choices:
        return "", None  # a usage-only chunk
    choice = choices[0]
    return str(choice.get("text") or ""), choice.get("finish_reason")
