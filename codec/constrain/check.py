"""Checking a constraint with llguidance itself (the ``constrain`` extra), without a model: a
tokenizer whose tokens are the 256 bytes plus the format's special tokens, one token each.

``matcher(codec_or_name, grammar)`` gives an ``llguidance.LLMatcher`` for that tokenizer;
``tokens(name, text)`` splits text the way such a model would write it (a special token's text
as that one token, everything else byte by byte). Tests and the benchmark use these; a caller
can use them to check a grammar compiles before sending it to an engine.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import llguidance  # type: ignore[import-not-found,unused-ignore]

from codec.constrain.lark import llg_name
from codec.engine.grammar import compiled
from codec.registry import find

_BYTES = 256


class _ByteTokens:
    """What ``llguidance.TokenizerWrapper`` reads: the vocabulary and an encoder."""

    def __init__(self, specials: tuple[str, ...], eos: str) -> None:
        # A special token spelled in square brackets is named in angle brackets, as
        # mistral-common's llguidance tokenizer names it (``lark.llg_name``).
        self.tokens = [bytes([i]) for i in range(_BYTES)] + [llg_name(token).encode() for token in specials]
        self.special_token_ids = list(range(_BYTES, _BYTES + len(specials)))
        self.eos_token_id = _BYTES + specials.index(eos)
        self.bos_token_id = None

    def __call__(self, text: Any) -> list[int]:
        return list(text.encode() if isinstance(text, str) else text)


@cache
def special_tokens(name: str) -> tuple[str, ...]:
    """A format's special tokens, in token-id order (ids from 256 on). A marker that opens a tag
    (``<function=``, Qwen3-Coder's: it ends before the ``>``) is ordinary text to the model's
    tokenizer, and no grammar can reference it as a special token: it is left out."""
    markers = compiled(find(name).grammar).special_tokens
    return tuple(sorted(token for token in markers if not (token.startswith("<") and not token.endswith(">"))))


@cache
def tokenizer(name: str) -> Any:
    """The ``llguidance.LLTokenizer`` of bytes and the format's special tokens; its EOS is the
    format's end-of-sequence token (or its first stop token)."""
    spec = find(name)
    eos = spec.eos_token or spec.stop_tokens[0]
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokens(special_tokens(name), eos)))


def token_id(name: str, special: str) -> int:
    """The id of one special token."""
    return _BYTES + special_tokens(name).index(special)


def tokens(name: str, text: str) -> list[int]:
    """``text`` as that model writes it: special tokens whole, other text byte by byte."""
    specials = sorted(special_tokens(name), key=len, reverse=True)
    ids: list[int] = []
    position = 0
    while position < len(text):
        found = next((s for s in specials if text.startswith(s, position)), None)
        if found is not None:
            ids.append(token_id(name, found))
            position += len(found)
            continue
        following = [i for i in (text.find(s, position) for s in specials) if i >= 0]
        end = min(following, default=len(text))
        ids += list(text[position:end].encode())
        position = end
    return ids


def matcher(name: str, grammar: str) -> Any:
    """An ``llguidance.LLMatcher`` for ``grammar`` over ``tokenizer(name)``; ``ValueError``
    when llguidance refuses the grammar."""
    found = llguidance.LLMatcher(tokenizer(name), llguidance.grammar_from("lark", grammar), log_level=0)
    if found.is_error():
        raise ValueError(found.get_error())
    return found
