"""``Renderer``: a format's chat template applied exactly as transformers' ``apply_chat_template``.

The steps, each of which can refuse the input with a ``RenderError``::

    messages ──► models.to_messages (validate) ──► to_template() dicts ──► special-token checks
    tools ─────► mappings, JSON values, bounded depth ───────────────────► special-token checks
    options ───► only the variables the template reads, JSON values ─────► special-token checks
                 └──► Jinja (codec.render.environment; a user's template on a budget) ──► prompt

What the template is given matches apply_chat_template: messages with ``None`` keys dropped,
arguments as mappings, reasoning under ``reasoning_content``, ``reasoning`` and ``thinking``; the
tools as given; ``bos_token``/``eos_token`` when the format has them; the options as keywords.

When the template fails, the error names the message it was reading (``codec.render.tracking``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cached_property
from typing import Any, Literal, get_args

import jinja2

from codec.errors import RenderError, describe
from codec.models import AnyMessage
from codec.registry import FormatSpec
from codec.render import budget
from codec.render.environment import compile_template, strftime_now, template_strings, template_variables
from codec.render.template_input import (
    TextRules,
    check_messages,
    check_options,
    check_tools,
    template_messages,
    template_options,
    template_tools,
)
from codec.render.tracking import Reads, failing_read
from codec.render.values import strings

# generation_prompt renders this one-message conversation with and without the prompt; the date
# is fixed so that Solar's strftime_now prints the same text in both.
_PROBE = ({"role": "user", "content": "x"},)
_PROBE_DATE = datetime(2000, 1, 1)
_PROMPT_CACHE_SIZE = 256

UnknownOptions = Literal["error", "ignore"]
_UNKNOWN_OPTIONS = frozenset(get_args(UnknownOptions))
"""What to do with an option the template never reads: refuse it (``"error"``), or drop it
(``"ignore"``, for a router that sends one set of options to every model)."""


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

    @cached_property
    def developer_role(self) -> bool:
        """Whether the template names the ``developer`` role (Gemma 4's: ``messages[0]['role'] in
        ['system', 'developer']``). If it does, a developer message reaches it unchanged, as in
        transformers; if not, it is given as a system message (docs/input.md)."""
        return "developer" in template_strings(self._source, self._trusted)

    def select_options(self, options: Mapping[str, Any], unknown: UnknownOptions) -> dict[str, Any]:
        """The options to render with: all of them, after ``check_options``, for ``"error"``;
        those the template reads for ``"ignore"``. Any other ``unknown`` is a ``RenderError``."""
        if not isinstance(unknown, str) or unknown not in _UNKNOWN_OPTIONS:
            choices = " or ".join(map(repr, get_args(UnknownOptions)))
            raise RenderError(f"unknown_options must be {choices}, got {describe(unknown)}")
        if not options:
            return {}
        if unknown == "ignore":
            return {name: value for name, value in options.items() if name in self.variables}
        self.check_options(options)
        return dict(options)

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
        models, message_dicts = template_messages(messages, developer_role=self.developer_role)
        tool_dicts = template_tools(tools)
        option_values = template_options(options)
        check_messages(models, message_dicts, self._rules, allow_special_tokens=allow_special_tokens)
        if tool_dicts:
            check_tools(tool_dicts, self._rules, allow_special_tokens=allow_special_tokens)
        if option_values:
            check_options(option_values, self._rules, allow_special_tokens=allow_special_tokens)
        self._check_content(models)
        context = {
            **self._special_tokens,
            **option_values,
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
        key = repr(sorted(template_options(options).items())) if options else ""  # JSON values only
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

    def _check_content(self, models: Sequence[AnyMessage]) -> None:
        """A list of content parts, refused up front where the bundled template can only join
        strings (Solar's ``+`` would fail with a TypeError about str and list)."""
        if not (self._trusted and self.spec.string_content_only):
            return
        for index, model in enumerate(models):
            if isinstance(getattr(model, "content", None), tuple):
                raise RenderError(
                    f"the {self.spec.name!r} template renders only text content, but "
                    f"messages[{index}].content is a list of parts; join its text into one string",
                    message_index=index,
                )

    def _run(self, context: dict[str, Any]) -> str:
        size = (0, 0) if self._trusted else _input_size(context)
        try:
            return self._render(context, size)
        except budget.BudgetExceeded:
            raise
        except Exception as error:  # the template is code from outside: anything can escape it
            raise self._template_error(error, context, size) from None

    def _render(self, context: dict[str, Any], size: tuple[int, int]) -> str:
        """One render: a user's template on a budget sized to the conversation (``size``: its
        messages and tools, and the characters of their text)."""
        if self._trusted:
            return self._template.render(context)
        token = budget.spending(budget.Budget.for_input(*size))
        try:
            return self._template.render(context)
        finally:
            budget.restore(token)

    def _template_error(self, error: Exception, context: dict[str, Any], size: tuple[int, int]) -> RenderError:
        """The error, naming what the template was reading when it failed (one more render)."""
        reads = failing_read(lambda tracked: self._render(tracked, size), context)
        if type(error) is jinja2.TemplateError:  # the template's own raise_exception(...)
            text = f"the chat template refused the input: {error}"
        else:
            text = f"the chat template failed: {type(error).__name__}: {_explained(error, reads)}"
        return RenderError(text, message_index=reads.message_index)


def _input_size(context: dict[str, Any]) -> tuple[int, int]:
    """The messages and tools of a render's context, and the characters of all their text."""
    given = (context["messages"], context["tools"] or ())
    return len(given[0]) + len(given[1]), sum(map(len, strings(given)))


def _explained(error: Exception, reads: Reads) -> str:
    """Jinja's text for a missing key (``'dict object' has no attribute 'id'``) or a use of
    one (``Object of type Undefined is not JSON serializable``) said in words: which message
    or tool has no such key. Any other error as it is, with the tool being read, if any."""
    text = str(error)
    missing = None
    if isinstance(error, jinja2.UndefinedError):
        name = text.rpartition(" has no attribute ")[2].strip("'\"") if " has no attribute " in text else None
        missing = reads.missing.get(name) if name else None
    elif "Undefined" in text:
        missing = reads.last_missing
    if missing is not None:
        return f"{missing}, which the template reads ({text})"
    if reads.owner is not None and reads.message_index is None:
        return f"{text} (while reading {reads.path})"
    return text
