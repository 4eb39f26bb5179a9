"""Worst-case inputs: time per byte, peak memory, and what stays allocated after the parse
(issue 9: "bounded").

Each case is parsed whole (``Codec.parse``) and streamed in 4 KB feeds, and its time per byte is
compared, in the same run, with a *flat* input of the same size and the same syntax:

- arguments nested 10,000 and 100,000 deep (``[[[…1…]]]``) against a flat array of the same
  length (``[1,1,1,…]``) in the same argument — deep nesting stops at ``Limits.max_depth`` by
  design (the rest is kept as content, with a diagnostic);
- 10 MB of content, a 5 MB string argument and 10,000 calls against the same shape 100 times
  smaller (100 KB, 50 KB, 100 calls): the cost per byte must not grow with the size;
- 200,000 characters of white space where content could start, fed one character at a time
  (white space there waits to show whether a marker follows it: layout, or text: content),
  against 20,000 (issue 21, item 5): one run at each size, time per character.

A ratio above 2 misses the target. Peak and retained memory come from ``tracemalloc`` in a
separate, untimed parse; retained is what is still allocated after it (caches included).

Run: ``python benchmarks/bench_worst_case.py`` (a minute or two on 2 cores).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable

import codec
from codec.registry import FORMATS

DEEP = {
    "glm": ("</think><tool_call>f<arg_key>a</arg_key><arg_value>", "</arg_value></tool_call>"),
    "solar-open": (
        '<|tool_calls|><|tool_call:begin|>abcdefghij<|tool_call:name|>f<|tool_call:args|>{"a": ',
        "}<|tool_call:end|><|calls|>",
    ),
    "gemma4": ("<|tool_call>call:f{a:", "}<tool_call|>"),
}
FLAT_PREFIX = {"glm": "</think>", "solar-open": "<|content|>", "gemma4": ""}
FEED = 4096


def deep(name: str, depth: int) -> str:
    head, tail = DEEP[name]
    return head + "[" * depth + "1" + "]" * depth + tail


def content(name: str, size: int) -> str:
    line = "The quick brown fox jumps over the lazy dog; 0123456789.\n"
    return FLAT_PREFIX[name] + (line * (size // len(line) + 1))[:size]


def big_argument(name: str, size: int) -> str:
    examples = FORMATS[name].examples
    line = "    total = compute(values[i], weights[i]) + offset  # step\n"
    return examples.code_head + (line * (size // len(line) + 1))[:size] + examples.code_tail


def many_calls(name: str, count: int) -> str:
    one = FORMATS[name].examples.one_call
    if name == "glm":
        return "</think>" + one.removeprefix("</think>") * count
    if name == "solar-open":
        body = one.removeprefix("<|tool_calls|>").removesuffix("<|calls|>")
        calls = [body.replace("aaaaaaaaa1", f"{index:010d}") for index in range(count)]
        return "<|tool_calls|>" + "".join(calls) + "<|calls|>"
    return one * count


def flat_array(name: str, size: int) -> str:
    head, tail = DEEP[name]
    items = max(1, (size - len(head) - len(tail) - 2) // 2)
    return head + "[" + ",".join("1" * items) + "]" + tail


def white_space(name: str, size: int) -> list[str]:
    return [FLAT_PREFIX[name].removesuffix("<|content|>"), *(" " * size), "x"]


def fed_by_character(name: str, pieces: list[str]) -> Callable[[], object]:
    def run() -> object:
        parser = codec.load(name).stream()
        for piece in pieces:
            parser.feed(piece)
        parser.close()
        return parser.message

    return run


def report_white_space(name: str) -> None:
    large, small = white_space(name, 200_000), white_space(name, 20_000)
    fed, fed_small = best(fed_by_character(name, large)), best(fed_by_character(name, small))
    print(
        f"{name:<11} {'white space':<16} {len(large) / 1e6:6.2f} MB  one character per feed: "
        f"{fed * 1e3:7.1f} ms, {fed / len(large) * 1e6:5.2f} us/char (x{fed / fed_small / 10:5.2f} against 20,000)"
    )


def best(action: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def streamed(name: str, text: str) -> Callable[[], object]:
    def run() -> object:
        parser = codec.load(name).stream()
        for start in range(0, len(text), FEED):
            parser.feed(text[start : start + FEED])
        parser.close()
        return parser.message

    return run


def memory(name: str, text: str) -> tuple[float, float]:
    """Peak and retained MB of one parse (retained: still allocated after it, caches included)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    codec.load(name).parse(text)
    peak = tracemalloc.get_traced_memory()[1] - before
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return peak / 1e6, retained / 1e6


def report(name: str, label: str, text: str, flat: str) -> None:
    whole, flat_whole = best(lambda: codec.load(name).parse(text)), best(lambda: codec.load(name).parse(flat))
    fed, flat_fed = best(streamed(name, text)), best(streamed(name, flat))
    peak, retained = memory(name, text)
    scale = len(text) / len(flat)  # per byte: the flat input may be smaller
    print(
        f"{name:<11} {label:<16} {len(text) / 1e6:6.2f} MB  whole {whole * 1e3:7.1f} ms "
        f"(x{whole / flat_whole / scale:5.2f})  streamed {fed * 1e3:7.1f} ms (x{fed / flat_fed / scale:5.2f})  "
        f"peak {peak:6.1f} MB  retained {retained:5.2f} MB"
    )


def main() -> None:
    print(f"codec {codec.__version__}; (xR): time per byte against the flat input (see the docstring)")
    for name in ("glm", "solar-open", "gemma4"):
        codec.load(name).parse(FORMATS[name].examples.one_call)  # warm: grammar and caches
        for depth in (10_000, 100_000):
            text = deep(name, depth)
            report(name, f"nesting {depth:,}", text, flat_array(name, len(text)))
        report(name, "10 MB content", content(name, 10_000_000), content(name, 100_000))
        report(name, "5 MB argument", big_argument(name, 5_000_000), big_argument(name, 50_000))
        report(name, "10,000 calls", many_calls(name, 10_000), many_calls(name, 100))
        report_white_space(name)


if __name__ == "__main__":
    main()
