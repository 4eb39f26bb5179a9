"""The turn around the calls, taken from the format's own grammar (``grammars/*.lark``).

The completion rule (``assistant_turn``) is read as Lark compiles it (plain BNF), and then:

1. malformed variants go (``BAD_*`` terminals, ``bad_*`` rules): a constraint admits only
   well-formed output;
2. the generation prompt is taken off the front: the grammar is *derived* by each of the
   prompt's terminals (``<|assistant|>``, ``<think>``, ...), leaving what may follow it;
3. the call count and the stop are tracked by intersecting with a small automaton whose state
   is (calls so far: 0, 1, 2+; stopped): ``tool_call`` steps the count, a stop token stops, and
   nothing may follow a stop (the engine ends generation there). The accepting states follow
   ``tool_choice`` and ``parallel_tool_calls``;
4. terminals are written in llguidance's dialect: markers as special tokens, free text as
   marker-free text, other patterns as literals or regexes; ``tool_call`` becomes the rule the
   family's call syntax builds (``Family.constraint``).

Longer than ~300 lines: the four steps work on one private form of the grammar (rules as
tuples of symbols); split across modules, that form would become an interface to keep stable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

from lark.load_grammar import load_grammar

from codec._resources import read_text
from codec.constrain.lark import Builder, free_text, literal, regex, special_token
from codec.engine.grammar import COMPLETION_START, compiled
from codec.errors import CodecError

CALL = "tool_call"
"""The rule of one call in every grammar (the builder's contract with the grammars, too)."""

Expansion = tuple[str, ...]
Rules = dict[str, list[Expansion]]


@dataclass(frozen=True)
class Bnf:
    """A grammar as plain BNF: rules by nonterminal; ``terminals`` names every terminal."""

    rules: Rules
    terminals: frozenset[str]


@cache
def completion_bnf(grammar_file: str) -> Bnf:
    """The completion rule of ``grammar_file`` as BNF, without malformed variants and without
    the insides of ``tool_call`` (the family's call syntax replaces them)."""
    grammar, _ = load_grammar(read_text("grammars", grammar_file), grammar_file, [], False)  # type: ignore[no-untyped-call,unused-ignore]
    terminal_defs, rules, _ = grammar.compile([COMPLETION_START], set())
    terminals = frozenset(term.name for term in terminal_defs) | frozenset(compiled(grammar_file).free_text)
    bnf: Rules = {}
    for rule in rules:
        symbols = tuple(symbol.name for symbol in rule.expansion)
        if rule.origin.name == CALL or any(_malformed(symbol) for symbol in symbols):
            continue
        bnf.setdefault(rule.origin.name, []).append(symbols)
    bnf[CALL] = []  # an event symbol: see Automaton
    free = compiled(grammar_file).free_text
    aliases = {name: _repeated_free_text(expansions, name, free) for name, expansions in bnf.items()}
    renamed = {
        name: [tuple(aliases.get(s) or s for s in expansion) for expansion in expansions]
        for name, expansions in bnf.items()
        if aliases[name] is None
    }
    return Bnf(_productive(renamed, terminals | {CALL}), terminals)


def _malformed(symbol: str) -> bool:
    return symbol.startswith("BAD_") or symbol.lstrip("_").startswith("bad_")


def _repeated_free_text(expansions: list[Expansion], name: str, free: frozenset[str]) -> str | None:
    """``X*`` of a free-text terminal ``X`` (``X | self X``) is ``X`` itself: text is one lexeme."""
    if len(expansions) != 2:
        return None
    single = [e for e in expansions if len(e) == 1]
    double = [e for e in expansions if len(e) == 2 and e[0] == name]
    if single and double and single[0][0] in free and double[0][1] == single[0][0]:
        return single[0][0]
    return None


def _productive(rules: Rules, terminals: Iterable[str]) -> Rules:
    """``rules`` without the expansions that can derive no text."""
    good = _derivable(rules, set(terminals))
    return {
        name: [e for e in expansions if all(s in good for s in e)]
        for name, expansions in rules.items()
        if name in good or name == CALL
    }


def _nullable(rules: Rules) -> set[str]:
    return _derivable(rules, set())


def _derivable(rules: Rules, known: set[str]) -> set[str]:
    """``known`` and every rule with an expansion made only of known symbols, to a fixpoint
    (from the terminals: the productive rules; from nothing: the nullable ones)."""
    changed = True
    while changed:
        changed = False
        for name, expansions in rules.items():
            if name not in known and any(all(s in known for s in e) for e in expansions):
                known.add(name)
                changed = True
    return known


def _first(rules: Rules, terminals: frozenset[str]) -> dict[str, set[str]]:
    nullable = _nullable(rules)
    first: dict[str, set[str]] = {name: set() for name in rules}
    changed = True
    while changed:
        changed = False
        for name, expansions in rules.items():
            for expansion in expansions:
                for symbol in expansion:
                    more = {symbol} if symbol in terminals else first.get(symbol, set())
                    if not more <= first[name]:
                        first[name] |= more
                        changed = True
                    if symbol not in nullable:
                        break
    return first


def derive(rules: Rules, start: str, terminal: str, terminals: frozenset[str]) -> tuple[Rules, str]:
    """The grammar of what may follow ``terminal`` at the start of ``start``: every expansion
    with the terminal taken off its front (through nullable symbols), rules made as needed."""
    rules = dict(rules)
    nullable = _nullable(rules)
    todo = [start]
    made: set[str] = set()
    while todo:
        name = todo.pop()
        derived = f"{name}/{terminal}"
        if derived in made:
            continue
        made.add(derived)
        found: list[Expansion] = []
        for expansion in rules.get(name, []):
            for index, symbol in enumerate(expansion):
                rest = expansion[index + 1 :]
                if symbol == terminal:
                    found.append(rest)
                elif symbol not in terminals and symbol != CALL:
                    found.append((f"{symbol}/{terminal}", *rest))
                    todo.append(symbol)
                if symbol not in nullable:
                    break
        rules[derived] = found
    derived_start = f"{start}/{terminal}"
    # a derived rule never made (its symbol cannot start with the terminal) derives nothing
    for name in list(rules):
        for expansion in rules[name]:
            for symbol in expansion:
                if "/" in symbol and symbol not in rules:
                    rules[symbol] = []
    pruned = _productive(rules, terminals | {CALL})
    if derived_start not in pruned:
        raise CodecError(f"the generation prompt does not fit the grammar at {terminal}")
    return pruned, derived_start


@lru_cache(maxsize=256)
def turn(grammar_file: str, prompt: str, stops: frozenset[str], allowed: frozenset[int]) -> tuple[Rules, str]:
    """The completion grammar after ``prompt``, intersected with the automaton (``counted``);
    cached, as a server builds many constraints for the same prompt."""
    rules, start = after_prompt(grammar_file, prompt)
    bnf = completion_bnf(grammar_file)
    return counted(rules, start, bnf.terminals, stops, allowed, compiled(grammar_file).free_text)


def after_prompt(grammar_file: str, prompt: str) -> tuple[Rules, str]:
    """The completion grammar of ``grammar_file`` after the generation prompt ``prompt``."""
    bnf = completion_bnf(grammar_file)
    grammar = compiled(grammar_file)
    rules, start = bnf.rules, COMPLETION_START
    position = 0
    markers = sorted(grammar.scanned, key=len, reverse=True)  # other spellings too (``NAME__X``)
    while position < len(prompt):
        marker = next((m for m in markers if prompt.startswith(m, position)), None)
        if marker is not None:
            terminal, length = grammar.scanned[marker], len(marker)
        else:
            terminal, length = _pattern_at(grammar_file, rules, start, prompt, position, bnf.terminals)
        rules, start = derive(rules, start, terminal, bnf.terminals)
        position += length
    return rules, start


def _pattern_at(
    grammar_file: str, rules: Rules, start: str, prompt: str, position: int, terminals: frozenset[str]
) -> tuple[str, int]:
    """The pattern terminal the grammar accepts next that matches longest at ``position``."""
    grammar = compiled(grammar_file)
    candidates = _first(rules, terminals).get(start, set())
    best: tuple[str, int] | None = None
    for name in sorted(candidates):
        pattern = grammar.patterns.get(name)
        found = pattern.regex.match(prompt, position) if pattern is not None else None
        if found is not None and found.end() > position and (best is None or found.end() - position > best[1]):
            best = (name, found.end() - position)
    if best is None:
        raise CodecError(f"the generation prompt {prompt!r} does not fit the grammar {grammar_file} at {position}")
    return best


State = tuple[int, bool, bool]  # calls so far (2 stands for "two or more"), stopped, after free text
STATES: tuple[State, ...] = tuple(
    (calls, stopped, after_text) for stopped in (False, True) for calls in range(3) for after_text in (False, True)
)


def _after(
    state: State, symbol: str, stops: frozenset[str], terminals: frozenset[str], free: frozenset[str]
) -> State | None:
    calls, stopped, after_text = state
    if stopped:
        return None
    if symbol == CALL:
        return (min(calls + 1, 2), False, False)
    if symbol in stops:
        return (calls, True, False)
    if symbol in free:
        # two runs of free text side by side would be two lexemes, and the second could
        # complete a marker the first began: a run of text is one lexeme
        return None if after_text else (calls, False, True)
    return (calls, False, False) if symbol in terminals else None


def _can_reach(state: State, end: State) -> bool:
    return end[0] >= state[0] and end[1] >= state[1]


def _label(symbol: str, begin: State, end: State) -> str:
    return f"{symbol}@{''.join(str(int(x)) for x in (*begin, *end))}"


def counted(
    rules: Rules,
    start: str,
    terminals: frozenset[str],
    stops: frozenset[str],
    allowed: frozenset[int],
    free: frozenset[str],
) -> tuple[Rules, str]:
    """``rules`` intersected with the automaton: a text whose number of calls is in ``allowed``
    (0, 1, 2 = two or more), in which nothing follows a stop token and no run of free text
    follows another."""
    out: Rules = {}
    todo: list[tuple[str, State, State]] = []

    def name_of(symbol: str, begin: State, end: State) -> str:
        name = _label(symbol, begin, end)
        if name not in out:
            out[name] = []
            todo.append((symbol, begin, end))
        return name

    top = "start"
    out[top] = []
    for end in STATES:
        if end[0] in allowed:
            out[top].append((name_of(start, (0, False, False), end),))
    while todo:
        symbol, begin, end = todo.pop()
        name = _label(symbol, begin, end)
        for expansion in rules.get(symbol, []):
            for path in _paths(expansion, begin, end, stops, terminals, free):
                out[name].append(
                    tuple(
                        s if s in terminals or s == CALL else name_of(s, a, b)
                        for s, (a, b) in zip(expansion, path, strict=True)
                    )
                )
    return _productive(out, terminals | {CALL}), top


def _paths(
    expansion: Expansion,
    begin: State,
    end: State,
    stops: frozenset[str],
    terminals: frozenset[str],
    free: frozenset[str],
) -> list[list[tuple[State, State]]]:
    """Every way to walk the automaton from ``begin`` to ``end`` along ``expansion``: a (from,
    to) pair per symbol."""
    if not expansion:
        return [[]] if begin == end else []
    steps: list[list[tuple[State, State]]] = [[]]
    for symbol in expansion:
        grown: list[list[tuple[State, State]]] = []
        for walked in steps:
            here = walked[-1][1] if walked else begin
            if symbol in terminals or symbol == CALL:
                after = _after(here, symbol, stops, terminals, free)
                nexts = [] if after is None else [after]
            else:
                nexts = [s for s in STATES if _can_reach(here, s)]
            grown += [[*walked, (here, state)] for state in nexts if _can_reach(state, end)]
        steps = grown
    return [walked for walked in steps if walked[-1][1] == end]


def emit(
    builder: Builder, rules: Rules, start: str, grammar_file: str, call_rule: str, markers: tuple[str, ...]
) -> str:
    """Write ``rules`` into ``builder``: the name of the start rule."""
    grammar = compiled(grammar_file)
    names: dict[str, str] = {}
    by_terminal = {name: text for text, name in grammar.markers.items()}
    # Another spelling that is a token of its own, not the marker with white space
    # (Llama 3's <|eom_id|> for <|eot_id|>): either may be written.
    others: dict[str, tuple[str, ...]] = {}
    for text, name in grammar.scanned.items():
        if text not in grammar.markers and text == text.strip():
            others[name] = (*others.get(name, ()), text)

    def symbol(name: str) -> str:
        if name == CALL:
            return call_rule
        if name in grammar.free_text:
            return _free_text(builder, grammar_file, markers)
        if name in by_terminal:
            return _marker(by_terminal[name], others.get(name, ()))
        if name in grammar.patterns:
            return _pattern(grammar_file, name)
        if name not in names:
            names[name] = builder.fresh(name.split("/")[0].split("@")[0])
        return names[name]

    order = [start, *[n for n in rules if n != start]]
    for name in order:
        alternatives = [" ".join(symbol(s) for s in expansion) or '""' for expansion in rules[name]]
        builder.define(symbol(name), " | ".join(dict.fromkeys(alternatives)))
    return symbol(start)


def _free_text(builder: Builder, grammar_file: str, markers: tuple[str, ...]) -> str:
    """Free text; where a call opens with no marker (Llama 3's bare object: ``CALL_OPEN`` a
    pattern), text that begins as the opener does is a call's, never free text: what would
    separate the two is gone. So is text that begins as another opener the parser reads by
    what follows it (an ``*_OPEN`` pattern that looks ahead: Mistral v0.3's list of calls
    written without its ``[TOOL_CALLS]``, ``[{"name": …``)."""
    text = free_text(builder, markers)
    starts = _openings(grammar_file)
    if not starts:
        return text
    excluded = " & ".join(f"~{regex(start + '(?s:.*)')}" for start in starts)
    return builder.terminal("OPEN_TEXT", f"{builder.rules[text]} & {excluded}")


def _openings(grammar_file: str) -> tuple[str, ...]:
    """The regexes of the text free text may not begin with (``_free_text``): the first
    character of a pattern ``CALL_OPEN``, and each other ``*_OPEN`` pattern that looks ahead,
    its look-ahead read as text."""
    patterns = compiled(grammar_file).patterns
    opener = patterns.get("CALL_OPEN")
    starts = [opener.first.pattern] if opener is not None and opener.first is not None else []
    starts += [
        pattern.regex.pattern.replace("(?=", "(?:")
        for name, pattern in patterns.items()
        if name != "CALL_OPEN" and name.endswith("_OPEN") and pattern.body is not None
    ]
    return tuple(starts)


def _marker(text: str, others: tuple[str, ...] = ()) -> str:
    """A marker as a special token, after any white space the grammar writes with it (or one
    of its ``others``, tokens read as the same marker)."""
    token = text.lstrip()
    lead = text[: len(text) - len(token)]
    one = f"{literal(lead)} {special_token(token)}" if lead else special_token(token)
    return f"({' | '.join([one, *map(special_token, others)])})" if others else one


def _pattern(grammar_file: str, name: str) -> str:
    pattern = compiled(grammar_file).patterns[name]
    if pattern.literal is not None:
        return literal(pattern.literal)
    source = pattern.regex.pattern
    if re.search(r"\(\?<?[=!]", source):
        raise CodecError(f"terminal {name} of {grammar_file} uses a look-around llguidance cannot run")
    return regex(source)


def pattern_source(grammar_file: str, name: str) -> str:
    """The regex of a pattern terminal of ``grammar_file`` (Python syntax, which for these
    grammars' patterns Rust's regex reads the same)."""
    pattern = compiled(grammar_file).patterns[name]
    if pattern.literal is not None:
        return re.escape(pattern.literal)
    return pattern.regex.pattern


__all__ = ["CALL", "after_prompt", "counted", "emit", "pattern_source", "turn"]
