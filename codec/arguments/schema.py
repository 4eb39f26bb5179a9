"""Types a tool call's argument values from the tool's JSON schema, for every format.

GLM writes a value raw when it is a string and as JSON otherwise (``glm.jinja``:
``v | tojson if v is not string else v``); Gemma writes bare scalars as Python prints them
(``3``, ``2.5``, ``1e-05``, ``inf``). A number JSON cannot write (``inf``, ``NaN``) stays the
text that was written: the arguments must remain valid JSON. The text alone is ambiguous — is ``007`` a string or a
malformed number? — so the schema decides:

- a ``string`` parameter keeps the text verbatim (``"007"``, ``"true"``, ``"null"``, ``"[1]"``);
- ``string|null`` turns a bare ``null`` into ``None`` and keeps everything else as text;
- ``number`` keeps ``3`` an int and ``3.0`` a float; ``integer`` reads ``3.0`` as ``3``;
- without a schema: JSON if it parses, else the raw string.

A schema is reduced to the set of JSON types it admits (``type`` and its lists, ``anyOf`` /
``oneOf`` as a union, ``allOf`` as an intersection, ``$ref``, ``enum``/``const``, ``nullable``).
Nothing here raises: a value that does not fit its schema keeps its best honest reading.

Longer than ~300 lines: one reading of a schema into the kinds it admits, with the typing of
text that rests on it and the fast path for the common one-``type`` schema, kept together so the
rules cannot drift apart.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

Kinds = frozenset[str]
"""The JSON types a schema admits; ``None`` stands for "anything"."""

_ALL: Kinds = frozenset({"string", "integer", "number", "boolean", "null", "object", "array"})
STRING: Kinds = frozenset({"string"})
"""What a plain string parameter admits (``is_plain_string``)."""

# Spellings seen in real tool definitions: Gemma upper-cases types, Python-minded authors write
# Python names.
_TYPE_NAMES = {
    **{name: name for name in _ALL},
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
    "none": "null",
}

# Python's spellings of JSON's words (a model trained on Python writes them); read only where
# the schema rules out a string. ``inf`` and ``nan`` (Gemma prints floats with ``str()``) are
# not here: no JSON text can hold them, so they stay the text that was written.
_PYTHON_WORDS: dict[str, Any] = {"True": True, "False": False, "None": None}

# The kinds a schema that is one named ``type`` and nothing that could widen or narrow it admits:
# the common case, answered without the general walk (``kinds``).
_NAMED_KINDS: dict[str, Kinds] = {
    spelling: frozenset({name, "integer"} if name == "number" else {name}) for spelling, name in _TYPE_NAMES.items()
}
_BEYOND_TYPE = frozenset({"$ref", "anyOf", "oneOf", "allOf", "nullable"})

_MAX_DEPTH = 32  # $ref chains and nesting deeper than this are treated as "anything"
_WORK_LIMIT = 10_000  # subschemas one ``kinds`` call visits at most (a branching $ref cycle)


def tool_schema(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    """The ``parameters`` schema of the tool called ``name``.

    Tools are OpenAI style ``{"type": "function", "function": {"name", "parameters"}}`` or bare
    ``{"name", "parameters"}``.
    """
    for tool in tools:  # ``_is_mapping`` written out: a list of tools is walked per call
        if not (type(tool) is dict or isinstance(tool, Mapping)):
            continue
        function = tool.get("function")
        spec = function if type(function) is dict or isinstance(function, Mapping) else tool
        if spec.get("name") == name:
            parameters = spec.get("parameters")
            return parameters if _is_mapping(parameters) else None
    return None


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, answered without the ABC's check for a plain dict."""
    return type(value) is dict or isinstance(value, Mapping)


def property_schema(parameters: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """The schema of member ``key`` of the ``parameters`` object, ``$ref`` resolved.

    The root's ``$defs``/``definitions`` are carried into the result, so references nested in it
    (``anyOf: [{"$ref": ...}]``) still resolve when it is given to ``type_text`` on its own.
    """
    # ``_is_mapping`` written out: this runs for every argument a call writes.
    if not (type(parameters) is dict or isinstance(parameters, Mapping)):
        return None
    root = _resolve(parameters, parameters) if "$ref" in parameters else parameters
    properties = root.get("properties")
    schema = properties.get(key) if type(properties) is dict or isinstance(properties, Mapping) else None
    if schema is None:
        schema = root.get("additionalProperties")
    if not (type(schema) is dict or isinstance(schema, Mapping)):
        return None
    if "$ref" in schema:
        schema = _resolve(schema, parameters)
    return _with_definitions(schema, parameters)


def is_plain_string(schema: Mapping[str, Any] | None) -> bool:
    """Whether every value the schema admits is a string, so its text is the value itself.

    Such values are written raw by GLM and stream chunk by chunk; ``string|null`` is not plain
    (a bare ``null`` must become ``None``).
    """
    return _is_mapping(schema) and kinds(schema) == STRING


def kinds(schema: Mapping[str, Any] | None) -> Kinds | None:
    """The JSON types ``schema`` admits (``"number"`` brings ``"integer"``), ``None`` for any."""
    if not (type(schema) is dict or isinstance(schema, Mapping)):  # ``_is_mapping``, written out
        return None
    declared = schema.get("type")
    if type(declared) is str and _BEYOND_TYPE.isdisjoint(schema):  # what ``_kinds`` finds, at once
        return _NAMED_KINDS.get(declared.lower())
    return _kinds(schema, schema, 0, [_WORK_LIMIT])


def type_text(text: str, schema: Mapping[str, Any] | None) -> Any:
    """The value of an argument written as ``text``, typed by its ``schema``. Never raises."""
    admitted = kinds(schema)
    if admitted is None:
        return _json(text, text)
    enum = _enum_match(text, schema)
    if enum is not _MISSING:
        return enum
    if admitted == STRING:
        return text
    value = _json(text, _MISSING)
    if value is _MISSING and "string" not in admitted:
        value = _PYTHON_WORDS.get(text.strip(), _MISSING)
    if value is _MISSING:
        return text
    if "string" in admitted and (isinstance(value, str) or json_kind(value) not in admitted):
        return text  # a raw string that happens to read as JSON of a type the schema rules out
    return _narrow(value, admitted)


_MISSING: Any = object()

_BRACKETS_AND_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def nests_deeper_than(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests arrays and objects more than ``limit`` deep (brackets inside
    strings do not count), found without recursion and stopping at the first level past the
    limit: the check before decoding, so depth is bounded before it costs."""
    if "[" not in text and "{" not in text:  # a scalar (the common case): nothing to count
        return False
    depth = 0
    for found in _BRACKETS_AND_STRINGS.finditer(text):
        bracket = found.group()
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        elif bracket in "]}":
            depth = max(depth - 1, 0)
    return False


_JSON_STARTS = frozenset('{["-0123456789tfnNI')
"""What a JSON text may start with (after white space; ``NaN``/``Infinity`` are refused later)."""


def _json(text: str, default: Any) -> Any:
    start = text.lstrip()[:1]
    if start not in _JSON_STARTS:  # plain words are the common case: no exception to raise and catch
        return default
    try:
        return _DECODE(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the C stack
        return default


def _not_json(word: str) -> Any:
    """``NaN``, ``Infinity``: Python's json reads them, but arguments must stay valid JSON."""
    raise ValueError(f"{word} is not a JSON number")


_DECODE = json.JSONDecoder(parse_constant=_not_json).decode  # made once; json.loads makes one per call


def json_kind(value: Any) -> str:
    """The JSON type of a parsed value, as a schema names it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", dict: "object", list: "array"}.get(type(value), "null")


def _narrow(value: Any, admitted: Kinds) -> Any:
    """``3.0`` for an ``integer`` (and not ``number``) parameter reads as ``3``."""
    integral = isinstance(value, float) and math.isfinite(value) and value.is_integer()
    if integral and "number" not in admitted and "integer" in admitted:
        return int(value)
    return value


def _enum_match(text: str, schema: Any) -> Any:
    """The ``enum``/``const`` member ``text`` spells, as JSON or verbatim; else ``_MISSING``."""
    options = _options(_resolve(schema, schema)) if _is_mapping(schema) else None
    if not options:
        return _MISSING
    parsed = _json(text, _MISSING)
    for option in options:
        if parsed is not _MISSING and _same(parsed, option):
            return option
    return text if any(_same(text, option) for option in options) else _MISSING


def _same(left: Any, right: Any) -> bool:
    """Equality that does not confuse ``True`` with ``1``."""
    return bool(left == right) and isinstance(left, bool) == isinstance(right, bool)


def _options(schema: Mapping[str, Any]) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else None


def _kinds(schema: Any, root: Mapping[str, Any], depth: int, budget: list[int]) -> Kinds | None:
    """``kinds`` of a subschema; ``$ref`` resolves against ``root``.

    Only ``kinds`` is public; this takes ``root``, ``depth`` and a shared ``budget`` of
    subschemas to visit, so a cyclic ``$ref`` ends and one that branches (``anyOf`` of two
    references back to the root) cannot cost exponential time: past the budget, anything."""
    budget[0] -= 1
    if not _is_mapping(schema) or depth > _MAX_DEPTH or budget[0] < 0:
        return None
    schema = _resolve(schema, root)
    own = _own_kinds(schema)
    for keyword, combine in _COMBINATORS.items():
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            found = combine([_kinds(branch, root, depth + 1, budget) for branch in branches])
            if budget[0] < 0:
                return None  # the budget ran out below: no honest reading, anything
            own = found if own is None else _meet([own, found])
    if own is not None and schema.get("nullable") is True:
        own = own | {"null"}
    return own


def _own_kinds(schema: Mapping[str, Any]) -> Kinds | None:
    """The types named by ``type`` (or implied by ``enum``/``const``/``properties``/``items``)."""
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if isinstance(names, list) and names:
        found = {_TYPE_NAMES.get(str(name).lower()) for name in names}
        return None if None in found else _with_integer({n for n in found if n is not None})
    options = _options(schema)
    if options is not None:
        return frozenset(map(json_kind, options))
    if "properties" in schema or "additionalProperties" in schema:
        return frozenset({"object"})
    return frozenset({"array"}) if "items" in schema else None


def _with_integer(names: set[str]) -> Kinds:
    """Every integer is a number, so ``number`` admits ``integer`` too."""
    return frozenset(names | {"integer"} if "number" in names else names)


def _join(found: list[Kinds | None]) -> Kinds | None:
    """``anyOf``/``oneOf``: any branch's types (unconstrained if one branch is)."""
    if any(kinds is None for kinds in found):
        return None
    return frozenset().union(*(kinds for kinds in found if kinds is not None))


def _meet(found: list[Kinds | None]) -> Kinds | None:
    """``allOf``: the types every constraining branch admits (an integer is also a number)."""
    result: Kinds | None = None
    for kinds in found:
        if kinds is not None:
            result = kinds if result is None else result & kinds
    return result or None  # contradictory branches: no honest narrowing, read as anything


_COMBINATORS = {"anyOf": _join, "oneOf": _join, "allOf": _meet}


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow local ``$ref`` (``#/$defs/X``, ``#/definitions/X``); siblings of ``$ref`` win."""
    for _ in range(_MAX_DEPTH):
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema
        target = json_pointer(root, ref)
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **siblings} if target is not None else siblings
    return {}


def json_pointer(root: Mapping[str, Any], ref: str) -> Mapping[str, Any] | None:
    """The subschema a local JSON pointer names (RFC 6901 escapes ``~1`` and ``~0``)."""
    if not ref.startswith("#"):
        return None  # remote references are never fetched (sans-IO)
    node: Any = root
    for part in filter(None, ref[1:].split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else None


def _with_definitions(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    if "$defs" not in root and "definitions" not in root:
        return schema
    carried = {k: root[k] for k in ("$defs", "definitions") if k in root and k not in schema}
    return {**schema, **carried} if carried else schema
