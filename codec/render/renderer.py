"""``Renderer``: a format's chat template applied exactly as transformers' ``apply_chat_template``.

The steps, each of which can refuse the input with a ``RenderError``::

    messages ──► models.to_messages (validate) ──► to_template() dicts ──► special-token checks
    tools ─────► mappings, plain JSON ─────────────────────────────────► special-token checks
    options ───► only the variables the template reads
                 └──► Jinja (codec.render.environment) ──► prompt

What the template is given matches apply_chat_template: messages with ``None`` keys dropped,
arguments as mappings, reasoning under ``reasoning_content``, ``reasoning`` and ``thinking``; the
tools as given; ``bos_token``/``eos_token`` when the format has them; the options as keywords.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from typing import Any

import jinja2

from codec.errors import RenderError
from codec.registry import FormatSpec
from codec.render.environment import compile_template, strftime_now, template_variables
from codec.render.template_input import (
    TextRules,
    check_messages,
    check_tools,
    plain,
    template_messages,
    template_tools,
)

# generation_prompt renders this one-message conversation with and without the prompt; the date
# is fixed so that Solar's strftime_now prints the same text in both.
_PROBE = ({"role": "user", "content": "x"},)
_PROBE_DATE = datetime(2000, 1, 1)
_PROMPT_CACHE_SIZE = 256


class Renderer:
    """One format's template, compiled once, with the checks ``render`` makes before running it.

    ``trusted`` marks codec's own templates; any other template runs in Jinja's sandbox.
    """

    def __init__(self, spec: FormatSpec, source: str, *, trusted: bool) -> None:
        self.spec = spec
        self._template = compile_template(source, trusted)
        self._source, self._trusted = source, trusted
        self._rules = TextRules.for_grammar(spec.grammar)
        tokens = {"bos_token": spec.bos_token, "eos_token": spec.eos_token}
        self._special_tokens = {name: text for name, text in tokens.items() if text is not None}
        self._prompts: dict[str, str] = {}

    @cached_property
    def variables(self) -> frozenset[str]:
        """The options the template reads (found on first use: the analysis costs about as
        much as compiling the template, and most calls pass no options)."""
        return template_variables(self._source, self._trusted)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """``RenderError`` naming any option the template never reads, and listing those it does."""
        if not options:
            return
        unknown = sorted(set(options) - self.variables)
        if unknown:
            known = ", ".join(sorted(self.variables)) or "none"
            raise RenderError(
                f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"for format {self.spec.name!r}; its template reads: {known}"
            )

    def render(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Mapping[str, Any]] | None,
        add_generation_prompt: bool,
        now: datetime | None,
        allow_special_tokens: bool,
        options: Mapping[str, Any],
    ) -> str:
        """The prompt for ``messages``; see ``Codec.render``."""
        self.check_options(options)
        models, message_dicts = template_messages(messages)
        tool_dicts = template_tools(tools)
        check_messages(
            models, message_dicts, self._rules, allow_special_tokens=allow_special_tokens
        )
        if tool_dicts:
            check_tools(tool_dicts, self._rules, allow_special_tokens=allow_special_tokens)
        context = {
            **self._special_tokens,
            **plain(dict(options)),
            "messages": message_dicts,
            "tools": tool_dicts,
            "documents": None,
            "add_generation_prompt": add_generation_prompt,
            "strftime_now": strftime_now(now),
        }
        return self._run(context)

    def generation_prompt(self, options: Mapping[str, Any]) -> str:
        """What ``add_generation_prompt=True`` appends to a prompt rendered with ``options``.

        The stream parser feeds this text first, so the grammar knows where the model starts
        (GLM's prompt ends inside ``<think>``). Cached per options.
        """
        key = repr(sorted(options.items()))
        prompt = self._prompts.get(key)
        if prompt is None:
            prompt = self._generation_prompt(options)
            if len(self._prompts) >= _PROMPT_CACHE_SIZE:
                self._prompts.clear()
            self._prompts[key] = prompt
        return prompt

    def _generation_prompt(self, options: Mapping[str, Any]) -> str:
        with_prompt, without = self._probe(True, options), self._probe(False, options)
        if not with_prompt.startswith(without):
            raise RenderError(
                f"the {self.spec.name!r} template changes the conversation when "
                "add_generation_prompt is set, so its generation prompt is not a suffix"
            )
        return with_prompt[len(without) :]

    def _probe(self, add_generation_prompt: bool, options: Mapping[str, Any]) -> str:
        return self.render(
            _PROBE,
            tools=None,
            add_generation_prompt=add_generation_prompt,
            now=_PROBE_DATE,
            allow_special_tokens=False,
            options=options,
        )

    def _run(self, context: dict[str, Any]) -> str:
        try:
            return self._template.render(context)
        except Exception as error:  # the template is code from outside: anything can escape it
            raise self._template_error(error, context) from None

    def _template_error(self, error: Exception, context: dict[str, Any]) -> RenderError:
        if type(error) is jinja2.TemplateError:  # the template's own raise_exception(...)
            text = f"the chat template refused the input: {error}"
        else:
            text = f"the chat template failed: {type(error).__name__}: {error}"
        return RenderError(text, message_index=self._failing_message(context))

    def _failing_message(self, context: dict[str, Any]) -> int | None:
        """The message whose addition makes the template fail: the shortest failing prefix.
        ``None`` when the template fails without any message (the tools or options are at
        fault) or only with all of them."""
        messages = context["messages"]
        for end in range(len(messages) + 1):
            try:
                self._template.render({**context, "messages": messages[:end]})
            except Exception:  # any failure marks the prefix, as in _run
                return end - 1 if end else None
        return None
