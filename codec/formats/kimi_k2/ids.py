"""Kimi K2's call ids, which carry the tool's name: ``functions.NAME:IDX``.

The template makes them (``templates/kimi_k2.jinja``:
``{%- set formatted_id = 'functions.' + func_name + ':' + loop.index0|string -%}``), the model
writes them, and the name is read back from them: the template writes no other name.
"""

from __future__ import annotations

import re

PREFIX = "functions."
"""What an id starts with, before the name."""
SEPARATOR = ":"
"""Between the name and the index."""
_INDEX = re.compile(SEPARATOR + r"[0-9]+\Z")


def call_id(name: str, index: int) -> str:
    """The id the template writes for the call at ``index`` in its message."""
    return f"{PREFIX}{name}{SEPARATOR}{index}"


def name_of(written: str) -> str:
    """The tool's name in an id: without the ``functions.`` prefix and the ``:IDX`` suffix,
    either of which a model may leave out (``get_weather:0``); names may hold dots, hyphens
    and colons (only a last ``:digits`` is the index)."""
    text = written.strip()
    if text.startswith(PREFIX):
        text = text[len(PREFIX) :]
    index = _INDEX.search(text)
    return text[: index.start()] if index else text
