"""Gemma 4's part of ``codec demo`` (``enable_thinking=True``: the model opens its thought channel).

No text before the calls: the template would move it after the tool results and close the turn,
where the model writes its calls, results and answer in one turn.
"""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import REASONING

COMPLETION = (
    f"<|channel>thought\n{REASONING}\n<channel|>"
    '<|tool_call>call:search_places{city:<|"|>Porto<|"|>,limit:2,open_after:<|"|>22:00<|"|>,'
    'query:<|"|>late dinner restaurant<|"|>}<tool_call|>'
    '<|tool_call>call:convert_currency{amount:60,from_currency:<|"|>EUR<|"|>,'
    'to_currency:<|"|>USD<|"|>}<tool_call|>'
)

GEMMA4 = DemoCase("Google Gemma 4 -it (enable_thinking=True)", COMPLETION, {"enable_thinking": True})
