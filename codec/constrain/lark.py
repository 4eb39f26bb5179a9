"""Writing llguidance's Lark dialect: literals, regexes, special-token references, and a builder
that collects named rules (each body once) and the diagnostics of what could not be expressed.

llguidance's regexes are Rust ``regex`` syntax plus ``&`` (and) and ``~`` (not) between
terminals; a special token is written ``<text>`` and matches that one token of the vocabulary,
never the same characters spelled by ordinary tokens.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_PLAIN = re.compile(r"[A-Za-z0-9_ ]")


def literal(text: str) -> str:
    """A string literal matching ``text`` exactly (JSON escapes, ASCII only)."""
    return json.dumps(text)


def regex_escape(text: str) -> str:
    """``text`` as a Rust regex matching it literally: every character that is not a letter,
    digit, underscore or space is written ``\\x{HEX}``, so no character is ever a metacharacter
    (nor ``/``, which would end the ``/.../`` around it)."""
    return "".join(char if _PLAIN.fullmatch(char) else f"\\x{{{ord(char):x}}}" for char in text)


def regex(source: str) -> str:
    """A ``/.../`` regex terminal from Rust regex ``source`` (a ``/`` in it is escaped)."""
    return "/" + source.replace("/", "\\/") + "/"


def special_token(text: str) -> str:
    """A reference to the special token ``text`` (``<|user|>``, ``<think>``, ``<|"|>``)."""
    if not (text.startswith("<") and text.endswith(">")) or any(c.isspace() for c in text) or ">" in text[1:-1]:
        raise ValueError(f"{text!r} cannot be referenced as a special token")
    return text


@dataclass(frozen=True, slots=True)
class Note:
    """Something the constraint does not enforce, or enforces more loosely than asked.

    ``code`` says what kind (``unenforced_keyword``, ``tool_left_out``, ...); ``tool`` and
    ``path`` (a JSON pointer into the tool's ``parameters``) say where; ``detail`` says what the
    constraint does instead. A note never means the output may fail to parse: the looser
    constraint still only admits text the format's parser reads."""

    code: str
    tool: str | None
    path: str
    detail: str


@dataclass
class Builder:
    """Named rules and terminals of one grammar; a body given twice gets one name."""

    rules: dict[str, str] = field(default_factory=dict)
    _by_body: dict[str, str] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    _count: int = 0

    def fresh(self, hint: str) -> str:
        """A new rule name (lower case, no leading underscore: llguidance inlines none)."""
        self._count += 1
        base = re.sub(r"[^a-z0-9]+", "_", hint.lower()).strip("_")[:24] or "r"
        return f"{base}_{self._count}"

    def rule(self, hint: str, body: str) -> str:
        """The name of a rule with ``body`` (alternatives separated by ``|``)."""
        found = self._by_body.get(body)
        if found is not None:
            return found
        name = self.fresh(hint)
        self.rules[name] = body
        self._by_body[body] = name
        return name

    def define(self, name: str, body: str) -> None:
        """Give a name reserved with ``fresh`` its body (for recursive rules)."""
        self.rules[name] = body

    def terminal(self, name: str, body: str) -> str:
        """An upper-case terminal (one lexeme); defined once."""
        self.rules.setdefault(name, body)
        return name

    def note(self, code: str, tool: str | None, path: str, detail: str) -> None:
        found = Note(code, tool, path, detail)
        if found not in self.notes:
            self.notes.append(found)

    def text(self, start: str) -> str:
        """The whole grammar, ``start`` first."""
        lines = [f"start: {start}"]
        lines += [f"{name}: {body}" for name, body in self.rules.items()]
        return "\n".join(lines) + "\n"


def free_text(builder: Builder, markers: tuple[str, ...]) -> str:
    """The terminal of free text between markers: one or more characters holding no marker's
    characters (the format's parser reads a marker wherever its text appears)."""
    excluded = "|".join(regex_escape(marker) for marker in sorted(set(markers), key=lambda m: (-len(m), m)))
    return builder.terminal("TEXT", f"{regex('(?s:.+)')} & ~{regex(f'(?s:.*)(?:{excluded})(?s:.*)')}")


def marker_free(builder: Builder, markers: tuple[str, ...], body: str, name: str) -> str:
    """Terminal ``name``: ``body`` (a regex terminal) holding no marker's characters."""
    excluded = "|".join(regex_escape(marker) for marker in sorted(set(markers), key=lambda m: (-len(m), m)))
    return builder.terminal(name, f"{body} & ~{regex(f'(?s:.*)(?:{excluded})(?s:.*)')}")
