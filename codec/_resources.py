"""Reads the bundled grammars and templates.

In a built wheel they sit inside the package (``codec/grammars``, ``codec/templates``, mapped by
hatchling's ``force-include``); in a source checkout they sit beside the package at the top
level, where people read and edit them. Both places are tried, the package first.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


@cache
def read_text(folder: str, name: str) -> str:
    """The text of ``folder/name`` (``folder`` is ``grammars`` or ``templates``)."""
    packaged = resources.files("codec").joinpath(folder).joinpath(name)
    if packaged.is_file():
        data = packaged.read_bytes()
    else:
        data = (Path(__file__).resolve().parent.parent / folder / name).read_bytes()
    # Decoding bytes (not text mode) keeps a template exactly as shipped: no newline translation.
    return data.decode("utf-8")
