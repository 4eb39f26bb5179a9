"""``codec serve`` under bad input, from either side: every refusal has OpenAI's error shape.

The client's side: bodies over the size cap (413, read no further than the cap), too many
messages, a render over its time cap (400), bodies that are not JSON codec takes (NaN, lone
surrogates, nesting thousands deep, wrong types), unknown paths and wrong methods, a missing or
wrong API key; a long render does not hold up other requests, and a client that leaves a whole
(non-streamed) reply cancels the engine's request.

The engine's side (a fake engine behind an ``httpx.MockTransport``): answers of the wrong shape,
endless keep-alive comments, a line longer than its cap — a 502 for a whole reply, an error
event and ``[DONE]`` for a streamed one.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

import codec

openai = pytest.importorskip("openai")
pytest.importorskip("starlette")

from codec.serve import ServeConfig, ServeLimits, create_app  # noqa: E402
from support.servers import serving  # noqa: E402

MIB = 1024 * 1024
ENGINE = "http://engine.test/v1"
HELLO = [{"role": "user", "content": "hello"}]
Handler = Callable[[httpx.Request], Any]


def answer(text: str = "</think>Hi.", **extra: Any) -> httpx.Response:
    """A whole ``text_completion`` from the fake engine (GLM's prompt leaves the model thinking)."""
    choice = {"index": 0, "text": text, "finish_reason": "stop"}
    return httpx.Response(200, json={"object": "text_completion", "choices": [choice], **extra})


class FakeEngine:
    """An engine behind an ``httpx.MockTransport``: ``handler`` answers; ``asked`` counts requests."""

    def __init__(self, handler: Handler | None = None) -> None:
        self.handler = handler or (lambda request: answer())
        self.asked = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked += 1
        result = self.handler(request)
        return await result if asyncio.iscoroutine(result) else result  # type: ignore[no-any-return]


@contextmanager
def served(engine: FakeEngine | None = None, chosen: Any = None, **config: Any) -> Iterator[str]:
    """``codec serve`` for GLM (or ``chosen``) in front of ``engine``, on 127.0.0.1: its base URL."""
    config = {"timeout": 10, **config}
    settings = ServeConfig(codec=chosen or codec.load("glm"), upstream=ENGINE, model="glm", **config)
    with serving(create_app(settings, transport=httpx.MockTransport(engine or FakeEngine()))) as base:
        yield base


def post(base: str, body: Any, **options: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{base}/v1/chat/completions", content=content, timeout=10, **options)


def openai_error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The error object of ``response``, checked to be OpenAI's shape with ``status``."""
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["code"] == status
    return error  # type: ignore[no-any-return]


def test_a_body_over_the_cap_is_413_and_is_not_read_to_its_end() -> None:
    """A chunked body (no Content-Length) of up to 64 MiB: the app stops asking for more at
    the 4 MiB default cap. Driven in-process (ASGI), so what was read can be counted."""
    pieces = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal pieces
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(1024):
            pieces += 1
            yield b"x" * (64 * 1024)

    async def ask() -> httpx.Response:
        app = create_app(ServeConfig(codec=codec.load("glm"), upstream=ENGINE, model="glm"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://codec") as client:
            return await client.post("/v1/chat/completions", content=body())

    error = openai_error(asyncio.run(asyncio.wait_for(ask(), 60)), 413)
    assert "4194304 bytes" in error["message"] and "--max-body-bytes" in error["message"]
    assert pieces <= 4 * 16 + 1, f"read {pieces} pieces of 64 KiB"


def test_a_declared_length_over_the_cap_is_413_over_a_socket() -> None:
    engine = FakeEngine()
    with served(engine, limits=ServeLimits(max_body_bytes=1000)) as base:
        fine = post(base, {"messages": HELLO})
        too_big = post(base, {"messages": [{"role": "user", "content": "x" * 2000}]})
    assert fine.status_code == 200
    assert "1000 bytes" in openai_error(too_big, 413)["message"]
    assert engine.asked == 1


def test_too_many_messages_is_400_naming_the_cap() -> None:
    engine = FakeEngine()
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": "hi"} for i in range(2049)]
    with served(engine) as base:
        error = openai_error(post(base, {"messages": messages}), 400)
    assert error["param"] == "messages"
    assert "2049 messages" in error["message"] and "2048" in error["message"] and "--max-messages" in error["message"]
    assert engine.asked == 0


class SlowCodec:
    """A codec whose ``prepare`` takes ``seconds`` (asleep, not on the CPU) when the last
    message says "slow": a long render, without burning the shared machine's cores."""

    def __init__(self, inner: codec.Codec, seconds: float) -> None:
        self._inner = inner
        self._seconds = seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def prepare(self, messages: list[Any], **kwargs: Any) -> Any:
        if messages[-1].get("content") == "slow":
            time.sleep(self._seconds)
        return self._inner.prepare(messages, **kwargs)


def test_a_render_over_its_time_cap_is_400() -> None:
    engine = FakeEngine()
    chosen = SlowCodec(codec.load("glm"), seconds=3)
    with served(engine, chosen=chosen, limits=ServeLimits(render_seconds=0.3)) as base:
        started = time.monotonic()
        error = openai_error(post(base, {"messages": [{"role": "user", "content": "slow"}]}), 400)
        took = time.monotonic() - started
        fine = post(base, {"messages": HELLO})
    assert took < 2, f"the cap of 0.3 s answered after {took:.1f} s"
    assert "0.3 s" in error["message"] and "--render-timeout" in error["message"]
    assert fine.status_code == 200 and engine.asked == 1


def test_a_long_render_does_not_hold_up_other_requests() -> None:
    chosen = SlowCodec(codec.load("glm"), seconds=1.5)
    with served(chosen=chosen) as base:
        slow: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: slow.append(post(base, {"messages": [{"role": "user", "content": "slow"}]}))
        )
        thread.start()
        time.sleep(0.3)  # the slow render has started
        started = time.monotonic()
        listed = httpx.get(f"{base}/v1/models", timeout=10)
        chat = post(base, {"messages": HELLO})
        took = time.monotonic() - started
        thread.join(timeout=10)
    assert listed.status_code == 200 and chat.status_code == 200
    assert took < 0.9, f"other requests waited {took:.2f} s behind a render"
    assert slow[0].status_code == 200


def test_a_client_leaving_a_whole_reply_cancels_the_engine_request() -> None:
    asked, cancelled = threading.Event(), threading.Event()

    async def never_answers(request: httpx.Request) -> httpx.Response:
        asked.set()
        try:
            await asyncio.sleep(20)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return answer()

    with served(FakeEngine(never_answers)) as base:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{base}/v1/chat/completions", json={"messages": HELLO}, timeout=httpx.Timeout(10, read=0.5))
        assert asked.is_set()
        assert cancelled.wait(5), "the engine's request outlived its client"


class BuggyCodec:
    """A codec whose turns fail where codec serve does not expect it: a bug of ours."""

    def __init__(self, inner: codec.Codec) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def prepare(self, messages: list[Any], **kwargs: Any) -> Any:
        return BuggyTurn(self._inner.prepare(messages, **kwargs))


class BuggyTurn:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def completion(self, *args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    def chunk_stream(self, **kwargs: Any) -> Any:
        return self  # whose feed is the bug

    def feed(self, text: str) -> Any:
        raise ZeroDivisionError("a bug")


def test_a_bug_of_ours_is_a_500_shaped_like_openai_and_mid_stream_an_ending() -> None:
    with served(chosen=BuggyCodec(codec.load("glm"))) as base:
        whole = post(base, {"messages": HELLO})
        streamed = post(base, {"messages": HELLO, "stream": True})
    error = openai_error(whole, 500)
    assert error["type"] == "server_error" and "ZeroDivisionError" in error["message"]
    events = [line.removeprefix("data: ") for line in streamed.text.split("\n\n") if line]
    assert events[-1] == "[DONE]" and json.loads(events[-2])["error"]["code"] == 500


def test_a_long_piece_from_the_engine_reads_as_short_ones_do() -> None:
    """A piece of 1,024 characters or more is parsed in a worker thread (app.OFF_LOOP_CHARS)."""
    text = "Thinking. " * 150 + "</think>" + "Answer. " * 200
    short = [chunk(text[i : i + 5]) for i in range(0, len(text), 5)]
    pieces = {"one piece": sse(chunk(text), b"[DONE]"), "short pieces": sse(*short, b"[DONE]")}
    folded = {}
    for name, content in pieces.items():
        with served(FakeEngine(streamed(content))) as base:
            stream = openai.OpenAI(base_url=f"{base}/v1", api_key="-", max_retries=0, timeout=10)
            chunks = list(stream.chat.completions.create(model="m", messages=HELLO, stream=True))
        deltas = [choice.delta for c in chunks for choice in c.choices]
        folded[name] = (
            "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas),
            "".join(d.content or "" for d in deltas),
        )
    assert folded["one piece"] == folded["short pieces"]
    assert folded["one piece"][1].strip() == ("Answer. " * 200).strip()


BAD_BODIES = {
    "NaN": b'{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}',
    "Infinity": b'{"messages": [{"role": "user", "content": "hi"}], "temperature": -Infinity}',
    "lone surrogate": b'{"messages": [{"role": "user", "content": "hi \\ud800"}]}',
    "lone surrogate key": b'{"messages": [{"role": "user", "content": "hi"}], "metadata": {"\\udc00": 1}}',
    "nested 100,000 deep": b'{"messages": [{"role": "user", "content": "hi"}], "metadata": '
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}",
    "5,000 digits": b'{"messages": [{"role": "user", "content": "hi"}], "seed": 1' + b"0" * 5000 + b"}",
    "stream_options not an object": b'{"messages": [{"role": "user", "content": "hi"}], "stream": true, '
    b'"stream_options": "yes"}',
    "max_tokens not a number": b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": "many"}',
}


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_bad_body_is_400_shaped_like_openai(body: bytes) -> None:
    engine = FakeEngine()
    with served(engine) as base:
        error = openai_error(post(base, body), 400)
    assert error["type"] == "invalid_request_error"
    assert engine.asked == 0


def test_a_lone_surrogate_is_refused_with_where_it_is() -> None:
    with served() as base:
        error = openai_error(post(base, BAD_BODIES["lone surrogate"]), 400)
    assert error["param"] == "messages[0].content" and "\\ud800" in error["message"]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/v1/nothing", 404), ("POST", "/v1/completions", 404), ("GET", "/v1/chat/completions", 405),
     ("POST", "/v1/models", 405)],
)  # fmt: skip
def test_unknown_paths_and_wrong_methods_are_shaped_like_openai(method: str, path: str, status: int) -> None:
    with served() as base:
        response = httpx.request(method, f"{base}{path}", timeout=10)
    error = openai_error(response, status)
    assert path in error["message"]
    if status == 405:
        assert response.headers["allow"]


def test_the_api_key_is_required_everywhere_when_set() -> None:
    with served(api_key="s3cret") as base:
        keyed = openai.OpenAI(base_url=f"{base}/v1", api_key="s3cret", max_retries=0, timeout=10)
        wrong = openai.OpenAI(base_url=f"{base}/v1", api_key="s3creT", max_retries=0, timeout=10)
        reply = keyed.chat.completions.create(model="m", messages=HELLO)
        assert [model.id for model in keyed.models.list()] == ["glm"]
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="m", messages=HELLO)
        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        bare = httpx.get(f"{base}/v1/models", timeout=10)
        basic = httpx.get(f"{base}/v1/models", headers={"Authorization": "Basic s3cret"}, timeout=10)
    assert reply.choices[0].message.content == "Hi."
    assert "no API key" in openai_error(bare, 401)["message"]
    assert "Bearer" in openai_error(basic, 401)["message"]
    assert bare.headers["www-authenticate"] == "Bearer"


WRONG_ANSWERS: dict[str, Handler] = {
    "text not a string": lambda request: httpx.Response(200, json={"choices": [{"text": 5}]}),
    "choice not an object": lambda request: httpx.Response(200, json={"choices": ["Hi."]}),
    "usage not counts": lambda request: answer(usage={"prompt_tokens": "many"}),
    "NaN in usage": lambda request: httpx.Response(
        200, content=b'{"choices": [{"text": "Hi."}], "usage": {"prompt_tokens": NaN}}'
    ),
    "nested 100,000 deep": lambda request: httpx.Response(200, content=b"[" * 100_000 + b"]" * 100_000),
    "lone surrogate": lambda request: httpx.Response(200, content=b'{"choices": [{"text": "Hi \\ud800"}]}'),
    "an error page nested 100,000 deep": lambda request: httpx.Response(500, content=b"[" * 100_000),
}


@pytest.mark.parametrize("handler", WRONG_ANSWERS.values(), ids=WRONG_ANSWERS.keys())
def test_a_wrong_shaped_whole_answer_is_502(handler: Handler) -> None:
    with served(FakeEngine(handler)) as base:
        error = openai_error(post(base, {"messages": HELLO}), 502)
    assert error["type"] == "upstream_error" and "engine" in error["message"]


def sse(*events: Any) -> bytes:
    return b"".join(b"data: " + (e if isinstance(e, bytes) else json.dumps(e).encode()) + b"\n\n" for e in events)


def chunk(text: Any) -> dict[str, Any]:
    return {"object": "text_completion", "choices": [{"index": 0, "text": text, "finish_reason": None}]}


def streamed(content: bytes | Callable[[], AsyncIterator[bytes]]) -> Handler:
    """A handler answering with an event stream: whole bytes, or an async generator of them."""
    return lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=content if isinstance(content, bytes) else content()
    )


async def endless_comments() -> AsyncIterator[bytes]:
    yield sse(chunk("Hi"))
    for _ in range(100):  # 100,000 comment lines: ten times the default cap
        yield b": ping\n" * 1000
    yield sse(chunk(" there."), b"[DONE]")


async def one_long_line() -> AsyncIterator[bytes]:
    yield sse(chunk("Hi"))
    yield b'data: {"choices": [{"text": "'
    for _ in range(64):  # 4 MiB, past the 1 MiB default cap, in 64 KiB pieces
        one_long_line.pieces += 1  # type: ignore[attr-defined]
        yield b"x" * (64 * 1024)
    yield b'"}]}\n\n' + sse(b"[DONE]")


one_long_line.pieces = 0  # type: ignore[attr-defined]

BROKEN_STREAMS: dict[str, tuple[Handler, str]] = {
    "not JSON": (streamed(sse(chunk("Hi"), b"{nope", b"[DONE]")), "not JSON"),
    "not an object": (streamed(sse(chunk("Hi"), b"[1, 2]", b"[DONE]")), "not a JSON object"),
    "text not a string": (streamed(sse(chunk("Hi"), chunk(["x"]), b"[DONE]")), "not a string"),
    "choice not an object": (streamed(sse(chunk("Hi"), {"choices": ["x"]}, b"[DONE]")), "not a list of objects"),
    "usage not counts": (streamed(sse(chunk("Hi"), {"choices": [], "usage": [1]}, b"[DONE]")), "usage"),
    "lone surrogate": (streamed(sse(chunk("Hi"), b'{"choices": [{"text": "\\ud800"}]}', b"[DONE]")), "surrogate"),
    "endless comments": (streamed(endless_comments), "lines in a row without data"),
    "a line past its cap": (streamed(one_long_line), "a line of more than 1048576 bytes"),
}


@pytest.mark.parametrize(("handler", "said"), BROKEN_STREAMS.values(), ids=BROKEN_STREAMS.keys())
def test_a_broken_engine_stream_ends_in_an_error_event_and_done(handler: Handler, said: str) -> None:
    with served(FakeEngine(handler)) as base:
        response = post(base, {"messages": HELLO, "stream": True})
    assert response.status_code == 200
    events = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line]
    assert events[-1] == "[DONE]", events[-3:]
    error = json.loads(events[-2])["error"]
    assert error["type"] == "upstream_error" and said in error["message"], error
    assert "Hi" in "".join(events[:-2]), "what came before the fault was sent"


def test_a_line_past_its_cap_is_not_read_to_its_end() -> None:
    one_long_line.pieces = 0  # type: ignore[attr-defined]
    with served(FakeEngine(streamed(one_long_line))) as base:
        post(base, {"messages": HELLO, "stream": True})
    assert one_long_line.pieces <= 16 + 2  # type: ignore[attr-defined]


def test_comments_sent_slowly_are_bounded_by_the_timeout() -> None:
    """One keep-alive comment every 50 ms resets each read's timeout; --timeout still bounds the
    wait for data."""

    async def slow_comments() -> AsyncIterator[bytes]:
        yield sse(chunk("Hi"))
        for _ in range(100):  # 5 s at most
            await asyncio.sleep(0.05)
            yield b": ping\n"
        yield sse(b"[DONE]")

    with served(FakeEngine(streamed(slow_comments)), timeout=0.5) as base:
        started = time.monotonic()
        response = post(base, {"messages": HELLO, "stream": True})
        took = time.monotonic() - started
    events = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line]
    assert events[-1] == "[DONE]" and json.loads(events[-2])["error"]["code"] == 504
    assert took < 3


def test_the_command_line_sets_the_caps_and_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from codec.cli import main
    from codec.serve import app

    served: list[ServeConfig] = []
    monkeypatch.setattr(app, "run", lambda config, host, port: served.append(config))
    monkeypatch.setattr("codec.serve.run", app.run)
    upstream = ["serve", "--upstream", "http://127.0.0.1:8080/v1", "--format", "glm"]
    flags = ["--max-body-bytes", "1000", "--max-messages", "10", "--render-timeout", "2.5", "--api-key", "k1"]
    monkeypatch.delenv("CODEC_API_KEY", raising=False)
    assert main([*upstream, *flags]) == 0
    assert main(upstream) == 0
    monkeypatch.setenv("CODEC_API_KEY", "k2")
    assert main(upstream) == 0
    capped, default, from_env = served
    assert (capped.limits.max_body_bytes, capped.limits.max_messages, capped.limits.render_seconds) == (1000, 10, 2.5)
    assert capped.api_key == "k1" and default.api_key is None and from_env.api_key == "k2"
    assert default.limits == ServeLimits()
    assert main([*upstream, "--max-messages", "0"]) == 2
    assert main([*upstream, "--api-key", ""]) == 2
    monkeypatch.setenv("CODEC_API_KEY", "")
    assert main(upstream) == 2, "an empty key in the environment is not a server without one"
    assert len(served) == 3
