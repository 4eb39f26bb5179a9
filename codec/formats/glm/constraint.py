"""GLM's call for constrained decoding: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>``;
a value whose schema admits only strings is written raw, any other as JSON (``glm.jinja``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codec.arguments.schema import kinds
from codec.constrain.calls import Tool, marker, object_schema
from codec.constrain.lark import MAX_ALTERNATIVES, Builder, free_text, literal, regex, regex_escape
from codec.constrain.values import ANNOTATIONS, Values, json_syntax, too_many_values
from codec.engine.grammar import compiled


def call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>``, as GLM-5 writes it."""
    return key_value_call(builder, grammar_file, tool, markers, written, "")


def key_value_call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None, line: str
) -> str | None:
    """A GLM call with ``line`` after its name, after each ``</arg_key>`` and after each
    ``</arg_value>`` (GLM-4.5 writes ``\n`` there, GLM-5 nothing)."""
    grammar = compiled(grammar_file)
    gap = f" {literal(line)} " if line else " "
    name, _ = tool
    parameters = object_schema(builder, tool)
    m = {
        t: marker(grammar, t) for t in ("CALL_OPEN", "CALL_CLOSE", "KEY_OPEN", "KEY_CLOSE", "VALUE_OPEN", "VALUE_CLOSE")
    }
    values = Values(builder, json_syntax(markers)(builder), name)
    text = free_text(builder, markers)

    def raw_key(key: str) -> str | None:
        return literal(key) if key and not any(marker in key for marker in markers) else None

    def any_key(b: Builder, known: Sequence[str]) -> str:
        if not known:
            return text
        excluded = "|".join(regex_escape(k) for k in known)
        return b.terminal(b.fresh("arg_key").upper(), f"{b.rules[text]} & ~{regex(f'(?:{excluded})')}")

    def value(schema: Any, root: Any, path: str, depth: int) -> str | None:
        return _glm_value(values, text, markers, schema, root, path, depth)

    # GLM's members have no separators and bare keys: the object layout of ``Values`` with
    # GLM's key/value markers around each member.
    glm = values.syntax.__class__(
        "glm", "", "", "", "", f"{m['KEY_CLOSE']}{gap}{m['VALUE_OPEN']}", "", False,
        values.syntax.string, values.syntax.string_value, raw_key, any_key,
    )  # fmt: skip
    layout = Values(builder, glm, name)
    found = layout.members(parameters, parameters, "", 0, value)
    if found is None:
        return None
    listed, extra = found
    parts = [
        f"{m['KEY_OPEN']} {member} {m['VALUE_CLOSE']}{gap.rstrip()}" + ("" if required else "?")
        for member, required in listed
    ]
    for index, part in enumerate(parts):
        if part.endswith("?"):
            parts[index] = f"({part[:-1]})?"
    if extra is not None:
        parts.append(f"({m['KEY_OPEN']} {extra} {m['VALUE_CLOSE']}{gap.rstrip()})*")
    head = [m["CALL_OPEN"], written or literal(name), *([literal(line)] if line else [])]
    return builder.rule("call", " ".join([*head, *parts, m["CALL_CLOSE"]]))


def _glm_value(
    values: Values, text: str, markers: tuple[str, ...], schema: Any, root: Any, path: str, depth: int
) -> str | None:
    """A GLM ``<arg_value>``: raw text where the schema admits only strings, JSON where it
    admits no string, and in between raw text the parser reads as written (no leading bracket or
    quote, no Python word) or JSON."""
    b = values.builder
    if isinstance(schema, Mapping):
        schema = values._resolve(schema, root, path)
    admitted = kinds(schema) if isinstance(schema, Mapping) else None
    has_enum = isinstance(schema, Mapping) and ("enum" in schema or "const" in schema)
    if has_enum and isinstance(schema, Mapping) and len(schema.get("enum") or ()) > MAX_ALTERNATIVES:
        values.note("too_large", f"{path}/enum", too_many_values(len(schema["enum"])))
        schema = {k: v for k, v in schema.items() if k != "enum"}
        return _glm_value(values, text, markers, schema, root, path, depth)
    if admitted == frozenset({"string"}) and not has_enum:
        assert isinstance(schema, Mapping)
        for keyword in sorted(set(schema) - ANNOTATIONS - {"type", "nullable", "anyOf", "oneOf", "allOf"}):
            values.note("unenforced_keyword", f"{path}/{keyword}", f"{keyword} is not enforced on a raw string")
        return b.rule("raw", f"{text}?")
    if has_enum and isinstance(schema, Mapping):
        options = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(options, list):
            written = []
            for option in options:
                if isinstance(option, str):
                    ok = not any(marker in option for marker in markers)
                    written.append((literal(option) if option else '""') if ok else None)
                else:
                    written.append(values.literal(option))
            kept = list(dict.fromkeys(w for w in written if w is not None))
            return b.rule("enum", " | ".join(kept)) if kept else None
    as_json = values.value(schema, root, path, depth)
    if admitted is not None and "string" not in admitted:
        return as_json
    constrained = isinstance(schema, Mapping) and bool(set(schema) - ANNOTATIONS - {"type", "nullable"})
    if constrained:
        values.note("unenforced_keyword", path, "a value written raw is checked for its type only")
    plain = b.terminal("PLAIN_RAW", f"{b.rules[free_text(b, markers)]} & ~{regex(_BRACKETED)} & ~{regex(_PYTHON_WORD)}")
    return b.rule("loose", f"{plain}? | {as_json}" if as_json else f"{plain}?")


_BRACKETED = r"(?s:\s*[\[{\x22\x27\\].*)"
"""Raw text the GLM parser may read another way (a bracket, quote or backslash first)."""
_PYTHON_WORD = r"\s*(?:True|False|None)\s*"
