"""The Intern-S1 template's own texts (``templates/intern_s1.jinja``) and how it writes content
given as a list of parts; the markers in them are taken from ``intern_s1.lark``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from codec.engine.grammar import compiled
from codec.models import Content, ContentPart, MediaPart, TextPart

GRAMMAR = "intern_s1.lark"

# Line 1: `{% set default_thinking_sys %}You are an expert reasoner …{% endset %}`, which ends
# with the think markers.
_DEFAULT_SYSTEM = (
    "You are an expert reasoner with extensive experience in all areas. You approach problems through systematic "
    "thinking and rigorous reasoning. Your response should reflect deep understanding and precise logical "
    "thinking, making your solution path and reasoning clear to others. Please put your thinking process within "
    "{open}...{close} tags."
)
# Lines 2 and 20-22: the tools instruction's first words and the line before the tools' JSON.
INSTRUCTION_HEAD = "Your response should consist of a reasoning step (**thought**) followed immediately by"
TOOLS_HEAD = "\n\n# External Tools\nYou have access to these tools:\n"
# `'\n<video>'`: a video part's placeholder is plain text, not a special token.
VIDEO = "<video>"


@cache
def default_system() -> str:
    """The system prompt the template writes when thinking is on and there is no system message."""
    grammar = compiled(GRAMMAR)
    return _DEFAULT_SYSTEM.format(open=grammar.display("THINK_OPEN"), close=grammar.display("THINK_CLOSE"))


@cache
def image() -> str:
    """An image part's placeholder, ``IMAGE``."""
    return compiled(GRAMMAR).display("IMAGE")


def written(content: Content | None) -> Content:
    """Content as the template writes it, back as parts: a string stays a string (``None`` is
    ``''``); a list is written part by part, each after a new line, then stripped of the new
    lines it starts with, and read back (``read_back``).

    ``'\\n<IMG_CONTEXT>'`` / ``'\\n<video>'`` / ``'\\n' ~ _content.text``, then ``content.lstrip('\\n')``
    """
    if content is None or isinstance(content, str):
        return content or ""
    pieces: list[str | MediaPart] = []
    for part in content:
        if isinstance(part, TextPart):
            pieces += ["\n" + part.text]
        elif part.type == "image":
            pieces += ["\n", MediaPart(type="image")]
        elif part.type == "video":
            pieces += ["\n" + VIDEO]
    return read_back(_lstrip(pieces))


def _lstrip(pieces: list[str | MediaPart]) -> list[str | MediaPart]:
    """``content.lstrip('\\n')`` over text pieces and image placeholders."""
    for at, piece in enumerate(pieces):
        if not isinstance(piece, str):
            return pieces[at:]
        stripped = piece.lstrip("\n")
        if stripped:
            return [stripped, *pieces[at + 1 :]]
    return []


def read_back(pieces: Sequence[str | MediaPart]) -> Content:
    """The content a prompt's text and image placeholders stand for: a string when there is no
    image; else a part per image and per text the template wrote after a new line (the new line
    before an image is the image's; text after an image begins with its own new line)."""
    if all(isinstance(piece, str) for piece in pieces):
        return "".join(str(piece) for piece in pieces)
    texts, images = [""], []
    for piece in pieces:
        if isinstance(piece, str):
            texts[-1] += piece
        else:
            images.append(piece)
            texts.append("")
    parts: list[ContentPart] = []
    for at, text in enumerate(texts):
        if at < len(images) and text.endswith("\n"):
            text = text[:-1]  # the image's own new line
        if at > 0 and text:
            parts.append(TextPart(text=text[1:] if text.startswith("\n") else text))
        elif text:
            parts.append(TextPart(text=text))
        if at < len(images):
            parts.append(images[at])
    return tuple(parts)
