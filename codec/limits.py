"""``Limits``: how much structure one completion may build before parsing stops building it.

A completion is untrusted text. Without limits, arguments nested 100,000 deep cost quadratic
time (every step of the parser copies its stack) and crash ``json.dumps`` and pydantic with a
``RecursionError``; a 5 MB argument or 10,000 calls are more likely a runaway generation than a
request. Beyond a limit, lenient parsing keeps the text (the call stops there and does not go to
``tool_calls``; what follows stays content) with a diagnostic naming the limit; ``strict=True``
raises ``ParseError`` with that code.
"""

from __future__ import annotations

from dataclasses import dataclass

from codec.errors import CodecError, describe


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one parse (``Codec.parse(..., limits=Limits(...))``); the defaults are far
    above what a real tool call writes.

    ``max_depth``: nesting of arrays and objects inside one call's arguments (diagnostic
    ``too_deep``). ``max_argument_chars``: characters of one call's arguments JSON
    (``too_large``). ``max_calls``: finished calls in one completion (``too_many_calls``).
    ``max_diagnostics``: diagnostics one parse lists; the one past it says that more deviations
    followed (``too_many_diagnostics``), and the rest are repaired the same, unlisted.
    """

    max_depth: int = 64
    max_argument_chars: int = 8_000_000
    max_calls: int = 16_384
    max_diagnostics: int = 1_000

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_argument_chars", "max_calls", "max_diagnostics"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise CodecError(f"Limits.{name} must be a positive integer, got {describe(getattr(self, name))}")


DEFAULT_LIMITS = Limits()
