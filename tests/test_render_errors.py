"""Every way ``render`` refuses its input, by message — and what it lets through.

A refusal is always a ``RenderError`` (or ``UnknownFormatError`` from ``load``) that says what
was found and where: the message index and the offset inside that message's text.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import codec
from codec.engine.grammar import special_tokens
from codec.formats import glm
from codec.models import AnyMessage
from codec.registry import FORMATS
from codec.strategies import RenderCase, special_token_texts
from support.calls import call_id
from support.reference import reference_render

NOW = datetime(2026, 3, 14, 15, 9, 26)

# The tokens that would forge structure most directly: each format's stop tokens (text that
# ends the model's turn early), from the registry.
STOP_TOKENS = [(fmt, token) for fmt in codec.formats() for token in FORMATS[fmt].stop_tokens]
QUOTE = '<|"|>'  # Gemma's string quote


def conversation(fmt: str | None = None, **texts: str) -> list[dict[str, Any]]:
    """system, user, an assistant turn with reasoning and a call, its result; any text can be
    replaced by keyword (``user``, ``reasoning``, ``argument``, ``result``, ``name``). ``fmt``:
    the call's id as that format's template takes one (``call_id``)."""
    get = texts.get
    own_id = call_id(fmt, "call_1") if fmt else "call_1"
    call = {
        "id": own_id,
        "type": "function",
        "function": {
            "name": get("name", "get_weather"),
            "arguments": {"city": get("argument", "Paris"), "days": 2},
        },
    }
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": get("user", "Weather in Paris?")},
        {
            "role": "assistant",
            "reasoning_content": get("reasoning", "Look it up."),
            "reasoning": get("reasoning", "Look it up."),
            "tool_calls": [call],
        },
        {"role": "tool", "tool_call_id": own_id, "content": get("result", "18 C")},
    ]


def render(fmt: str, messages: Any, **kwargs: Any) -> str:
    return codec.load(fmt).render(messages, now=NOW, **kwargs)


@pytest.mark.parametrize(("fmt", "token"), STOP_TOKENS)
@pytest.mark.parametrize(
    ("field", "index", "where"),
    [
        ("user", 1, "content"),
        ("result", 3, "content"),
        ("argument", 2, "tool_calls[0].function.arguments.city"),
        ("name", 2, "tool_calls[0].function.name"),
    ],
)
def test_special_token_refused(fmt: str, token: str, field: str, index: int, where: str) -> None:
    messages = conversation(fmt, **{field: f"abc{token}def"})
    pattern = f"special token {re.escape(repr(token))} in {re.escape(where)} would be read as"
    with pytest.raises(codec.RenderError, match=pattern) as caught:
        render(fmt, messages)
    assert (caught.value.message_index, caught.value.offset) == (index, 3)
    assert f"(message {index}, offset 3)" in str(caught.value)


@pytest.mark.parametrize("fmt", codec.formats())
@given(data=st.data())
def test_every_special_token_refused_in_user_text(fmt: str, data: st.DataObject) -> None:
    """Any special token of the format, anywhere in user text, is found at its offset."""
    text, _ = data.draw(special_token_texts(fmt))
    first = re.search("|".join(map(re.escape, special_tokens(FORMATS[fmt].grammar))), text)
    assert first is not None
    with pytest.raises(codec.RenderError, match="special token") as caught:
        render(fmt, [{"role": "user", "content": [{"type": "text", "text": text}]}])
    assert caught.value.message_index == 0
    assert caught.value.offset == first.start()


@pytest.mark.parametrize(("fmt", "token"), STOP_TOKENS)
@pytest.mark.parametrize("field", ["user", "reasoning", "result", "argument"])
def test_allow_special_tokens_renders_them_as_transformers_does(fmt: str, token: str, field: str) -> None:
    messages = conversation(fmt, **{field: f"abc{token}def"})
    prompt = render(fmt, messages, allow_special_tokens=True)
    case = RenderCase(messages, None, {}, True)
    assert prompt == reference_render(fmt, case, NOW)
    assert f"abc{token}def" in prompt or field == "reasoning"  # Solar/Gemma drop old reasoning


def test_special_token_in_system_text_and_call_id_refused() -> None:
    messages = conversation()
    messages[0] = {"role": "system", "content": "<|begin|>user"}
    with pytest.raises(codec.RenderError, match=r"'<\|begin\|>' in content") as caught:
        render("solar-open", messages)
    assert (caught.value.message_index, caught.value.offset) == (0, 0)
    messages = conversation()
    messages[2]["tool_calls"][0]["id"] = "x<|tool_call:name|>"
    with pytest.raises(codec.RenderError, match=r"in tool_calls\[0\]\.id"):
        render("solar-open", messages)


def test_special_token_in_argument_key_and_nested_value_refused() -> None:
    messages = conversation()
    messages[2]["tool_calls"][0]["function"]["arguments"] = {"a": [{"b": "x</arg_value>"}]}
    with pytest.raises(codec.RenderError, match=r"arguments\.a\[0\]\.b") as caught:
        render("glm", messages)
    assert caught.value.offset == 1
    messages[2]["tool_calls"][0]["function"]["arguments"] = {"k</arg_key>": 1}
    with pytest.raises(codec.RenderError, match="arguments key"):
        render("glm", messages)


@pytest.mark.parametrize(("fmt", "token"), STOP_TOKENS)
def test_special_token_in_tools_refused(fmt: str, token: str) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": f"x{token}",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    with pytest.raises(codec.RenderError, match=r"in tools\[0\]\.function\.description") as caught:
        render(fmt, conversation(fmt), tools=[tool])
    assert (caught.value.message_index, caught.value.offset) == (None, 1)
    render(fmt, conversation(fmt), tools=[tool], allow_special_tokens=True)


@pytest.mark.parametrize("fmt", [name for name, spec in FORMATS.items() if spec.family is glm.FAMILY])
@pytest.mark.parametrize(
    ("content", "reasoning", "answer"),
    [
        ("<think>Plan.</think>Sunny.", "Plan.", "Sunny."),
        ("</think>Sunny.", "", "Sunny."),
        ("\n<think>a\nb</think>\n\nc ", "a\nb", "\n\nc "),
    ],
)
def test_glm_think_in_content_is_reasoning(fmt: str, content: str, reasoning: str, answer: str) -> None:
    """GLM's template splits ``<think>…</think>answer`` content itself; codec lets that one
    shape through and renders it as reasoning + content, as transformers does."""
    history = [{"role": "user", "content": "Weather?"}]
    inline = [*history, {"role": "assistant", "content": content}]
    split = [
        *history,
        {
            "role": "assistant",
            "content": answer,
            "reasoning_content": reasoning,
            "reasoning": reasoning,
        },
    ]
    prompt = render(fmt, inline, add_generation_prompt=False)
    assert prompt == render(fmt, split, add_generation_prompt=False)
    assert prompt == reference_render(fmt, RenderCase(inline, None, {}, False), NOW)


@pytest.mark.parametrize("content", ["<think>a</think>b<|user|>", "<think>a<|user|></think>b", "x<think>a</think>b"])
def test_glm_assistant_content_of_any_shape_renders_as_transformers_does(content: str) -> None:
    """Assistant content is the model's text: markers in it are not refused, whatever its shape,
    and the template does with it what it does in transformers."""
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": content}]
    prompt = render("glm", messages, add_generation_prompt=False)
    assert prompt == reference_render("glm", RenderCase(messages, None, {}, False), NOW)


@pytest.mark.parametrize(("fmt", "token"), STOP_TOKENS)
@pytest.mark.parametrize("field", ["content", "reasoning_content"])
def test_special_token_in_assistant_text_renders(fmt: str, token: str, field: str) -> None:
    """Assistant content and reasoning are what the model wrote (a lenient reply keeps markers
    it could not structure there): they render as transformers renders them, not refused."""
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "Sure.", field: f"abc{token}def"},
        {"role": "user", "content": "next"},
    ]
    prompt = render(fmt, messages)
    assert prompt == reference_render(fmt, RenderCase(messages, None, {}, True), NOW)
    assert f"abc{token}def" in prompt or field == "reasoning_content"  # Solar/Gemma drop old reasoning


@pytest.mark.parametrize("field", ["argument", "result"])
def test_gemma_quote_refused_even_when_special_tokens_are_allowed(field: str) -> None:
    messages = conversation(**{field: f"say {QUOTE}hi{QUOTE}"})
    for allow in (False, True):
        with pytest.raises(codec.RenderError, match="no escape for") as caught:
            render("gemma4", messages, allow_special_tokens=allow)
        assert caught.value.offset == 4


def test_gemma_quote_in_nested_argument_and_tool_declaration_refused() -> None:
    messages = conversation()
    messages[2]["tool_calls"][0]["function"]["arguments"] = {"a": {"b": [QUOTE]}}
    with pytest.raises(codec.RenderError, match=r"arguments\.a\.b\[0\] contains"):
        render("gemma4", messages, allow_special_tokens=True)
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {
                "type": "object",
                "properties": {"u": {"type": "string", "enum": [f"a{QUOTE}"]}},
            },
        },
    }
    with pytest.raises(codec.RenderError, match=r"tools\[0\].*enum\[0\] contains") as caught:
        render("gemma4", conversation(), tools=[tool], allow_special_tokens=True)
    assert caught.value.message_index is None


def test_gemma_quote_outside_strings_is_an_ordinary_special_token() -> None:
    messages = conversation(user=f"a{QUOTE}b")
    with pytest.raises(codec.RenderError, match="special token"):
        render("gemma4", messages)
    assert f"a{QUOTE}b" in render("gemma4", messages, allow_special_tokens=True)


def test_unknown_option_lists_the_known_ones() -> None:
    pattern = (
        r"unknown option 'enable_thinking' for format 'glm'; its template reads: "
        r"clear_thinking, reasoning_effort$"
    )
    with pytest.raises(codec.RenderError, match=pattern):
        render("glm", conversation(), enable_thinking=True)
    with pytest.raises(codec.RenderError, match="unknown options 'bos_token', 'colour'"):
        render("gemma4", conversation(), colour=1, bos_token="<s>")


def test_stream_checks_options_too() -> None:
    with pytest.raises(codec.RenderError, match="unknown option 'think_render_option'"):
        codec.load("glm").stream(think_render_option="all")


def test_template_raise_exception_is_a_render_error_naming_the_message() -> None:
    template = (
        "{% for m in messages %}{% if m.role == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}{% endfor %}"
    )
    custom = codec.load("gemma4", template=template)
    messages = [{"role": "user", "content": "a"}, {"role": "system", "content": "s"}]
    with pytest.raises(codec.RenderError, match="refused the input: System role not supported") as caught:
        custom.render(messages)
    assert caught.value.message_index == 1


@pytest.mark.parametrize(
    ("template", "pattern"),
    [
        ("{{ messages[0].content + 1 }}", "failed: TypeError"),
        ("{{ colour.shade }}", "failed: UndefinedError: 'colour' is undefined"),
        ("{{ messages.__class__.__mro__ }}", "failed: SecurityError"),
        ("{% set x = messages.append(1) %}", "failed: SecurityError"),
        ("{% set ns = namespace(_x=1) %}", "failed: SecurityError"),
    ],
)
def test_other_template_failures_are_render_errors(template: str, pattern: str) -> None:
    with pytest.raises(codec.RenderError, match=pattern):
        codec.load("glm", template=template).render([{"role": "user", "content": "a"}])


def test_a_template_failure_caused_by_the_tools_names_no_message() -> None:
    tool = {"type": "function", "name": "no_function_key"}
    with pytest.raises(codec.RenderError, match="failed: UndefinedError") as caught:
        render("gemma4", conversation(), tools=[tool])
    assert caught.value.message_index is None


def test_template_syntax_error_is_a_render_error() -> None:
    with pytest.raises(codec.RenderError, match=r"does not compile: .* line 1"):
        codec.load("glm", template="{% if %}")


def test_user_template_reads_its_own_options_and_date() -> None:
    custom = codec.load("solar-open", template="{{ strftime_now('%Y') }} {{ colour | default('-') }}")
    assert custom.options == {"colour"}
    assert custom.render([], now=NOW, colour="red") == "2026 red"


@pytest.mark.parametrize(
    ("messages", "pattern"),
    [
        (["hello"], "a message must be a dict or a codec message, got str"),
        ([{"role": "robot", "content": "x"}], "unknown role 'robot'"),
        ([{"role": "user"}], "invalid user message at content"),
        ([{"role": "user", "content": "x", "colour": 1}], "invalid user message at colour"),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}],
                }
            ],
            "arguments must be a JSON object, got list",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{x"}}]}],
            "arguments are not valid JSON",
        ),
        ({"role": "user", "content": "x"}, "messages must be a list of messages, got dict"),
    ],
)
def test_bad_message_shapes(messages: Any, pattern: str) -> None:
    with pytest.raises(codec.RenderError, match=pattern):
        render("glm", messages)


@pytest.mark.parametrize(
    ("tools", "pattern"),
    [
        (["get_weather"], r"tools\[0\] must be a JSON-schema object, got 'get_weather'"),
        ({"type": "function"}, "tools must be a list of JSON-schema objects"),
    ],
)
def test_bad_tools(tools: Any, pattern: str) -> None:
    with pytest.raises(codec.RenderError, match=pattern):
        render("glm", conversation(), tools=tools)


def test_message_index_of_a_bad_message() -> None:
    with pytest.raises(codec.RenderError, match=r"\(message 2\)") as caught:
        render("glm", [*conversation()[:2], {"role": "user", "content": 3}])
    assert caught.value.message_index == 2


def _misspelt(name: str) -> str:
    return name.replace("-", "_") if "-" in name else name[:-1] + chr(ord(name[-1]) + 1)


@pytest.mark.parametrize("fmt", codec.formats())
def test_unknown_format_suggests_close_matches(fmt: str) -> None:
    name = _misspelt(fmt)
    with pytest.raises(codec.UnknownFormatError, match=f"Did you mean .*'{fmt}'") as caught:
        codec.load(name)
    assert fmt in caught.value.close_matches


def test_a_prefix_of_a_format_name_suggests_it() -> None:
    with pytest.raises(codec.UnknownFormatError, match=r"Did you mean .*'solar-open'"):
        codec.load("solar")


MODEL_IDS = [(model_id, fmt) for fmt in codec.formats() for model_id in FORMATS[fmt].model_ids]


@pytest.mark.parametrize(("model_id", "fmt"), MODEL_IDS)
def test_load_by_model_id(model_id: str, fmt: str) -> None:
    """Every model id of the registry, as written or upper-cased; and the family fragment."""
    assert codec.load(model_id).name == fmt
    assert codec.load(model_id.upper()).name == fmt
    assert codec.load(FORMATS[fmt].model_family).name == fmt


def test_other_ids_of_a_model_family_load_its_format() -> None:
    assert codec.load("google/gemma-4-E2B-it-qat").name == "gemma4"


@pytest.mark.parametrize("fmt", codec.formats())
def test_models_and_dicts_render_alike(fmt: str) -> None:
    messages: list[AnyMessage] = [
        codec.SystemMessage(content="Be brief."),
        codec.UserMessage(content="Weather?"),
        codec.AssistantMessage(
            reasoning="Look.",
            tool_calls=(codec.ToolCall(id=call_id(fmt, "call_1"), name="w", arguments={"city": "Paris"}),),
        ),
        codec.ToolMessage(content="18 C", tool_call_id=call_id(fmt, "call_1")),
    ]
    assert render(fmt, messages) == render(fmt, [m.to_openai() for m in messages])


def test_empty_conversation_renders() -> None:
    """transformers refuses an empty conversation; codec renders what the template makes of it."""
    assert render("glm", []) == "[gMASK]<sop><|system|>Reasoning Effort: Max<|assistant|><think>"


@pytest.mark.parametrize(
    ("fmt", "options", "prompt"),
    [
        ("glm", {}, "<|assistant|><think>"),
        ("glm-effort", {}, "<|assistant|><think>"),
        ("glm-effort", {"enable_thinking": False}, "<|assistant|><think></think>"),
        ("glm-effort", {"reasoning_effort": "0"}, "<|assistant|><think></think>"),
        ("glm-effort", {"regular": True}, "<|assistant|>"),
        ("solar-open", {}, "<|begin|>assistant"),
        (
            "solar-open",
            {"reasoning_effort": "low"},
            "<|begin|>assistant<|think|><|end|><|begin|>assistant",
        ),
        ("gemma4", {}, "<|turn>model\n<|channel>thought\n<channel|>"),
        ("gemma4", {"enable_thinking": True}, "<|turn>model\n"),
    ],
)
def test_generation_prompt(fmt: str, options: dict[str, Any], prompt: str) -> None:
    renderer = codec.load(fmt)._renderer
    assert renderer.generation_prompt(options) == prompt
    assert renderer.generation_prompt(dict(options)) is renderer.generation_prompt(options)


def test_generation_prompt_checks_options() -> None:
    with pytest.raises(codec.RenderError, match="unknown option"):
        codec.load("gemma4")._renderer.generation_prompt({"clear_thinking": True})


def test_now_defaults_to_the_clock() -> None:
    today = datetime.now().strftime("%Y-%m-%d")
    prompt = codec.load("solar-open").render([{"role": "user", "content": "x"}])
    assert f"The current date is {today}." in prompt or datetime.now().strftime("%Y-%m-%d") != today


def test_an_option_a_macro_reads_before_setting_it_is_an_option() -> None:
    """A ``set`` inside a macro is the macro's own: a name the macro reads before it sets it is
    the caller's variable (gpt-oss's ``reasoning_effort`` in ``build_system_message``); a macro
    calling another macro reads no option."""
    source = (
        "{%- macro head() -%}{%- if effort is not defined %}{%- set effort = 'medium' %}{%- endif %}"
        "{{ effort }}{%- endmacro -%}{%- macro twice() -%}{{ head() }}{{ head() }}{%- endmacro -%}"
        "{{ twice() }}{% for m in messages %}{{ m.content }}{% endfor %}"
    )
    c = codec.load("glm", template=source)
    assert c.options == frozenset({"effort"})
    assert c.render([{"role": "user", "content": "x"}], effort="low") == "lowlowx"
