"""The error hierarchy, split by whose fault it is (as h11 does).

``RenderError`` means the caller's input cannot be expressed in the format; ``ParseError`` means
the model's output does not follow the format; ``UnknownFormatError`` means ``load()`` was given a
name it does not know. All three are ``CodecError``, so one ``except`` catches everything the
library raises on purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codec.models import AssistantMessage


class CodecError(Exception):
    """Base class of every error ``codec`` raises on purpose."""


class RenderError(CodecError):
    """The messages, tools or options given to ``render`` cannot be expressed in the format.

    ``message_index`` and ``offset`` locate the problem inside the conversation when it has a
    place (``offset`` counts characters in that message's text).
    """

    def __init__(self, text: str, *, message_index: int | None = None, offset: int | None = None) -> None:
        where = []
        if message_index is not None:
            where.append(f"message {message_index}")
        if offset is not None:
            where.append(f"offset {offset}")
        super().__init__(f"{text} ({', '.join(where)})" if where else text)
        self.message_index = message_index
        self.offset = offset


class RequestError(RenderError):
    """A chat-completions request body cannot be rendered as asked: ``param`` names the field
    (``"tool_choice"``, ``"chat_template_kwargs.mode"``), as OpenAI's error object does."""

    def __init__(self, param: str, text: str) -> None:
        super().__init__(f"{param}: {text}")
        self.param = param


class ParseError(CodecError):
    """The model's output does not follow the format (raised only with ``strict=True``).

    ``offset`` counts characters from the start of the completion; ``line`` and ``column`` are
    1-based. ``expected`` lists what the grammar allowed at that point, computed before the
    offending piece was fed. ``partial`` is the message as parsed up to the deviation, so nothing
    that arrived is lost even when parsing stops.
    """

    def __init__(
        self,
        code: str,
        *,
        offset: int,
        line: int,
        column: int,
        found: str,
        expected: tuple[str, ...],
        partial: AssistantMessage | None = None,
        detail: str = "",
    ) -> None:
        shown = ", ".join(expected) if expected else "nothing more"
        text = f"{code} at line {line}, column {column} (offset {offset}): found {found!r}, expected {shown}"
        super().__init__(f"{text}. {detail}" if detail else text)
        self.code = code
        self.offset = offset
        self.line = line
        self.column = column
        self.found = found
        self.expected = expected
        self.partial = partial


class UnknownFormatError(CodecError, LookupError):
    """``load()`` was given a name that is neither a format nor a known model id."""

    def __init__(self, name: str, close_matches: list[str], known: list[str]) -> None:
        hint = f" Did you mean {', '.join(repr(m) for m in close_matches)}?" if close_matches else ""
        super().__init__(f"unknown format {name!r}.{hint} Known formats: {', '.join(known)}.")
        self.name = name
        self.close_matches = close_matches


class UnknownTemplateError(UnknownFormatError):
    """``detect()`` (or ``load()`` of a path or a ``template=`` alone) could not tell which
    format a chat template is written for. ``looked_for`` has one line per grammar: its
    formats, the markers that would have recognised it, and those found."""

    def __init__(self, where: str, looked_for: list[str]) -> None:
        CodecError.__init__(
            self,
            f"{where} is not one codec ships, and does not write enough of any format's special tokens. "
            "Looked for:\n  "
            + "\n  ".join(looked_for)
            + "\nIf you know its format, name it: codec.load('glm', template=...), or -f glm with --template.",
        )
        self.name = where
        self.close_matches = []
        self.looked_for = looked_for


def describe(value: Any, limit: int = 40) -> str:
    """A short repr for error messages, so a 50 KB argument does not flood a traceback.

    It never raises: a value nested past the recursion limit, or holding an integer longer than
    Python writes (``sys.get_int_max_str_digits``), is shown by its type alone, so that the
    error being built for it is not replaced by a ``RecursionError`` or ``ValueError``."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        text = f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
