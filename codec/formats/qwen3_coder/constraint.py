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
    opener, param = literal(grammar.display("FUNC_OPEN")), literal(grammar.display("PARAM_OPEN"))
    closes = {t: marker(grammar, t) for t in ("CALL_OPEN", "CALL_CLOSE", "FUNC_CLOSE", "PARAM_CLOSE")}
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
    # Raw text may take the value's last new line itself (text is one lexeme): it is optional.
    close = f"{_EOL}? {closes['PARAM_CLOSE']} {_EOL}"
    parts = [f"({param} {member} {close})" + ("" if required else "?") for member, required in listed]
    if extra is not None:
        parts.append(f"({param} {extra} {close})*")
    head = [closes["CALL_OPEN"], _EOL, opener, written_name or literal(name), _KEY_END]
    tail = [closes["FUNC_CLOSE"], _EOL, closes["CALL_CLOSE"]]
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
        return _not_string(values, schema, root, path, depth, admitted)
    if admitted is not None:
        values.note("unenforced_keyword", path, "a value that may be a string is checked for its type only")
    plain = b.terminal(b.fresh("plain_raw").upper(), f"{b.rules[text]} & ~{regex(_read_otherwise(admitted))}")
    # Each word takes the value's last new line with it: raw text could still grow past it.
    exact = ["True", "False"] if admitted is None or "boolean" in admitted else []
    exact += ["None"] if admitted is None or "null" in admitted else []
    if admitted is None or "number" in admitted:
        exact.append(_NUMBER)
    elif "integer" in admitted:
        exact.append(r"-?(?:0|[1-9][0-9]*)")
    words = [plain + "?"]
    if exact:
        words.append(b.terminal(b.fresh("py_word").upper(), regex(f"(?:{'|'.join(exact)})\\n?")))
    containers = [kind for kind in ("object", "array") if admitted is None or kind in admitted]
    narrowed = {"type": containers} if admitted is None or not isinstance(schema, Mapping) else None
    if narrowed is None and isinstance(schema, Mapping) and _COMBINATORS.isdisjoint(schema):
        narrowed = {k: v for k, v in schema.items() if k != "nullable"} | {"type": containers}
    found = values.value(narrowed, root, path, depth) if containers and narrowed is not None else None
    words += [found] if found else []
    return b.rule("loose", " | ".join(words))


def _not_string(values: Values, schema: Any, root: Any, path: str, depth: int, admitted: frozenset[str]) -> str | None:
    """A value whose schema admits no string: ``True``, ``False`` and ``None`` as Python writes
    them (``| string``), numbers, objects and arrays as JSON (``tojson``)."""
    words = ['"True"', '"False"'] if "boolean" in admitted else []
    words += ['"None"'] if "null" in admitted else []
    others = [kind for kind in ("integer", "number", "object", "array") if kind in admitted]
    plain = isinstance(schema, Mapping) and _COMBINATORS.isdisjoint(schema)
    if not words or not plain:
        found = values.value(schema, root, path, depth)
        return values.builder.rule("typed", " | ".join([*words, found])) if found else None
    if others:
        assert isinstance(schema, Mapping)
        narrowed = {k: v for k, v in schema.items() if k != "nullable"} | {"type": others}
        found = values.value(narrowed, root, path, depth)
        words += [found] if found else []
    return values.builder.rule("typed", " | ".join(words)) if words else None


_COMBINATORS = frozenset({"anyOf", "oneOf", "allOf", "$ref"})


def _options(schema: Any) -> list[Any] | None:
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else None


def _read_otherwise(admitted: frozenset[str] | None) -> str:
    """Raw text the parser would read as a value of another kind the schema admits (the exact
    writing of a word or number, a bracket first), with the value's last new line."""
    kinds = admitted or frozenset({"boolean", "null", "integer", "number", "array", "object"})
    exact = ["True", "False"] if "boolean" in kinds else []
    exact += ["None"] if "null" in kinds else []
    exact += [_NUMBER] if {"integer", "number"} & kinds else []
    either = [f"(?:{'|'.join(exact)})\\n?"] if exact else []
    either += [r"[\[{].*"] if {"array", "object"} & kinds else []
    return f"(?s:{'|'.join(either)})" if either else "(?:[^\\x00-\\x{10ffff}])"


_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?"
