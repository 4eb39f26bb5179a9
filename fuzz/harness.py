"""The fuzz targets and the properties they check (docs/fuzzing.md states them exactly).

Targets (``TARGETS``):

- ``parse-<format>`` for every format of ``codec.formats()``: one input is a completion, the
  options it is parsed under and the chunk boundaries of a second, streamed parse;
- ``parse-prompt``: one input is a text given to ``parse_prompt`` of every format.

Input layout of a ``parse-*`` target (bytes from the fuzzer): ``TEXT [NUL CONTROL]``. Everything
before the last NUL byte is the completion (UTF-8, invalid bytes replaced by U+FFFD); with no NUL
the whole input is. ``CONTROL[0]`` picks the options (``option_sets(fmt)[CONTROL[0] % n]``, no
control byte: no options); ``CONTROL[1:]`` are the chunk sizes of the streamed parse, used in
turn (``chunk_size``); without them the sizes come from a generator seeded with the text's CRC32.
``parse-prompt`` reads the whole input as text. ``encode`` writes this layout (seed files).

``check(target, data)`` raises ``Violation`` at the first property an input breaks; ``Recorder``
keeps, per kind of violation, the smallest input that shows it and writes it to disk at once (a
libFuzzer process never returns to Python after its last run).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import sys
import time
import traceback
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))  # support.parsing.fold: one statement of the event protocol

import codec  # noqa: E402
from codec.engine.grammar import compiled  # noqa: E402
from codec.events import Event  # noqa: E402
from codec.formats import ANY_TEXT  # noqa: E402
from codec.models import content_text  # noqa: E402
from codec.registry import FORMATS  # noqa: E402
from support.parsing import WORD, fold, header_words  # noqa: E402

# A small fixed tool list: string, integer, number|null, boolean, enum, array and object
# parameters, so that arguments are typed from the schema.
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"},
            "units": {"type": "string", "enum": ["C", "F"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "run_code", "description": "Run Python code.",
        "parameters": {"type": "object", "properties": {
            "code": {"type": "string"}, "timeout": {"type": ["number", "null"]}}, "required": ["code"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"},
            "filters": {"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}}},
            "exact": {"type": "boolean"}}, "required": ["query"]}}},
]  # fmt: skip

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "tool_calls": [{"id": "call_0", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_call_id": "call_0", "name": "get_weather", "content": "{\"temp\": 21}"},
]  # fmt: skip
"""A conversation that ends in a tool result: ``history=`` of one option set (Gemma 4 goes on
in the same turn there)."""

PARSE_PREFIX = "parse-"
PROMPT_TARGET = "parse-prompt"

# Time bound of one parse, in CPU seconds: generous (a plain parse takes ~1-5 µs per character,
# instrumented ~5x that), so only a super-linear blow-up or a hang crosses it.
TIME_PER_BYTE = 200e-6
TIME_CONSTANT = 0.1


def ids(index: int) -> str:
    return f"call_{index}"


def targets() -> list[str]:
    return [PARSE_PREFIX + fmt for fmt in codec.formats()] + [PROMPT_TARGET]


class Violation(Exception):
    """An input broke a property: ``prop`` names it, ``detail`` says how, ``where`` is the
    innermost frame of an unexpected exception (part of the signature that dedupes findings)."""

    def __init__(self, prop: str, detail: str, where: str = "") -> None:
        super().__init__(f"{prop}: {detail}")
        self.prop, self.detail, self.where = prop, detail, where

    def signature(self, target: str) -> str:
        return f"{target}|{self.prop}|{self.where}"


# ---------------------------------------------------------------------------------------------
# Input layout


@cache
def option_sets(fmt: str) -> tuple[dict[str, Any], ...]:
    """The options a ``parse-<fmt>`` input can choose: none; each single value the registry lists
    for the template (``FormatSpec.test_options``, without ``ANY_TEXT``); and, last, a history
    that ends in a tool result. Index 0 is no options."""
    spec = FORMATS[fmt]
    sets: list[dict[str, Any]] = [{}]
    for name, values in spec.test_options.items():
        sets += [{name: value} for value in values if value is not ANY_TEXT]
    sets.append({"history": HISTORY})
    c = codec.load(fmt)
    usable = []
    for options in sets:
        try:
            c.stream(tools=TOOLS, id_factory=ids, **options)
        except codec.CodecError:
            continue
        usable.append(options)
    return tuple(usable)


def encode(fmt: str, text: str, option_index: int = 0, chunks: bytes = b"") -> bytes:
    """An input of a ``parse-<fmt>`` target that ``decode`` reads back: the control bytes hold
    no NUL (option 0 is written as the number of option sets; chunk size byte 0 as 0x10)."""
    if option_index == 0 and not chunks and "\x00" not in text:
        return text.encode()
    sets = len(option_sets(fmt))
    control = bytes([option_index % sets or sets]) + bytes(b or 0x10 for b in chunks)
    return text.encode() + b"\x00" + control


def decode(data: bytes) -> tuple[str, int, bytes]:
    """``(text, option byte, chunk-size bytes)`` of a ``parse-*`` input."""
    cut = data.rfind(b"\x00")
    if cut < 0:
        return data.decode("utf-8", "replace"), 0, b""
    control = data[cut + 1 :]
    return data[:cut].decode("utf-8", "replace"), control[0] if control else 0, control[1:]


def chunk_size(byte: int) -> int:
    """A chunk-size byte: 1 to 16 characters, or (from 0xF0) 64 to 1024."""
    return (byte & 0x0F) + 1 if byte < 0xF0 else (byte - 0xEF) * 64


def split(text: str, sizes: bytes) -> list[str]:
    """``text`` cut into chunks of the sizes given in turn (random 1-16 without sizes)."""
    if sizes:
        pick: Callable[[int], int] = lambda k: chunk_size(sizes[k % len(sizes)])  # noqa: E731
    else:
        rng = random.Random(zlib.crc32(text.encode("utf-8", "surrogatepass")))
        pick = lambda k: rng.randint(1, 16)  # noqa: E731
    chunks, start, k = [], 0, 0
    while start < len(text):
        size = pick(k)
        chunks.append(text[start : start + size])
        start, k = start + size, k + 1
    return chunks


# ---------------------------------------------------------------------------------------------
# No text lost: the statement of tests/test_parse_properties.py (test_lenient_parse_keeps_every_word)


def _alternation(texts: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True)) or "(?!)")


@cache
def _marker_pattern(fmt: str) -> re.Pattern[str]:
    """The markers and every other token read as one (Llama 3's ``<|eom_id|>`` as ``<|eot_id|>``)."""
    grammar = compiled(FORMATS[fmt].grammar)
    return _alternation(dict.fromkeys([*grammar.markers, *grammar.special_tokens]))


@cache
def _header_pattern(fmt: str) -> re.Pattern[str]:
    return _alternation(header_words(fmt))


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value.keys(), *(leaf for item in value.values() for leaf in _leaves(item))]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def kept_text(message: codec.AssistantMessage) -> str:
    """Everything a parsed message holds, as text (case-folded): reasoning, content, the id,
    name, argument keys and values of every call — finished, cut off (``truncated_call``) or
    stopped (``incomplete_calls``) — also as ASCII JSON, where ``\\u00e9``-style escapes have
    the words the input wrote — and the messages of its diagnostics."""
    parts = [message.reasoning or "", content_text(message.content)]
    truncated = () if message.truncated_call is None else (message.truncated_call,)
    for call in (*message.tool_calls, *truncated, *message.incomplete_calls):
        parts += [call.id or "", call.name, call.arguments_json, json.dumps(call.arguments, ensure_ascii=False)]
        parts.append(json.dumps(call.arguments))  # the words of \uXXXX escapes in JSON arguments
        parts += [call.name + key for key in call.arguments]  # a key glued to the name, split by repair
        parts += [str(value) for value in _leaves(call.arguments)]
    parts += [diagnostic.message for diagnostic in message.diagnostics]
    return "\n".join(parts).casefold()


def lost_words(fmt: str, text: str, message: codec.AssistantMessage) -> list[str]:
    """The words of ``text`` that ``message`` lost: every run of 2+ letters of the text once the
    format's markers and its header words are blanked out, that is not a substring (case-folded)
    of ``kept_text(message)``."""
    kept = kept_text(message)
    # A call id written where a stream cannot read it is left out (FormatSpec.unread_call_id).
    blanked = re.sub(FORMATS[fmt].unread_call_id or "(?!)", " ", text)
    blanked = _header_pattern(fmt).sub(" ", _marker_pattern(fmt).sub(" ", blanked))
    # A JSON escape is decoded, not lost: `\u00efve靂` reads `ïve靂`, and no output writes the
    # escape's letters next to an unescaped character (the words around it are still checked).
    blanked = _JSON_ESCAPE.sub(" ", blanked)
    truncated = () if message.truncated_call is None else (message.truncated_call,)
    names = {call.name.casefold() for call in (*message.tool_calls, *truncated, *message.incomplete_calls)}
    return [word for word in WORD.findall(blanked) if not _kept(word.casefold(), kept, names)]


_JSON_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")


def _kept(word: str, kept: str, names: set[str]) -> bool:
    """``word`` is kept, or it is a call's name glued to a key (GLM's ``<tool_call>NAMEkey</arg_key>``
    repair splits it with the tool list) whose key text is kept on its own (as a key, or as
    content when its value never came)."""
    if word in kept:
        return True
    # The word may start inside the name (``get_weathercity``: the word is ``weathercity``).
    return any(
        name.endswith(word[:cut]) and word[cut:] in kept for name in names if name for cut in range(1, len(word))
    )


# ---------------------------------------------------------------------------------------------
# The checks


def _where(error: BaseException) -> str:
    """The innermost frame of ``error`` inside codec (else the innermost one): ``file:function``."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if f"{os.sep}codec{os.sep}" in f.filename] or frames
    frame = inside[-1] if inside else None
    return f"{type(error).__name__}@{Path(frame.filename).name}:{frame.name}" if frame else type(error).__name__


def _unexpected(prop: str, error: BaseException) -> Violation:
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__)[-6:])
    return Violation(prop, f"{type(error).__name__}: {error}\n{text}", _where(error))


def _timed(work: Callable[[], Any]) -> tuple[Any, float]:
    start = time.process_time()
    result = work()
    return result, time.process_time() - start


def _bound(size: int) -> float:
    return TIME_CONSTANT + TIME_PER_BYTE * size


def _check_time(prop: str, size: int, elapsed: float, again: Callable[[], Any]) -> float:
    """Above the bound, measure twice more and keep the best (a GC pause or a cache refill is
    not a blow-up); still above it is a violation."""
    if elapsed > _bound(size):
        elapsed = min(elapsed, *(_timed(again)[1] for _ in range(2)))
        if elapsed > _bound(size):
            raise Violation(
                "slow", f"{prop}: {elapsed * 1e3:.1f} ms for {size} characters (bound {_bound(size) * 1e3:.1f} ms)"
            )
    return elapsed


@dataclass
class Outcome:
    """What one input cost: characters and CPU seconds of its whole parse(s)."""

    size: int
    seconds: float


def _state(message: codec.AssistantMessage) -> tuple[Any, ...]:
    return (message, message.finish_reason, message.truncated_call, message.incomplete_calls,
            [(d.code, d.offset) for d in message.diagnostics])  # fmt: skip


def check_parse(fmt: str, data: bytes) -> Outcome:
    """Every property of ``parse``/``stream`` for one input (docs/fuzzing.md, P1-P6)."""
    text, option_byte, sizes = decode(data)
    sets = option_sets(fmt)
    options = sets[option_byte % len(sets)]
    c = codec.load(fmt)

    def lenient() -> codec.AssistantMessage:
        return c.parse(text, tools=TOOLS, id_factory=ids, **options)

    # P1 lenient parse never raises.
    try:
        whole, elapsed = _timed(lenient)
    except Exception as error:  # any exception is the finding
        raise _unexpected("lenient-raises", error) from None
    # P6 time per character bounded.
    elapsed = _check_time("parse", len(text), elapsed, lenient)

    # P2 strict raises only ParseError, at a position inside the text; accepting means no repair.
    try:
        strict = c.parse(text, tools=TOOLS, id_factory=ids, strict=True, **options)
    except codec.ParseError as error:
        if not (0 <= error.offset <= len(text) and error.line >= 1 and error.column >= 1):
            raise Violation(
                "strict-error-position",
                f"offset {error.offset} line {error.line} column {error.column} for {len(text)} characters",
            ) from None
    except Exception as error:
        raise _unexpected("strict-raises", error) from None
    else:
        # Strict reads text as the grammar does; lenient alone reads an opener the text implies
        # (Gemma's ``call:`` without ``<|tool_call>``): there the two may differ.
        implied = any(_implies_an_opener(diagnostic) for diagnostic in whole.diagnostics)
        if not implied and (_state(strict) != _state(whole) or whole.diagnostics):
            raise Violation("strict-differs", f"strict {_state(strict)!r}\nlenient {_state(whole)!r}")

    # P3 whole = chunked (message, finish_reason, truncated_call, incomplete_calls, repairs).
    chunks = split(text, sizes)
    events: list[Event] = []
    try:
        parser = c.stream(tools=TOOLS, id_factory=ids, **options)
        for chunk in chunks:
            events += parser.feed(chunk)
        events += parser.close()
        streamed = parser.message
    except Exception as error:
        raise _unexpected("stream-raises", error) from None
    if _state(streamed) != _state(whole):
        fields = ("message", "finish_reason", "truncated_call", "incomplete_calls", "diagnostics")
        differ = [name for name, a, b in zip(fields, _state(whole), _state(streamed), strict=True) if a != b]
        raise Violation(
            "chunking",
            f"whole and streamed differ in {', '.join(differ)}; "
            f"chunks {[len(x) for x in chunks][:40]}\n"
            f"whole    {_state(whole)!r}\nstreamed {_state(streamed)!r}",
            "+".join(differ),
        )
    # P4 the events fold back to the message (and keep the event protocol on the way).
    try:
        folded = fold(events)
    except AssertionError as error:
        raise Violation("event-protocol", f"{error}") from None
    if folded != streamed.to_openai():
        raise Violation("fold", f"folded {folded!r}\nmessage {streamed.to_openai()!r}")

    # P5 no text lost.
    lost = lost_words(fmt, text, whole)
    if lost:
        raise Violation("text-lost", f"words {lost[:8]!r} not in {kept_text(whole)[:400]!r}")
    return Outcome(len(text), elapsed)


def _implies_an_opener(diagnostic: codec.Diagnostic) -> bool:
    return diagnostic.code == "missing_marker" and "the text opens a call" in diagnostic.message


def check_prompt(data: bytes) -> Outcome:
    """``parse_prompt`` of every format raises only ``ParseError``, in bounded time (P7, P6)."""
    text = data.decode("utf-8", "replace")
    total = 0.0
    for fmt in codec.formats():
        c = codec.load(fmt)

        def read(c: codec.Codec = c) -> None:
            with contextlib.suppress(codec.ParseError):
                c.parse_prompt(text)

        try:
            _, elapsed = _timed(read)
        except Exception as error:
            raise _unexpected(f"prompt-raises[{fmt}]", error) from None
        total += _check_time(f"parse_prompt[{fmt}]", len(text), elapsed, read)
    return Outcome(len(text), total)


def check(target: str, data: bytes) -> Outcome:
    if target == PROMPT_TARGET:
        return check_prompt(data)
    if target.startswith(PARSE_PREFIX) and target[len(PARSE_PREFIX) :] in FORMATS:
        return check_parse(target[len(PARSE_PREFIX) :], data)
    raise SystemExit(f"unknown target {target!r}; targets: {', '.join(targets())}")


def warm_up(target: str) -> None:
    """Compile grammars and prime parsers before timing anything."""
    fmts = codec.formats() if target == PROMPT_TARGET else [target[len(PARSE_PREFIX) :]]
    for fmt in fmts:
        examples = FORMATS[fmt].examples
        for options in option_sets(fmt):
            codec.load(fmt).parse(examples.two_calls, tools=TOOLS, id_factory=ids, **options)
        with contextlib.suppress(codec.CodecError):
            codec.load(fmt).parse_prompt(codec.load(fmt).render([{"role": "user", "content": "hi"}], tools=TOOLS))


# ---------------------------------------------------------------------------------------------
# Recording


class Recorder:
    """Runs ``check`` on each input, keeps counts and the slowest inputs, and writes every new
    kind of violation (the smallest input seen for it) under ``out/findings`` as it happens."""

    def __init__(self, target: str, out: Path, stats_every: float = 5.0) -> None:
        self.target, self.out = target, out
        (out / "findings").mkdir(parents=True, exist_ok=True)
        self.inputs = self.chars = self.violations = 0
        self.seconds = 0.0
        self.started = time.time()
        self.known: dict[str, int] = {}  # signature -> size of the smallest input kept
        for path in (out / "findings").glob("*.json"):
            record = json.loads(path.read_text())
            self.known[record["signature"]] = record["size"]
        self.slowest: list[tuple[float, int, str]] = []  # (µs per character, size, sha1)
        self.buckets: dict[int, int] = {}  # log2(µs per character) -> inputs (inputs of 32+ characters)
        self._stats_every, self._next_stats = stats_every, time.time() + stats_every

    def __call__(self, data: bytes) -> None:
        self.inputs += 1
        try:
            outcome = check(self.target, data)
        except Violation as violation:
            self.violations += 1
            self._record(data, violation)
        else:
            self.chars += outcome.size
            self.seconds += outcome.seconds
            if outcome.size >= 32:
                per = outcome.seconds / outcome.size * 1e6
                bucket = max(-4, int(per).bit_length() if per >= 1 else -int(1 / per).bit_length())
                self.buckets[bucket] = self.buckets.get(bucket, 0) + 1
                if len(self.slowest) < 10 or per > self.slowest[-1][0]:
                    sha = hashlib.sha1(data).hexdigest()
                    (self.out / "slow").mkdir(exist_ok=True)
                    (self.out / "slow" / sha).write_bytes(data)
                    self.slowest = sorted([*self.slowest, (per, outcome.size, sha)], reverse=True)[:10]
        if time.time() >= self._next_stats:
            self.write_stats()

    def _record(self, data: bytes, violation: Violation) -> None:
        signature = violation.signature(self.target)
        if signature in self.known and self.known[signature] <= len(data):
            return
        self.known[signature] = len(data)
        name = hashlib.sha1(signature.encode()).hexdigest()[:12]
        (self.out / "findings" / f"{name}.bin").write_bytes(data)
        record = {"target": self.target, "signature": signature, "property": violation.prop,
                  "size": len(data), "detail": violation.detail[:4000]}  # fmt: skip
        (self.out / "findings" / f"{name}.json").write_text(json.dumps(record, indent=1))
        print(f"\n*** violation {signature} ({len(data)} bytes): {violation.detail[:300]}", file=sys.stderr)

    def stats(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "inputs": self.inputs,
            "violating_inputs": self.violations,
            "kinds_of_violation": len(self.known),
            "wall_seconds": round(time.time() - self.started, 1),
            "characters": self.chars,
            "parse_cpu_seconds": round(self.seconds, 2),
            "us_per_char_overall": round(self.seconds / self.chars * 1e6, 2) if self.chars else None,
            "us_per_char_histogram_log2": dict(sorted(self.buckets.items())),
            "slowest_us_per_char": [{"us_per_char": round(p, 1), "chars": n, "input": f"slow/{s}"}
                                    for p, n, s in self.slowest],
        }  # fmt: skip

    def write_stats(self) -> None:
        self._next_stats = time.time() + self._stats_every
        (self.out / "stats.json").write_text(json.dumps(self.stats(), indent=1))
