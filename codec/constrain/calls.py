"""One call, in each family's syntax: the markers come from the family's grammar (by terminal
name), the arguments from the tool's ``parameters`` schema (``codec.constrain.values``).

- GLM: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>``; a value
  whose schema admits only strings is written raw, any other as JSON (``glm.jinja``).
- Solar Open: ``<|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{JSON}<|tool_call:end|>``.
- Gemma 4: ``<|tool_call>call:NAME{key:value,…}<tool_call|>`` in Gemma's value syntax.
- Qwen3: ``<tool_call>\n{"name": "NAME", "arguments": {JSON}}\n</tool_call>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codec.arguments.schema import kinds
from codec.constrain.lark import (
    MAX_ALTERNATIVES,
    MAX_NESTING,
    Builder,
    free_text,
    literal,
    nested_deeper,
    regex,
    regex_escape,
    special_token,
)
from codec.constrain.skeleton import pattern_source
from codec.constrain.values import ANNOTATIONS, Values, gemma_syntax, json_syntax, too_many_values
from codec.engine.grammar import CompiledGrammar, compiled
from codec.errors import CodecError

Tool = tuple[str, Mapping[str, Any] | None]  # name, parameters
CallSyntax = Callable[[Builder, str, Tool, tuple[str, ...], str | None], str | None]
"""``(builder, grammar file, tool, markers, name)``: the call's rule, ``None`` if no arguments
satisfy the schema; ``name`` writes the tool's name instead of its literal (a terminal of
several names, whose calls then share the tool's ``parameters``)."""


def _marker(grammar: CompiledGrammar, terminal: str) -> str:
    for text, name in grammar.markers.items():
        if name == terminal:
            return special_token(text.strip())
    raise CodecError(f"grammar {grammar.name} has no marker {terminal}")


def _parameters(builder: Builder, tool: Tool) -> Mapping[str, Any]:
    """The arguments' schema as an object schema (a call's arguments are always an object)."""
    name, parameters = tool
    if parameters is None:
        return {}
    if nested_deeper(parameters, MAX_NESTING):
        builder.note(
            "too_deep", name, "", f"parameters nest deeper than {MAX_NESTING} lists and objects, more than a "
            "template is given (codec.render.values.MAX_DEPTH): any arguments",
        )  # fmt: skip
        return {}
    declared = kinds(parameters)
    if declared is not None and "object" not in declared:
        builder.note("invalid_schema", name, "", "parameters that are not an object schema: any arguments")
        return {}
    return parameters


def glm_call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = _parameters(builder, tool)
    m = {
        t: _marker(grammar, t)
        for t in ("CALL_OPEN", "CALL_CLOSE", "KEY_OPEN", "KEY_CLOSE", "VALUE_OPEN", "VALUE_CLOSE")
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
        "glm", "", "", "", "", f"{m['KEY_CLOSE']} {m['VALUE_OPEN']}", "", False,
        values.syntax.string, values.syntax.string_value, raw_key, any_key,
    )  # fmt: skip
    layout = Values(builder, glm, name)
    found = layout.members(parameters, parameters, "", 0, value)
    if found is None:
        return None
    listed, extra = found
    parts = [f"{m['KEY_OPEN']} {member} {m['VALUE_CLOSE']}" + ("" if required else "?") for member, required in listed]
    for index, part in enumerate(parts):
        if part.endswith("?"):
            parts[index] = f"({part[:-1]})?"
    if extra is not None:
        parts.append(f"({m['KEY_OPEN']} {extra} {m['VALUE_CLOSE']})*")
    return builder.rule("call", " ".join([m["CALL_OPEN"], written or literal(name), *parts, m["CALL_CLOSE"]]))


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


def solar_call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = _parameters(builder, tool)
    m = {t: _marker(grammar, t) for t in ("CALL_OPEN", "CALL_NAME", "CALL_ARGS", "CALL_CLOSE")}
    call_id = builder.terminal("CALL_ID", regex(pattern_source(grammar_file, "CALL_ID")))
    values = Values(builder, json_syntax(markers)(builder), name)
    arguments = values.object(parameters, parameters, "", 0)
    if arguments is None:
        return None
    name_part = written or literal(name)
    body = [m["CALL_OPEN"], call_id, m["CALL_NAME"], name_part, m["CALL_ARGS"], arguments, m["CALL_CLOSE"]]
    return builder.rule("call", " ".join(body))


def gemma_call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = _parameters(builder, tool)
    punctuation = {
        n: grammar.patterns[n].literal or "" for n in ("LBRACE", "RBRACE", "LBRACKET", "RBRACKET", "COLON", "COMMA")
    }
    quote = next(text for text, terminal in grammar.markers.items() if terminal == "QUOTE")
    syntax = gemma_syntax(markers, quote, punctuation, pattern_source(grammar_file, "KEY"))(builder)
    values = Values(builder, syntax, name)
    arguments = values.object(parameters, parameters, "", 0)
    if arguments is None:
        return None
    prefix = literal(grammar.patterns["CALL_PREFIX"].literal or "")
    body = [_marker(grammar, "CALL_OPEN"), prefix, written or literal(name), arguments, _marker(grammar, "CALL_CLOSE")]
    return builder.rule("call", " ".join(body))


def qwen3_call(
    builder: Builder, grammar_file: str, tool: Tool, markers: tuple[str, ...], written: str | None = None
) -> str | None:
    """``<tool_call>\n{"name": "NAME", "arguments": {JSON}}\n</tool_call>``, as the template
    writes it (``templates/qwen3.jinja``)."""
    grammar = compiled(grammar_file)
    name, _ = tool
    parameters = _parameters(builder, tool)
    values = Values(builder, json_syntax(markers)(builder), name)
    arguments = values.object(parameters, parameters, "", 0)
    if arguments is None:
        return None
    head, tail = literal('\n{"name": "'), literal('", "arguments": ')
    body = [_marker(grammar, "CALL_OPEN"), head, written or literal(name), tail, arguments, literal("}\n")]
    return builder.rule("call", " ".join([*body, _marker(grammar, "CALL_CLOSE")]))


CALL_SYNTAX: dict[str, CallSyntax] = {
    "glm": glm_call,
    "solar_open": solar_call,
    "gemma4": gemma_call,
    "qwen3": qwen3_call,
}
"""Each family's call syntax, by ``Family.name``."""


def name_fits(grammar_file: str, name: str, markers: tuple[str, ...]) -> bool:
    """Whether the format's parser reads ``name`` back as the tool name."""
    if not name or any(marker in name for marker in markers):
        return False
    patterns = compiled(grammar_file).patterns
    if "FUNC_NAME" in patterns:
        return patterns["FUNC_NAME"].regex.fullmatch(name) is not None
    return name == name.strip()


def names(builder: Builder, written: Sequence[str]) -> str:
    """One terminal matching any of the tool names ``written``: the name of a call among many,
    which puts one item in the parser's row where a call starts instead of one per tool."""
    alternatives = "|".join(regex_escape(name) for name in sorted(set(written), key=lambda n: (-len(n), n)))
    return builder.terminal(builder.fresh("tool_name").upper(), regex(f"(?:{alternatives})"))
