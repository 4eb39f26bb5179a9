"""DeepSeek-V3.2's part of ``codec demo``: thinking on, the model thinks, answers, then calls in
one DSML block (the prompt ends with ``<｜Assistant｜><think>``)."""

from __future__ import annotations

from codec.formats import DemoCase
from codec.formats._demo_scenario import ANSWER, REASONING


def _invoke(name: str, **arguments: tuple[str, bool]) -> str:
    body = "".join(
        f'<｜DSML｜parameter name="{key}" string="{"true" if raw else "false"}">{value}</｜DSML｜parameter>\n'
        for key, (value, raw) in arguments.items()
    )
    return f'<｜DSML｜invoke name="{name}">\n{body}</｜DSML｜invoke>\n'


COMPLETION = (
    f"{REASONING}</think>{ANSWER}\n\n<｜DSML｜function_calls>\n"
    + _invoke(
        "search_places",
        query=("late dinner restaurant", True),
        city=("Porto", True),
        open_after=("22:00", True),
        limit=("2", False),
    )
    + _invoke("convert_currency", amount=("60", False), from_currency=("EUR", True), to_currency=("USD", True))
    + "</｜DSML｜function_calls><｜end▁of▁sentence｜>"
)

DEEPSEEK_V3_2 = DemoCase(
    "DeepSeek-V3.2 — <think> reasoning, then DSML <invoke> calls with typed <parameter>s",
    COMPLETION,
    {"thinking": True},
)
