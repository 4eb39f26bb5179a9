"""How Gemma 4 declares tools and prints values, both ways: what the template writes
(``format_function_declaration``, ``format_parameters``, ``format_argument``; used by the
canonical rules) and how a prompt's declaration reads back into a JSON schema (used by the
prompt reader)::

    <|tool>declaration:get_weather{description:<|"|>Weather<|"|>,parameters:{properties:{city:{type:<|"|>STRING<|"|>}},type:<|"|>OBJECT<|"|>}}<tool|>
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

_STANDARD_KEYS = ("description", "type", "properties", "required", "nullable")


def as_written(value: Any) -> Any:
    """A value as ``format_argument`` writes it: mappings with sorted keys, sequences as lists."""
    if isinstance(value, Mapping):
        return {key: as_written(value[key]) for key in sorted(value, key=_sort_key)}
    if isinstance(value, (list, tuple)):
        return [as_written(item) for item in value]
    return value


def _sort_key(key: Any) -> Any:
    return key.lower() if isinstance(key, str) else key  # jinja's dictsort: case-insensitive


def _printed(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def declared_function(function: Mapping[str, Any]) -> dict[str, Any]:
    declared: dict[str, Any] = {"name": _printed(function["name"])}
    description = _printed(function["description"]) if "description" in function else ""
    if description:
        declared["description"] = description
    if function.get("parameters"):
        declared["parameters"] = _declared_parameters(function["parameters"])
    if "response" in function:
        response = function["response"]
        declared["response"] = {"description": _printed(response["description"])} if response.get("description") else {}
        declared["response"]["type"] = "object"
    return declared


def _declared_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    declared: dict[str, Any] = {}
    if parameters.get("properties"):
        declared["properties"] = _declared_properties(parameters["properties"])
    if parameters.get("required"):
        declared["required"] = [_printed(item) for item in parameters["required"]]
    if parameters.get("type"):
        declared["type"] = type_from_text(_printed(parameters["type"]).upper())
    return declared


def _declared_properties(properties: Mapping[str, Any], filtered: bool = False) -> dict[str, Any]:
    return {
        key: _declared_property(properties[key])
        for key in sorted(properties, key=_sort_key)
        if not filtered or key not in _STANDARD_KEYS
    }


def _declared_property(value: Any) -> dict[str, Any]:
    """One property as ``format_parameters`` writes it (a value that is no mapping has no keys)."""
    schema: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    kind = _printed(schema["type"]).upper() if "type" in schema else ""
    declared: dict[str, Any] = {}
    if schema.get("description"):
        declared["description"] = _printed(schema["description"])
    if kind == "STRING" and schema.get("enum"):
        declared["enum"] = as_written(schema["enum"])
    elif kind == "ARRAY" and isinstance(schema.get("items"), Mapping) and schema["items"]:
        declared["items"] = _declared_items(schema["items"])
    if schema.get("nullable"):
        declared["nullable"] = True
    if kind == "OBJECT":
        own = isinstance(schema.get("properties"), Mapping)
        declared["properties"] = _declared_properties(schema["properties"] if own else schema, filtered=not own)
        if schema.get("required"):
            declared["required"] = [_printed(item) for item in schema["required"]]
    if kind:
        declared["type"] = type_from_text(kind)
    return declared


def _declared_items(items: Mapping[str, Any]) -> dict[str, Any]:
    """``items``: every key whose value is not null, ``properties`` and ``type`` as a schema's."""
    declared: dict[str, Any] = {}
    for key in sorted(items, key=_sort_key):
        value = items[key]
        if value is None:
            continue
        if key == "properties":
            declared[key] = _declared_properties(value) if isinstance(value, Mapping) else {}
        elif key == "required":
            declared[key] = [_printed(item) for item in value]
        elif key == "type":
            declared[key] = (
                value.upper().lower() if isinstance(value, str) else [_printed(kind).upper().lower() for kind in value]
            )
        else:
            declared[key] = as_written(value)
    return declared


def type_from_text(text: str) -> Any:
    """A schema ``type`` as the declaration prints it (``value['type'] | upper``), lower-cased;
    a list type prints as a Python list (``['STRING', 'NULL']``)."""
    if text.startswith("[") and text.endswith("]"):
        try:
            listed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            listed = None
        if isinstance(listed, list) and all(isinstance(kind, str) for kind in listed):
            return [kind.lower() for kind in listed]
    return text.lower()


def read_function(name: str, declared: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name}
    if declared.get("description"):
        function["description"] = declared["description"]
    if "parameters" in declared:
        function["parameters"] = _schema(declared["parameters"])
    if "response" in declared:
        function["response"] = _schema(declared["response"])
    return function


def _schema(declared: dict[str, Any]) -> dict[str, Any]:
    """A property (``format_parameters``): ``type`` lower-cased, nested ``properties`` and
    ``items`` read the same way, other keys as written."""
    schema = dict(declared)
    if "properties" in schema:
        schema["properties"] = {key: _schema(value) for key, value in schema["properties"].items()}
    if "items" in schema:
        schema["items"] = _items(schema["items"])
    if "type" in schema:
        kind = type_from_text(schema.pop("type"))
        if kind:
            schema["type"] = kind
    return schema


def _items(declared: dict[str, Any]) -> dict[str, Any]:
    """``items``: its ``properties`` as properties, its ``type`` written through
    ``format_argument`` (a string or a list of strings, upper-cased), the rest as values."""
    items = dict(declared)
    if isinstance(items.get("properties"), dict):
        items["properties"] = {key: _schema(value) for key, value in items["properties"].items()}
    kind = items.get("type")
    if isinstance(kind, str):
        items["type"] = kind.lower()
    elif isinstance(kind, list):
        items["type"] = [str(each).lower() for each in kind]
    return items
