"""Qwen3.5's call for constrained decoding: Qwen3-Coder's, as the template writes it the same way
(``templates/qwen3_5.jinja``)::

    <tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n…</function>\\n</tool_call>

The markers are read from the grammar file passed in (``qwen3_5.lark`` spells them as
``qwen3_coder.lark`` does).
"""

from __future__ import annotations

from codec.formats.qwen3_coder.constraint import call

__all__ = ["call"]
