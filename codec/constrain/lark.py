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
from typing import Any

_PLAIN = re.compile(r"[A-Za-z0-9_ ]")

# llguidance's limits (1.9, default ``LLParserLimits``) and what the constraint keeps under
# them; docs/constraint.md has the measurements.
ROW_ITEMS = 2000
"""``max_items_in_row``: the Earley items one position may hold. Past it the matcher fails at
that position, at run time: an enum of 2,100 strings is refused where its value starts."""
MAX_ALTERNATIVES = ROW_ITEMS // 2
"""The alternatives one value, object member or call may start with; the other half of the row
is for the turn around them (a call starts among ~15 items of the turn)."""
SYMBOL_BUDGET = 40_000
"""``Builder.size`` the tools' calls may reach. llguidance numbers its symbols in 16 bits and
refuses a grammar of 65,525 or more (a panic it reports as an error); ``size`` was 71,258 there
for Solar (2,725 small tools) and 85,443 for GLM (3,281). Grammars of 3,000 tools of three other
shapes, cut at 60,000, all compiled: 40,000 leaves room for shapes counted less well, and for
the turn (a few hundred)."""
LEXER_BUDGET = 1_000_000
"""Characters of terminal definitions the tools' calls may write: past ~3 million llguidance
runs out of ``initial_lexer_fuel`` building the lexer (GLM, 4,000 tools)."""
MAX_NESTING = 100
"""Lists and objects a tool's ``parameters`` may nest, as in ``codec.render.values.MAX_DEPTH``:
a template is given no deeper value, so no prompt can offer a deeper schema."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|/(?:[^/\\]|\\.)*/|<[^>\s]*>|\{\d*,?\d*\}|[\w]+|\S')


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
    """A reference to the special token ``text`` (``<|user|>``, ``<think>``, ``<|"|>``).

    llguidance names special tokens in angle brackets only; a token spelled in square brackets
    (Mistral's ``[TOOL_CALLS]``) is referenced as ``<TOOL_CALLS>``, the name mistral-common's
    llguidance tokenizer (``MistralLLGTokenizer``) gives it, and ``check.tokenizer`` too."""
    text = llg_name(text)
    if not (text.startswith("<") and text.endswith(">")) or any(c.isspace() for c in text) or ">" in text[1:-1]:
        raise ValueError(f"{text!r} cannot be referenced as a special token")
    return text


def llg_name(token: str) -> str:
    """How llguidance knows the special token ``token``: ``[NAME]`` as ``<NAME>``, any other as
    it is."""
    if len(token) > 2 and token[0] == "[" and token[-1] == "]" and "<" not in token and ">" not in token:
        return "<" + token[1:-1] + ">"
    return token


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


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What ``Builder.rollback`` goes back to."""

    rules: int
    notes: int
    size: int
    lexer: int


@dataclass
class Builder:
    """Named rules and terminals of one grammar; a body given twice gets one name. ``size`` and
    ``lexer`` count what llguidance's limits count (``SYMBOL_BUDGET``, ``LEXER_BUDGET``)."""

    rules: dict[str, str] = field(default_factory=dict)
    _by_body: dict[str, str] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    _noted: set[Note] = field(default_factory=set)  # the notes, to find one in O(1) among thousands
    _count: int = 0
    size: int = 0
    lexer: int = 0

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
        self.define(name, body)
        self._by_body[body] = name
        return name

    def define(self, name: str, body: str) -> None:
        """Give a name reserved with ``fresh`` its body (for recursive rules)."""
        self.drop(name)
        self.rules[name] = body
        self._count_in(name, body, 1)

    def drop(self, name: str) -> None:
        """Forget rule ``name`` (a reserved rule that turned out to admit nothing)."""
        body = self.rules.pop(name, None)
        if body is not None:
            self._count_in(name, body, -1)
            if self._by_body.get(body) == name:
                del self._by_body[body]

    def terminal(self, name: str, body: str) -> str:
        """An upper-case terminal (one lexeme); defined once."""
        if name not in self.rules:
            self.define(name, body)
        return name

    def note(self, code: str, tool: str | None, path: str, detail: str) -> None:
        found = Note(code, tool, path, detail)
        if found not in self._noted:
            self._noted.add(found)
            self.notes.append(found)

    def checkpoint(self) -> Checkpoint:
        """The builder as it is now, to ``rollback`` to."""
        return Checkpoint(len(self.rules), len(self.notes), self.size, self.lexer)

    def rollback(self, to: Checkpoint) -> None:
        """Forget every rule and note added since ``to`` (rules made since are only ever new)."""
        for name in list(self.rules)[to.rules :]:
            self.drop(name)
        self._noted.difference_update(self.notes[to.notes :])
        del self.notes[to.notes :]
        self.size, self.lexer = to.size, to.lexer

    def text(self, start: str) -> str:
        """The whole grammar, ``start`` first."""
        lines = [f"start: {start}"]
        lines += [f"{name}: {body}" for name, body in self.rules.items()]
        return "\n".join(lines) + "\n"

    def _count_in(self, name: str, body: str, sign: int) -> None:
        self.size += sign * symbols(body)
        if name[:1].isupper():
            self.lexer += sign * len(body)


def symbols(body: str) -> int:
    """About how many symbols llguidance makes of a rule with ``body``: the rule, each group and
    each repetition, and each literal, regex and special token (counted again where repeated)."""
    return 1 + sum(1 for token in _TOKEN.findall(body) if token[0] in '(?*+{"/<')


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects deeper than ``limit`` (walked without recursion,
    so a value nested a million deep, or holding itself, is only walked ``limit`` deep)."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else ()
        for child in children:
            if isinstance(child, dict | list | tuple):
                if depth + 1 >= limit:
                    return True
                todo.append((child, depth + 1))
    return False


def free_text(builder: Builder, markers: tuple[str, ...]) -> str:
    """The terminal of free text between markers: one or more characters holding no marker's
    characters (the format's parser reads a marker wherever its text appears)."""
    excluded = "|".join(regex_escape(marker) for marker in sorted(set(markers), key=lambda m: (-len(m), m)))
    return builder.terminal("TEXT", f"{regex('(?s:.+)')} & ~{regex(f'(?s:.*)(?:{excluded})(?s:.*)')}")


def marker_free(builder: Builder, markers: tuple[str, ...], body: str, name: str) -> str:
    """Terminal ``name``: ``body`` (a regex terminal) holding no marker's characters."""
    excluded = "|".join(regex_escape(marker) for marker in sorted(set(markers), key=lambda m: (-len(m), m)))
    return builder.terminal(name, f"{body} & ~{regex(f'(?s:.*)(?:{excluded})(?s:.*)')}")
