"""MiniMax-M2's argument syntax: one ``<parameter name="KEY">`` per argument, its value raw text
right up to ``</parameter>``, inside ``<invoke name="NAME">`` (``templates/minimax_m2.jinja``)::

    <invoke name="get_weather">
    <parameter name="city">Paris</parameter>
    <parameter name="days">3</parameter>
    </invoke>

The template writes ``{{- v | tojson(ensure_ascii=False) if v is not string else v }}``: a
string raw, anything else as JSON, as GLM's template does; so a value whose schema admits only
strings streams as it arrives, and any other is typed at its ``</parameter>`` the way GLM's is
(``KeyValueReader._typed``: JSON, read leniently where the schema rules strings out).

The name and keys come with the quotes around them (``"get_weather"``, patterns up to ``>``):
they are taken off here. A name or key a model wrote in single quotes, or with none, is read
all the same and reported (``unquoted_name``).
"""

from __future__ import annotations

from typing import ClassVar

from codec.arguments.key_value import KeyValueReader
from codec.arguments.reader import ArgumentContext


class Parameters(KeyValueReader):
    """The arguments of one MiniMax-M2 call, fed its ``PARAM_*``, ``ARG_KEY``, ``KEY_END`` and
    ``ARG_VALUE`` tokens in order (and the name's ``">``, ``NAME_END``, which announces the call)."""

    terminals: ClassVar[frozenset[str]] = frozenset(
        {"NAME_END", "PARAM_OPEN", "ARG_KEY", "KEY_END", "ARG_VALUE", "PARAM_CLOSE"}
    )

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._line_ended = False  # the name's `">` or the last `</parameter>` ended its line

    @property
    def complete(self) -> bool:
        """No argument is open and the last one's line ended: the template writes each
        ``</parameter>`` (and the name's ``">``) with a new line, then the next argument or
        ``</invoke>``, so a call cut off there lost at most its ``</invoke>`` (a model that
        stopped right after a ``</parameter>`` may have been cut off before another argument)."""
        return self._line_ended and not self._open

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        """The name inside its quotes (``"get_weather"``, the ``>`` after it ends it)."""
        return self._unquoted(written, "name")

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        # Most tokens are a value's text: that first.
        if terminal == "ARG_VALUE":
            self._value(text)
            return
        self._line_ended = text.endswith("\n")  # only the name's `">\n` and `</parameter>\n` do
        if terminal == "ARG_KEY":
            self._key_parts.append(text)
        elif terminal == "KEY_END":
            self._value_open()
        elif terminal == "PARAM_CLOSE":
            self._open = False
            self._finish_value()
        elif terminal == "PARAM_OPEN":
            self._open = True
            self._key_parts.clear()

    def finish(self, truncated: bool) -> None:
        if truncated:
            # A key whose value never began is not an argument (never invent one); its text stays.
            self._context.content("".join(self._key_parts))
            self._key_parts.clear()
            self._finish_value()
        self._context.delta(self._emitter.finish())

    def _value_open(self) -> None:
        self._key = self._unquoted("".join(self._key_parts), "key")
        self._key_parts.clear()
        self._begin_value()

    def _unquoted(self, written: str, what: str) -> str:
        """``written`` without the double quotes the template puts around it; single quotes or
        none are read too, and reported."""
        if len(written) >= 2 and written[0] == written[-1] == '"':
            return written[1:-1]
        self._context.report("unquoted_name", f"the {what} {written!r} is not in double quotes")
        if len(written) >= 2 and written[0] == written[-1] == "'":
            return written[1:-1]
        return written.strip("\"'")
