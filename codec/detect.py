"""Which format a chat template is written for: ``codec.detect(template_text)``.

Two ways, tried in order:

1. **by hash**: the template is byte-identical to one codec ships (the sha256 of each
   ``templates/*.jinja`` of the registry, computed from the files on first use);
2. **by tokens**: the template writes one grammar's special tokens — its call opener (the
   ``CALL_OPEN`` terminal, which the builder requires of every grammar) and at least half of the
   markers no other grammar has. Markers shared by grammars (``<|think|>``, ``<|image|>``) prove
   nothing and are not counted, nor are bos and eos (a template is given them as variables);
   requiring half keeps out templates of other models that happen to use a few of the same
   tags (Qwen writes ``<tool_call>``, ``<think>`` and ``<tool_response>`` too). A grammar with no
   marker of its own (Qwen3's are GLM's or Qwen3-Coder's too) needs, against each grammar with
   its call opener, half of the markers that one lacks (Qwen3's ``<|im_start|>`` against GLM, its
   ``<think>`` against Qwen3-Coder), or its call opener and no other format's marker at all. A grammar with no
   marker of its own (Qwen3's are GLM's and Qwen3-Coder's too) is recognised by its call opener
   alone, where no other grammar's own marker is found. A grammar whose call opens with no
   marker (Llama 3's bare object: ``CALL_OPEN`` is a pattern) is recognised by its own markers.

Formats that share a grammar (``glm`` and ``glm-effort``) write the same tokens; they are told
apart by the options their templates read (``jinja2.meta``): the format whose bundled template
reads the most similar set of variables wins (Jaccard index; ties go to the bundled template
whose lines are closest, then to registry order, so a template that reads none of them is the
plain variant: MiniMax-M2's revisions, and ``mistral`` and ``mistral-large-3``, read the same
variables and differ in their text).
glm-effort's template reads ``regular``, ``mode`` and ``thinking_level`` for its personas;
GLM's reads only ``reasoning_effort`` and ``clear_thinking``. Every marker comes from the
compiled grammars, none is written here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from codec._detect_variant import choose as choose_variant
from codec._resources import read_text
from codec.engine.grammar import compiled
from codec.errors import RenderError, UnknownTemplateError
from codec.registry import FORMATS, FormatSpec
from codec.template_files import check_template_text

_CALL_OPEN = "CALL_OPEN"
_CALLS_OPEN = "CALLS_OPEN"


@dataclass(frozen=True, slots=True)
class Detection:
    """What ``detect`` recognised: the ``format`` name, ``how`` (``"hash"``: byte-identical to
    a bundled template; ``"tokens"``: by the special tokens it writes) and the ``evidence`` (the
    bundled template's file name, or the markers found and the options that chose the variant)."""

    format: str
    how: Literal["hash", "tokens"]
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Markers:
    """What the tokens rule looks for in one grammar's templates."""

    formats: tuple[FormatSpec, ...]  # the registered formats that use this grammar
    call_open: str | None  # None: the call opens with no marker (Llama 3's bare JSON object)
    distinctive: tuple[str, ...]  # markers no other grammar has, in grammar order
    # With none (Qwen3's): per grammar with the same call opener, the markers that one lacks.
    rivals: tuple[tuple[str, ...], ...] = ()
    beyond: tuple[str, ...] = ()  # with no rival either (Kimi K2's, all Kimi K2.5's): ``_beyond``


def detect(template: str) -> Detection:
    """The format ``template`` (a chat template's text) is written for, and how it was told.

    ``UnknownFormatError`` (an ``UnknownTemplateError``) when it is neither a bundled template
    nor writes any format's tokens; its message lists what was looked for.
    ``TemplateTooLargeError`` (a ``RenderError``) past ``MAX_TEMPLATE_SIZE`` characters.
    """
    return recognise(template, "the chat template")


def recognise(template: str, where: str) -> Detection:
    """``detect``, with ``where`` (a path, say) named in the error."""
    if not isinstance(template, str):
        raise RenderError(f"detect() takes the chat template's text (a str), got {type(template).__name__}")
    check_template_text(template, where)  # searched and compiled whole: bounded like a file
    by_hash = _by_hash(template)
    if by_hash is not None:
        return by_hash
    groups = _marker_groups(tuple((spec.name, spec.grammar) for spec in FORMATS.values()))
    every = frozenset(marker for group in groups for marker in (*group.distinctive, *_flat(group.rivals)))
    text = spelled_out(template)
    scored = [
        (scoring[0], *_written(text, group), scoring[1], group)
        for group in groups
        if (scoring := _scored(text, group, every)) is not None
    ]
    if not scored:
        raise UnknownTemplateError(where, _looked_for(text, groups))
    # Ties go to the grammar that writes the most of the template's tokens: one whose markers
    # hold another's (Qwen3.5's hold Qwen3's and Qwen3-Coder's) explains more of it; then to the
    # one with fewest tokens the template never writes (GLM-4.5's grammar before GLM-5's, whose
    # effort and media tokens GLM-4.5's template lacks).
    _, _, _, found, group = max(scored, key=lambda entry: entry[:3])
    spec, deciding = choose_variant(template, group.formats)
    return Detection(spec.name, "tokens", found + deciding)


_SET_STRING = re.compile(r"""\{%-?\s*set\s+(\w+)\s*=\s*(?:'([^'\\{}%]*)'|"([^"\\{}%]*)")\s*-?%\}""")


def spelled_out(template: str) -> str:
    """``template`` with ``' + name + '`` replaced by the string a variable set once (``{%- set
    name = '…' -%}``) holds: a token written from pieces (DeepSeek-V3.2's ``'<' + dsml_token +
    'invoke name="'``) is found whole."""
    found = _SET_STRING.findall(template)
    names = [name for name, _, _ in found]
    for name, single, double in (entry for entry in found if names.count(entry[0]) == 1):
        template = template.replace(f"' + {name} + '", single or double).replace(f'" + {name} + "', single or double)
    return template


def _by_hash(template: str) -> Detection | None:
    digest = _sha256(template)
    for spec in FORMATS.values():  # registry order: a bundled format before a copy of it
        if _shipped_sha256(spec.template) == digest:
            return Detection(spec.name, "hash", (spec.template,))
    return None


def _sha256(text: str) -> str:
    # A lone surrogate is no shipped template's text: hashed as written, it matches none.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@cache
def _shipped_sha256(file: str) -> str:
    return _sha256(read_text("templates", file))


@cache
def _marker_groups(registry: tuple[tuple[str, str], ...]) -> tuple[_Markers, ...]:
    """One entry per distinct grammar of the registry; ``registry`` (its names and grammars)
    keys the cache, so a format registered at run time makes a new entry."""
    tokens = {grammar: evidence(grammar) for grammar in dict.fromkeys(g for _, g in registry)}
    openers = {grammar: _opener(grammar) for grammar in tokens}
    groups = []
    for grammar, own in tokens.items():
        others = {token for name, theirs in tokens.items() if name != grammar for token in theirs}
        markers = compiled(grammar).scanned  # a token read as another marker (<|eom_id|>) too
        formats = tuple(spec for spec in FORMATS.values() if spec.grammar == grammar)
        # bos and eos reach a template as variables (`{{ bos_token }}`): their text is not in it
        passed_in = {token for spec in formats for token in (spec.bos_token, spec.eos_token)}
        distinctive = tuple(text for text in markers if text in own and text not in others | passed_in)
        rivals = () if distinctive else _rivals(grammar, tokens, openers, passed_in)
        beyond = () if distinctive or rivals else _beyond(grammar, tokens, openers)
        groups.append(_Markers(formats, openers[grammar], distinctive, rivals, beyond))
    return tuple(groups)


_MEDIA_RULES = frozenset({"image", "audio", "video"})  # the rules ``codec.formats._prompt.MediaRules`` reads


def evidence(grammar: str) -> tuple[str, ...]:
    """The special tokens that tell a grammar's templates apart: all but its media placeholders
    (rules ``image``, ``audio``, ``video``), which vision models of other call syntaxes write
    alike (Qwen3-VL's Hermes JSON and Qwen3.5's XML calls share ``<|vision_start|>``)."""
    found = compiled(grammar)
    media = {
        symbol.name for rule in found.parser.rules if rule.origin.name in _MEDIA_RULES for symbol in rule.expansion
    }
    return tuple(text for text in found.special_tokens if found.markers.get(text, found.scanned.get(text)) not in media)


def _opener(grammar: str) -> str | None:
    """The call opener's marker; where the call opens with a pattern, the marker that opens the
    list of calls it stands in (``CALLS_OPEN``: Mistral v0.3's ``[TOOL_CALLS]`` before
    ``[{"name": …}]``); ``None`` where nothing but text opens it (Llama 3's bare
    ``{"name": …}``): such a grammar is told by its own markers alone."""
    markers = compiled(grammar).markers.items()
    found = next((text for text, terminal in markers if terminal == _CALL_OPEN), None)
    return found or next((text for text, terminal in markers if terminal == _CALLS_OPEN), None)


def _rivals(
    grammar: str, tokens: dict[str, tuple[str, ...]], openers: dict[str, str | None], passed_in: set[str | None]
) -> tuple[tuple[str, ...], ...]:
    """For a grammar with no marker of its own: per other grammar with the same call opener, the
    markers this one has and that one lacks (Qwen3 against GLM: ``<|im_start|>``, ...)."""
    own = [text for text in compiled(grammar).markers if text in tokens[grammar] and text not in passed_in]
    rivals = (
        theirs
        for name, theirs in tokens.items()
        if name != grammar and openers[grammar] is not None and openers[name] == openers[grammar]
    )
    return tuple(found for theirs in rivals if (found := tuple(text for text in own if text not in theirs)))


def _beyond(grammar: str, tokens: dict[str, tuple[str, ...]], openers: dict[str, str | None]) -> tuple[str, ...]:
    """The markers of grammars with its call opener that hold all of its own, beyond those."""
    mine = set(tokens[grammar])
    wider = (
        theirs
        for name, theirs in tokens.items()
        if name != grammar and openers[grammar] is not None and openers[name] == openers[grammar]
    )
    return tuple(dict.fromkeys(text for theirs in wider if mine <= set(theirs) for text in theirs if text not in mine))


def _written(template: str, group: _Markers) -> tuple[int, int]:
    """How many of the group's special tokens ``template`` writes, and less how many it does not."""
    tokens = compiled(group.formats[0].grammar).special_tokens
    written = sum(token in template for token in tokens)
    return written, written - len(tokens)


def _flat(rivals: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    return tuple(marker for markers in rivals for marker in markers)


def _scored(template: str, group: _Markers, every: frozenset[str]) -> tuple[float, tuple[str, ...]] | None:
    """How well ``template`` matches the group (the share of its markers found) and the
    evidence, or ``None``. A grammar with no marker of its own needs, against each grammar with
    its call opener, half of the markers that one lacks; or its call opener and no other marker."""
    if group.distinctive:
        found = _found(template, group)
        return (sum(marker in group.distinctive for marker in found) / len(group.distinctive), found) if found else None
    if group.call_open is None or group.call_open not in template:
        return None
    if group.beyond:  # told by its call opener and none of the markers the wider grammars add
        return None if any(marker in template for marker in group.beyond) else (0.0, (group.call_open,))
    if not any(marker in template for marker in every - {group.call_open}):
        return 0.0, (group.call_open,)
    shares = [sum(marker in template for marker in markers) / len(markers) for markers in group.rivals]
    if not shares or min(shares) < 0.5:
        return None
    found = tuple(dict.fromkeys(marker for marker in _flat(group.rivals) if marker in template))
    return min(shares), (group.call_open, *found)


def _found(template: str, group: _Markers) -> tuple[str, ...]:
    """The group's distinctive markers in ``template`` when they are enough to recognise it,
    with the call opener first when other grammars share it (Qwen's ``<tool_call>``, GLM's too):
    it is evidence all the same."""
    found = tuple(marker for marker in group.distinctive if marker in template)
    opener = group.call_open
    enough = (opener is None or opener in template) and 2 * len(found) >= len(group.distinctive)
    if not enough:
        return ()
    return found if opener is None or opener in group.distinctive else (opener, *found)


def _looked_for(template: str, groups: Sequence[_Markers]) -> list[str]:
    """One line per grammar for the error: its formats, what it needs and what was found."""
    lines = []
    for group in groups:
        names = ", ".join(spec.name for spec in group.formats)
        present = [marker for marker in group.distinctive if marker in template]
        if group.call_open is None:
            lines.append(f"{names}: at least {(len(group.distinctive) + 1) // 2} of {' '.join(group.distinctive)}")
            continue
        opener = "found" if group.call_open in template else "missing"
        if not group.distinctive:
            halves = "; ".join(" ".join(markers) for markers in group.rivals)
            lines.append(f"{names}: its call opener {group.call_open} ({opener}) and half of each of: {halves}")
            continue
        lines.append(
            f"{names}: its call opener {group.call_open} ({opener}) and at least "
            f"{(len(group.distinctive) + 1) // 2} of {' '.join(group.distinctive)} "
            f"(found {len(present)}{': ' + ' '.join(present) if present else ''})"
        )
    return lines
