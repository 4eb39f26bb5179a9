"""GLM's argument syntax: key/value pairs between markers, a value raw when its schema says
string and JSON otherwise (``glm.jinja``)::

    <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>

A string value streams as it arrives; any other value is typed when it is complete.
"""

from __future__ import annotations

from typing import ClassVar

from codec.arguments.key_value import KeyValueReader
from codec.arguments.reader import ArgumentContext


class KeyValueArguments(KeyValueReader):
    """The arguments of one GLM call, fed its ``KEY_*`` / ``VALUE_*`` tokens in order."""

    terminals: ClassVar[frozenset[str]] = frozenset(
        {"KEY_OPEN", "ARG_KEY", "KEY_CLOSE", "VALUE_OPEN", "ARG_VALUE", "VALUE_CLOSE"}
    )

    def __init__(self, context: ArgumentContext) -> None:
        super().__init__(context)
        self._key_pending = False  # a key is complete and its value has not begun

    @property
    def complete(self) -> bool:
        """No argument is open: between ``</arg_value>`` and the next ``<arg_key>``."""
        return not self._open

    def name(self, written: str, terminal: str, inserted: bool) -> str:
        """``<tool_call>get_weathercity</arg_key>``: the ``<arg_key>`` opener was lost (the repair
        inserted it); the tool list tells where the name ends and the key begins."""
        if terminal != "KEY_OPEN" or not inserted:
            return written
        names = [name for name in self._context.tool_names() if written.startswith(name) and len(written) > len(name)]
        if not names:
            return written
        name = max(names, key=len)
        self._key_parts.append(written[len(name) :])
        return name

    def token(self, terminal: str, text: str, inserted: bool) -> None:
        # Most tokens are a key's or a value's text: those first, handled here.
        if terminal == "ARG_VALUE":
            self._value(text)
        elif terminal == "ARG_KEY":
            self._key_parts.append(text)
        elif terminal == "VALUE_OPEN":
            self._value_open(text)
        elif terminal == "VALUE_CLOSE":
            self._open = False
            self._finish_value()
        elif terminal == "KEY_CLOSE":
            self._key_close(text)
        else:  # KEY_OPEN
            self._open = True

    def finish(self, truncated: bool) -> None:
        if truncated:
            # A key whose value never came is not an argument (never invent one); its text stays.
            self._context.content("".join(self._key_parts) or (self._key if self._key_pending else ""))
            self._finish_value()
        self._context.delta(self._emitter.finish())

    def _key_close(self, text: str) -> None:
        self._key = "".join(self._key_parts)
        self._key_parts.clear()
        self._key_pending = True

    def _value_open(self, text: str) -> None:
        self._key_pending = False
        self._begin_value()
