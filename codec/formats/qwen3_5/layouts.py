"""The family's two prompt layouts: Qwen3.5's own (``prompt.py``, ``canonical.py``) and Nemotron 3
Nano's (``FormatSpec.layout == "nemotron"``: ``nemotron_prompt.py``, ``nemotron_canonical.py``),
which writes the same calls and thought around Qwen3-Coder's system block and tools listing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codec.formats import RenderFn
from codec.formats.qwen3_5 import canonical, nemotron_canonical, nemotron_prompt, prompt

if TYPE_CHECKING:
    from lark import Tree

    from codec._canonical import Rule
    from codec.models import Conversation
    from codec.registry import FormatSpec

NEMOTRON = "nemotron"


def read(tree: Tree[Any], spec: FormatSpec, render: RenderFn) -> Conversation:
    """The conversation of a prompt tree, read by the format's layout."""
    reader = nemotron_prompt.read if spec.layout == NEMOTRON else prompt.read
    return reader(tree, spec, render)


def rules(spec: FormatSpec) -> list[Rule]:
    """The canonical rules of the format's layout, in the order they apply."""
    return nemotron_canonical.rules() if spec.layout == NEMOTRON else canonical.rules(spec)
