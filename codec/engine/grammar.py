"""Compiles a format's Lark grammar once and sorts its terminals into what the engine needs.

The conventions every grammar in ``grammars/`` follows (written out in ``glm.lark``):

- a literal terminal of three or more characters starting with ``<`` or ``[`` is a **marker**, a special token of the
  model's vocabulary, recognised anywhere in the text (a literal that is white space and then
  such a token, like Gemma's ``"\n<channel|>"``, is a marker too: the newline belongs to it);
- a marker terminal named ``NAME__SPELLING`` is another spelling of the marker ``NAME``, with the
  white space a template writes around the token (Qwen's ``CALL_OPEN__NL: "\n<tool_call>"``): the
  scanners read it as ``NAME``, so rules, the builder and the repairs see one terminal;
- a ``%declare``'d terminal is **free text** running between markers, except ``CALL_CLOSE``:
  declared, it is an **implied closer** — the model writes nothing to end a call (Mistral's
  ``[TOOL_CALLS]NAME[ARGS]{json}``), so the engine supplies it, silently, where the call's
  arguments are whole and what follows needs it (``implied``);
- every other terminal is a **pattern**, matched against the text only where the parser
  accepts it (Gemma's call bodies);
- ``BAD_*`` terminals and ``bad_*`` rules are malformed variants, accepted only leniently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from lark import Lark
from lark.lexer import PatternStr, TerminalDef
from lark.load_grammar import load_grammar

from codec._resources import read_text
from codec.engine.regex_prefix import prefix_regex

COMPLETION_START = "assistant_turn"
PROMPT_START = "conversation"


@dataclass(frozen=True, slots=True)
class Pattern:
    """A pattern terminal: its compiled regex and Lark priority (ties go to the higher)."""

    name: str
    regex: re.Pattern[str]
    priority: int
    literal: str | None  # the text, for a literal terminal: a prefix of it is worth waiting for
    # For a regex that ends by looking ahead (Gemma's bare value: up to the `,key:` or `}` that
    # ends it), the regex without its look-around: while it runs to the end of the text that has
    # arrived, more text may change the match.
    body: re.Pattern[str] | None = None
    # A regex of one character every match starts with (``None``: it may start with any): the
    # lexer skips the patterns the next character rules out.
    first: re.Pattern[str] | None = None
    # A regex of every text that may still grow into a match (``prefix_regex``; ``None``: not
    # known): the lexer waits while what arrived is one.
    prefix: re.Pattern[str] | None = None


@dataclass(frozen=True)
class CompiledGrammar:
    """A grammar's parser and its terminals, sorted by kind."""

    name: str
    parser: Lark
    starts: tuple[str, ...]
    markers: dict[str, str]  # marker text -> terminal name (a terminal's own spelling)
    free_text: frozenset[str]
    implied: frozenset[str]  # declared terminals the model never writes (``IMPLIED``)
    patterns: dict[str, Pattern]
    ignore: re.Pattern[str] | None
    # What the scanners look for: every marker, and every other spelling of one (``NAME__X``)
    # as the terminal it is read as.
    scanned: dict[str, str] = field(default_factory=dict)

    @property
    def special_tokens(self) -> tuple[str, ...]:
        """Every special token, longest first (markers with leading white space left out; a
        spelling that is a token of its own, Llama 3's ``<|eom_id|>`` read as ``<|eot_id|>``, in)."""
        tokens = (
            marker
            for marker in self.scanned
            if marker[:1] in _TOKEN_STARTS and (marker in self.markers or marker == marker.strip())
        )
        return tuple(sorted(tokens, key=len, reverse=True))

    def display(self, terminal: str) -> str:
        """How to show a terminal in an error: a marker's text, otherwise its name."""
        for text, name in self.markers.items():
            if name == terminal:
                return text
        return "end of output" if terminal == "$END" else terminal


_TOKEN_STARTS = ("<", "[")
IMPLIED = frozenset({"CALL_CLOSE"})  # a declared terminal of these is written by no text
_SPELLING = "__"  # ``NAME__SPELLING``: another spelling of the marker ``NAME``


def is_marker(term: TerminalDef) -> bool:
    """Whether ``term`` is a marker: a literal of three or more characters starting with ``<``
    or ``[`` (after white space), like ``<tool_call>`` or ``[gMASK]``."""
    if not isinstance(term.pattern, PatternStr):
        return False
    token = term.pattern.value.lstrip()
    return len(token) >= 3 and token[0] in _TOKEN_STARTS  # "[" alone is punctuation


def pattern_of(term: TerminalDef) -> Pattern:
    """The pattern terminal ``term`` as the engine matches it."""
    literal = term.pattern.value if isinstance(term.pattern, PatternStr) else None
    source = term.pattern.to_regexp()
    return Pattern(
        term.name, re.compile(source), term.priority, literal, _body(source), _first(source), prefix_regex(source)
    )


def _first(source: str) -> re.Pattern[str] | None:
    """The first item of the regex ``source`` as a regex of one character, when it is one
    character or a character class that must occur there; else ``None``. Anything less plain
    (a group, ``\\d``, an alternation at the top, an optional first item) gives ``None``."""
    if not source or _top_level_alternation(source):
        return None
    if source[0] == "[":
        end = _class_end(source)
        if end is None:
            return None
        item = source[:end]
    elif source[0] == "\\":
        if len(source) < 2 or source[1].isalnum():  # a class escape (\\d, \\s) or an assertion
            return None
        item = source[:2]
    elif source[0] in "()|.^$*+?{":
        return None
    else:
        item = source[0]
    rest = source[len(item) :]
    if rest[:1] in ("?", "*") or rest.startswith("{0"):  # the item may be absent
        return None
    return re.compile(item)


def _class_end(source: str) -> int | None:
    """Where the character class that opens ``source`` ends (after its ``]``)."""
    at = 2 if source.startswith("[^") else 1
    if source[at : at + 1] == "]":  # a ``]`` first in a class is one of its characters
        at += 1
    while at < len(source):
        if source[at] == "\\":
            at += 2
            continue
        if source[at] == "]":
            return at + 1
        at += 1
    return None


def _top_level_alternation(source: str) -> bool:
    """Whether ``source`` has a ``|`` outside every group and class."""
    depth, at, in_class = 0, 0, False
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if source[at + 1 : at + 2] == "^":
                at += 1
            if source[at + 1 : at + 2] == "]":
                at += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        at += 1
    return False


_LOOK_AHEAD = "(?="
_LOOK_BEHIND = ("(?<!", "(?<=")
_LOOK_AROUND = (_LOOK_AHEAD, "(?!", *_LOOK_BEHIND)


def _body(source: str) -> re.Pattern[str] | None:
    """``source`` without the look-ahead that ends it (and a look-behind right before that), or
    ``None`` if it does not end by looking ahead.

    The groups' own parentheses tell what ends the regex: Lark writes ``("a" | "q") /b(?=c)/``
    as ``(?:a|q)b(?=c)``, whose first group does not reach the end, and a flag as a group around
    the whole (``(?i:b(?=c))``), which the look-ahead ends from inside."""
    openings = _group_openings(source)
    end, closers = len(source) - 1, ""
    while (cut := openings.get(end)) is not None and not source.startswith(_LOOK_AROUND, cut):
        end, closers = end - 1, closers + ")"  # a group that ends the regex: look inside it
    if cut is None or not source.startswith(_LOOK_AHEAD, cut):
        return None
    behind = openings.get(cut - 1)
    if behind is not None and source.startswith(_LOOK_BEHIND, behind):
        cut = behind
    return re.compile(source[:cut] + closers)


def _group_openings(source: str) -> dict[int, int]:
    """Where each group of the regex ``source`` opens, by the offset of its closing parenthesis.

    Parentheses escaped or inside a character class are not groups; a ``]`` first in a class
    (``[]a]``, ``[^]a]``) is one of its characters."""
    openings: dict[int, int] = {}
    unclosed: list[int] = []
    at, in_class = 0, False
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 1  # the escaped character is skipped with it
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            at += source.startswith("^", at + 1)
            at += source.startswith("]", at + 1)
        elif char == "(":
            unclosed.append(at)
        elif char == ")" and unclosed:
            openings[at] = unclosed.pop()
        at += 1
    return openings


@cache
def compiled(grammar_file: str) -> CompiledGrammar:
    """The compiled grammar for ``grammars/<grammar_file>``; built once per process."""
    source = read_text("grammars", grammar_file)
    starts = [COMPLETION_START]
    if re.search(rf"^{PROMPT_START}\s*:", source, re.MULTILINE):
        starts.append(PROMPT_START)
    # Lark keeps the LALR tables it builds in its cache file (in the temp folder, keyed by the
    # grammar's hash): a new process loads them instead of building them again.
    parser = Lark(source, parser="lalr", start=starts, lexer="basic", cache=True)
    grammar, _ = load_grammar(source, grammar_file, [], False)
    declared = {name for name, (tree, _) in grammar.term_defs if tree is None}
    every_name = {name for name, _ in grammar.term_defs} - declared
    # Every terminal, even one no rule uses: a marker still matters to the scanner and to
    # render's injection check.
    terminals, _, ignore_names = grammar.compile(starts, every_name)
    markers = {term.pattern.value: term.name for term in terminals if is_marker(term) and _SPELLING not in term.name}
    spellings = {
        term.pattern.value: term.name.split(_SPELLING)[0]
        for term in terminals
        if is_marker(term) and _SPELLING in term.name
    }
    patterns = {
        term.name: pattern_of(term) for term in terminals if not is_marker(term) and term.name not in ignore_names
    }
    ignore = [term.pattern.to_regexp() for term in terminals if term.name in ignore_names]
    return CompiledGrammar(
        name=grammar_file,
        parser=parser,
        starts=tuple(starts),
        markers=markers,
        free_text=frozenset(declared - IMPLIED),
        implied=frozenset(declared & IMPLIED),
        patterns=patterns,
        ignore=re.compile("|".join(ignore)) if ignore else None,
        scanned={**markers, **spellings} if spellings else markers,
    )


def special_tokens(grammar_file: str) -> tuple[str, ...]:
    """The special tokens (markers) of a grammar, longest first."""
    return compiled(grammar_file).special_tokens
