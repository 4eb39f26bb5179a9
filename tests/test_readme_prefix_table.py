"""The README's prefix_check table is computed, not written by hand: this test builds it from
the scenarios below and checks the README holds exactly that table."""

from __future__ import annotations

from pathlib import Path

import codec

README = Path(__file__).parent.parent / "README.md"
HISTORY = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
Q = '<|"|>'
# What the model wrote, without its stop token (the engine never feeds that one back, so the
# cache does not hold it).
SCENARIOS = {
    "glm": {
        "answer": "It is asked for.</think>Sunny, 18 C.",
        "answer after a blank line": "It is asked for.</think>\n\nSunny, 18 C.",
        "tool call": "Use the tool.</think><tool_call>get_weather"
        "<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    },
    "glm-effort": {
        "answer": "It is asked for.</think>Sunny, 18 C.",
        "tool call": "Use the tool.</think><tool_call>get_weather"
        "<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    },
    "solar-open": {
        "answer": "<|think|>It is asked for.<|end|><|begin|>assistant<|content|>Sunny, 18 C.",
        "answer, reasoning_effort=low": "<|content|>Sunny, 18 C.",
        "tool call": (
            "<|think|>Use the tool.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>a1b2c3d4e5"
            '<|tool_call:name|>get_weather<|tool_call:args|>{"city": "Paris"}<|tool_call:end|>'
        ),
    },
    "gemma4": {
        "answer": "Sunny, 18 C.",
        "answer, enable_thinking=true": "<|channel>thought\nIt is asked for.\n<channel|>Sunny, 18 C.",
        "tool call": f"<|tool_call>call:get_weather{{city:{Q}Paris{Q}}}<tool_call|>",
    },
}


OPTIONS = {"reasoning_effort=low": {"reasoning_effort": "low"}, "enable_thinking=true": {"enable_thinking": True}}


def table() -> str:
    rows = ["| format | the model wrote | prefix survives? |", "|---|---|---|"]
    for fmt, scenarios in SCENARIOS.items():
        for name, completion in scenarios.items():
            options = dict(OPTIONS.get(name.partition(", ")[2], {}))
            result = codec.load(fmt).prefix_check(HISTORY, completion, tools=TOOLS, now="2026-11-30", **options)
            verdict = (
                "yes"
                if result.ok
                else (
                    f"no: at message {result.message_index}, the cache holds `{result.expected[:24]!r}`, "
                    f"the next prompt `{result.found[:24]!r}` ({result.reason.rstrip('.').lower()})"
                )
            )
            rows.append(f"| `{fmt}` | {name} | {verdict.replace('|', chr(92) + '|')} |")  # \| in a table
    return "\n".join(rows)


def test_readme_lists_the_prefix_check_results() -> None:
    assert table() in README.read_text(encoding="utf-8")


if __name__ == "__main__":
    print(table())
