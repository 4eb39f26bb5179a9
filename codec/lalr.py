"""``LalrCursor``: a format's Lark LALR parser, stepped one token at a time.

The stream engine asks it two things: which terminals the parser accepts now (computed with
Lark's ``accepts()`` before feeding, cached per state stack), and to shift a token. An LALR step
depends only on the state stack and the terminal, so each distinct step runs through Lark's
``feed_token`` once per process and is replayed from a table after that — values are not kept
(the builder, not a tree, is the output). With ``keep_tree`` every token goes through Lark and
its own callbacks build the tree (whole prompts).
"""

from __future__ import annotations

from collections.abc import Callable
from copy import copy
from functools import cache
from typing import Any

from lark.exceptions import UnexpectedInput
from lark.lexer import Token

from codec.grammar import CompiledGrammar, compiled

Stack = tuple[int, ...]

_ACCEPTS: dict[tuple[str, Stack], frozenset[str]] = {}
_STEPS: dict[tuple[str, Stack, str], tuple[Stack, tuple[str, ...]]] = {}
_TABLE_LIMIT = 100_000  # deep nesting makes new stacks; keep memory bounded


class LalrCursor:
    """One parse: where the parser stands, and the steps it takes."""

    def __init__(
        self, grammar: CompiledGrammar, start: str, *, keep_tree: bool,
        on_bad_rule: Callable[[str], None],
    ) -> None:
        self._grammar = grammar
        self._parser = grammar.parser.parse_interactive(start=start)
        self._keep_tree = keep_tree
        self._on_bad_rule = on_bad_rule
        self._fired: list[str] = []  # bad_* rules reduced by the current Lark step
        state = self._parser.parser_state
        self._silent = copy(state.parse_conf)  # for trial steps: no callbacks at all
        self._silent.callbacks = {}
        if not keep_tree:  # Lark's own callbacks build a tree; otherwise build nothing
            conf = copy(state.parse_conf)
            quiet, bad = _callback_plan(grammar.name, start)
            conf.callbacks = {**quiet, **{rule: self._bad(name) for rule, name in bad}}
            state.parse_conf = conf
        self.stack: Stack = tuple(state.state_stack)

    def accepts(self) -> frozenset[str]:
        """The terminals the parser accepts now."""
        key = (self._grammar.name, self.stack)
        accepted = _ACCEPTS.get(key)
        if accepted is None:
            if len(_ACCEPTS) > _TABLE_LIMIT:
                _ACCEPTS.clear()
            accepted = _ACCEPTS[key] = frozenset(self._parser.accepts())
        return accepted

    def shift(self, name: str, text: str) -> None:
        """Feed one token (the caller checked it is accepted)."""
        if self._keep_tree:
            self._parser.feed_token(Token(name, text))
            self.stack = tuple(self._parser.parser_state.state_stack)
            return
        key = (self._grammar.name, self.stack, name)
        step = _STEPS.get(key)
        if step is None:
            self._fired = []
            self._parser.feed_token(Token(name, text))
            if len(_STEPS) > _TABLE_LIMIT:
                _STEPS.clear()
            step = _STEPS[key] = (tuple(self._parser.parser_state.state_stack), tuple(self._fired))
        else:
            self.restore(step[0])
        self.stack = step[0]
        for rule in step[1]:
            self._on_bad_rule(rule)

    def restore(self, stack: Stack) -> None:
        """Put the parser back in the state ``stack`` (a rollback point or a replayed step)."""
        state = self._parser.parser_state
        state.state_stack[:] = stack
        values, size = state.value_stack, len(stack) - 1
        if len(values) > size:
            del values[size:]
        else:
            values.extend([None] * (size - len(values)))
        self.stack = stack

    def accepts_after(self, name: str) -> frozenset[str]:
        """What the parser would accept after ``name`` (a trial on a copy, callbacks off)."""
        trial = self._parser.copy(deepcopy_values=False)
        trial.parser_state.parse_conf = self._silent
        trial.feed_token(Token(name, ""))
        return frozenset(trial.accepts())

    def finish(self) -> Any:
        """Feed the end of input; the tree (with ``keep_tree``), else ``None``."""
        try:
            return self._parser.feed_eof()
        except UnexpectedInput:  # a stop marker then more text: kept as content already
            return None

    def _bad(self, rule: str) -> Callable[[list[Any]], None]:
        def reduced(children: list[Any]) -> None:
            self._fired.append(rule)

        return reduced


def _discard(children: list[Any]) -> None:
    return None


@cache
def _callback_plan(grammar_file: str, start: str) -> tuple[dict[Any, Any], tuple[tuple[Any, str], ...]]:
    """Per grammar: every rule's callback set to discard its children, and the ``bad_*`` rules
    (each cursor binds its own reporter to those)."""
    parser = compiled(grammar_file).parser.parse_interactive(start=start)
    rules: list[Any] = list(parser.parser_state.parse_conf.callbacks)
    bad = tuple((rule, str(rule.origin.name)) for rule in rules if str(rule.origin.name).startswith("bad_"))
    return {rule: _discard for rule in rules}, bad
