"""A call's arguments text read a second time, leniently, once the streaming reading refused
some of it (Solar's and Qwen3's JSON arguments): JSON escaped into a string, Python's syntax,
trailing commas, ... (``tolerant.decode_arguments``). The second reading replaces the arguments
only when it is complete, loses nothing, and begins with the JSON already streamed.
"""

from __future__ import annotations

from codec.arguments.lenient_value import lossless
from codec.arguments.reader import ArgumentContext
from codec.arguments.tolerant import decode_arguments


def read_again(context: ArgumentContext, text: str, sent: str) -> str | None:
    """The fragment that completes the arguments JSON already ``sent``, the arguments now being
    ``text`` read leniently (reported as ``arguments_repaired``); ``None``, and nothing changes,
    when that reading is not complete and lossless or does not begin with what was sent."""
    decoded = decode_arguments(text, context.parameters(), max_depth=context.limits.max_depth)
    if decoded is None or not decoded.complete or not lossless(decoded.repairs):
        return None
    rest = context.emitter.replace(decoded.value, sent)
    if rest is None:
        return None
    shown = ", ".join(sorted({repair.code for repair in decoded.repairs})) or "JSON"
    context.report("arguments_repaired", f"arguments read leniently ({shown})")
    return rest
