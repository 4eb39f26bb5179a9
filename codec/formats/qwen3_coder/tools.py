"""The tools listing of the Qwen3-Coder template, read back (``listed``), and what a tool keeps
of itself in it (``as_listed``). The template writes each tool (``templates/qwen3_coder.jinja``)::

    <function>
    <name>NAME</name>
    <description>DESCRIPTION | trim</description>
    <parameters>
    <parameter>
    <name>KEY</name>
    <type>TYPE | string</type>
    <description>DESCRIPTION | trim</description>
    <KEY>VALUE</KEY>…            (render_extra_keys: the property's other keys)
    </parameter>…
    <KEY>VALUE</KEY>…            (the parameters' keys besides type and properties)
    </parameters>
    <KEY>VALUE</KEY>…            (the function's keys besides name, description, parameters)
    </function>

Extra values are written as arguments are (``values.written``) and read back the same way;
``type`` is ``| string`` (a list of types as Python writes a list).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from codec.formats._prompt import wrap_tool
from codec.formats.qwen3_coder.values import exact, is_exact, written

_EXTRA = re.compile(r"\n<([^<>\n]+)>(.*?)</\1>", re.DOTALL)
_PROPERTY_KEYS = ("name", "type", "description")
_PARAMETERS_KEYS = ("type", "properties")
_FUNCTION_KEYS = ("type", "name", "description", "parameters")


def as_listed(tool: Mapping[str, Any]) -> dict[str, Any]:
    """What the listing keeps of ``tool``: descriptions trimmed, ``type`` of the parameters
    always ``object``, a property's ``name`` key lost, other values as they read back."""
    function = tool.get("function", tool) if isinstance(tool.get("function"), Mapping) else tool
    kept: dict[str, Any] = {"name": function.get("name")}
    if "description" in function:
        kept["description"] = written(function["description"]).strip()
    kept["parameters"] = _parameters(function.get("parameters"))
    kept.update(_extras(function, _FUNCTION_KEYS))
    return wrap_tool(kept)


def _parameters(parameters: Any) -> dict[str, Any]:
    kept: dict[str, Any] = {"type": "object", "properties": {}}
    if not isinstance(parameters, Mapping):
        return kept
    properties = parameters.get("properties")
    if isinstance(properties, Mapping):
        kept["properties"] = {str(key): _property(fields) for key, fields in properties.items()}
    kept.update(_extras(parameters, _PARAMETERS_KEYS))
    return kept


def _property(fields: Any) -> dict[str, Any]:
    if not isinstance(fields, Mapping):
        return {}
    kept: dict[str, Any] = {}
    if "type" in fields:
        kept["type"] = _type(str(fields["type"]) if not isinstance(fields["type"], str) else fields["type"])
    if "description" in fields:
        kept["description"] = written(fields["description"]).strip()
    kept.update(_extras(fields, _PROPERTY_KEYS))
    return kept


def _extras(mapping: Mapping[str, Any], handled: tuple[str, ...]) -> dict[str, Any]:
    return {str(key): _value(written(value)) for key, value in mapping.items() if key not in handled}


def _value(text: str) -> Any:
    """An extra key's value: the value it is the exact writing of, else the text."""
    return exact(text) if is_exact(text) else text


def _type(text: str) -> Any:
    """A ``type`` written with ``| string``: a list of types is Python's ``['a', 'b']``."""
    if text.startswith("["):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return text
        if isinstance(value, list) and str(value) == text:
            return value
    return text


def listed(text: str, property_close: str, function_close: str) -> list[dict[str, Any]]:
    """The tools of a listing's text (between ``<tools>`` and ``\\n</tools>``); the closing
    markers of a property and a function (``\\n</parameter>``, ``\\n</function>``) come from the
    grammar. Tool text cannot hold a marker (render refuses it), so they split the text."""
    return [_function(chunk, property_close) for chunk in text.split(function_close)[:-1]]


def _function(chunk: str, property_close: str) -> dict[str, Any]:
    name, rest = _tagged(chunk.split("\n<function>", 1)[1], "name")
    function: dict[str, Any] = {"name": name}
    if rest.startswith("\n<description>"):
        at = rest.index("</description>\n<parameters>")
        function["description"] = rest[len("\n<description>") : at]
        rest = rest[at + len("</description>") :]
    body, _, tail = rest[len("\n<parameters>") :].rpartition("\n</parameters>")
    pieces = body.split(property_close)
    properties = dict(_listed_property(piece) for piece in pieces[:-1])
    function["parameters"] = {"type": "object", "properties": properties, **_listed_extras(pieces[-1])}
    function.update(_listed_extras(tail))
    return wrap_tool(function)


def _listed_property(piece: str) -> tuple[str, dict[str, Any]]:
    key, rest = _tagged(piece.split("\n<parameter>", 1)[1], "name")
    fields: dict[str, Any] = {}
    if rest.startswith("\n<type>"):
        text, rest = _tagged(rest, "type")
        fields["type"] = _type(text)
    if rest.startswith("\n<description>"):
        text, rest = _description(rest)
        fields["description"] = text
    fields.update(_listed_extras(rest))
    return key, fields


def _tagged(text: str, tag: str) -> tuple[str, str]:
    """The text of the first ``<tag>…</tag>`` in ``text``, and what follows it."""
    start = text.index(f"<{tag}>") + len(tag) + 2
    end = text.index(f"</{tag}>", start)
    return text[start:end], text[end + len(tag) + 3 :]


def _description(text: str) -> tuple[str, str]:
    """A description, which may hold anything: it ends at the first ``</description>`` after
    which only extra keys follow."""
    start = end = len("\n<description>")
    while True:
        end = text.index("</description>", end)
        rest = text[end + len("</description>") :]
        if _extras_text(rest) is not None:
            return text[start:end], rest
        end += 1


def _listed_extras(text: str) -> dict[str, Any]:
    found = _extras_text(text)
    if found is None:
        raise ValueError(f"not the template's extra keys: {text[:40]!r}")
    return {key: _value(value) for key, value in found}


def _extras_text(text: str) -> list[tuple[str, str]] | None:
    """``<KEY>VALUE</KEY>`` pairs, each after a new line, making up all of ``text``."""
    pairs, at = [], 0
    while at < len(text):
        match = _EXTRA.match(text, at)
        if match is None:
            return None
        pairs.append((match.group(1), match.group(2)))
        at = match.end()
    return pairs
