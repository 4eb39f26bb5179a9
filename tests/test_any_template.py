"""Any template (issue 10, part 4): ``codec.load`` of a Hugging Face model directory, a
``tokenizer_config.json``, a ``.jinja`` file or template text recognises the format the
template is written for — by hash when it is a bundled template, else by the special tokens it
writes — renders byte-identically to transformers with that template, sandboxed, and refuses a
template it cannot place with the list of what it looked for.

Every test runs for each format of the registry. A format registered at run time with a
bundled template (``--with-throwaway-format``) is recognised as the bundled format that owns
the template, which ``owner`` names.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

import codec
from codec._resources import read_text
from codec.detect import evidence, spelled_out
from codec.engine.grammar import compiled
from codec.formats._demo_scenario import NOW, TOOLS
from codec.models import to_messages
from codec.registry import FORMATS
from codec.strategies import RenderCase
from support.reference import reference_render

FORMATS_ = codec.formats()


def bundled(fmt: str) -> str:
    return read_text("templates", FORMATS[fmt].template)


def owner(fmt: str) -> str:
    """The first format of the registry with ``fmt``'s template: the one detection names."""
    return next(name for name, spec in FORMATS.items() if spec.template == FORMATS[fmt].template)


def edited(template: str) -> str:
    """A local edit that changes the bytes (so the hash) but not the output: a Jinja comment
    first, and a trailing newline (which Jinja drops, as transformers' environment does)."""
    return "{# edited locally #}" + template + "\n"


def demo_cases(fmt: str) -> list[RenderCase]:
    """The demo conversation with its tool calls and results, as a prompt and as history."""
    options = dict(FORMATS[fmt].demo.options)
    # as a template reads them (reasoning under both names, arguments as objects), which is
    # what transformers must be given to see what codec's template sees
    messages = [message.to_template() for message in to_messages(FORMATS[fmt].demo.messages)]
    return [RenderCase(messages, TOOLS, options, True), RenderCase(messages[:5], TOOLS, options, False)]


def assert_renders_like_transformers(c: codec.Codec, fmt: str, template: str, now: datetime = NOW) -> None:
    for case in demo_cases(fmt):
        expected = reference_render(fmt, case, now, chat_template=template)
        prompt = c.render(
            case.messages, tools=case.tools, add_generation_prompt=case.add_generation_prompt, now=now, **case.options
        )
        assert prompt == expected


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def tokenizer_config(path: Path, chat_template: object) -> Path:
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": chat_template}
    return write(path, json.dumps(config, ensure_ascii=False, indent=2))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_a_model_directory_with_tokenizer_config_loads_and_renders_like_transformers(fmt: str, tmp_path: Path) -> None:
    template = edited(bundled(fmt))
    tokenizer_config(tmp_path / "model" / "tokenizer_config.json", template)
    c = codec.load(tmp_path / "model")
    assert c.name == owner(fmt)
    assert_renders_like_transformers(c, fmt, template)


@pytest.mark.parametrize("fmt", FORMATS_)
def test_chat_template_jinja_in_a_model_directory_wins_over_tokenizer_config(fmt: str, tmp_path: Path) -> None:
    """transformers reads chat_template.jinja before tokenizer_config.json's chat_template."""
    other = next(name for name in FORMATS_ if FORMATS[name].grammar != FORMATS[fmt].grammar)
    write(tmp_path / "model" / "chat_template.jinja", bundled(fmt))
    tokenizer_config(tmp_path / "model" / "tokenizer_config.json", bundled(other))
    c = codec.load(str(tmp_path / "model"))
    assert c.name == owner(fmt)
    assert_renders_like_transformers(c, fmt, bundled(fmt))


@pytest.mark.parametrize("fmt", FORMATS_)
@pytest.mark.parametrize("as_str", [False, True], ids=["Path", "str"])
def test_a_standalone_chat_template_jinja_loads_and_renders_like_transformers(
    fmt: str, as_str: bool, tmp_path: Path
) -> None:
    path = write(tmp_path / "chat_template.jinja", bundled(fmt))
    c = codec.load(str(path) if as_str else path)
    assert c.name == owner(fmt)
    assert_renders_like_transformers(c, fmt, bundled(fmt))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_the_default_of_a_list_of_named_templates_is_taken(fmt: str, tmp_path: Path) -> None:
    other = next(name for name in FORMATS_ if FORMATS[name].grammar != FORMATS[fmt].grammar)
    named = [{"name": "tool_use", "template": bundled(other)}, {"name": "default", "template": bundled(fmt)}]
    c = codec.load(tokenizer_config(tmp_path / "tokenizer_config.json", named))
    assert c.name == owner(fmt)
    assert_renders_like_transformers(c, fmt, bundled(fmt))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_a_template_is_recognised_by_what_it_writes_not_by_its_file_name(fmt: str, tmp_path: Path) -> None:
    """Another format's template under this format's file name is that other format."""
    other = next(name for name in FORMATS_ if FORMATS[name].grammar != FORMATS[fmt].grammar)
    path = write(tmp_path / FORMATS[fmt].template, edited(bundled(other)))
    c = codec.load(path)
    assert c.name == owner(other)
    assert_renders_like_transformers(c, other, edited(bundled(other)))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_each_bundled_template_is_recognised_by_hash(fmt: str) -> None:
    found = codec.detect(bundled(fmt))
    assert found == codec.Detection(owner(fmt), "hash", (FORMATS[owner(fmt)].template,))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_an_edited_template_is_recognised_by_its_tokens(fmt: str) -> None:
    """The hash no longer matches; the call opener and the grammar's own markers still say
    which format it is, and glm-effort's options tell it from glm (same grammar)."""
    found = codec.detect(edited(bundled(fmt)))
    assert (found.format, found.how) == (owner(fmt), "tokens")
    # The markers as the template writes them: a token written from pieces (DeepSeek-V3.2's
    # `'<' + dsml_token + 'invoke name="'`) is found joined (codec.detect.spelled_out).
    assert found.evidence and all(
        marker in spelled_out(bundled(fmt)) for marker in found.evidence if not marker.startswith("reads ")
    )


def other_grammars_tokens(fmt: str) -> set[str]:
    """The special tokens that count as evidence (codec.detect.evidence) in every grammar but ``fmt``'s."""
    grammar = FORMATS[fmt].grammar
    return {token for other in FORMATS.values() if other.grammar != grammar for token in evidence(other.grammar)}


def own_markers(fmt: str) -> list[str]:
    """The markers the tokens rule counts for ``fmt``: its grammar's special tokens that no
    other grammar has, less bos and eos (a template is given those as variables), call opener
    first (when the call opens with a marker), then those it is written with (gpt-oss's opener
    ``<|channel|>commentary `` holds ``<|channel|>``: a text with the opener has them too)."""
    spec = FORMATS[fmt]
    others = other_grammars_tokens(fmt)
    grammar = compiled(spec.grammar)
    # A call that opens with no marker (Llama 3's bare JSON object, CALL_OPEN a pattern) has
    # none to count: the grammar's own markers alone tell it; where a marker opens the list the
    # call stands in (CALLS_OPEN: Mistral v0.3's [TOOL_CALLS] before [{…}]), that one is its opener.
    opener = [text for text, name in grammar.markers.items() if name == "CALL_OPEN"]
    opener = opener or [text for text, name in grammar.markers.items() if name == "CALLS_OPEN"]
    passed_in = {spec.bos_token, spec.eos_token}
    rest = [token for token in evidence(spec.grammar) if token not in others | passed_in | set(opener)]
    within = [token for token in rest if any(token in text for text in opener)]
    return [*opener, *within, *(token for token in rest if token not in within)]


@pytest.mark.parametrize("fmt", FORMATS_)
def test_the_call_opener_and_half_of_a_grammars_own_markers_recognise_it(fmt: str) -> None:
    markers = own_markers(fmt)
    if len(markers) == 1:
        pytest.skip("no marker of its own: told apart by the markers its rivals lack (the rivals rule)")
    # The opener counts among the grammar's own markers only when no other grammar has it; a
    # shared one (Qwen3-Coder's <tool_call>) comes on top of half of the others, rounded up.
    shared = markers[0] in other_grammars_tokens(fmt)
    counted = len(markers) - shared
    half = shared + (counted + 1) // 2
    found = codec.detect("".join(markers[:half]))
    # The first format (registry order) whose grammar counts the same markers: one of the same
    # grammar, or, for a grammar with no marker of its own beside its call opener, the first
    # such grammar with that opener (Qwen3 before GLM-4.5: the opener alone names Qwen3).
    first_alike = next(name for name in FORMATS if own_markers(name) == markers)
    # Every own marker the text holds is evidence, one written inside a longer one too (gpt-oss's
    # <|constrain|> in <|channel|>commentary<|constrain|>).
    written = {marker for marker in markers if marker in "".join(markers[:half])}
    assert (found.format, found.how, set(found.evidence)) == (first_alike, "tokens", written)
    fewer = "".join(markers[: half - 1])
    if sum(marker in fewer for marker in markers) < half:  # one marker fewer, none hidden inside another
        with pytest.raises(codec.UnknownFormatError):
            codec.detect(fewer)
    opener = compiled(FORMATS[fmt].grammar).display("CALL_OPEN")
    # All but the call opener, where no other marker is written with it (gpt-oss's
    # `<|channel|>commentary to=` holds its opener `<|channel|>commentary `).
    if opener in markers and opener not in "".join(markers[1:]):
        with pytest.raises(codec.UnknownFormatError):
            codec.detect("".join(markers[1:]))


def test_glm_effort_is_told_from_glm_by_the_options_its_template_reads() -> None:
    found = codec.detect(edited(bundled("glm-effort")))
    assert {"reads mode", "reads regular", "reads thinking_level"} <= set(found.evidence)
    assert not any(item.startswith("reads ") for item in codec.detect(edited(bundled("glm"))).evidence)


@pytest.mark.parametrize("fmt", FORMATS_)
def test_an_edited_template_renders_like_transformers_and_runs_sandboxed(fmt: str, tmp_path: Path) -> None:
    c = codec.load(write(tmp_path / "chat_template.jinja", edited(bundled(fmt))))
    assert_renders_like_transformers(c, fmt, edited(bundled(fmt)))
    escape = write(tmp_path / "escape.jinja", "{{ messages.__class__.__mro__ }}" + edited(bundled(fmt)))
    with pytest.raises(codec.RenderError, match="SecurityError"):
        codec.load(escape).render(FORMATS[fmt].demo.messages, tools=TOOLS, now=NOW)


@pytest.mark.parametrize(
    "template",
    [
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
        # A few tags GLM (and Qwen3) write, inside another model's layout (Mistral's, which no
        # format of the registry writes), are not enough.
        "{% for m in messages %}[INST] {{ m.role }}[/INST]\n<think></think><tool_call></s>{% endfor %}",
    ],
    ids=["no markers", "a few shared tags"],
)
def test_a_template_of_no_known_format_is_an_unknown_format_listing_what_was_looked_for(
    template: str, tmp_path: Path
) -> None:
    with pytest.raises(codec.UnknownFormatError) as raised:
        codec.detect(template)
    message = str(raised.value)
    for spec in FORMATS.values():
        assert spec.name in message
        grammar = compiled(spec.grammar)
        if "CALL_OPEN" in grammar.markers.values():  # a call that opens with no marker has none to list
            assert grammar.display("CALL_OPEN") in message
    with pytest.raises(codec.UnknownFormatError, match=r"the chat template in .*mystery\.jinja"):
        codec.load(template=write(tmp_path / "mystery.jinja", template))


@pytest.mark.parametrize("fmt", FORMATS_)
def test_template_text_alone_is_recognised(fmt: str) -> None:
    c = codec.load(template=edited(bundled(fmt)))
    assert c.name == owner(fmt)
    assert_renders_like_transformers(c, fmt, edited(bundled(fmt)))


def test_a_named_format_with_a_template_path_reads_any_kind_of_path(tmp_path: Path) -> None:
    """``load(name, template=path)`` pairs the named grammar with the template at path, which
    may be a model directory like any path ``load`` takes."""
    tokenizer_config(tmp_path / "model" / "tokenizer_config.json", "{{ messages | length }}")
    c = codec.load("glm", template=tmp_path / "model")
    assert c.name == "glm"
    assert c.render([{"role": "user", "content": "hi"}]) == "1"


def test_a_user_template_codec_names_its_format_and_where_its_template_came_from(tmp_path: Path) -> None:
    path = write(tmp_path / "glm.jinja", edited(bundled("gemma4")))
    c = codec.load(path)
    assert c.name == "gemma4"
    assert repr(c) == f"<codec.Codec 'gemma4' with the chat template in {path}, recognised by tokens>"
    assert repr(codec.load("glm")) == "codec.load('glm')"
    assert repr(codec.load(template=bundled("glm"))).endswith("recognised by hash>")


def test_a_path_and_a_template_together_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "chat_template.jinja", bundled("glm"))
    with pytest.raises(codec.RenderError, match="not both"):
        codec.load(path, template="{{ 1 }}")


def test_a_name_that_is_neither_a_path_nor_a_format_keeps_its_suggestions() -> None:
    with pytest.raises(codec.UnknownFormatError, match="Did you mean 'gemma4'"):
        codec.load("gema4")


@pytest.mark.parametrize(
    ("files", "pattern"),
    [
        ({}, "no chat template in the directory .*chat_template.jinja.*tokenizer_config.json"),
        ({"tokenizer_config.json": "{"}, r"tokenizer_config.json is not JSON: line 1"),
        ({"tokenizer_config.json": "{}"}, 'has no "chat_template"'),
        (
            {"tokenizer_config.json": json.dumps({"chat_template": [{"name": "rag", "template": "x"}]})},
            r"no \"default\" \(names: 'rag'\)",
        ),
        ({"tokenizer_config.json": json.dumps({"chat_template": 3})}, "got int"),
        ({"chat_template.jinja": b"\xff"}, "cannot read the chat template"),
    ],
    ids=["empty", "bad json", "no template", "no default", "not text", "not utf-8"],
)
def test_a_directory_without_a_readable_template_says_what_is_wrong(
    files: dict[str, str | bytes], pattern: str, tmp_path: Path
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(codec.RenderError, match=pattern):
        codec.load(tmp_path)


def test_a_template_given_as_a_path_string_is_read_not_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``load("glm", template="my.jinja")``: the path, not a template whose text is the path."""
    source = bundled("glm")
    write(tmp_path / "my.jinja", source)
    monkeypatch.chdir(tmp_path)
    by_string = codec.load("glm", template="my.jinja")
    messages = [{"role": "user", "content": "hi"}]
    assert by_string.render(messages, now="2026-01-01") == codec.load("glm").render(messages, now="2026-01-01")
    with pytest.raises(codec.RenderError, match="no such file"):
        codec.load("glm", template="missing.jinja")
    text_template = codec.load("glm", template="{{ messages[0]['content'] }}")
    assert text_template.render(messages) == "hi"
