"""Mistral v0.3's part of ``codec demo``: the model calls two tools in one list (the prompt ends
with ``[/INST]``: the template writes no generation prompt, and no reasoning)."""

from __future__ import annotations

from typing import Any

from codec.formats import DemoCase
from codec.formats._demo_scenario import HISTORY

COMPLETION = (
    "[TOOL_CALLS] ["
    '{"name": "search_places", "arguments": '
    '{"query": "late dinner restaurant", "city": "Porto", "open_after": "22:00", "limit": 2}, "id": "pl4c3s001"}, '
    '{"name": "convert_currency", "arguments": '
    '{"amount": 60, "from_currency": "EUR", "to_currency": "USD"}, "id": "curr3ncy2"}'
    "]</s>"
)


def nine_character_ids(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``history`` with each call id and result id cut to nine characters: the template refuses
    any other length (``raise_exception("Tool call IDs should be alphanumeric strings with
    length 9!")``)."""
    out: list[dict[str, Any]] = []
    for message in history:
        message = dict(message)
        if "tool_calls" in message:
            message["tool_calls"] = [{**call, "id": call["id"][:9]} for call in message["tool_calls"]]
        if "tool_call_id" in message:
            message["tool_call_id"] = message["tool_call_id"][:9]
        out.append(message)
    return out


MISTRAL_V0_3 = DemoCase(
    "Mistral v0.3 — [TOOL_CALLS] then one JSON list of calls, each with a nine-character id",
    COMPLETION,
    history=nine_character_ids(HISTORY),
)
