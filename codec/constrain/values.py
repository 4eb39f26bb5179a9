"""Tool-argument values from JSON schemas, in a format's value syntax.

``Values`` compiles a schema into rules of a ``Builder``. What differs between syntaxes is a
``Syntax``: how strings, keys and punctuation are written, and whether keys are sorted (Gemma's
template writes them ``dictsort``-ed). Numbers, ``true``, ``false`` and ``null`` read the same in
every syntax. Object members follow the schema's ``properties`` order (as llguidance's own JSON
schemas do), the required ones always, the others optionally; further keys follow them where
``additionalProperties`` allows.

Supported exactly: ``type`` (and lists of types, ``nullable``), ``enum``/``const``,
``properties``/``required``/``additionalProperties``, ``items``, ``minItems``/``maxItems``,
``anyOf``, local ``$ref`` (recursion included). Anything else becomes a ``Note`` and the
constraint stays looser there (``oneOf`` read as ``anyOf``, ``allOf`` of overlapping schemas
read as its first part, string ``pattern``/lengths and number bounds not checked, ...).

Longer than ~300 lines: one schema compiler, a method per keyword family, sharing the rule
cache that makes ``$ref`` recursion terminate; the syntaxes themselves are small data.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codec.arguments.schema import json_pointer
from codec.constrain.lark import (
    MAX_ALTERNATIVES,
    Builder,
    literal,
    marker_free,
    regex,
    regex_escape,
    special_token,
)

INTEGER = r"-?(?:0|[1-9][0-9]*)"
NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
JSON_STRING = r'"(?:[^"\\\x00-\x1F]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'

ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema",
     "$id", "$defs", "definitions", "strict", "$anchor"}
)  # fmt: skip
_HANDLED = frozenset(
    {"type", "nullable", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems",
     "maxItems", "anyOf", "oneOf", "allOf", "$ref"}
)  # fmt: skip
_MAX_DEPTH = 32
OPTIONAL_RUN = MAX_ALTERNATIVES // 4
"""Optional members in a row an object may list: where one may start, so may each of the
others up to the next required one, and each puts 4 items in the parser's row (measured: an
object of 900 optional properties needs 3,603 items where its members start)."""


@dataclass(frozen=True)
class Syntax:
    """How one format writes values."""

    name: str
    lbrace: str
    rbrace: str
    lbracket: str
    rbracket: str
    colon: str
    comma: str
    sort_keys: bool
    string: Callable[[Builder], str]  # any string
    string_value: Callable[[str], str | None]  # one given string, or None if it cannot be written
    key: Callable[[str], str | None]  # one given key
    any_key: Callable[[Builder, Sequence[str]], str]  # a key other than the given ones


def json_syntax(markers: tuple[str, ...]) -> Callable[[Builder], Syntax]:
    """JSON as ``tojson`` writes it (any JSON white space around punctuation is admitted)."""

    def make(builder: Builder) -> Syntax:
        ws = "[ \\t\\n\\r]*"

        def term(name: str, char: str, before: bool, after: bool) -> str:
            body = (ws if before else "") + regex_escape(char) + (ws if after else "")
            return builder.terminal(name, regex(body))

        def string(b: Builder) -> str:
            return marker_free(b, markers, regex(JSON_STRING), "JSON_STRING")

        def string_value(text: str) -> str | None:
            if any(marker in text for marker in markers):
                return None
            return literal(json.dumps(text, ensure_ascii=False))

        def any_key(b: Builder, known: Sequence[str]) -> str:
            base = string(b)
            if not known:
                return base
            excluded = "|".join(regex_escape(json.dumps(k, ensure_ascii=False)) for k in known)
            return b.terminal(b.fresh("json_key").upper(), f"{base} & ~{regex(f'(?:{excluded})')}")

        return Syntax(
            "json",
            term("J_LBRACE", "{", False, True),
            term("J_RBRACE", "}", True, False),
            term("J_LBRACKET", "[", False, True),
            term("J_RBRACKET", "]", True, False),
            term("J_COLON", ":", True, True),
            term("J_COMMA", ",", True, True),
            False,
            string,
            string_value,
            string_value,
            any_key,
        )

    return make


def gemma_syntax(
    markers: tuple[str, ...], quote: str, punctuation: Mapping[str, str], key_pattern: str
) -> Callable[[Builder], Syntax]:
    """Gemma 4's ``format_argument``: ``<|"|>``-quoted strings, bare keys, no white space."""
    import re

    key_regex = re.compile(key_pattern)

    def make(builder: Builder) -> Syntax:
        quoted = special_token(quote)

        def string(b: Builder) -> str:
            text = marker_free(b, markers, regex("(?s:.+)"), "TEXT")
            return b.rule("g_string", f"{quoted} {text}? {quoted}")

        def string_value(text: str) -> str | None:
            if any(marker in text for marker in markers):
                return None
            return f"{quoted} {literal(text)} {quoted}" if text else f"{quoted} {quoted}"

        def key(text: str) -> str | None:
            return literal(text) if key_regex.fullmatch(text) and not any(m in text for m in markers) else None

        def any_key(b: Builder, known: Sequence[str]) -> str:
            base = b.terminal("G_KEY", regex(key_pattern))
            if not known:
                return base
            excluded = "|".join(regex_escape(k) for k in known)
            return b.terminal(b.fresh("g_key").upper(), f"{regex(key_pattern)} & ~{regex(f'(?:{excluded})')}")

        p = {name: literal(text) for name, text in punctuation.items()}
        return Syntax(
            "gemma",
            p["LBRACE"],
            p["RBRACE"],
            p["LBRACKET"],
            p["RBRACKET"],
            p["COLON"],
            p["COMMA"],
            True,
            string,
            string_value,
            key,
            any_key,
        )

    return make


class Values:
    """Compiles schemas to rules of ``builder`` in ``syntax``; ``tool`` names the notes."""

    def __init__(self, builder: Builder, syntax: Syntax, tool: str | None = None) -> None:
        self.builder = builder
        self.syntax = syntax
        self.tool = tool
        self._memo: dict[str, str | None] = {}
        self._width: dict[str, int] = {}  # items a value rule puts in the parser's row

    def note(self, code: str, path: str, detail: str) -> None:
        self.builder.note(code, self.tool, path, detail)

    # ---- any value ---------------------------------------------------------------------------

    def any(self) -> str:
        """Any value of the syntax."""
        b, s = self.builder, self.syntax
        name = f"{s.name}_any"
        if name in b.rules:
            return name
        b.define(name, "")  # reserved: the body refers to itself
        number = b.terminal("NUMBER", regex(NUMBER))
        member = f"{s.any_key(b, ())} {s.colon} {name}"
        obj = b.rule(f"{s.name}_object", f"{s.lbrace} ({member} ({s.comma} {member})*)? {s.rbrace}")
        arr = b.rule(f"{s.name}_array", f"{s.lbracket} ({name} ({s.comma} {name})*)? {s.rbracket}")
        b.define(name, f'{s.string(b)} | {number} | "true" | "false" | "null" | {obj} | {arr}')
        return name

    # ---- schemas -----------------------------------------------------------------------------

    def value(self, schema: Any, root: Any, path: str = "", depth: int = 0) -> str | None:
        """A rule for the values ``schema`` admits; ``None`` if it admits none this syntax can
        write. ``root`` resolves ``$ref``."""
        if schema is True or schema is None or (isinstance(schema, Mapping) and not (set(schema) - ANNOTATIONS)):
            return self.any()
        if schema is False:
            return None
        if not isinstance(schema, Mapping):
            self.note("invalid_schema", path, "a schema that is not an object: any value")
            return self.any()
        if depth > _MAX_DEPTH:
            self.note("too_deep", path, f"schemas nested deeper than {_MAX_DEPTH}: any value below")
            return self.any()
        schema = self._resolve(schema, root, path)
        key = json.dumps(schema, sort_keys=True, default=str)
        if key in self._memo:
            return self._memo[key]
        name = self.builder.fresh(f"{self.syntax.name}_value")
        self._memo[key] = name
        body = self._body(schema, root, path, depth)
        if body is None:
            self._memo[key] = None
            self.builder.drop(name)
            return None
        self.builder.define(name, body)
        self._width[name] = self.width(body)
        return name

    def width(self, body: str) -> int:
        """About how many items predicting a rule of ``body`` puts in the parser's row: one per
        alternative, and those of a value rule an alternative starts with (counted again where
        shared: an upper bound)."""
        return sum(1 + self._width.get(alternative.split(" ", 1)[0], 0) for alternative in body.split(" | "))

    def _resolve(self, schema: Mapping[str, Any], root: Any, path: str) -> Mapping[str, Any]:
        for _ in range(_MAX_DEPTH):
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                return schema
            target = json_pointer(root, ref) if isinstance(root, Mapping) else None
            if target is None:
                self.note("unresolved_ref", path, f"$ref {ref!r} not found: any value")
                return {}
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        self.note("unresolved_ref", path, f"$ref leads to $ref more than {_MAX_DEPTH} times (a cycle): any value")
        return {}

    def _body(self, schema: Mapping[str, Any], root: Any, path: str, depth: int) -> str | None:
        options = [schema["const"]] if "const" in schema else schema.get("enum")
        if isinstance(options, list) and len(options) > MAX_ALTERNATIVES:
            self.note("too_large", f"{path}/enum", too_many_values(len(options)))
            return self._body({k: v for k, v in schema.items() if k not in ("enum", "const")}, root, path, depth)
        if isinstance(options, list):
            written = [self.literal(option) for option in options]
            for option, text in zip(options, written, strict=True):
                if text is None:
                    self.note("unwritable_enum", path, f"enum value {option!r} cannot be written: left out")
            kept = list(dict.fromkeys(text for text in written if text is not None))
            return " | ".join(kept) if kept else None
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                rest = {k: v for k, v in schema.items() if k != keyword}
                if set(rest) - ANNOTATIONS:
                    self.note("unenforced_keyword", path, f"{keyword} next to other keywords: only the others apply")
                    return self._body(rest, root, path, depth)
                if keyword == "oneOf" and len(branches) > 1:
                    self.note("unenforced_keyword", path, "oneOf read as anyOf (more than one branch may match)")
                if len(branches) > MAX_ALTERNATIVES:
                    self.note("too_large", f"{path}/{keyword}", too_many_branches(keyword, len(branches)))
                    return self.any()
                found = [self.value(b, root, f"{path}/{keyword}/{i}", depth + 1) for i, b in enumerate(branches)]
                kept = [name for name in dict.fromkeys(found) if name is not None]
                width = self.width(" | ".join(kept))
                if width > MAX_ALTERNATIVES:
                    self.note("too_large", f"{path}/{keyword}", too_many_branches(keyword, width))
                    return self.any()
                return " | ".join(kept) if kept else None
        parts = schema.get("allOf")
        if isinstance(parts, list) and parts:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            merged: dict[str, Any] = dict(rest)
            for part in parts:
                part = self._resolve(part, root, path) if isinstance(part, Mapping) else {}
                if set(part) & set(merged) - ANNOTATIONS:
                    self.note("unenforced_keyword", path, "allOf of overlapping schemas: only its first part applies")
                    merged = {**rest, **(parts[0] if isinstance(parts[0], Mapping) else {})}
                    merged.pop("allOf", None)
                    break
                merged.update(part)
            return self._body(merged, root, path, depth)
        for keyword in sorted(set(schema) - _HANDLED - ANNOTATIONS):
            self.note("unenforced_keyword", f"{path}/{keyword}", f"{keyword} is not enforced")
        kinds = self._kinds(schema)
        if kinds is None:
            return self.any()
        alternatives: list[str] = []
        b = self.builder
        if "string" in kinds:
            alternatives.append(self.syntax.string(b))
        if "number" in kinds:
            alternatives.append(b.terminal("NUMBER", regex(NUMBER)))
        elif "integer" in kinds:
            alternatives.append(b.terminal("INTEGER", regex(INTEGER)))
        alternatives += [f'"{word}"' for word in ("true", "false") if "boolean" in kinds]
        if "null" in kinds:
            alternatives.append('"null"')
        if "object" in kinds:
            members = self.object(schema, root, path, depth)
            if members is not None:
                alternatives.append(members)
        if "array" in kinds:
            alternatives.append(self._array(schema, root, path, depth))
        return " | ".join(alternatives) if alternatives else None

    @staticmethod
    def _kinds(schema: Mapping[str, Any]) -> set[str] | None:
        declared = schema.get("type")
        names = [declared] if isinstance(declared, str) else declared
        if isinstance(names, list) and names:
            found = {str(name).lower() for name in names}
            if not found <= {"string", "integer", "number", "boolean", "null", "object", "array"}:
                return None
        elif "properties" in schema or "additionalProperties" in schema or "required" in schema:
            found = {"object"}
        elif "items" in schema:
            found = {"array"}
        else:
            return None
        if schema.get("nullable") is True:
            found.add("null")
        return found

    def object(self, schema: Mapping[str, Any], root: Any, path: str, depth: int) -> str | None:
        """An object of ``schema`` (its ``properties``, ``required``, ``additionalProperties``)."""
        b, s = self.builder, self.syntax
        members = self.members(schema, root, path, depth)
        if members is None:
            return None
        listed, extra = members
        if extra is not None:
            after_extra = b.rule("more", f"({s.comma} {extra})*")
            after_rest = after_extra
            first_rest = b.rule("members", f"({extra} {after_extra})?")
        else:
            after_rest = first_rest = '""'
        for member, required in reversed(listed):
            after = b.rule("after", f"{s.comma} {member} {after_rest}" + ("" if required else f" | {after_rest}"))
            first = b.rule("members", f"{member} {after_rest}" + ("" if required else f" | {first_rest}"))
            after_rest, first_rest = after, first
        return b.rule("object", f"{s.lbrace} {first_rest} {s.rbrace}")

    def members(
        self,
        schema: Mapping[str, Any],
        root: Any,
        path: str,
        depth: int,
        value: Callable[..., str | None] | None = None,
    ) -> tuple[list[tuple[str, bool]], str | None] | None:
        """Each listed member (``key: value`` in this syntax, and whether it is required), and
        one member of any other key where the schema allows one; ``None`` if a required member
        cannot be written. ``value`` compiles a member's schema (default: ``self.value``)."""
        b, s = self.builder, self.syntax
        value = value or self.value
        properties = schema.get("properties")
        properties = dict(properties) if isinstance(properties, Mapping) else {}
        required_list = schema.get("required")
        required = {k for k in required_list if isinstance(k, str)} if isinstance(required_list, list) else set()
        additional = schema.get("additionalProperties", True)
        for name in sorted(required - set(properties)):
            properties[name] = additional if isinstance(additional, Mapping) else {}
            if additional is False:
                self.note("unsatisfiable", f"{path}/required", f"required {name!r} is no allowed property")
                return None
        keys = sorted(properties, key=str.lower) if s.sort_keys else list(properties)
        run = longest_optional_run(keys, required)
        if run > OPTIONAL_RUN:
            self.note("too_large", f"{path}/properties", too_many_optional(run))
            return [], b.rule("extra_member", f"{s.any_key(b, ())} {s.colon} {value(True, root, path, depth + 1)}")
        listed: list[tuple[str, bool]] = []
        for key in keys:
            where = f"{path}/properties/{key}"
            written_key = s.key(key)
            found = value(properties[key], root, where, depth + 1) if written_key is not None else None
            if written_key is None:
                self.note("unwritable_key", where, f"key {key!r} cannot be written in this syntax: left out")
            if found is None:
                if key in required:
                    self.note("unsatisfiable", where, f"required {key!r} has no value the syntax can write")
                    return None
                continue
            listed.append((b.rule("member", f"{written_key} {s.colon} {found}"), key in required))
        extra: str | None = None
        if additional is not False:
            extra_value = value(
                additional if isinstance(additional, Mapping) else True, root, f"{path}/additionalProperties", depth + 1
            )
            if extra_value is not None:
                extra = b.rule("extra_member", f"{s.any_key(b, keys)} {s.colon} {extra_value}")
        return listed, extra

    def _array(self, schema: Mapping[str, Any], root: Any, path: str, depth: int) -> str:
        b, s = self.builder, self.syntax
        items = schema.get("items", True)
        item = self.value(items, root, f"{path}/items", depth + 1)
        if item is None:
            return b.rule("array", f"{s.lbracket} {s.rbracket}")
        low = schema.get("minItems")
        high = schema.get("maxItems")
        low = low if isinstance(low, int) and low > 0 else 0
        high = high if isinstance(high, int) and high >= low else None
        if low == 0 and high is None:
            return b.rule("array", f"{s.lbracket} ({item} ({s.comma} {item})*)? {s.rbracket}")
        if high == 0:
            return b.rule("array", f"{s.lbracket} {s.rbracket}")
        more = f"({s.comma} {item}){{{max(low - 1, 0)},{'' if high is None else high - 1}}}"
        body = f"{item} {more}" if low > 0 else f"({item} {more})?"
        return b.rule("array", f"{s.lbracket} {body} {s.rbracket}")

    # ---- literals ----------------------------------------------------------------------------

    def literal(self, value: Any) -> str | None:
        """Exactly ``value``, as the template writes it; ``None`` if the syntax cannot."""
        s = self.syntax
        if isinstance(value, str):
            return s.string_value(value)
        if value is None or isinstance(value, bool | int | float):
            if (isinstance(value, float) and value != value) or value in (float("inf"), float("-inf")):
                return None
            return literal(json.dumps(value))
        if isinstance(value, list):
            items = [self.literal(item) for item in value]
            if any(item is None for item in items):
                return None
            return " ".join([s.lbracket, f" {s.comma} ".join(i for i in items if i is not None), s.rbracket])
        if isinstance(value, Mapping):
            keys = sorted(value, key=str.lower) if s.sort_keys else list(value)
            members = []
            for key in keys:
                written_key, written = s.key(str(key)), self.literal(value[key])
                if written_key is None or written is None:
                    return None
                members.append(f"{written_key} {s.colon} {written}")
            return " ".join([s.lbrace, f" {s.comma} ".join(members), s.rbrace])
        return None


def longest_optional_run(keys: Sequence[str], required: set[str]) -> int:
    """The most optional members in a row, in writing order."""
    longest = run = 0
    for key in keys:
        run = 0 if key in required else run + 1
        longest = max(longest, run)
    return longest


def too_many_values(count: int) -> str:
    return (
        f"an enum of {count} values, more than the {MAX_ALTERNATIVES} alternatives one value may have "
        "(llguidance's parser holds 2000 items where it starts): its type only"
    )


def too_many_branches(keyword: str, count: int) -> str:
    return (
        f"{keyword} of {count} alternatives, more than the {MAX_ALTERNATIVES} one value may have "
        "(llguidance's parser holds 2000 items where it starts): any value"
    )


def too_many_optional(run: int) -> str:
    return (
        f"{run} optional properties in a row, more than {OPTIONAL_RUN} (each puts 4 items in llguidance's "
        "parser row where members start, which holds 2000): any object"
    )
