"""``prefix_check``: does a serving engine's KV cache survive the turn?

The engine holds ``prompt + completion`` in its cache. On the next request the conversation is
rendered again with the reply in it; the cache can be reused only if that rendering starts with
exactly what the cache holds. Templates break this by rendering a turn differently once it is
history (Solar closes an answer with ``<|end|>`` where the model stopped at ``<|flush|>``; GLM
strips the answer; Gemma moves reasoning out of earlier turns).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

_CONTEXT = 40


@dataclass(frozen=True, slots=True)
class PrefixCheck:
    """The result: ``ok``, or where the new rendering departs from ``prompt + completion``.

    ``offset`` counts characters into the new rendering; ``message_index`` is the message whose
    rendering holds that offset; ``expected`` is what the cache holds there, ``found`` what the
    new rendering has.
    """

    ok: bool
    offset: int | None = None
    message_index: int | None = None
    expected: str = ""
    found: str = ""
    reason: str = ""

    def __str__(self) -> str:
        if self.ok:
            return "ok: the next prompt extends prompt + completion"
        return (
            f"breaks at offset {self.offset} (message {self.message_index}): cache holds "
            f"{self.expected!r}, the next prompt has {self.found!r}. {self.reason}"
        )


def check(prompt: str, completion: str, rendered: str, render_prefix: Callable[[int], str], count: int) -> PrefixCheck:
    """Compare ``prompt + completion`` (what the cache holds) with the new rendering.
    ``render_prefix(k)`` renders the first ``k`` of the ``count`` messages (no generation
    prompt): it tells which message holds the break."""
    cached = prompt + completion
    if rendered.startswith(cached):
        return PrefixCheck(ok=True)
    offset = next(
        (i for i, (a, b) in enumerate(zip(cached, rendered, strict=False)) if a != b), min(len(cached), len(rendered))
    )
    return PrefixCheck(
        ok=False,
        offset=offset,
        message_index=_message_at(offset, render_prefix, count),
        expected=cached[offset : offset + _CONTEXT],
        found=rendered[offset : offset + _CONTEXT],
        reason=_reason(offset, len(render_prefix(count - 1)), len(prompt), len(cached)),
    )


def _message_at(offset: int, render_prefix: Callable[[int], str], count: int) -> int | None:
    for k in range(1, count + 1):
        if len(render_prefix(k)) > offset:
            return k - 1
    return None


def _reason(offset: int, history_length: int, prompt_length: int, cached_length: int) -> str:
    if offset < history_length:
        return "The template renders the history differently once the reply follows it."
    if offset < prompt_length:
        return "The generation prompt is not how the template starts the reply as history."
    if offset >= cached_length:
        return "The template writes more after the reply than the model did."
    return "The template writes the reply differently from how the model wrote it."
