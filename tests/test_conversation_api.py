"""Follow-up turns, prefix_check, explain_losses and user templates."""

from __future__ import annotations

from pathlib import Path

import pytest

import codec
from support.parsing import TOOLS

HISTORY = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]
GLM_CALL = (
    "The user wants weather.</think><tool_call>get_weather<arg_key>city</arg_key>"
    "<arg_value>Paris</arg_value></tool_call>"
)


def test_follow_up_turn_from_a_parsed_reply_and_tool_results() -> None:
    glm = codec.load("glm")
    reply = glm.parse(GLM_CALL, tools=TOOLS, id_factory=lambda i: f"c{i}")
    after = codec.Conversation(messages=HISTORY, tools=TOOLS).followed_by(reply).with_tool_results({"c0": {"temp": 18}})
    prompt = glm.render_conversation(after)
    assert prompt.endswith('</tool_call><|observation|><tool_response>{"temp": 18}</tool_response><|assistant|><think>')
    assert after.messages[-1] == codec.ToolMessage(content='{"temp": 18}', tool_call_id="c0", name="get_weather")
    with pytest.raises(codec.RenderError, match="no result for call 'c0'"):
        codec.Conversation(messages=HISTORY).followed_by(reply).with_tool_results({})


@pytest.mark.parametrize(
    ("fmt", "completion", "ok", "found"),
    [
        ("glm", GLM_CALL, True, ""),
        ("glm", "Hmm.</think>\n\nSunny.", False, "Sunny."),  # the template strips the answer
        ("solar-open", "<|think|>Easy.<|end|><|begin|>assistant<|content|>Sunny.<|flush|>", False, "end|>"),
        ("solar-open", "<|think|>Easy.<|end|><|begin|>assistant<|content|>Sunny.<|end|>", True, ""),
        ("gemma4", "Sunny.<turn|>", True, ""),
    ],
)
def test_prefix_check_with_the_raw_completion(fmt: str, completion: str, ok: bool, found: str) -> None:
    result = codec.load(fmt).prefix_check(HISTORY, completion, tools=TOOLS, now="2026-11-30")
    assert result.ok is ok
    if not ok:
        assert result.found.startswith(found)
        assert result.message_index == 2
        assert "reply" in result.reason


def test_prefix_check_finds_a_generation_prompt_that_history_does_not_repeat() -> None:
    """Solar's low effort pre-fills an empty think turn that the reply, as history, lacks."""
    result = codec.load("solar-open").prefix_check(
        HISTORY, "<|content|>Sunny.<|end|>", reasoning_effort="low", now="2026-11-30"
    )
    assert not result.ok and result.message_index == 2
    assert result.expected.startswith("think|>") and result.found.startswith("content|>")
    assert "generation prompt" in result.reason


def test_explain_losses_names_rules_and_messages() -> None:
    messages = [
        *HISTORY,
        {"role": "assistant", "content": "  padded answer  ", "reasoning_content": "old"},
        {"role": "user", "content": "again"},
    ]
    losses = codec.load("glm").explain_losses(messages, tools=TOOLS, clear_thinking=True)
    by_rule = {(loss.rule, loss.message_index) for loss in losses}
    assert ("clear_thinking", 2) in by_rule
    assert ("assistant_content_stripped", 2) in by_rule
    assert any(loss.rule == "effort_header" and loss.message_index is None for loss in losses)
    first = str(losses[0]).splitlines()
    assert first[0].startswith("message 2: ") and first[0].endswith("[clear_thinking]")
    assert "'reasoning_content': 'old'" in first[1] and "reasoning_content" not in first[2]


def test_canonical_is_what_parse_prompt_returns() -> None:
    glm = codec.load("glm")
    messages = [*HISTORY, {"role": "assistant", "content": "<think>R</think> answer "}]
    canonical = glm.canonical(messages, tools=TOOLS, add_generation_prompt=False)
    assert canonical == glm.parse_prompt(
        glm.render(messages, tools=TOOLS, add_generation_prompt=False, allow_special_tokens=True)
    )
    assert (canonical.messages[-1].reasoning, canonical.messages[-1].content) == ("R", "answer")


def test_parse_prompt_rejects_another_format_with_a_position() -> None:
    gemma_prompt = codec.load("gemma4").render(HISTORY)
    with pytest.raises(codec.ParseError) as raised:
        codec.load("glm").parse_prompt(gemma_prompt)
    assert raised.value.offset == 0 and raised.value.line == 1


SANDBOX_PAYLOADS = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ messages.__class__.__init__.__globals__ }}",
    "{{ cycler.__init__.__globals__.os }}",
    "{{ raise_exception.__globals__ }}",
    "{% set ns = namespace(_x=1) %}",
    "{{ self._TemplateReference__context }}",
]


@pytest.mark.parametrize("payload", SANDBOX_PAYLOADS)
def test_user_templates_run_in_the_sandbox(payload: str) -> None:
    escaping = codec.load("glm", template=payload + "{% for m in messages %}{{ m.content }}{% endfor %}")
    with pytest.raises(codec.RenderError):
        escaping.render(HISTORY)


def test_user_template_from_a_path_pairs_with_the_grammar(tmp_path: Path) -> None:
    source = Path(codec.__file__).parent.parent / "templates" / "glm.jinja"
    if not source.exists():
        source = Path(codec.__file__).parent / "templates" / "glm.jinja"
    copy = tmp_path / "my_glm.jinja"
    copy.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    mine, bundled = codec.load("glm", template=copy), codec.load("glm")
    assert mine.render(HISTORY, tools=TOOLS) == bundled.render(HISTORY, tools=TOOLS)
    assert mine.parse(GLM_CALL, tools=TOOLS).tool_calls[0].arguments == {"city": "Paris"}
    prompt = mine.render(HISTORY, tools=TOOLS)
    assert mine.parse_prompt(prompt) == bundled.parse_prompt(prompt) == bundled.canonical(HISTORY, tools=TOOLS)
