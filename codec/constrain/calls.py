"""What every family's call syntax for constrained decoding shares: the ``CallSyntax`` signature,
a marker as a special token (by its grammar terminal name), the arguments' object schema, and
tool names. Each family writes its own call in ``codec/formats/<family>/constraint.py`` (the
markers come from the family's grammar, the arguments from ``codec.constrain.values``) and
hands it to the registry as ``Family.constraint``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codec.arguments.schema import kinds
from codec.constrain.lark import MAX_NESTING, Builder, nested_deeper, regex, regex_escape, special_token
from codec.constrain.values import Values, json_syntax
from codec.engine.grammar import CompiledGrammar, compiled
from codec.errors import CodecError

Tool = tuple[str, Mapping[str, Any] | None]  # name, parameters
CallSyntax = Callable[[Builder, str, Tool, tuple[str, ...], str | None], str | None]
"""``(builder, grammar file, tool, markers, name)``: the call's rule, ``None`` if no arguments
satisfy the schema; ``name`` writes the tool's name instead of its literal (a terminal of
several names, whose calls then share the tool's ``parameters``)."""


def marker(grammar: CompiledGrammar, terminal: str) -> str:
    """The marker the grammar spells as ``terminal``, as a special token of the constraint."""
    for text, name in grammar.markers.items():
        if name == terminal:
            return special_token(text.strip())
    raise CodecError(f"grammar {grammar.name} has no marker {terminal}")


def object_schema(builder: Builder, tool: Tool) -> Mapping[str, Any]:
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


def json_arguments(builder: Builder, tool: Tool, markers: tuple[str, ...]) -> str | None:
    """The rule for a call's arguments written as ``arguments | tojson`` (the JSON families):
    an object of the tool's parameters; ``None`` if no object satisfies the schema."""
    name, _ = tool
    parameters = object_schema(builder, tool)
    return Values(builder, json_syntax(markers)(builder), name).object(parameters, parameters, "", 0)


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
