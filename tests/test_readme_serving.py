"""The README's serving glue is real: this test runs the block after its ``serving-glue`` marker
with a stand-in engine and checks what it sent — and that it stays a handful of lines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from openai.types.chat import ChatCompletionChunk

import codec

README = Path(__file__).parent.parent / "README.md"
MAX_LINES = 10
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
COMPLETION = (
    "Use the tool.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
)


class Engine:
    """Stands in for an inference engine: streams a fixed GLM completion in small pieces."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.finish_reason: str | None = None  # known once generation ends, as with a real engine
        self.usage: dict[str, int] | None = None
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    def generate(self, prompt: str, stop: tuple[str, ...]) -> Any:
        self.asked.append((prompt, stop))
        for start in range(0, len(COMPLETION), 4):
            piece = COMPLETION[start : start + 4]
            self.text.append(piece)
            yield piece
        self.finish_reason = "stop"
        self.usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(COMPLETION) // 4}


def glue_block() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- serving-glue[^>]*-->\n```python\n(.*?)```", text, re.S)
    assert found, "README: no ```python block after the serving-glue marker"
    return found.group(1)


def test_the_glue_is_short() -> None:
    lines = [line for line in glue_block().splitlines() if line.strip()]
    assert len(lines) <= MAX_LINES


def test_the_glue_runs_and_sends_whole_chunks() -> None:
    sent: list[dict[str, Any]] = []
    engine = Engine()
    scope: dict[str, Any] = {
        "codec": codec,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": TOOLS,
        "engine": engine,
        "send": sent.append,
        "run_tool": lambda call: {"temp_c": 18, "city": call.arguments["city"]},
    }
    exec(compile(glue_block(), "README.md", "exec"), scope)
    ((prompt, stop),) = engine.asked
    assert prompt.endswith("<|assistant|><think>") and stop == codec.load("glm").stop_tokens
    for chunk in sent:
        ChatCompletionChunk.model_validate(chunk)
    assert sent[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert sent[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert sent[-1]["choices"] == [] and sent[-1]["usage"]["total_tokens"] > 0
    arguments = "".join(
        call["function"].get("arguments", "")
        for chunk in sent
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls", [])
    )
    reply = scope["reply"]
    assert json.loads(arguments) == reply.tool_calls[0].arguments == {"city": "Paris"}
    follow_up = scope["next_turn"]
    assert '"temp_c": 18' in follow_up.prompt and follow_up.prompt.startswith(prompt.removesuffix("<think>"))
