"""Constrained decoding: an llguidance grammar (its Lark dialect) for a format's completion.

``constraint(codec, tools=..., tool_choice=..., parallel_tool_calls=..., **options)`` returns
the grammar text; ``build`` returns it with the ``notes`` of what it could not enforce. The
grammar starts where the format's generation prompt under ``options`` leaves the model
(inside ``<think>``, after an empty thought channel, ...), and admits reasoning, content and
calls of the given tools with arguments that follow each tool's schema in the format's own
argument syntax, up to a stop token. Every text it admits parses (``strict=True``) with the
format's parser. See docs/constraint.md.

The grammar is generated: the turn from the format's ``grammars/*.lark`` completion rule
(``codec.constrain.skeleton``), each call from the family's call syntax (``Family.constraint``,
written in ``codec/formats/<family>/constraint.py``) and the tool schemas
(``codec.constrain.values``). Markers are the model's special tokens, referenced as such
(``<|user|>``); free text never holds a marker's characters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from codec.constrain.calls import CallSyntax, Tool, name_fits, names
from codec.constrain.lark import LEXER_BUDGET, MAX_ALTERNATIVES, SYMBOL_BUDGET, Builder, Note
from codec.constrain.skeleton import emit, turn
from codec.engine.grammar import compiled
from codec.errors import CodecError

if TYPE_CHECKING:
    from codec.api import Codec

__all__ = ["Constraint", "Note", "ToolChoice", "build", "constraint"]

# llama.cpp hands a grammar to llguidance (instead of reading it as GBNF) when it starts with
# this directive; vLLM's and SGLang's llguidance backends accept it too, so one text serves all.
LLGUIDANCE_HEADER = "%llguidance {}\n"

ToolChoice = Literal["auto", "none", "required"] | Mapping[str, Any] | str
"""``"auto"``, ``"none"``, ``"required"``, ``{"type": "function", "function": {"name": ...}}``
(or just the tool's name)."""


@dataclass(frozen=True)
class Constraint:
    """An llguidance Lark grammar and what it does not enforce (``notes``; empty when the
    grammar follows every schema exactly)."""

    grammar: str
    notes: tuple[Note, ...]

    @property
    def diagnostics(self) -> tuple[Note, ...]:
        """``notes``, under the name the rest of ``codec`` uses for such findings."""
        return self.notes


def constraint(
    codec: Codec,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    **options: Any,
) -> str:
    """The llguidance grammar of ``codec``'s completion (``build(...).grammar``)."""
    return build(
        codec, tools=tools, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls, **options
    ).grammar


def build(
    codec: Codec,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: ToolChoice = "auto",
    parallel_tool_calls: bool = True,
    generation_prompt: str | None = None,
    **options: Any,
) -> Constraint:
    """The grammar and its notes; see ``constraint``. ``options`` are the template variables
    given to ``render`` (they decide the generation prompt); ``CodecError`` when the choice
    leaves no possible completion (``"required"`` with no tool that can be called, an unknown
    named tool). ``generation_prompt``: where a prompt rendered already left the model
    (``Turn.generation_prompt``, which also knows the history), instead of ``options``."""
    spec = codec.spec
    family = spec.family.constraint
    if family is None:
        raise CodecError(f"no call syntax for the {spec.family.name} family: constraint() does not support {spec.name}")
    if generation_prompt is None:
        prompt = codec._renderer.generation_prompt(codec._renderer.select_options(options, "error"))
    elif options:
        raise CodecError("constraint(): the generation prompt says where the model starts; options are not needed")
    else:
        prompt = generation_prompt
    grammar = compiled(spec.grammar)
    markers = tuple(sorted({text.strip() for text in grammar.markers}, key=lambda m: (-len(m), m)))
    builder = Builder()
    choice, named = _choice(tool_choice)
    offered = [_tool(tool) for tool in tools or ()]
    if named is not None:
        offered = [tool for tool in offered if tool[0] == named]
        if not offered:
            raise CodecError(f"tool_choice names {named!r}, which is not among the tools")
    calls = _calls(builder, family, spec.grammar, offered, markers) if choice != "none" else []
    allowed = _allowed(choice, parallel_tool_calls and bool(calls))
    if not calls:
        if 0 not in allowed:
            raise CodecError(f"tool_choice {tool_choice!r} asks for a call, and no tool can be called")
        allowed = frozenset({0})
    call_rule = builder.rule("tool_call", " | ".join(calls)) if calls else "tool_call_none"
    rules, top = turn(spec.grammar, prompt, frozenset(spec.stop_terminals), allowed)
    emitted = emit(builder, rules, top, spec.grammar, call_rule, markers)
    return Constraint(LLGUIDANCE_HEADER + builder.text(emitted), tuple(builder.notes))


def _calls(
    builder: Builder, family: CallSyntax, grammar_file: str, offered: list[Tool], markers: tuple[str, ...]
) -> list[str]:
    """One call rule per tool, while they fit llguidance's limits: at most ``MAX_ALTERNATIVES``
    (each is an item where a call starts) within ``SYMBOL_BUDGET`` and ``LEXER_BUDGET``. The
    tools past them share one call that checks the name only (a note each)."""
    calls: list[str] = []
    loose: dict[str, str] = {}
    for tool in offered:
        name = tool[0]
        if not name_fits(grammar_file, name, markers):
            builder.note("tool_left_out", name, "", "its name cannot be written in this format")
        elif len(calls) >= MAX_ALTERNATIVES:
            loose[name] = f"more than {MAX_ALTERNATIVES} tools (one parser item each where a call starts)"
        else:
            before = builder.checkpoint()
            call = family(builder, grammar_file, tool, markers, None)
            if builder.size > SYMBOL_BUDGET or builder.lexer > LEXER_BUDGET:
                builder.rollback(before)
                loose[name] = f"the tools before it and its schema fill the grammar llguidance compiles ({_sizes()})"
            elif call is None:
                builder.note("tool_left_out", name, "", "no arguments satisfy its schema in this format")
            else:
                calls.append(call)
    for name, why in loose.items():
        builder.note("too_large", name, "", f"{why}: its name is checked, its arguments are not")
    if loose:
        shared = family(builder, grammar_file, ("", None), markers, names(builder, list(loose)))
        calls += [shared] if shared is not None else []
    return calls


def _sizes() -> str:
    return f"SYMBOL_BUDGET {SYMBOL_BUDGET}, LEXER_BUDGET {LEXER_BUDGET}"


def _choice(tool_choice: ToolChoice) -> tuple[str, str | None]:
    if isinstance(tool_choice, Mapping):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else tool_choice.get("name")
        if not isinstance(name, str):
            raise CodecError(f"tool_choice {tool_choice!r} names no function")
        return "required", name
    if tool_choice in ("auto", "none", "required"):
        return tool_choice, None
    if isinstance(tool_choice, str) and tool_choice:
        return "required", tool_choice
    raise CodecError(f"tool_choice must be 'auto', 'none', 'required' or a function, not {tool_choice!r}")


def _allowed(choice: str, parallel: bool) -> frozenset[int]:
    """How many calls (2 = two or more) the completion may hold."""
    most = {0, 1, 2} if parallel else {0, 1}
    if choice == "none":
        return frozenset({0})
    if choice == "required":
        return frozenset(most - {0})
    return frozenset(most)


def _tool(tool: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    function = tool.get("function")
    spec = function if isinstance(function, Mapping) else tool
    name = spec.get("name")
    if not isinstance(name, str):
        raise CodecError(f"a tool without a name: {tool!r}")
    parameters = spec.get("parameters")
    return name, parameters if isinstance(parameters, Mapping) else None
