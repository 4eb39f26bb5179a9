"""The one reference renderer: transformers' own ``apply_chat_template(..., tokenize=False)``.

Render parity (docs/architecture.md, invariant 1), the render goldens and ``benchmarks/bench_render.py`` all
compare codec with this, so they compare with the same thing. The tokenizer is built offline —
a one-word vocabulary, the format's bos/eos tokens from the registry, the bundled template — so
no model is downloaded and no torch is needed. Templates that print today's date read
transformers' clock, which ``frozen_clock`` sets to the ``now`` codec is given.

It lives under ``tests/`` (not in ``codec``) because transformers is a test and benchmark
dependency only; the benchmarks put ``tests/`` on ``sys.path`` to import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from typing import Any, cast
from unittest import mock

import tokenizers
from transformers import PreTrainedTokenizerFast
from transformers.utils import chat_template_utils

from codec._resources import read_text
from codec.registry import FORMATS
from codec.strategies import RenderCase


@cache
def reference_tokenizer(fmt: str) -> Any:
    """A tokenizer that needs no download: only its special tokens and template matter here."""
    spec = FORMATS[fmt]
    model = tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>")
    tokens = {"bos_token": spec.bos_token, "eos_token": spec.eos_token}
    backend: Any = PreTrainedTokenizerFast  # untyped in transformers
    tokenizer = backend(
        tokenizer_object=tokenizers.Tokenizer(model),
        **{name: token for name, token in tokens.items() if token is not None},
    )
    tokenizer.chat_template = read_text("templates", spec.template)
    return tokenizer


class _FrozenClock:
    """Stands in for ``datetime`` inside transformers' ``strftime_now``."""

    def __init__(self, now: datetime) -> None:
        self._now = now

    def now(self) -> datetime:
        return self._now


@contextmanager
def frozen_clock(now: datetime) -> Iterator[None]:
    """transformers' ``strftime_now`` reads ``now`` inside the block (a benchmark times calls
    inside one block, so the patching is not part of what it measures)."""
    with mock.patch.object(chat_template_utils, "datetime", _FrozenClock(now)):
        yield


def reference_render(fmt: str, case: RenderCase, now: datetime, *, chat_template: str | None = None) -> str:
    """transformers' prompt for ``case`` with its clock reading ``now``; ``chat_template``
    replaces the format's bundled template (a user template), the tokens stay the format's."""
    template = {} if chat_template is None else {"chat_template": chat_template}
    with frozen_clock(now):
        prompt = reference_tokenizer(fmt).apply_chat_template(
            case.messages,
            tools=cast(Any, case.tools),
            add_generation_prompt=case.add_generation_prompt,
            tokenize=False,
            **template,
            **case.options,
        )
    if not isinstance(prompt, str):
        raise TypeError(f"apply_chat_template(tokenize=False) returned {type(prompt).__name__}")
    return prompt
