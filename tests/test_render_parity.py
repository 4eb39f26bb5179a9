"""Render parity: for the same template variables, codec's prompt is transformers' prompt, byte
for byte (docs/architecture.md, invariant 1), for every format of the registry.

The reference is ``support.reference``: transformers' real ``apply_chat_template(...,
tokenize=False)`` on a tokenizer built offline (a one-word vocabulary, the format's bos/eos
tokens, the template text), given the inputs in the template form the strategies write out
themselves. Solar prints today's date, so transformers' clock is frozen at the ``now`` codec is
given.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from datetime import datetime
from typing import Any

import numpy
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from transformers.utils import chat_template_utils

import codec
from codec._resources import read_text
from codec.registry import FORMATS
from codec.render.template_input import plain
from codec.strategies import RenderCase, dates, option_names, render_cases
from support import goldens
from support.reference import reference_render
from support.rendering import codec_render, load_case, load_prompt

# The profile's examples, and no fewer than 300 under ``ci`` (tests/conftest.py): fewer miss
# template branches.
PARITY_EXAMPLES = max(settings.default.max_examples, 300 if settings.get_current_profile_name() == "ci" else 0)


@pytest.mark.parametrize("fmt", codec.formats())
@settings(max_examples=PARITY_EXAMPLES)
@given(data=st.data(), now=dates())
def test_render_matches_transformers(fmt: str, data: st.DataObject, now: datetime) -> None:
    """Given any conversation, tools and options, codec renders what transformers renders —
    and where the template itself fails in transformers, codec raises RenderError. The bundled
    template given as a user template runs in the sandbox, with the same output or the same
    refusal. (One drawn case for the three renderers: drawing a conversation costs more than
    rendering it.)"""
    case = data.draw(render_cases(fmt), label="case")
    sandboxed = _sandboxed(fmt)
    try:
        expected = reference_render(fmt, case, now)
    except Exception as error:  # the template's own failure: codec must refuse, not crash
        event(f"template fails: {type(error).__name__}")
        with pytest.raises(codec.RenderError):
            codec_render(fmt, case, now)
        with pytest.raises(codec.RenderError):
            _render_with(sandboxed, case, now)
        return
    event("rendered")
    assert codec_render(fmt, case, now) == expected
    assert _render_with(sandboxed, case, now) == expected


@functools.cache
def _sandboxed(fmt: str) -> codec.Codec:
    """The format's bundled template, loaded as a user's template (so it runs in the sandbox)."""
    return codec.load(fmt, template=read_text("templates", FORMATS[fmt].template))


def _render_with(c: codec.Codec, case: RenderCase, now: datetime) -> str:
    return c.render(
        case.messages, tools=case.tools, add_generation_prompt=case.add_generation_prompt, now=now, **case.options
    )


@pytest.mark.parametrize("fmt", codec.formats())
def test_strategies_exercise_every_option(fmt: str) -> None:
    """The parity property draws every option the template reads, and no other."""
    assert option_names(fmt) == codec.load(fmt).options


# Small user templates, each leaning on one piece of the environment apply_chat_template sets up.
USER_TEMPLATES = {
    "tojson": "{{ tools | tojson }}|{{ tools | tojson(indent=2, sort_keys=True) }}|"
    "{{ messages[0] | tojson(ensure_ascii=True, separators=(',', ':')) }}",
    "whitespace": "{% for m in messages %}\n    {% if m.role == 'user' %}\n  U:{{ m.content }}\n"
    "    {% else %}\n  A:{{ m.content }}\n    {% endif %}\n{% endfor %}\n",
    "loop_controls": "{% for m in messages %}{% if loop.index0 == 1 %}{% continue %}{% endif %}"
    "{{ m.role }}{% if loop.index0 == 2 %}{% break %}{% endif %},{% endfor %}",
    "generation": "{% for m in messages %}{% generation %}{% set x = m.role %}[{{ x }}]"
    "{% endgeneration %}{{ x | default('-') }}{% endfor %}",
    "namespace_dict": "{% set ns = namespace(n=0) %}{% for m in messages %}"
    "{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }} {{ dict(a=1, b=[2]) }} "
    "{{ dict.fromkeys(['k']) }}",
    "tokens_and_date": "{{ bos_token | default('') }}{{ strftime_now('%d %B %Y') }}"
    "{{ eos_token }}{{ add_generation_prompt }}",
    "reasoning_names": "{% for m in messages %}{{ m.thinking | default('') }}/"
    "{{ m.reasoning_content | default('') }}/{{ m.reasoning | default('') }};{% endfor %}",
    "arguments": "{% for m in messages %}{% for c in m.tool_calls | default([]) %}"
    "{{ c.function.name }}{{ c.function.arguments | tojson }}{{ c.function.arguments.items() "
    "| list }}{% endfor %}{% endfor %}",
}

USER_TEMPLATE_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Grüß dich <b>"},
    {
        "role": "assistant",
        "reasoning_content": "Plan: look up",
        "reasoning": "Plan: look up",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "f", "arguments": {"b": [1, 2.5, None], "a": "é"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    {"role": "assistant", "content": "Done."},
]


@pytest.mark.parametrize("fmt", codec.formats())
@pytest.mark.parametrize("name", sorted(USER_TEMPLATES))
def test_user_template_renders_like_transformers(fmt: str, name: str) -> None:
    """A user's template sees the same environment and variables as in apply_chat_template,
    with the format's own bos and eos tokens."""
    template, now = USER_TEMPLATES[name], datetime(2031, 7, 4, 12, 0)
    case = RenderCase(USER_TEMPLATE_MESSAGES, [TOOL], {}, True)
    expected = reference_render(fmt, case, now, chat_template=template)
    custom = codec.load(fmt, template=template)
    assert custom.render(case.messages, tools=case.tools, now=now) == expected


TOOL = {
    "type": "function",
    "function": {
        "name": "f",
        "description": "Fünf <tools>",
        "parameters": {"type": "object", "properties": {"b": {"type": "array"}}},
    },
}


class _Colour(str, enum.Enum):  # noqa: UP042 - a str-mixin enum as user code writes it; StrEnum prints differently
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class _Point:
    x: int
    when: object


@pytest.mark.parametrize(
    "value",
    [_Colour.RED, _Level.HIGH, numpy.float64(1.5), numpy.int64(3), numpy.bool_(False),
     numpy.array([1, 2]), numpy.array(3), _Point(1, datetime(2020, 1, 1)),
     {"k": (1, [_Colour.RED])}, {_Colour.RED: 1}, object(), b"x", None, True,
     codec.UserMessage(content="hi")],
    ids=lambda value: re.sub(" at 0x[0-9a-f]+", "", repr(value)),  # the same id in every test process
)  # fmt: skip
def test_template_data_is_rebuilt_as_transformers_does(value: object) -> None:
    """Arguments, media payloads, tools and options reach the template as transformers would
    pass them: plain JSON types, anything else a ``"<TypeName>"`` placeholder."""
    expected = chat_template_utils._plain_template_data(value)
    assert plain(value) == expected
    assert type(plain(value)) is type(expected)


GOLDEN_CASES = goldens.entries("render")


@pytest.mark.parametrize(("case", "fmt"), GOLDEN_CASES, ids=[f"{case}/{fmt}" for case, fmt in GOLDEN_CASES])
def test_golden_prompts(case: str, fmt: str) -> None:
    """Each golden render call renders to its .txt prompt (regenerate with
    tests/regen_goldens.py --kind render, then review the diff)."""
    render_case, now = load_case(case, fmt)
    assert codec_render(fmt, render_case, now) == load_prompt(case, fmt)


def test_goldens_cover_every_format() -> None:
    """At least three readable cases per format (Solar's template cannot render content parts,
    so it has no multimodal case)."""
    assert len({case for case, _ in GOLDEN_CASES}) >= 3
    for fmt in codec.formats():
        assert sum(name == fmt for _, name in GOLDEN_CASES) >= 3, fmt
