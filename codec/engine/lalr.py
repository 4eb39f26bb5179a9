"""``LalrCursor``: a format's Lark LALR parser, stepped one token at a time.

The stream engine asks it two things: which terminals the parser accepts now (computed with
Lark's ``accepts()`` before feeding, cached per state stack), and to shift a token. An LALR step
depends only on the state stack and the terminal, so each distinct step runs through Lark's
``feed_token`` once per process and is replayed from a table after that — values are not kept
(the builder, not a tree, is the output; whole prompts, which need Lark's tree, take their own
path in ``whole_prompt.py``).

Both tables are process-wide and bounded: a step is remembered only while the parser's stack is
at most ``CACHED_DEPTH`` states deep (deeper stacks come from deeply nested values, whose keys
would grow with the nesting), and a table that reaches ``_TABLE_LIMIT`` entries starts afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import copy
from functools import cache
from typing import Any

from lark.exceptions import UnexpectedInput
from lark.lexer import Token

from codec.engine.grammar import CompiledGrammar, compiled
from codec.memo import memo

Stack = tuple[int, ...]

_ACCEPTS: dict[tuple[str, Stack], frozenset[str]] = memo({})
_STEPS: dict[tuple[str, Stack, str], tuple[Stack, tuple[str, ...]]] = memo({})
_TABLE_LIMIT = 20_000
CACHED_DEPTH = 256
"""Deepest stack whose steps are remembered: memory stays below limit x depth integers."""


class LalrCursor:
    """One parse: where the parser stands, and the steps it takes."""

    def __init__(self, grammar: CompiledGrammar, start: str, *, on_bad_rule: Callable[[str], None]) -> None:
        self._grammar = grammar
        self._parser = grammar.parser.parse_interactive(start=start)
        self._on_bad_rule = on_bad_rule
        self._fired: list[str] = []  # bad_* rules reduced by the current Lark step
        state = self._parser.parser_state
        self._silent, quiet_conf = _shared_confs(grammar.name, start, state.parse_conf)
        quiet, bad = _callback_plan(grammar.name, start)
        if bad:  # this cursor's own reporters for the bad_* rules
            conf = copy(state.parse_conf)  # no tree: each rule's callback discards its children
            conf.callbacks = {**quiet, **{rule: self._bad(name) for rule, name in bad}}
            state.parse_conf = conf
        else:  # nothing to report: one configuration serves every cursor (it is never changed)
            state.parse_conf = quiet_conf
        self.stack: Stack = tuple(state.state_stack)

    def accepts(self) -> frozenset[str]:
        """The terminals the parser accepts now."""
        stack = self.stack
        if len(stack) <= CACHED_DEPTH:  # the common case, looked up here: it runs per token
            accepted = _ACCEPTS.get((self._grammar.name, stack))
            if accepted is not None:
                return accepted
        return cached_accepts(self._grammar.name, self._parser, stack)

    def shift(self, name: str, text: str) -> None:
        """Feed one token (the caller checked it is accepted)."""
        key = (self._grammar.name, self.stack, name)
        step = _STEPS.get(key)
        if step is None:
            self._fired = []
            self._parser.feed_token(Token(name, text))
            step = (tuple(self._parser.parser_state.state_stack), tuple(self._fired))
            if len(self.stack) <= CACHED_DEPTH:
                if len(_STEPS) >= _TABLE_LIMIT:
                    _STEPS.clear()
                _STEPS[key] = step
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

    def accepts_at(self, stack: Stack) -> frozenset[str]:
        """The terminals the parser would accept in the state ``stack`` (it stays where it is)."""
        here = self.stack
        self.restore(stack)
        accepted = self.accepts()
        self.restore(here)
        return accepted

    def accepts_after(self, name: str) -> frozenset[str]:
        """What the parser would accept after ``name`` (a trial on a copy, callbacks off)."""
        trial = self._parser.copy(deepcopy_values=False)
        trial.parser_state.parse_conf = self._silent
        trial.feed_token(Token(name, ""))
        return frozenset(trial.accepts())

    def finish(self) -> None:
        """Feed the end of input: the ``bad_*`` rules it reduces are reported (remembered per
        stack, like the steps)."""
        key = (self._grammar.name, self.stack, "$END")
        step = _STEPS.get(key)
        if step is None:
            self._fired = []
            try:
                self._parser.feed_eof()
            except UnexpectedInput:  # a stop marker then more text: kept as content already
                return
            step = (self.stack, tuple(self._fired))
            if len(self.stack) <= CACHED_DEPTH:
                if len(_STEPS) >= _TABLE_LIMIT:
                    _STEPS.clear()
                _STEPS[key] = step
        for rule in step[1]:
            self._on_bad_rule(rule)

    def _bad(self, rule: str) -> Callable[[list[Any]], None]:
        def reduced(children: list[Any]) -> None:
            self._fired.append(rule)

        return reduced


def cached_accepts(grammar_name: str, parser: Any, stack: Stack | None = None) -> frozenset[str]:
    """The terminals a Lark interactive ``parser`` accepts, remembered per state stack."""
    if stack is None:
        stack = tuple(parser.parser_state.state_stack)
    if len(stack) > CACHED_DEPTH:
        return frozenset(parser.accepts())
    key = (grammar_name, stack)
    accepted = _ACCEPTS.get(key)
    if accepted is None:
        if len(_ACCEPTS) >= _TABLE_LIMIT:
            _ACCEPTS.clear()
        accepted = _ACCEPTS[key] = frozenset(parser.accepts())
    return accepted


_CONFS: dict[tuple[str, str], tuple[Any, Any]] = memo({})


def _shared_confs(grammar_file: str, start: str, conf: Any) -> tuple[Any, Any]:
    """Per grammar and start: a parse configuration with no callbacks at all (trial steps), and
    one whose callbacks discard every rule's children (no tree)."""
    key = (grammar_file, start)
    shared = _CONFS.get(key)
    if shared is None:
        silent = copy(conf)
        silent.callbacks = {}
        quiet = copy(conf)
        quiet.callbacks = dict(_callback_plan(grammar_file, start)[0])
        shared = _CONFS[key] = (silent, quiet)
    return shared


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
