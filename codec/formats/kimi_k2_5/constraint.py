"""Kimi K2.5's call for constrained decoding: Kimi K2's, as the model writes it the same way::

    <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{JSON}<|tool_call_end|>

The markers are read from the grammar file passed in (``kimi_k2_5.lark`` spells them as
``kimi_k2.lark`` does).
"""

from __future__ import annotations

from codec.formats.kimi_k2.constraint import call

__all__ = ["call"]
