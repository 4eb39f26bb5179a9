"""``Codec.prepare`` → ``Turn``, and the whole OpenAI chunks it makes (codec/turn.py,
codec/chunks.py), checked against the real ``openai`` package's types.

The chunks of any split of a completion fold to the ``chat.completion`` of the whole text; the
role chunk comes first, no delta is empty, and ``finish_reason`` says how the output ended.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import codec
from codec.formats._demo_scenario import HISTORY, NOW, TOOL_RESULTS, TOOLS
from support.parsing import TOOLS as GOLDEN_TOOLS
from support.parsing import golden_cases, ids, load_golden

FORMATS = codec.formats()


def turn_for(fmt: str) -> codec.Turn:
    chosen = codec.load(fmt)
    return chosen.prepare(chosen.spec.demo.messages, tools=TOOLS, now=NOW, **chosen.spec.demo.options)


def demo_pieces(fmt: str, size: int = 7) -> list[str]:
    text = codec.load(fmt).spec.demo.completion
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_prepare_renders_once_what_render_renders(fmt: str) -> None:
    chosen = codec.load(fmt)
    turn = turn_for(fmt)
    messages = chosen.spec.demo.messages
    assert turn.prompt == chosen.render(messages, tools=TOOLS, now=NOW, **chosen.spec.demo.options)
    # The generation prompt is what the template adds for it (Mistral's adds nothing).
    bare = chosen.render(messages, tools=TOOLS, now=NOW, add_generation_prompt=False, **chosen.spec.demo.options)
    assert turn.prompt.startswith(bare) and turn.generation_prompt == turn.prompt[len(bare) :]
    assert turn.stop == chosen.stop_tokens


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_turn_parses_as_the_codec_does_with_the_same_history(fmt: str) -> None:
    chosen = codec.load(fmt)
    text = chosen.spec.demo.completion
    options = chosen.spec.demo.options
    expected = chosen.parse(text, tools=TOOLS, history=chosen.spec.demo.messages, id_factory=ids, **options)
    assert turn_for(fmt).parse(text, id_factory=ids) == expected


def test_a_gemma_turn_after_a_tool_result_knows_where_the_prompt_left_the_model() -> None:
    """Gemma 4 goes on in the same turn after a tool result: parsing that reply as if it came
    after a user message would put the reasoning in content. The turn cannot get it wrong."""
    gemma = codec.load("gemma4")
    first = gemma.prepare(HISTORY, tools=TOOLS, now=NOW, enable_thinking=True)
    reply = first.parse(gemma.spec.demo.completion, id_factory=ids)
    assert reply.tool_calls
    second = first.follow_up(reply, {call.id: TOOL_RESULTS.get(call.name, "ok") for call in reply.tool_calls})
    completion = "Both answers are in.<channel|>Here is what I found."
    after = second.parse(completion)
    assert after.reasoning == "Both answers are in." and after.content == "Here is what I found."
    assert second.generation_prompt != first.generation_prompt
    assert second.prompt.startswith(first.prompt.removesuffix(first.generation_prompt))


def test_parse_and_stream_take_no_template_options() -> None:
    turn = turn_for("glm")
    with pytest.raises(TypeError):
        turn.parse("x", enable_thinking=False)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        turn.stream(enable_thinking=False)  # type: ignore[call-arg]


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_validate_and_fold_to_the_completion(fmt: str) -> None:
    turn = turn_for(fmt)
    usage = {"prompt_tokens": 11, "completion_tokens": 5}
    chunks = list(turn.chunks(demo_pieces(fmt), model="m", usage=usage, id_factory=ids))
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1] == {**chunks[-1], "choices": [], "usage": {**usage, "total_tokens": 16}}
    body = [chunk for chunk in chunks[1:] if chunk["choices"]]
    assert all(chunk["choices"][0]["delta"] for chunk in body[:-1]), "no empty delta"
    assert body[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}
    assert len({(chunk["id"], chunk["created"], chunk["model"]) for chunk in chunks}) == 1
    whole = turn.completion("".join(demo_pieces(fmt)), model="m", id_factory=ids)
    ChatCompletion.model_validate(whole)
    assert fold(chunks) == whole["choices"][0]["message"]


@given(cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), which=st.sampled_from(golden_cases()))
@settings(max_examples=60, deadline=None)
def test_any_split_folds_to_the_whole_completion(cuts: list[int], which: tuple[str, str]) -> None:
    case, fmt = which
    text, expected = load_golden(case, fmt)
    turn = codec.load(fmt).prepare([{"role": "user", "content": "hi"}], tools=GOLDEN_TOOLS, **expected["options"])
    points = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points)]
    chunks = list(turn.chunks(pieces, model="m", id_factory=ids))
    whole = turn.completion(text, model="m", id_factory=ids)
    reason = whole["choices"][0]["finish_reason"]
    assert chunks[-1]["choices"][0]["finish_reason"] == reason
    folded, message = fold(chunks), whole["choices"][0]["message"]
    if reason == "length":  # a call the output cut off was streamed as it came, but is not in the message
        # It may come before a finished call (Mistral's arguments cut off by the next `[TOOL_CALLS]`):
        # the calls the message holds are the folded ones with their ids, in order, each whole.
        kept = message.pop("tool_calls", [])
        ids_kept = {call["id"] for call in kept}
        assert [call for call in folded.pop("tool_calls", []) if call.get("id") in ids_kept] == kept
    assert folded == message


def fold(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """What a client holds after the chunks: text joined, calls keyed by index."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            for key, value in choice["delta"].items():
                if key == "tool_calls":
                    for call in value:
                        entry = calls.setdefault(call["index"], {"function": {"arguments": ""}})
                        if "id" in call:
                            entry.update(id=call["id"], type="function")
                            entry["function"]["name"] = call["function"]["name"]
                        entry["function"]["arguments"] += call["function"]["arguments"]
                elif key != "role":
                    message[key] = (message.get(key) or "") + value
    message["content"] = message["content"] or None  # the role chunk's "" is no content
    finished = [calls[i] for i in sorted(calls)]
    if finished:
        message["tool_calls"] = finished
    return message


def test_a_cut_off_call_is_length_and_never_sent_as_a_call() -> None:
    turn = codec.load("glm").prepare([{"role": "user", "content": "hi"}], tools=TOOLS)
    text = "Go.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Par"
    chunks = list(turn.chunks([text], model="m"))
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    whole = turn.completion(text, model="m")
    assert whole["choices"][0]["finish_reason"] == "length"
    assert "tool_calls" not in whole["choices"][0]["message"]


@pytest.mark.parametrize(("engine", "expected"), [("length", "length"), ("stop", "stop"), (None, "stop")])
def test_the_engine_finish_reason_length_wins(engine: str | None, expected: str) -> None:
    turn = codec.load("glm").prepare([{"role": "user", "content": "hi"}])
    chunks = list(turn.chunks(["Done.</think>Hello"], model="m", finish_reason=engine))
    assert chunks[-1]["choices"][0]["finish_reason"] == expected
    assert (
        turn.completion("Done.</think>Hello", model="m", finish_reason=engine)["choices"][0]["finish_reason"]
        == expected
    )


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_the_reasoning_field_is_selectable(field: Any) -> None:
    turn = codec.load("glm").prepare([{"role": "user", "content": "hi"}])
    chunks = list(turn.chunks(["Think", "ing.</think>Hi"], model="m", reasoning_field=field))
    assert "".join(c["choices"][0]["delta"].get(field, "") for c in chunks if c["choices"]) == "Thinking."
    other = {"reasoning_content", "reasoning"} - {field}
    assert not any(other & set(c["choices"][0]["delta"]) for c in chunks if c["choices"])
    message = turn.completion("Thinking.</think>Hi", model="m", reasoning_field=field)["choices"][0]["message"]
    assert message[field] == "Thinking."
    with pytest.raises(ValueError, match="reasoning_field"):
        turn.chunk_stream(model="m", reasoning_field="thoughts")  # type: ignore[arg-type]


def test_deltas_of_one_feed_are_merged() -> None:
    turn = codec.load("glm").prepare([{"role": "user", "content": "hi"}], tools=TOOLS)
    text = "Go.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    stream = turn.chunk_stream(model="m")
    chunks = stream.feed(text) + stream.close()
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert deltas[1] == {"reasoning_content": "Go."}
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert len(calls) == 1, "the call's start and its arguments arrive in one delta when fed at once"
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "Paris"}


def test_follow_up_keeps_tools_and_options_and_takes_raw_text() -> None:
    glm = codec.load("glm")
    turn = glm.prepare([{"role": "user", "content": "Weather?"}], tools=TOOLS, now=NOW, reasoning_effort="low")
    text = "Go.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    following = turn.follow_up(text, [{"role": "tool", "tool_call_id": "c1", "content": "sunny"}])
    assert following.options == {"reasoning_effort": "low"} and following.tools == turn.tools
    assert following.messages[-1].role == "tool" and following.prompt.endswith(turn.generation_prompt)
    with pytest.raises(codec.RenderError, match="no result for call"):
        turn.follow_up(text, {"wrong-id": "x"})


def test_stream_from_a_prompt_rendered_elsewhere() -> None:
    gemma = codec.load("gemma4")
    prompt = gemma.render(HISTORY, tools=TOOLS, now=NOW, enable_thinking=True)
    parser = gemma.stream(prompt=prompt)
    parser.feed("<|channel>thought\nLet me think.<channel|>Sure.")
    parser.close()
    assert parser.message.reasoning == "Let me think." and parser.message.content == "Sure."
    with pytest.raises(codec.ParseError):
        gemma.stream(prompt="not a gemma prompt")


def test_a_last_answer_written_differently_still_gives_the_generation_prompt() -> None:
    """A template may end the conversation's last answer with its own marker (gpt-oss's
    <|return|>, an earlier answer's <|end|>): the prompt then does not extend the history
    rendered without the generation prompt, and the generation prompt is the one the template
    writes after any conversation."""
    source = (
        "{% for m in messages %}{{ m.content }}"
        "{% if loop.last and not add_generation_prompt and m.role == 'assistant' %}<END>{% else %};{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}>>{% endif %}"
    )
    c = codec.load("glm", template=source)
    turn = c.prepare([{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}])
    assert (turn.prompt, turn.generation_prompt) == ("u;a;>>", ">>")
    reply = codec.load("gpt-oss").parse(
        "<|channel|>final<|message|>b<|return|>",
        history=[{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}],
    )
    assert reply.content == "b"
