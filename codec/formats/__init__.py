"""What each format family knows, one folder per family: ``glm/``, ``solar_open/``, ``gemma4/``.

A family folder holds its prompt reader (``prompt.py``), its canonical rules (``canonical.py``),
its argument syntax (``arguments.py``) and its demo case and test data (``__init__.py``). The
family's grammar and template stay at the top level (``grammars/``, ``templates/``). The registry
(``codec/registry.py``) imports each family and links it to its formats; nothing finds a family
by building a module name.

This module defines the shape every family fills in: ``Family`` (the code), ``Examples`` and
``DemoCase`` (the data the tests, benchmarks and CLI need).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codec.formats._demo_scenario import HISTORY

if TYPE_CHECKING:
    from lark import Tree

    from codec._canonical import Rule
    from codec.arguments.reader import ArgumentReaderFactory
    from codec.constrain.calls import CallSyntax
    from codec.models import Conversation
    from codec.registry import FormatSpec

RenderFn = Callable[..., str]
"""``render(messages, **options)`` of the format being read (a reader may render to compare)."""

PromptReader = Callable[["Tree[Any]", "FormatSpec", RenderFn], "Conversation"]
"""Turns the Lark tree of a whole prompt (rule ``conversation``) into a ``Conversation``."""


@dataclass(frozen=True, slots=True)
class Family:
    """The code a format family contributes: ``read_prompt`` (``parse_prompt``), ``rules``
    (``canonical`` / ``explain_losses``, in the order they apply), ``arguments`` (how the
    stream parser reads a call's arguments), ``constraint`` (one call in the family's syntax
    for ``Codec.constraint``; ``None``: the family cannot be constrained) and ``new_id`` (the
    ids made for calls the model wrote without one, when the caller gives no ``id_factory``;
    ``None``: ``call_`` and 24 hex digits)."""

    name: str
    read_prompt: PromptReader
    rules: Callable[[FormatSpec], list[Rule]]
    arguments: ArgumentReaderFactory
    constraint: CallSyntax | None = None
    new_id: Callable[[int], str] | None = None


class _AnyText:
    """A test-option value that stands for "any message-like text" (hypothesis draws it)."""

    def __repr__(self) -> str:
        return "ANY_TEXT"


ANY_TEXT: Any = _AnyText()
"""In ``FormatSpec.test_options``: draw text here (``codec.strategies`` knows how)."""


@dataclass(frozen=True, slots=True)
class Examples:
    """Completions in a format's own syntax that generic tests and benchmarks use, for the
    tools ``get_weather(city: string, days: integer)`` and ``run_code(code: string)``.

    ``one_call`` calls ``get_weather`` with city ``Paris``; ``two_calls`` calls it for ``Paris``
    then ``Rome``; ``code_head`` + text + ``code_tail`` is a complete ``run_code`` call whose
    ``code`` is that text (``code_head`` alone is a call cut off inside its string);
    ``typing_trap`` calls ``get_weather`` with city ``123`` written as the model writes it for
    a string parameter and days ``123`` as a number.
    """

    one_call: str
    two_calls: str
    code_head: str
    code_tail: str
    typing_trap: str


@dataclass(frozen=True, slots=True)
class DemoCase:
    """A format's part of ``codec demo``: what it is, its options, a completion in its syntax."""

    title: str
    completion: str
    options: Mapping[str, Any] = field(default_factory=dict)
    # The conversation the completion continues, for a template that cannot render the shared
    # one (``_demo_scenario.HISTORY``, whose first reply makes two calls: Llama 3's template
    # writes one call per message); empty: that one (``messages``).
    history: Sequence[Mapping[str, Any]] = ()

    @property
    def messages(self) -> Sequence[Mapping[str, Any]]:
        """The conversation the demo renders before the completion."""
        return self.history or HISTORY
