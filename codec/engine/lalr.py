"""``LalrCursor``: a format's Lark LALR parser, stepped one token at a time.

The stream engine asks it two things: which terminals the parser accepts now, and to shift a
token. An LALR step depends only on the state stack and the terminal, so each configuration (a
state stack) the parsers of a process reach becomes one shared ``_Config``, which remembers what
it accepts and where each terminal leads. Lark runs a step once per process; after that a step
is an attribute lookup and a ``dict.get``, and a parser that only replays remembered steps never
builds a Lark parser at all — a new parser costs next to nothing. Values are not kept (the
builder, not a tree, is the output; whole prompts, which need Lark's tree, take their own path
in ``whole_prompt.py``).

The table of configurations is process-wide and bounded: a configuration is remembered only
while its stack is at most ``CACHED_DEPTH`` states deep (deeper stacks come from deeply nested
values, whose keys would grow with the nesting), and a table that reaches ``_TABLE_LIMIT``
entries starts afresh (configurations already in use keep working; they are just not found
again).
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

_TABLE_LIMIT = 20_000
CACHED_DEPTH = 256
"""Deepest stack whose configuration is remembered: memory stays below limit x depth integers."""


class _Config:
    """One parser configuration, shared by every cursor that reaches it."""

    __slots__ = ("accepted", "end", "notes", "remembered", "stack", "steps")

    def __init__(self, stack: Stack, remembered: bool) -> None:
        self.stack = stack
        self.remembered = remembered  # in the table: what is learnt about it is kept
        self.accepted: frozenset[str] | None = None  # the terminals it accepts, once asked
        self.steps: dict[str, tuple[_Config, tuple[str, ...]]] = {}  # terminal -> (next, bad rules)
        self.end: tuple[str, ...] | None = None  # the bad rules the end of input reduces, once fed
        # What the cursor's user works out from this configuration, kept with it (the stream
        # engine's ``_Facts`` of what it accepts): one attribute read per piece, not a lookup.
        self.notes: Any = None


_CONFIGS: dict[tuple[str, Stack], _Config] = memo({})
_INITIAL: dict[tuple[str, str], Stack] = memo({})  # (grammar, start) -> the stack a parse starts in


def _config_of(grammar_name: str, stack: Stack) -> _Config:
    if len(stack) > CACHED_DEPTH:
        return _Config(stack, remembered=False)
    key = (grammar_name, stack)
    config = _CONFIGS.get(key)
    if config is None:
        if len(_CONFIGS) >= _TABLE_LIMIT:
            _CONFIGS.clear()
        config = _CONFIGS[key] = _Config(stack, remembered=True)
    return config


class LalrCursor:
    """One parse: where the parser stands, and the steps it takes."""

    def __init__(self, grammar: CompiledGrammar, start: str, *, on_bad_rule: Callable[[str], None]) -> None:
        self._grammar = grammar
        self._start = start
        self._on_bad_rule = on_bad_rule
        self._fired: list[str] = []  # bad_* rules reduced by the current Lark step
        self._parser: Any = None  # Lark's interactive parser: made when a step is not yet known
        self._lark_at: Stack | None = None  # the stack Lark's parser stands at (None: unknown)
        initial = _INITIAL.get((grammar.name, start))
        if initial is None:
            initial = _INITIAL[(grammar.name, start)] = tuple(self._lark().parser_state.state_stack)
        # Where the parser stands. Read it (its ``notes``), never assign it: ``shift`` and
        # ``restore`` move it.
        self.config = _config_of(grammar.name, initial)

    @property
    def stack(self) -> Stack:
        """The state stack: a point to come back to with ``restore``."""
        return self.config.stack

    def accepts(self) -> frozenset[str]:
        """The terminals the parser accepts now."""
        accepted = self.config.accepted
        if accepted is None:
            accepted = frozenset(self._synced().accepts())
            self.config.accepted = accepted
        return accepted

    def shift(self, name: str, text: str) -> None:
        """Feed one token (the caller checked it is accepted)."""
        step = self.config.steps.get(name)
        if step is None:
            step = self._step(name, text)
        self.config = step[0]
        for rule in step[1]:
            self._on_bad_rule(rule)

    def restore(self, stack: Stack) -> None:
        """Put the parser back in the state ``stack`` (a rollback point)."""
        if stack != self.config.stack:
            self.config = _config_of(self._grammar.name, stack)

    def accepts_at(self, stack: Stack) -> frozenset[str]:
        """The terminals the parser would accept in the state ``stack`` (it stays where it is)."""
        here = self.config
        self.restore(stack)
        accepted = self.accepts()
        self.config = here
        return accepted

    def accepts_after(self, name: str) -> frozenset[str]:
        """What the parser would accept after ``name`` (it stays where it is; nothing is reported)."""
        here = self.config
        step = here.steps.get(name) or self._step(name, "")
        self.config = step[0]
        accepted = self.accepts()
        self.config = here
        return accepted

    def finish(self) -> None:
        """Feed the end of input: the ``bad_*`` rules it reduces are reported (remembered per
        configuration, like the steps)."""
        config = self.config
        fired = config.end
        if fired is None:
            parser = self._synced()
            self._fired = []
            self._lark_at = None  # the end moves Lark's parser on, whatever happens
            try:
                parser.feed_eof()
            except UnexpectedInput:  # a stop marker then more text: kept as content already
                return
            fired = tuple(self._fired)
            if config.remembered:
                config.end = fired
        for rule in fired:
            self._on_bad_rule(rule)

    def _step(self, name: str, text: str) -> tuple[_Config, tuple[str, ...]]:
        """Run a step through Lark (the first time this configuration takes this terminal)."""
        config = self.config
        parser = self._synced()
        self._fired = []
        self._lark_at = None  # should Lark raise, its state is unknown
        parser.feed_token(Token(name, text))
        stack = tuple(parser.parser_state.state_stack)
        self._lark_at = stack
        step = (_config_of(self._grammar.name, stack), tuple(self._fired))
        if config.remembered:
            config.steps[name] = step
        return step

    def _synced(self) -> Any:
        """Lark's parser, standing where this cursor stands."""
        parser = self._parser or self._lark()
        stack = self.config.stack
        if self._lark_at is not stack:
            state = parser.parser_state
            state.state_stack[:] = stack
            values, size = state.value_stack, len(stack) - 1
            if len(values) > size:
                del values[size:]
            else:
                values.extend([None] * (size - len(values)))
            self._lark_at = stack
        return parser

    def _lark(self) -> Any:
        """Make this cursor's Lark interactive parser (reporting ``bad_*`` rules, no tree)."""
        grammar, start = self._grammar, self._start
        parser = grammar.parser.parse_interactive(start=start)
        state = parser.parser_state
        quiet, bad = _callback_plan(grammar.name, start)
        if bad:  # this cursor's own reporters for the bad_* rules
            conf = copy(state.parse_conf)  # no tree: each rule's callback discards its children
            conf.callbacks = {**quiet, **{rule: self._bad(name) for rule, name in bad}}
            state.parse_conf = conf
        else:  # nothing to report: one configuration serves every cursor (it is never changed)
            state.parse_conf = _quiet_conf(grammar.name, start, state.parse_conf)
        self._parser = parser
        self._lark_at = tuple(state.state_stack)
        return parser

    def _bad(self, rule: str) -> Callable[[list[Any]], None]:
        def reduced(children: list[Any]) -> None:
            self._fired.append(rule)

        return reduced


def cached_accepts(grammar_name: str, parser: Any) -> frozenset[str]:
    """The terminals a Lark interactive ``parser`` accepts, remembered per state stack."""
    stack = tuple(parser.parser_state.state_stack)
    config = _config_of(grammar_name, stack)
    accepted = config.accepted
    if accepted is None:
        accepted = frozenset(parser.accepts())
        if config.remembered:
            config.accepted = accepted
    return accepted


_CONFS: dict[tuple[str, str], Any] = memo({})


def _quiet_conf(grammar_file: str, start: str, conf: Any) -> Any:
    """Per grammar and start: a parse configuration whose callbacks discard every rule's
    children (no tree), shared by the cursors of grammars without ``bad_*`` rules."""
    key = (grammar_file, start)
    quiet = _CONFS.get(key)
    if quiet is None:
        quiet = _CONFS[key] = copy(conf)
        quiet.callbacks = dict(_callback_plan(grammar_file, start)[0])
    return quiet


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
