"""Parsing speed: ``codec`` side by side with transformers' response parser, on the same input.

For each format (glm, solar-open, gemma4, qwen3, deepseek-v3-1) and workload — a short reply; ~2 KB reasoning, ~1 KB
content and 3 calls; one call whose string argument is 50 KB of code (and 12.5 KB, to see how the
cost per feed grows) — it times parsing the whole completion (``Codec.parse`` vs
``parse_response``) and streaming it as a server sees tokens (special tokens whole, text in
4-character pieces: ``Codec.stream().feed`` vs ``ResponseParser.feed``). Each time is the best of a
few repetitions, from one run. Before timing, it checks that both parsers extract the same tool
calls and reports any difference instead of timing a wrong answer.

transformers uses the response templates in ``transformers_response_templates.json`` (written for
these formats; transformers ships none). Run: ``python benchmarks/bench_parse.py``.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _installed_version
from pathlib import Path
from typing import Any

from transformers.utils.chat_parsing import ResponseParser, parse_response
from transformers.utils.chat_parsing.response_templates import load_response_template

import codec
from codec.engine.grammar import compiled, special_tokens

HERE = Path(__file__).resolve().parent
TEMPLATES = json.loads((HERE / "transformers_response_templates.json").read_text(encoding="utf-8"))
FORMATS = (
    "glm",
    "solar-open",
    "gemma4",
    "qwen3",
    "qwen3-coder",
    "deepseek-v3-1",
    "kimi-k2",
    "glm-4-5",
    "minimax-m2",
    "mistral",
    "granite-4",
    "glm-4-7",
    "nemotron-3-nano",
    "granite-4-1",
    "kimi-k2-5",
    "deepseek-v3-2",
    "intern-s1",
)
OPTIONS: dict[str, dict[str, Any]] = {
    "gemma4": {"enable_thinking": True},
    "deepseek-v3-1": {"thinking": True},
    "deepseek-v3-2": {"thinking": True},
}
NOW = datetime(2026, 1, 31)
FEED = 4
BUDGET = 0.4  # seconds of repetitions per measurement, at least MIN_REPEAT runs
MIN_REPEAT = 3


def _tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }


TOOLS: list[Any] = [
    _tool("search_code", {"query": {"type": "string"}, "max_results": {"type": "integer"}}),
    _tool("run_tests", {"pattern": {"type": "string"}, "verbose": {"type": "boolean"}, "timeout": {"type": "integer"}}),
    _tool("write_file", {"path": {"type": "string"}, "content": {"type": "string"}}),
]


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Workload:
    name: str
    reasoning: str
    content: str
    calls: tuple[Call, ...]


def code(size: int) -> str:
    """About ``size`` characters of plausible Python: quotes, braces, colons, newlines."""
    blocks: list[str] = []
    i = total = 0
    while total < size:
        blocks.append(
            f"def handler_{i}(request, *, retries=3):\n"
            f'    """Validate request {i}, transform it and store the result."""\n'
            f'    payload = {{"id": {i}, "items": [x * 2 for x in range(10)], "tag": "h{i}"}}\n'
            f'    if request.get("debug"):\n'
            f'        print(f"handler {i}: {{payload!r}}\\t(retries={{retries}})")\n'
            f"    return payload\n\n"
        )
        total += len(blocks[-1])
        i += 1
    return "".join(blocks)[:size]


def prose(size: int, topic: str) -> str:
    sentence = (
        f"Looking at the {topic}, the failing test calls the handler with a missing key, "
        "so the fix belongs in validation rather than in the storage layer. "
    )
    return (sentence * (size // len(sentence) + 1))[:size].rstrip()


WORKLOADS = (
    Workload(
        "short",
        "The user wants the entry point; search for it.",
        "",
        (Call("a1b2c3d4e5", "search_code", {"query": "def main", "max_results": 5}),),
    ),
    Workload(
        "2 KB reasoning + 1 KB content + 3 calls",
        prose(2048, "traceback"),
        prose(1024, "plan"),
        (
            Call("f6g7h8i9j0", "search_code", {"query": "validate(", "max_results": 20}),
            Call("k1l2m3n4o5", "run_tests", {"pattern": "tests/test_api.py", "verbose": True, "timeout": 120}),
            Call("p6q7r8s9t0", "write_file", {"path": "NOTES.md", "content": prose(300, "notes")}),
        ),
    ),
    Workload(
        "12.5 KB string argument",
        "Write the handlers module.",
        "",
        (Call("u1v2w3x4y5", "write_file", {"path": "app/handlers.py", "content": code(12_800)}),),
    ),
    Workload(
        "50 KB string argument",
        "Write the handlers module.",
        "",
        (Call("z6a7b8c9d0", "write_file", {"path": "app/handlers.py", "content": code(51_200)}),),
    ),
)


def glm_completion(w: Workload) -> str:
    def value(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    calls = "".join(
        f"<tool_call>{c.name}"
        + "".join(f"<arg_key>{k}</arg_key><arg_value>{value(v)}</arg_value>" for k, v in c.arguments.items())
        + "</tool_call>"
        for c in w.calls
    )
    return f"{w.reasoning}</think>{w.content}{calls}"


def glm45_completion(w: Workload) -> str:
    """GLM's call with GLM-4.5's line breaks; the prompt ends at ``<|assistant|>``."""

    def value(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    calls = "".join(
        f"\n<tool_call>{c.name}"
        + "".join(f"\n<arg_key>{k}</arg_key>\n<arg_value>{value(v)}</arg_value>" for k, v in c.arguments.items())
        + "\n</tool_call>"
        for c in w.calls
    )
    return f"\n<think>{w.reasoning}</think>\n{w.content}{calls}"


def solar_completion(w: Workload) -> str:
    # Solar writes either an answer or calls after its think block, never both: the workload's
    # content travels in the first call's arguments instead, so the sizes stay comparable.
    calls = "".join(
        f"<|tool_call:begin|>{c.id}<|tool_call:name|>{c.name}<|tool_call:args|>"
        + json.dumps(_with_content(c, w, index), ensure_ascii=False)
        + "<|tool_call:end|>"
        for index, c in enumerate(w.calls)
    )
    return f"<|think|>{w.reasoning}<|end|><|begin|>assistant<|tool_calls|>{calls}<|calls|>"


def _with_content(call: Call, w: Workload, index: int) -> dict[str, Any]:
    if index or not w.content:
        return call.arguments
    return {**call.arguments, "query": call.arguments.get("query", "") + " " + w.content}


def gemma_completion(w: Workload) -> str:
    def value(v: Any) -> str:
        if isinstance(v, str):
            return f'<|"|>{v}<|"|>'
        return json.dumps(v)

    calls = "".join(
        f"<|tool_call>call:{c.name}{{"
        + ",".join(f"{k}:{value(v)}" for k, v in sorted(c.arguments.items()))
        + "}<tool_call|>"
        for c in w.calls
    )
    return f"<|channel>thought\n{w.reasoning}\n<channel|>{w.content}{calls}"


def qwen3_completion(w: Workload) -> str:
    calls = "".join(
        "\n<tool_call>\n"
        + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False)
        + "\n</tool_call>"
        for c in w.calls
    )
    return f"<think>\n{w.reasoning}\n</think>\n\n{w.content}{calls}"


def deepseek_v3_1_completion(w: Workload) -> str:
    token = compiled("deepseek_v3_1.lark").display  # its bars are fullwidth: spelled once, in the grammar
    calls = "".join(
        token("CALL_OPEN") + c.name + token("CALL_ARGS") + json.dumps(c.arguments, ensure_ascii=False)
        + token("CALL_CLOSE")
        for c in w.calls
    )  # fmt: skip
    block = token("CALLS_OPEN") + calls + token("CALLS_CLOSE") if calls else ""
    return w.reasoning + token("THINK_END") + w.content + block + token("EOS")


def qwen3_coder_completion(w: Workload) -> str:
    # The template writes a string bare and anything else as JSON, each on lines of its own.
    def value(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    calls = "".join(
        f"\n<tool_call>\n<function={c.name}>\n"
        + "".join(f"<parameter={k}>\n{value(v)}\n</parameter>\n" for k, v in c.arguments.items())
        + "</function>\n</tool_call>"
        for c in w.calls
    )
    # Qwen3-Coder has no think block: the workload's reasoning is written as content before it.
    return f"{w.reasoning}\n\n{w.content}{calls}<|im_end|>"


def kimi_k2_completion(w: Workload) -> str:
    # Kimi K2 (instruct) has no think block either; its ids spell the name: functions.NAME:INDEX.
    calls = "".join(
        f"<|tool_call_begin|>functions.{c.name}:{index}<|tool_call_argument_begin|>"
        + json.dumps(c.arguments, ensure_ascii=False)
        + "<|tool_call_end|>"
        for index, c in enumerate(w.calls)
    )
    block = f"<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>" if calls else ""
    return f"{w.reasoning}\n\n{w.content}{block}<|im_end|>"


def kimi_k2_5_completion(w: Workload) -> str:
    # Kimi K2.5 thinks first (the generation prompt opens <think>), then writes K2's calls.
    block = kimi_k2_completion(Workload(w.name, "", "", w.calls)).removesuffix("<|im_end|>").lstrip("\n")
    return f"{w.reasoning}</think>{w.content}{block}<|im_end|>"


def minimax_m2_completion(w: Workload) -> str:
    def value(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    calls = "".join(
        f'<invoke name="{c.name}">\n'
        + "".join(f'<parameter name="{k}">{value(v)}</parameter>\n' for k, v in c.arguments.items())
        + "</invoke>\n"
        for c in w.calls
    )
    block = f"\n<minimax:tool_call>\n{calls}</minimax:tool_call>" if calls else ""
    return f"{w.reasoning}\n</think>\n\n{w.content}{block}"


def mistral_completion(w: Workload) -> str:
    token = compiled("mistral.lark").display
    calls = "".join(
        token("CALL_OPEN") + c.name + token("CALL_ARGS") + json.dumps(c.arguments, ensure_ascii=False) for c in w.calls
    )
    return token("THINK_OPEN") + w.reasoning + token("THINK_CLOSE") + w.content + calls + token("EOS")


def granite_completion(w: Workload) -> str:
    calls = "\n".join(
        "<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) + "\n</tool_call>"
        for c in w.calls
    )
    gap = "\n" if w.content and calls else ""  # the template's new line before a call after content
    return f"{w.content}{gap}{calls}<|end_of_text|>"


def nemotron_completion(w: Workload) -> str:
    # The prompt opens the thought (`<think>\n`); the template writes `\n</think>\n` + content,
    # a new line before the calls and one after each; values as Qwen3-Coder writes them.
    def value(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)

    calls = "".join(
        f"<tool_call>\n<function={c.name}>\n"
        + "".join(f"<parameter={k}>\n{value(v)}\n</parameter>\n" for k, v in c.arguments.items())
        + "</function>\n</tool_call>\n"
        for c in w.calls
    )
    gap = "\n" if w.content and calls else ""
    return f"{w.reasoning}\n</think>\n{w.content}{gap}{calls}<|im_end|>"


def deepseek_v3_2_completion(w: Workload) -> str:
    grammar = compiled("deepseek_v3_2.lark")
    token = grammar.display  # its bars are fullwidth: spelled once, in the grammar
    raw, written_json = (grammar.patterns[name].literal for name in ("RAW_VALUE", "JSON_VALUE"))

    def parameter(key: str, v: Any) -> str:
        text, kind = (v, raw) if isinstance(v, str) else (json.dumps(v, ensure_ascii=False), written_json)
        return f'{token("PARAM_OPEN")}"{key}"{kind}>{text}{token("PARAM_CLOSE")}\n'

    calls = "".join(
        f'{token("CALL_OPEN")}"{c.name}">\n' + "".join(parameter(k, v) for k, v in c.arguments.items())
        + token("CALL_CLOSE") + "\n"
        for c in w.calls
    )  # fmt: skip
    block = "\n\n" + token("CALLS_OPEN") + "\n" + calls + token("CALLS_CLOSE") if calls else ""
    return w.reasoning + token("THINK_CLOSE") + w.content + block + token("EOS")


def intern_s1_completion(w: Workload) -> str:
    # After the pre-opened <think>; content and the first call with nothing between, then '\n'.
    calls = "\n".join(
        "<|action_start|><|plugin|>\n"
        + json.dumps({"name": c.name, "parameters": c.arguments}, ensure_ascii=False)
        + "\n<|action_end|>"
        for c in w.calls
    )
    return f"\n{w.reasoning}\n</think>\n{w.content}{calls}<|im_end|>"


COMPLETIONS: dict[str, Callable[[Workload], str]] = {
    "glm": glm_completion,
    "solar-open": solar_completion,
    "gemma4": gemma_completion,
    "qwen3": qwen3_completion,
    "qwen3-coder": qwen3_coder_completion,
    "deepseek-v3-1": deepseek_v3_1_completion,
    "kimi-k2": kimi_k2_completion,
    "glm-4-5": glm45_completion,
    "minimax-m2": minimax_m2_completion,
    "mistral": mistral_completion,
    "granite-4": granite_completion,
    "glm-4-7": glm_completion,  # GLM-5's layout; the prompt ends in <think> as GLM-5's does
    "nemotron-3-nano": nemotron_completion,
    "granite-4-1": granite_completion,  # Granite 4.1 writes Granite 4.0's calls
    "deepseek-v3-2": deepseek_v3_2_completion,
    "intern-s1": intern_s1_completion,
    "kimi-k2-5": kimi_k2_5_completion,
}


def expected_calls(name: str, w: Workload) -> list[tuple[str, dict[str, Any]]]:
    if name == "solar-open":
        return [(c.name, _with_content(c, w, i)) for i, c in enumerate(w.calls)]
    return [(c.name, c.arguments) for c in w.calls]


def pieces(text: str, tokens: Sequence[str]) -> list[str]:
    """Special tokens whole, the text between them in FEED-character pieces."""
    out: list[str] = []
    splitter = re.compile("(" + "|".join(map(re.escape, tokens)) + ")")
    for part in splitter.split(text):
        if part in tokens:
            out.append(part)
        else:
            out.extend(part[i : i + FEED] for i in range(0, len(part), FEED))
    return out


@dataclass
class Case:
    """One format and workload, with both parsers set up."""

    format: str
    workload: Workload
    text: str
    feeds: list[str]
    fmt: codec.Codec
    template: Any
    prefix: str

    def ours_parse(self) -> codec.AssistantMessage:
        options = OPTIONS.get(self.format, {})
        return self.fmt.parse(self.text, tools=TOOLS, id_factory=_ids, **options)

    def ours_stream(self) -> codec.AssistantMessage:
        parser = self.fmt.stream(tools=TOOLS, id_factory=_ids, **OPTIONS.get(self.format, {}))
        for piece in self.feeds:
            parser.feed(piece)
        parser.close()
        return parser.message

    def theirs_parse(self) -> dict[str, Any]:
        return parse_response(self.text, self.template, prefix=self.prefix, tools=TOOLS)

    def theirs_stream(self) -> dict[str, Any]:
        parser = ResponseParser(self.template, prefix=self.prefix, tools=TOOLS)
        for piece in self.feeds:
            parser.feed(piece)
        message, _ = parser.finalize()
        return message


def version(package: str) -> str:
    try:
        return _installed_version(package)
    except PackageNotFoundError:
        return "(source checkout)"


def _ids(index: int) -> str:
    return f"call_{index}"


def make_case(name: str, w: Workload) -> Case:
    fmt = codec.load(name)
    text = COMPLETIONS[name](w)
    options = OPTIONS.get(name, {})
    # The prompt the completion follows: transformers needs it to know where the model starts.
    prefix = fmt.render([{"role": "user", "content": "Fix the failing handler test."}], tools=TOOLS, now=NOW, **options)
    template = load_response_template(TEMPLATES[name]["template"])
    feeds = pieces(text, special_tokens(fmt.spec.grammar))
    return Case(name, w, text, feeds, fmt, template, prefix)


def ours_calls(message: codec.AssistantMessage) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in message.tool_calls]


def theirs_calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            with contextlib.suppress(json.JSONDecodeError):
                arguments = json.loads(arguments)
        calls.append((function.get("name"), arguments))
    return calls


def check(case: Case) -> list[str]:
    """Differences between what each parser (whole and streamed) extracts and what was written."""
    want = expected_calls(case.format, case.workload)
    problems = []
    for label, run in (
        ("codec parse", lambda: ours_calls(case.ours_parse())),
        ("codec stream", lambda: ours_calls(case.ours_stream())),
        ("transformers parse", lambda: theirs_calls(case.theirs_parse())),
        ("transformers stream", lambda: theirs_calls(case.theirs_stream())),
    ):
        try:
            got = run()
        except Exception as error:  # a peer's failure is a finding to report, not a crash
            problems.append(f"{label}: raised {type(error).__name__}: {error}"[:200])
            continue
        if got != want:
            problems.append(f"{label}: calls differ: {_short(got)} != {_short(want)}")
    return problems


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 160 else text[:120] + " ... " + text[-30:]


Timing = tuple[float | None, float | None]
"""(transformers, codec) in seconds; ``None`` where the parser raised."""


def compare(theirs: Callable[[], Any], ours: Callable[[], Any]) -> Timing:
    """The fastest of a few runs of each, in seconds (``None``: it raised). Runs alternate, so
    a busy machine slows both sides alike."""
    first = [_once(theirs), _once(ours)]
    slowest = max((t for t in first if t is not None), default=1.0)
    repeat = max(MIN_REPEAT, min(200, int(BUDGET / 2 / max(slowest, 1e-6))))
    times: list[list[float]] = [[t] if t is not None else [] for t in first]
    for _ in range(repeat - 1):
        for side, run in enumerate((theirs, ours)):
            if times[side]:
                times[side].append(_once(run) or 0.0)
    mins = [min(side) if side else None for side in times]
    return mins[0], mins[1]


def _once(run: Callable[[], Any]) -> float | None:
    start = time.perf_counter()
    try:
        run()
    except Exception:
        return None
    return time.perf_counter() - start


def _ms(seconds: float | None) -> str:
    return "failed" if seconds is None else f"{seconds * 1e3:.3f} ms"


def main() -> int:
    rows: list[tuple[str, str, float | None, float | None]] = []
    per_feed: dict[tuple[str, str], tuple[float | None, float | None, int]] = {}
    mismatches: list[str] = []
    for name in FORMATS:
        for w in WORKLOADS:
            case = make_case(name, w)
            mismatches += [f"{name}, {w.name}: {p}" for p in check(case)]
            for mode, theirs, ours in (
                ("parse", case.theirs_parse, case.ours_parse),
                ("stream", case.theirs_stream, case.ours_stream),
            ):
                if mode == "stream" or "12.5" not in w.name:
                    rows.append((f"{name}, {w.name} ({len(case.text) / 1024:.1f} KB)", mode, *compare(theirs, ours)))
                if mode == "stream" and "argument" in w.name:
                    per_feed[(name, w.name)] = (rows[-1][2], rows[-1][3], len(case.feeds))
    _print_table(rows)
    _print_per_feed(per_feed)
    if mismatches:
        print("\nMismatches (found before timing):")
        for line in mismatches:
            print(f"  {line}")
    else:
        print("\nBoth parsers extract the same tool calls (names and arguments) in every workload.")
    return 0


def _print_table(rows: list[tuple[str, str, float | None, float | None]]) -> None:
    print(
        f"codec {version('codec')} vs transformers {version('transformers')}, "
        f"Python {sys.version.split()[0]}; stream = special tokens whole, text in "
        f"{FEED}-character feeds; best of several alternating runs\n"
    )
    width = max(len(row[0]) for row in rows)
    print(f"| {'workload':<{width}} | mode   | transformers |    codec     | codec / transf. |")
    print(f"|{'-' * (width + 2)}|--------|--------------|--------------|-----------------|")
    for workload, mode, theirs, ours in rows:
        ratio = f"{ours / theirs:.2f}" if ours and theirs else "-"
        times = f"{_ms(theirs):>12} | {_ms(ours):>12}"
        print(f"| {workload:<{width}} | {mode:<6} | {times} | {ratio:>15} |")


def _print_per_feed(
    per_feed: dict[tuple[str, str], tuple[float | None, float | None, int]],
) -> None:
    print(f"\nµs per feed, streaming one string argument ({FEED}-character feeds):\n")
    print("| format     | parser       | 12.5 KB | 50 KB   | 50 KB / 12.5 KB |")
    print("|------------|--------------|---------|---------|-----------------|")
    for name in FORMATS:
        small = per_feed[(name, WORKLOADS[2].name)]
        large = per_feed[(name, WORKLOADS[3].name)]
        for label, position in (("transformers", 0), ("codec", 1)):
            a, b = small[position], large[position]
            if a is None or b is None:
                print(f"| {name:<10} | {label:<12} | failed  | failed  |                 |")
                continue
            us_a, us_b = a / small[2] * 1e6, b / large[2] * 1e6
            print(f"| {name:<10} | {label:<12} | {us_a:7.2f} | {us_b:7.2f} | {us_b / us_a:15.2f} |")


if __name__ == "__main__":
    sys.exit(main())
