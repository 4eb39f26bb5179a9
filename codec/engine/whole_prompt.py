"""A whole rendered prompt into its Lark tree: the path ``parse_prompt`` takes.

The same grammar, scanner and contextual lexer as completions, started at the grammar's
``conversation`` rule — but a prompt arrives whole and is the template's own output, so there
is no streaming, no repair and no builder: any deviation is a ``ParseError`` with its position,
and Lark's own callbacks build the tree that the family's prompt reader turns into a
``Conversation``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from lark import Token, Tree
from lark.exceptions import UnexpectedInput

from codec._nesting import MAX_VALUE_DEPTH
from codec.engine.grammar import PROMPT_START, CompiledGrammar, compiled
from codec.engine.lalr import cached_accepts
from codec.engine.patterns import IGNORED, next_token
from codec.engine.position import Position
from codec.engine.scanner import MarkerScanner
from codec.errors import CodecError, ParseError

MAX_PROMPT_STACK = 4 * MAX_VALUE_DEPTH
"""Deepest parser stack a prompt may build: values in prompts (Gemma's arguments, results and
declarations) nest no deeper than the arguments a message may hold."""


def prompt_tree(grammar_file: str, prompt: str) -> Tree[Any]:
    """The Lark tree of a whole prompt (``ParseError`` where it leaves the grammar)."""
    grammar = compiled(grammar_file)
    if PROMPT_START not in grammar.starts:
        raise CodecError(f"{grammar_file} has no {PROMPT_START} rule: this format cannot read prompts back")
    return _WholePrompt(grammar).read(prompt)


class _WholePrompt:
    """One prompt through the grammar's ``conversation`` rule, token by token."""

    def __init__(self, grammar: CompiledGrammar) -> None:
        self._grammar = grammar
        self._parser = grammar.parser.parse_interactive(start=PROMPT_START)
        self._position = Position()

    def read(self, prompt: str) -> Tree[Any]:
        scanner = MarkerScanner(self._grammar.scanned)
        text: list[str] = []
        for name, piece in [*scanner.feed(prompt), *scanner.close()]:
            if name is None:
                text.append(piece)
                continue
            self._text("".join(text))
            text.clear()
            self._token(name, piece, "unexpected_marker")
        self._text("".join(text))
        accepted = self._accepts()
        if "$END" not in accepted:
            self._fail("truncated", "", accepted)
        try:
            tree: Tree[Any] = self._parser.feed_eof()
        except UnexpectedInput:
            self._fail("truncated", "", accepted)
        return tree

    def _text(self, text: str) -> None:
        """Text between two markers: free text where the grammar takes it, else patterns."""
        while text:
            accepted = self._accepts()
            free = next((name for name in accepted if name in self._grammar.free_text), None)
            if free is not None:
                optional = self._optional_pattern(text, accepted)
                if optional is None:
                    self._shift(free, text)
                    return
                self._shift(*optional)
                text = text[len(optional[1]) :]
                continue
            found = next_token(self._grammar, text, accepted, True)
            if not isinstance(found, tuple):
                self._fail("unexpected_text", text[0], accepted)
            name, token = found
            if name.startswith("BAD_"):
                self._fail("malformed", token, accepted)
            if name == IGNORED:
                self._position.advance(token)
            else:
                self._shift(name, token)
            text = text[len(token) :]

    def _optional_pattern(self, text: str, accepted: frozenset[str]) -> tuple[str, str] | None:
        """A pattern the text starts with where free text may stand too, as the stream parser
        reads it (``StreamParser._lex``: Llama 3's call object, whose ``{`` opens the call
        only when its head follows; Gemma's channel name): else the text is the free text."""
        patterns = frozenset(name for name in accepted if name in self._grammar.patterns)
        found = next_token(self._grammar, text, patterns, True) if patterns else None
        if not isinstance(found, tuple) or found[0] == IGNORED or found[0].startswith("BAD_"):
            return None
        return found

    def _token(self, name: str, text: str, code: str) -> None:
        accepted = self._accepts()
        if name not in accepted:
            missing = self._missing_marker(name, accepted)
            if missing is not None:  # say what the template forgot, not only what it wrote
                self._fail("missing_marker", text, accepted, f"{self._grammar.display(missing)} is missing before it")
            self._fail(code, text, accepted)
        self._shift(name, text)

    def _missing_marker(self, name: str, accepted: frozenset[str]) -> str | None:
        """A marker whose insertion would make ``name`` acceptable here."""
        for candidate in sorted(accepted):
            if candidate not in self._grammar.markers.values():
                continue
            trial = self._parser.copy()
            trial.feed_token(Token(candidate, ""))
            if name in trial.accepts():
                return candidate
        return None

    def _shift(self, name: str, text: str) -> None:
        if len(self._parser.parser_state.state_stack) > MAX_PROMPT_STACK:
            limit = f"nested deeper than a prompt can ({MAX_PROMPT_STACK} parser states)"
            self._fail("too_deep", text, frozenset(), limit)
        self._parser.feed_token(Token(name, text))
        self._position.advance(text)

    def _accepts(self) -> frozenset[str]:
        return cached_accepts(self._grammar.name, self._parser)

    def _fail(self, code: str, found: str, accepted: frozenset[str], detail: str = "") -> NoReturn:
        expected = tuple(sorted(self._grammar.display(name) for name in accepted))
        raise ParseError(
            code,
            offset=self._position.offset,
            line=self._position.line + 1,
            column=self._position.column(self._position.offset),
            found=found,
            expected=expected,
            detail=f"({detail or 'a prompt is read strictly'})",
        )
