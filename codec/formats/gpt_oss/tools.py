"""The gpt-oss template's tools listing, read back. The template writes each tool as a
TypeScript type in the ``functions`` namespace (``render_tool_namespace``)::

    // DESCRIPTION
    type NAME = (_: {
    // PARAMETER DESCRIPTION
    KEY?: TYPE, // default: DEFAULT
    }) => any;

and ``type NAME = () => any;`` for a tool without properties. A TypeScript type keeps less than
its JSON schema (``integer`` and ``number`` are both ``number``; a nested object's keys are
written once): each parameter's schema is read back as the one that writes the same text —
``string``, ``number`` and ``boolean`` as those types, anything else as ``{"type": [TYPE]}``,
the one-item type list the template writes as its item.
"""

from __future__ import annotations

import json
import re
from typing import Any

from codec.formats._prompt import wrap_tool

_TOOL = re.compile(
    r"// (?P<description>.*?)\ntype (?P<name>[^\s=]+) = (?:\(\) => any;\n\n|\(_: \{\n(?P<body>.*?)\}\) => any;\n\n)",
    re.DOTALL,
)
_PARAMETER = re.compile(
    r"(?:// (?P<description>.*?)\n)?(?P<key>[^\n]+?)(?P<optional>\?)?: (?P<type>.*?)"
    r"(?:, // default: (?P<default>[^\n]*))?,\n",
    re.DOTALL,
)
_END = ",\n"  # every parameter ends so (`{{- ",\n" }}`, last or not)
_MOST_ENDS = 256
_PLAIN = ("string", "number", "boolean")
HEAD = "## functions\n\nnamespace functions {\n\n"
TAIL = "} // namespace functions"


def listed(text: str) -> list[dict[str, Any]]:
    """The tools of a listing (``HEAD`` + tools + ``TAIL``); ``ValueError`` for other text."""
    if not text.startswith(HEAD) or not text.endswith(TAIL):
        raise ValueError("not the template's tools namespace")
    body, at, tools = text[len(HEAD) : -len(TAIL)], 0, []
    while at < len(body):
        match = _TOOL.match(body, at)
        if match is None:
            raise ValueError(f"not a tool the template writes: {body[at : at + 40]!r}")
        tools.append(_tool(match))
        at = match.end()
    return tools


def _tool(match: re.Match[str]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": match["name"], "description": match["description"]}
    if match["body"] is not None:
        properties, required = _parameters(match["body"])
        function["parameters"] = {"type": "object", "properties": properties, "required": required}
    return wrap_tool(function)


def _parameters(body: str) -> tuple[dict[str, Any], list[str]]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for match in _readings(body):
        properties[match["key"]] = _schema(match)
        if not match["optional"]:
            required.append(match["key"])
    return properties, required


def _readings(body: str) -> list[re.Match[str]]:
    """The parameters of ``body``: each the shortest that lets the rest be read too (a
    description or an enum value may hold `,\n`, which ends every parameter)."""
    ends = [at + len(_END) for at in _occurrences(body, _END)]
    if len(ends) > _MOST_ENDS:  # past this many, each the shortest alone: no search
        return _shortest_each(body)
    after: dict[int, re.Match[str] | None] = {len(body): None}  # start -> a parameter read whole from there
    for start in reversed([0, *ends[:-1]]):
        for end in ends:
            match = _PARAMETER.fullmatch(body, start, end) if end > start and end in after else None
            if match is not None:
                after[start] = match
                break
    if 0 not in after:
        raise ValueError(f"not parameters the template writes: {body[:40]!r}")
    found, at = [], 0
    while (match := after[at]) is not None:
        found.append(match)
        at = match.end()
    return found


def _shortest_each(body: str) -> list[re.Match[str]]:
    found, at = [], 0
    while at < len(body):
        found.append(_parameter(body, at))
        at = found[-1].end()
    return found


def _occurrences(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _parameter(body: str, at: int) -> re.Match[str]:
    """The shortest parameter at ``at``."""
    for end in _occurrences(body[at:], _END):
        match = _PARAMETER.fullmatch(body, at, at + end + len(_END))
        if match is not None:
            return match
    raise ValueError(f"not a parameter the template writes: {body[at : at + 40]!r}")


def _schema(match: re.Match[str]) -> dict[str, Any]:
    written, default = match["type"], match["default"]
    schema: dict[str, Any] = {"type": written if written in _PLAIN else [written]}
    if match["description"]:
        schema["description"] = match["description"]
    if default is None:
        return schema
    try:
        schema["default"] = json.loads(default)
    except ValueError:
        # An enum's default is written as it is (`", // default: " + param_spec.default`), a
        # string enum's type as its values: `"a" | "b"`.
        if not (written.startswith('"') and written.endswith('"')):
            raise
        schema = {"type": "string", "enum": written[1:-1].split('" | "'), **schema, "default": default}
        schema["type"] = "string"
    return schema
