"""Granite 4.0's call for constrained decoding: Qwen3's, ``<tool_call>\\n{"name": "NAME",
"arguments": {JSON}}\\n</tool_call>``, the markers taken from ``granite.lark``."""

from __future__ import annotations

from codec.formats.qwen3.constraint import call

__all__ = ["call"]
