"""Qwen3-Coder's call for constrained decoding, as the template writes it
(``templates/qwen3_coder.jinja``)::

    <tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n…</function>\\n</tool_call>

``<function=`` and ``<parameter=`` are ordinary text to the model's tokenizer (they end in
``=``, not ``>``): literals, not special-token references. A value whose schema admits only
strings is raw text; one that admits no string is JSON (the parser reads JSON's ``true``,
``null`` and numbers there as the schema says); one that admits both is raw text the parser
keeps as a string (not a word, number or bracket it would read otherwise), or ``True``,
``False``, ``None`` or an integer where the schema admits them, as the template writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codec.arguments.schema import kinds
from codec.constrain.calls import Tool, marker, object_schema
from codec.constrain.lark import MAX_ALTERNATIVES, Builder, free_text, literal, regex, regex_escape
from codec.constrain.values import ANNOTATIONS, Values, json_syntax, too_many_values
from codec.engine.grammar import compiled
from codec.formats.qwen3_coder.values import written

_EOL = literal("\n")
_KEY_END = literal(">\n")


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written_name: str | None = None
) -> str | None:
    """One call of ``tool``: its parameters in the order of the schema's ``properties``."""
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = object_schema(builder, tool)
    opener, param = literal(grammar.display("CALL_OPEN")), literal(grammar.display("PARAM_OPEN"))
    closes = {t: marker(grammar, t) for t in ("BLOCK_OPEN", "BLOCK_CLOSE", "CALL_CLOSE", "PARAM_CLOSE")}
    values = Values(builder, json_syntax(markers)(builder), name)
    text = free_text(builder, markers)

    def raw_key(key: str) -> str | None:
        return literal(key) if key and not any(c in key for c in "<>\n") and key.strip() == key else None

    def any_key(b: Builder, known: Sequence[str]) -> str:
        keys = b.terminal(b.fresh("param_key").upper(), regex(r"[^<>\n]+"))
        if not known:
            return keys
        excluded = "|".join(regex_escape(k) for k in known)
        return b.terminal(b.fresh("param_key").upper(), f"{b.rules[keys]} & ~{regex(f'(?:{excluded})')}")

    def value(schema: Any, root: Any, path: str, depth: int) -> str | None:
        return _value(values, text, markers, schema, root, path, depth)

    layout = Values(builder, values.syntax.__class__(
        "qwen3_coder", "", "", "", "", _KEY_END, "", False,
        values.syntax.string, values.syntax.string_value, raw_key, any_key,
    ), name)  # fmt: skip
    found = layout.members(parameters, parameters, "", 0, value)
    if found is None:
        return None
    listed, extra = found
    close = f"{_EOL} {closes['PARAM_CLOSE']} {_EOL}"
    parts = [f"({param} {member} {close})" + ("" if required else "?") for member, required in listed]
    if extra is not None:
        parts.append(f"({param} {extra} {close})*")
    head = [closes["BLOCK_OPEN"], _EOL, opener, written_name or literal(name), _KEY_END]
    tail = [closes["CALL_CLOSE"], _EOL, closes["BLOCK_CLOSE"]]
    return builder.rule("call", " ".join([*head, *parts, *tail]))


def _value(
    values: Values, text: str, markers: tuple[str, ...], schema: Any, root: Any, path: str, depth: int
) -> str | None:
    """A parameter's value: raw text where the schema admits only strings, JSON where it
    admits no string, and in between raw text the parser keeps as a string or the words and
    integers the template writes for the other kinds."""
    b = values.builder
    if isinstance(schema, Mapping):
        schema = values._resolve(schema, root, path)
    admitted = kinds(schema) if isinstance(schema, Mapping) else None
    options = _options(schema)
    if options is not None and len(options) > MAX_ALTERNATIVES:
        values.note("too_large", f"{path}/enum", too_many_values(len(options)))
        assert isinstance(schema, Mapping)
        loose = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        return _value(values, text, markers, loose, root, path, depth)
    if options is not None:
        kept = [literal(written(option)) for option in options if not any(m in written(option) for m in markers)]
        kept = list(dict.fromkeys(k for k in kept if k != '""'))
        empty = "" in [written(option) for option in options]
        if not kept:
            return b.rule("empty", '""') if empty else None
        return b.rule("enum", (" | ".join(kept)) + (" | " + '""' if empty else ""))
    if admitted == frozenset({"string"}):
        assert isinstance(schema, Mapping)
        for keyword in sorted(set(schema) - ANNOTATIONS - {"type", "nullable", "anyOf", "oneOf", "allOf"}):
            values.note("unenforced_keyword", f"{path}/{keyword}", f"{keyword} is not enforced on a raw string")
        return b.rule("raw", f"{text}?")
    if admitted is not None and "string" not in admitted:
        return values.value(schema, root, path, depth)
    if admitted is not None:
        values.note("unenforced_keyword", path, "a value that may be a string is checked for its type only")
    plain = b.terminal("PLAIN_RAW", f"{b.rules[text]} & ~{regex(_READ_OTHERWISE)}")
    words = [plain + "?"]
    words += ['"True"', '"False"'] if admitted is None or "boolean" in admitted else []
    words += ['"None"'] if admitted is None or "null" in admitted else []
    if admitted is None or {"integer", "number"} & admitted:
        words.append(b.terminal("PY_INTEGER", regex(r"-?(?:0|[1-9][0-9]*)")))
    return b.rule("loose", " | ".join(words))


def _options(schema: Any) -> list[Any] | None:
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else None


_READ_OTHERWISE = r"(?s:(?:True|False|None|-?[0-9].*|[\[{].*))"
"""Raw text the parser would read as another value (a word, a number, a bracket first)."""
