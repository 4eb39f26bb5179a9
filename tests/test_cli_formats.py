"""``codec formats``: every registered format with its models, template options and stop tokens."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest

import codec
from codec.cli import main
from codec.registry import FORMATS


def run(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["formats", *argv]) == 0
    return out.getvalue()


def test_json_lists_every_format_with_its_facts() -> None:
    listed = json.loads(run("--json"))
    assert [entry["name"] for entry in listed] == codec.formats()
    for entry in listed:
        spec = FORMATS[entry["name"]]
        assert entry["models"] == list(spec.model_ids)
        assert entry["options"] == sorted(codec.load(spec.name).options)
        assert entry["stop_tokens"] == list(codec.load(spec.name).stop_tokens)
        assert entry["family"] == spec.family.name


@pytest.mark.parametrize("name", codec.formats())
def test_stop_tokens_are_special_tokens_of_the_format(name: str) -> None:
    from codec.engine.grammar import compiled

    tokens = codec.load(name).stop_tokens
    assert tokens, "a format must say where generation stops"
    assert set(tokens) <= set(compiled(FORMATS[name].grammar).special_tokens)


def test_the_readable_list_names_each_format_and_its_stop_tokens() -> None:
    shown = run()
    for name in codec.formats():
        assert f"{name}  (family " in shown
        assert " ".join(codec.load(name).stop_tokens) in shown


def test_glm_stops_where_formats_md_says() -> None:
    assert codec.load("glm").stop_tokens == ("<|endoftext|>", "<|user|>", "<|observation|>")
    assert codec.load("gemma4").stop_tokens == ("<eos>", "<turn|>", "<|tool_response>")
    assert codec.load("solar-open").stop_tokens == ("<|endoftext|>", "<|flush|>", "<|calls|>")
