"""``codec serve`` end to end: the official ``openai`` client against the server, in front of a
real HTTP engine (tests/support/servers.py) that streams scripted completions as SSE.

For every format, an agent loop — tool call, tool result, answer — streaming and not; the chunks
validate as ``ChatCompletionChunk`` and the arguments rebuilt from the deltas equal the final
message's; concurrent streams; an engine that fails mid-stream; a cut-off call; a client that
goes away; errors shaped like OpenAI's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import codec

openai = pytest.importorskip("openai")
pytest.importorskip("starlette")
from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: E402

from codec import strategies  # noqa: E402
from codec.serve import ServeConfig, create_app  # noqa: E402
from support.servers import Engine, Reply, serving  # noqa: E402
from test_prompt_roundtrip import completion_after  # noqa: E402

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
RESULT = "sunny, 24 degrees (tool result 7f3a)"
ANSWER_TEXT = "It is sunny in Paris."

QUESTION_MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]


def _call_message(fmt: str) -> dict[str, Any]:
    """The assistant's call, with an id the format's template shows its name in (``strategies.call_id``)."""
    call_id = strategies.call_id(fmt, "abcdefghi0", "get_weather", 0)
    function = {"name": "get_weather", "arguments": {"city": "Paris"}}
    return {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": function}]}


def _written(fmt: str, history: list[dict[str, Any]], message: dict[str, Any]) -> str:
    """What the format's model writes for ``message`` after ``history`` — its own template's
    writing (``completion_after``) — up to (not including) the stop string the engine stops at
    and leaves out."""
    c = codec.load(fmt)
    text = completion_after(c, history, message, TOOLS, datetime(2026, 12, 4), {})
    assert text is not None, fmt
    for stop in c.stop_tokens:
        text = text.removesuffix(stop)
    return text


# Per format, from the registry: a call, then the answer once the result is known, and the call
# cut off inside its argument value (the engine stopped at max_tokens).
CALL = {fmt: _written(fmt, QUESTION_MESSAGES, _call_message(fmt)) for fmt in codec.formats()}
ANSWER = {
    fmt: _written(
        fmt,
        [
            *QUESTION_MESSAGES,
            _call_message(fmt),
            {
                "role": "tool",
                "tool_call_id": strategies.call_id(fmt, "abcdefghi0", "get_weather", 0),
                "content": RESULT,
            },
        ],
        {"role": "assistant", "content": ANSWER_TEXT},
    )
    for fmt in codec.formats()
}
CUT = {name: text[: text.index("Paris") + 3] for name, text in CALL.items()}


def script(body: dict[str, Any]) -> Reply:
    """The engine's reply depends only on the prompt, so concurrent requests cannot mix up."""
    fmt = body["model"]
    if "crash" in body["prompt"]:
        return Reply(CALL[fmt], fail_after=3)
    if "slow" in body["prompt"]:
        return Reply(ANSWER[fmt] * 50, delay=0.05)
    if body.get("max_tokens") == 7:
        return Reply(CUT[fmt], finish_reason="length")
    if RESULT in body["prompt"]:
        return Reply(ANSWER[fmt])
    return Reply(CALL[fmt])


@pytest.fixture(scope="module")
def engine() -> Iterator[tuple[Engine, str]]:
    scripted = Engine(script)
    with serving(scripted.app()) as url:
        yield scripted, url


@pytest.fixture(scope="module", params=codec.formats())
def server(request: pytest.FixtureRequest, engine: tuple[Engine, str]) -> Iterator[tuple[str, str, Engine]]:
    """``codec serve`` for one format in front of the scripted engine: (format, base URL, engine)."""
    fmt = request.param
    scripted, url = engine
    config = ServeConfig(codec=codec.load(fmt), upstream=f"{url}/v1", model=fmt, upstream_model=fmt, timeout=20)
    with serving(create_app(config)) as base:
        yield fmt, base, scripted


def client(base: str) -> Any:
    return openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=30)


def conversation() -> list[dict[str, Any]]:
    return [dict(message) for message in QUESTION_MESSAGES]


def rebuilt(chunks: list[Any]) -> dict[str, Any]:
    """The message a client folds from validated chunks: text joined, calls keyed by index."""
    content, reasoning, calls, reasons = "", "", {}, []
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
                entry["id"] = call.id or entry["id"]
                entry["name"] = (call.function and call.function.name) or entry["name"]
                entry["arguments"] += (call.function and call.function.arguments) or ""
            if choice.finish_reason:
                reasons.append(choice.finish_reason)
    return {"content": content, "reasoning": reasoning, "calls": [calls[i] for i in sorted(calls)], "reasons": reasons}


def stream_chat(base: str, messages: list[dict[str, Any]], **extra: Any) -> list[Any]:
    stream = client(base).chat.completions.create(
        model="client-model", messages=messages, tools=TOOLS, stream=True, **extra
    )
    return list(stream)


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
def test_agent_loop(server: tuple[str, str, Engine], streaming: bool) -> None:
    _fmt, base, _ = server
    messages = conversation()
    if streaming:
        chunks = stream_chat(base, messages, stream_options={"include_usage": True})
        for chunk in chunks:
            ChatCompletionChunk.model_validate(chunk.model_dump())
        first = chunks[0].choices[0].delta
        assert first.role == "assistant"
        assert all(chunk.choices or chunk.usage for chunk in chunks)
        assert all(_not_empty(choice.delta) or choice.finish_reason for c in chunks for choice in c.choices)
        assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        folded = rebuilt(chunks)
        assert folded["reasons"] == ["tool_calls"]
        assert [call["name"] for call in folded["calls"]] == ["get_weather"]
        assert json.loads(folded["calls"][0]["arguments"]) == {"city": "Paris"}
        call_id = folded["calls"][0]["id"]
        assistant = {
            "role": "assistant",
            "content": folded["content"] or None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": folded["calls"][0]["arguments"]},
                }
            ],
        }
    else:
        reply = client(base).chat.completions.create(model="client-model", messages=messages, tools=TOOLS)
        ChatCompletion.model_validate(reply.model_dump())
        assert reply.choices[0].finish_reason == "tool_calls"
        (call,) = reply.choices[0].message.tool_calls
        assert call.function.name == "get_weather"
        assert json.loads(call.function.arguments) == {"city": "Paris"}
        assert reply.usage is not None and reply.usage.prompt_tokens > 0
        assistant = reply.choices[0].message.model_dump(exclude_none=True)
        call_id = call.id
    messages = [*messages, assistant, {"role": "tool", "tool_call_id": call_id, "content": RESULT}]
    if streaming:
        folded = rebuilt(stream_chat(base, messages))
        assert folded["content"] == ANSWER_TEXT
        assert folded["calls"] == [] and folded["reasons"] == ["stop"]
    else:
        reply = client(base).chat.completions.create(model="client-model", messages=messages, tools=TOOLS)
        assert reply.choices[0].message.content == ANSWER_TEXT
        assert reply.choices[0].finish_reason == "stop" and not reply.choices[0].message.tool_calls


def _not_empty(delta: Any) -> bool:
    return bool(delta.role or delta.content or delta.tool_calls or (delta.model_extra or {}).get("reasoning_content"))


def test_streamed_arguments_equal_the_whole_reply(server: tuple[str, str, Engine]) -> None:
    _, base, _ = server
    folded = rebuilt(stream_chat(base, conversation()))
    whole = client(base).chat.completions.create(model="m", messages=conversation(), tools=TOOLS)
    (call,) = whole.choices[0].message.tool_calls
    assert folded["calls"][0]["arguments"] == call.function.arguments
    assert folded["reasoning"] == ((whole.choices[0].message.model_extra or {}).get("reasoning_content") or "")


def test_the_engine_gets_the_prompt_and_stop_strings(server: tuple[str, str, Engine]) -> None:
    fmt, base, scripted = server
    client(base).chat.completions.create(
        model="m", messages=conversation(), tools=TOOLS, temperature=0.25, stop=["END"], max_completion_tokens=64
    )
    body = scripted.requests[-1]
    chosen = codec.load(fmt)
    assert body["prompt"] == chosen.render(conversation(), tools=TOOLS, now=_date_of(body["prompt"], chosen))
    assert body["stop"] == [*chosen.stop_tokens, "END"]
    assert body["temperature"] == 0.25 and body["max_tokens"] == 64
    assert body["skip_special_tokens"] is False


def _date_of(prompt: str, chosen: codec.Codec) -> Any:
    return chosen.parse_prompt(prompt).options.get("now")


def test_a_cut_off_call_ends_with_length(server: tuple[str, str, Engine]) -> None:
    _, base, _ = server
    folded = rebuilt(stream_chat(base, conversation(), max_tokens=7))
    assert folded["reasons"] == ["length"]
    whole = client(base).chat.completions.create(model="m", messages=conversation(), tools=TOOLS, max_tokens=7)
    assert whole.choices[0].finish_reason == "length"
    assert not whole.choices[0].message.tool_calls  # a call that never finished must not run


def test_engine_failing_mid_stream_is_an_error_not_a_hang(server: tuple[str, str, Engine]) -> None:
    _, base, _ = server
    messages = [{"role": "user", "content": "crash please"}]
    started = time.monotonic()
    with pytest.raises(openai.APIError, match="engine"):
        stream_chat(base, messages)
    assert time.monotonic() - started < 20


def test_errors_are_shaped_like_openai(server: tuple[str, str, Engine]) -> None:
    _, base, _ = server
    with pytest.raises(openai.BadRequestError) as caught:
        client(base).chat.completions.create(model="m", messages=[{"role": "wizard", "content": "hi"}])
    assert "role" in caught.value.message
    answer = httpx.post(f"{base}/v1/chat/completions", content=b"{not json", timeout=10)
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "invalid_request_error"


def test_models_lists_the_served_name(server: tuple[str, str, Engine]) -> None:
    fmt, base, _ = server
    assert [model.id for model in client(base).models.list()] == [fmt]


def test_engine_down_is_a_bad_gateway() -> None:
    config = ServeConfig(codec=codec.load("glm"), upstream="http://127.0.0.1:9/v1", model="glm", timeout=5)
    with serving(create_app(config)) as base, pytest.raises(openai.APIStatusError) as caught:
        client(base).chat.completions.create(model="m", messages=conversation())
    assert caught.value.status_code == 502
    assert "cannot reach the engine" in caught.value.message


def test_fifty_concurrent_streams(engine: tuple[Engine, str]) -> None:
    _scripted, url = engine
    config = ServeConfig(codec=codec.load("glm"), upstream=f"{url}/v1", model="glm", upstream_model="glm", timeout=20)

    async def one(api: Any, number: int) -> dict[str, Any]:
        messages = [
            {"role": "user", "content": f"request {number}"},
            {"role": "assistant", "tool_calls": [_call(f"c{number}")]},
            {"role": "tool", "tool_call_id": f"c{number}", "content": RESULT},
        ]
        stream = await api.chat.completions.create(model="m", messages=messages, tools=TOOLS, stream=True)
        return rebuilt([chunk async for chunk in stream])

    async def all_of_them(base: str) -> list[dict[str, Any]]:
        api = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=60)
        async with api:
            return await asyncio.wait_for(asyncio.gather(*(one(api, n) for n in range(50))), timeout=120)

    with serving(create_app(config)) as base:
        results = asyncio.run(all_of_them(base))
    assert len(results) == 50
    for folded in results:
        assert folded["content"] == ANSWER_TEXT and folded["reasons"] == ["stop"]


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


def test_a_client_going_away_cancels_the_engine_request(engine: tuple[Engine, str]) -> None:
    scripted, url = engine
    config = ServeConfig(codec=codec.load("glm"), upstream=f"{url}/v1", model="glm", upstream_model="glm", timeout=20)
    before = scripted.cancelled
    with serving(create_app(config)) as base:
        body = {"model": "m", "messages": [{"role": "user", "content": "slow please"}], "stream": True}
        with httpx.stream("POST", f"{base}/v1/chat/completions", json=body, timeout=10) as response:
            lines = response.iter_lines()
            assert next(line for line in lines if line.startswith("data:"))
        deadline = time.monotonic() + 10
        while scripted.cancelled == before and time.monotonic() < deadline:
            time.sleep(0.05)
    assert scripted.cancelled == before + 1


def test_every_sampling_field_has_a_rule() -> None:
    from codec.chat_request import SAMPLING_FIELDS
    from codec.serve import request

    rules = [request._FORWARDED, request._ANSWERED, request._BOOKKEEPING, frozenset(request._REFUSED)]
    assert frozenset().union(*rules) == SAMPLING_FIELDS
    assert sum(len(rule) for rule in rules) == len(SAMPLING_FIELDS), "each field has one rule"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"logprobs": True}, "logprobs"),
        ({"n": 2}, "n"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"parallel_tool_calls": False}, "parallel_tool_calls"),
        ({"frobnicate": 1}, "frobnicate"),
        ({"chat_template_kwargs": {"no_such_option": 1}}, "chat_template_kwargs.no_such_option"),
    ],
)
def test_what_codec_cannot_honour_is_refused_by_name(
    server: tuple[str, str, Engine], extra: dict[str, Any], param: str
) -> None:
    _, base, scripted = server
    asked = len(scripted.requests)
    body = {"model": "m", "messages": conversation(), "tools": TOOLS, **extra}
    answer = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=10)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert len(scripted.requests) == asked, "nothing reached the engine"


def test_harmless_defaults_pass(server: tuple[str, str, Engine]) -> None:
    _, base, scripted = server
    reply = client(base).chat.completions.create(
        model="m", messages=conversation(), tools=TOOLS, parallel_tool_calls=True, logprobs=False, metadata={"a": "b"}
    )
    assert reply.choices[0].finish_reason == "tool_calls"
    assert "metadata" not in scripted.requests[-1] and "parallel_tool_calls" not in scripted.requests[-1]


def test_the_command_line_builds_the_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from codec.cli import main
    from codec.serve import app

    served: list[tuple[ServeConfig, str, int]] = []
    monkeypatch.setattr(app, "run", lambda config, host, port: served.append((config, host, port)))
    monkeypatch.setattr("codec.serve.run", app.run)
    status = main(["serve", "--upstream", "http://127.0.0.1:8080/v1", "--format", "gemma4", "--port", "8123"])
    assert status == 0
    ((config, host, port),) = served
    assert (config.codec.name, config.model, config.upstream, host, port) == (
        "gemma4",
        "gemma4",
        "http://127.0.0.1:8080/v1",
        "127.0.0.1",
        8123,
    )


def test_a_router_may_send_options_the_template_does_not_read(engine: tuple[Engine, str]) -> None:
    scripted, url = engine
    body = {
        "model": "m",
        "messages": conversation(),
        "tools": TOOLS,
        "chat_template_kwargs": {"enable_thinking": True, "clear_thinking": False},
        "reasoning_effort": "high",
    }
    for unknown, status in (("error", 400), ("ignore", 200)):
        config = ServeConfig(
            codec=codec.load("solar-open"),
            upstream=f"{url}/v1",
            model="solar-open",
            upstream_model="solar-open",
            unknown_options=unknown,  # type: ignore[arg-type]
        )
        with serving(create_app(config)) as base:
            answer = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=20)
        assert answer.status_code == status, answer.text
    sent = scripted.requests[-1]["prompt"]
    assert sent == codec.load("solar-open").render(
        conversation(),
        tools=TOOLS,
        reasoning_effort="high",
        now=codec.load("solar-open").parse_prompt(sent).options.get("now"),
    )


@pytest.mark.parametrize(
    "fmt", [fmt for fmt in codec.formats() if codec.registry.FORMATS[fmt].family.constraint is not None]
)
def test_constrained_serving_sends_the_turns_grammar(engine: tuple[Engine, str], fmt: str) -> None:
    """With --constrain FIELD, the engine gets the turn's llguidance grammar in that field, and
    tool_choice may force a call (refused without it, since nothing else can force one)."""
    scripted, url = engine
    chosen = codec.load(fmt)
    config = ServeConfig(
        codec=chosen, upstream=f"{url}/v1", model=fmt, upstream_model=fmt, constrain="structured_outputs.grammar"
    )
    with serving(create_app(config)) as base:
        reply = client(base).chat.completions.create(
            model="m", messages=conversation(), tools=TOOLS, tool_choice="required", parallel_tool_calls=False
        )
    assert reply.choices[0].finish_reason == "tool_calls"
    sent = scripted.requests[-1]
    turn = chosen.prepare(conversation(), tools=TOOLS, now=_date_of(sent["prompt"], chosen))
    expected = turn.constraint(tool_choice="required", parallel_tool_calls=False)
    assert sent["structured_outputs"] == {"grammar": expected}
    assert expected != turn.constraint()


def test_forcing_a_call_without_constraint_is_refused(server: tuple[str, str, Engine]) -> None:
    _, base, _ = server
    body = {"model": "m", "messages": conversation(), "tools": TOOLS, "tool_choice": "required"}
    answer = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=10)
    assert answer.status_code == 400 and "--constrain" in answer.json()["error"]["message"]


def test_a_template_error_is_a_bad_request(engine: tuple[Engine, str], tmp_path: Any) -> None:
    """A template of the user's own (a path, detected as Gemma 4) that raises: the client gets
    OpenAI's error shape with the template's message, and the engine is not asked."""
    scripted, url = engine
    source = (Path(__file__).parent.parent / "templates" / "gemma4.jinja").read_text(encoding="utf-8")
    guard = "{%- if messages[0]['content'] == 'boom' -%}{{ raise_exception('no booms here') }}{%- endif -%}\n"
    template = tmp_path / "chat_template.jinja"
    template.write_text(guard + source, encoding="utf-8")
    chosen = codec.load(template)
    assert chosen.name == "gemma4"
    config = ServeConfig(codec=chosen, upstream=f"{url}/v1", model="mine", upstream_model="gemma4")
    asked = len(scripted.requests)
    with serving(create_app(config)) as base:
        with pytest.raises(openai.BadRequestError, match="no booms here"):
            client(base).chat.completions.create(model="m", messages=[{"role": "user", "content": "boom"}])
        fine = client(base).chat.completions.create(model="m", messages=conversation(), tools=TOOLS)
    assert fine.choices[0].finish_reason == "tool_calls"
    assert len(scripted.requests) == asked + 1
