"""The formats ``codec`` knows: each is data — a template, a grammar and a few facts.

Adding a format means adding a template to ``templates/``, a grammar to ``grammars/`` and an
entry here; never a subclass.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from codec.errors import UnknownFormatError


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """One chat format.

    ``model_ids`` are the Hugging Face ids ``load()`` accepts for it; ``model_family`` is a
    lower-case fragment that any other id of the family contains (``gemma-4``). ``bos_token`` and
    ``eos_token`` are passed to the template as ``apply_chat_template`` passes the tokenizer's.
    """

    name: str
    template: str
    grammar: str
    model_ids: tuple[str, ...]
    model_family: str
    bos_token: str | None = None
    eos_token: str | None = None
    effort_levels: tuple[str, ...] = ()  # reasoning_effort values with a header of their own


FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec(
            name="glm",
            template="glm.jinja",
            grammar="glm.lark",
            model_ids=("zai-org/GLM-5.3-Flash", "zai-org/GLM-5.3"),
            model_family="glm-5",
            eos_token="<|endoftext|>",
            effort_levels=("low", "high", "max"),
        ),
        FormatSpec(
            name="glm-effort",
            template="glm_effort.jinja",
            grammar="glm.lark",
            model_ids=(),
            model_family="glm-effort",
            eos_token="<|endoftext|>",
            effort_levels=("1", "2", "3", "4", "5", "6", "7", "8", "9", "swarm", "deep-swarm"),
        ),
        FormatSpec(
            name="solar-open",
            template="solar_open.jinja",
            grammar="solar_open.lark",
            model_ids=("upstage/Solar-Open-100B",),
            model_family="solar-open",
            eos_token="<|endoftext|>",
        ),
        FormatSpec(
            name="gemma4",
            template="gemma4.jinja",
            grammar="gemma4.lark",
            model_ids=(
                "google/gemma-4-31B-it",
                "google/gemma-4-26B-A4B-it",
                "google/gemma-4-E4B-it",
                "google/gemma-4-E2B-it",
            ),
            model_family="gemma-4",
            bos_token="<bos>",
            eos_token="<eos>",
        ),
    )
}


def formats() -> list[str]:
    """The format names ``load()`` knows, in registry order."""
    return list(FORMATS)


def find(name: str) -> FormatSpec:
    """The format for a format name or a model id; ``UnknownFormatError`` with close matches."""
    if name in FORMATS:
        return FORMATS[name]
    lowered = name.lower()
    for spec in FORMATS.values():
        if lowered in (model_id.lower() for model_id in spec.model_ids):
            return spec
    for spec in FORMATS.values():
        if spec.model_ids and spec.model_family in lowered:
            return spec
    known = formats() + [model_id for spec in FORMATS.values() for model_id in spec.model_ids]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    raise UnknownFormatError(name, close, formats())
