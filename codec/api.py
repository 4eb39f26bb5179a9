"""``Codec``: one format's renderer and parser behind the public API, and ``load``.

Longer than ~300 lines: one method per public call, each with the parameters it documents
(``unknown_options`` among them); the work is done in ``codec.render`` and ``codec.engine``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, cast

from lark.exceptions import VisitError
from pydantic import ValidationError

from codec import _canonical, constrain, registry
from codec._nesting import MAX_VALUE_DEPTH, NestedTooDeep, unwritable
from codec._prefix import PrefixCheck
from codec._prefix import check as check_prefix
from codec._resources import read_text
from codec.constrain import ToolChoice
from codec.detect import recognise
from codec.engine.stream import StreamParser
from codec.engine.whole_prompt import prompt_tree
from codec.errors import ParseError, RenderError, describe
from codec.limits import DEFAULT_LIMITS, Limits
from codec.models import AssistantMessage, Conversation, to_messages
from codec.registry import FormatSpec
from codec.render.call import render_time
from codec.render.renderer import Renderer, UnknownOptions
from codec.render.template_input import template_options, template_tools
from codec.template_files import TemplateFile, given_template, names_a_path, read_template
from codec.turn import Turn

Tools = Sequence[Mapping[str, Any]] | None


class Codec:
    """A chat format: render prompts with its template, parse completions with its grammar.

    Get one with ``codec.load(name)``. A ``Codec`` holds no per-conversation state; it is safe
    to share between threads and requests.
    """

    def __init__(self, spec: FormatSpec, template: str | None = None, *, origin: str | None = None) -> None:
        self.spec = spec
        self.origin = origin  # where a user template came from, for the repr
        trusted = template is None
        source = read_text("templates", spec.template) if trusted else template
        self._renderer = Renderer(spec, source or "", trusted=trusted)
        # Worked out once: each parser is given them (a parse is tens of microseconds).
        self._call_enders = spec.call_enders
        self._content_openers = spec.content_openers

    @property
    def name(self) -> str:
        """The format's name (``"glm"``, ``"gemma4"``, ...)."""
        return self.spec.name

    @property
    def options(self) -> frozenset[str]:
        """The template variables this format accepts as ``**options``."""
        return self._renderer.variables

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        """The strings generation stops at; pass them to the engine as stop sequences."""
        return self.spec.stop_tokens

    def __repr__(self) -> str:
        if self.origin is not None:
            return f"<codec.Codec {self.spec.name!r} with {self.origin}>"
        return f"codec.load({self.spec.name!r})"

    def render(
        self,
        messages: Sequence[Any],
        *,
        tools: Tools = None,
        add_generation_prompt: bool = True,
        now: datetime | date | str | None = None,
        allow_special_tokens: bool = False,
        unknown_options: UnknownOptions = "error",
        **options: Any,
    ) -> str:
        """The prompt the format's chat template produces for ``messages`` and ``tools``.

        Byte-identical to transformers' ``apply_chat_template(..., tokenize=False)`` for the same
        template variables. ``now`` fixes the date templates print (default: the clock).
        ``options`` are the template's own variables; one it never reads is a ``RenderError``,
        or, with ``unknown_options="ignore"``, left out. A special token inside message text is
        refused unless ``allow_special_tokens``. Messages may come as clients send them
        (docs/input.md): ``developer`` roles, ``name``, null ``refusal``/``audio``/....
        """
        return self._renderer.render(
            messages,
            tools=tools,
            add_generation_prompt=add_generation_prompt,
            now=as_datetime(now),
            allow_special_tokens=allow_special_tokens,
            options=self._renderer.select_options(options, unknown_options),
        )

    def render_conversation(self, conversation: Conversation, **overrides: Any) -> str:
        """``render`` of a ``Conversation`` (from ``parse_prompt``, ``canonical`` or the
        ``followed_by`` / ``with_tool_results`` helpers) with its tools, options and generation
        prompt; ``overrides`` replace any of them (e.g. ``now=``)."""
        if not isinstance(conversation, Conversation):
            raise RenderError(f"render_conversation takes a codec.Conversation, got {type(conversation).__name__}")
        arguments: dict[str, Any] = {
            "tools": list(conversation.tools) or None,
            "add_generation_prompt": conversation.add_generation_prompt,
            **conversation.options,
            **overrides,
        }
        return self.render(list(conversation.messages), **arguments)

    def stream(
        self,
        *,
        tools: Tools = None,
        strict: bool = False,
        id_factory: Callable[[int], str] | None = None,
        history: Sequence[Any] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        unknown_options: UnknownOptions = "error",
        prompt: str | None = None,
        **options: Any,
    ) -> StreamParser:
        """A sans-IO parser for one completion: ``feed(chunk)`` / ``close()`` give events.

        ``options`` are the ones given to ``render``: they say where the generation prompt left
        the model (inside ``<think>``, after an empty thought channel, ...). ``history``, the
        conversation the completion continues, matters where the generation prompt depends on
        it: Gemma 4 after a tool result goes on in the same turn, inside a thought channel when
        thinking is on. Without it, the prompt is taken to end after a user message.
        ``prompt``, for callers who rendered elsewhere, is the whole prompt the completion
        follows: it says all of that itself (then pass no ``history`` or ``options``; ``tools``
        default to the ones it shows). ``Codec.prepare`` is the way to keep the two together.
        ``id_factory(index)`` makes ids for formats whose calls carry none (default: the
        family's own, ``Family.new_id``, else random ``call_…`` ids). ``limits`` bound nesting,
        argument size and calls (``codec.Limits``). ``unknown_options`` as in ``render``.
        """
        return self._stream(tools, strict, id_factory, history, limits, unknown_options, prompt, options, events=True)

    def _stream(
        self,
        tools: Tools,
        strict: bool,
        id_factory: Callable[[int], str] | None,
        history: Sequence[Any] | None,
        limits: Limits,
        unknown_options: UnknownOptions,
        prompt: str | None,
        options: dict[str, Any],
        *,
        events: bool,
    ) -> StreamParser:
        """``stream``; ``events=False`` for a parse whose events nobody reads (``parse``)."""
        if prompt is not None:
            if history is not None or options:
                raise RenderError("stream(prompt=...) reads history and options from the prompt: pass neither")
            generation_prompt, shown_tools = self._generation_prompt_of(prompt)
            tools = shown_tools if tools is None else tools
        else:
            options = self._renderer.select_options(options, unknown_options)
            generation_prompt = (
                self._renderer.generation_prompt(options)
                if history is None
                else self._generation_prompt_after(history, tools, options)
            )
        return self._parser(
            generation_prompt, tools=tools, strict=strict, id_factory=id_factory, limits=limits, events=events
        )

    def parse(
        self,
        completion: str,
        *,
        tools: Tools = None,
        strict: bool = False,
        id_factory: Callable[[int], str] | None = None,
        history: Sequence[Any] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        unknown_options: UnknownOptions = "error",
        finish_reason: str | None = None,
        **options: Any,
    ) -> AssistantMessage:
        """The assistant message in ``completion``: exactly ``stream().feed(text)`` +
        ``close(finish_reason)`` gives (that parser's events are not made: nobody reads them).

        Lenient by default: known malformed output is repaired and anything else stays in
        ``content``. ``strict=True`` raises ``ParseError`` at the first deviation.
        ``finish_reason`` is the engine's (``"stop"``: the model ended the output; ``"length"``:
        the engine cut it; ``None``: not known, read as a cut): it decides whether a call whose
        arguments are whole but whose closing marker is missing at the end is finished.
        """
        parser = self._stream(tools, strict, id_factory, history, limits, unknown_options, None, options, events=False)
        parser.feed(completion)
        parser.close(finish_reason)
        return parser.message

    def prepare(
        self,
        messages: Sequence[Any],
        *,
        tools: Tools = None,
        now: datetime | date | str | None = None,
        allow_special_tokens: bool = False,
        unknown_options: UnknownOptions = "error",
        **options: Any,
    ) -> Turn:
        """Render the prompt for ``messages`` once and bind the reply's parser to it.

        The ``Turn`` holds ``.prompt`` and ``.stop`` for the engine, and ``.stream()``,
        ``.parse(text)``, ``.chunks(pieces, model=...)`` and ``.completion(text, model=...)`` for
        the reply — with no options to pass again, so the parse cannot drift from the render.
        ``.follow_up(reply, tool_results)`` prepares the next turn. ``unknown_options`` as in
        ``render``; the turn keeps only the options the template reads.
        """
        options = self._renderer.select_options(options, unknown_options)
        when = as_datetime(now) or datetime.now()
        prompt, generation_prompt = self._prompt_split(messages, tools, when, allow_special_tokens, options)
        return Turn(
            codec=self,
            messages=tuple(to_messages(messages)),
            tools=None if tools is None else tuple(dict(tool) for tool in tools),
            options=dict(options),
            prompt=prompt,
            generation_prompt=generation_prompt,
            now=when,
        )

    def constraint(
        self,
        *,
        tools: Tools = None,
        tool_choice: ToolChoice = "auto",
        parallel_tool_calls: bool = True,
        **options: Any,
    ) -> str:
        """An llguidance grammar (its Lark dialect) that admits exactly the completions this
        format's parser reads after the generation prompt under ``options``: reasoning, content
        and calls of ``tools`` whose arguments follow each tool's schema. ``tool_choice``:
        ``"auto"``, ``"none"``, ``"required"`` or one function; ``parallel_tool_calls=False``
        allows at most one call. ``codec.constrain.build`` also gives what it cannot enforce
        (docs/constraint.md). Needs no extra; checking text against it needs ``llguidance``.
        """
        _check_tool_shapes(tools)
        return constrain.constraint(
            self, tools=tools, tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls, **options
        )

    def _parser(
        self,
        generation_prompt: str,
        *,
        tools: Tools,
        strict: bool,
        id_factory: Callable[[int], str] | None,
        limits: Limits,
        events: bool = True,
    ) -> StreamParser:
        """A parser for the completion after a prompt that ends with ``generation_prompt``."""
        _check_parse_arguments(tools, id_factory, limits)
        return StreamParser(
            self.spec.grammar,
            prompt=generation_prompt,
            tools=list(tools or ()),
            arguments=self.spec.family.arguments,
            strict=strict,
            id_factory=id_factory or self.spec.family.new_id,
            limits=limits,
            events=events,
            call_enders=self._call_enders,
            content_openers=self._content_openers,
        )

    def parse_prompt(self, prompt: str) -> Conversation:
        """The conversation a rendered prompt came from: messages, tools, the options the
        prompt shows, and whether it ends with the generation prompt.

        Exactly ``canonical`` of what was rendered; ``render`` of the result gives ``prompt``
        back. ``ParseError`` (with its position) when the text is not this format's prompt.
        """
        if not isinstance(prompt, str):
            raise ParseError(
                "not_text", offset=0, line=1, column=1, found=type(prompt).__name__, expected=("a prompt string",)
            )
        tree = prompt_tree(self.spec.grammar, prompt)
        try:
            return self.spec.family.read_prompt(tree, self.spec, self.render)
        except ParseError:
            raise
        except Exception as error:  # one error contract: text that fits the grammar but not the reader
            if _nested_too_deep(error):
                raise ParseError(
                    "too_deep",
                    offset=0,
                    line=1,
                    column=1,
                    found="",
                    expected=(),
                    detail=f"a value in the prompt nests deeper than {MAX_VALUE_DEPTH} levels",
                ) from None
            raise ParseError(
                "unreadable_prompt",
                offset=0,
                line=1,
                column=1,
                found="",
                expected=(),
                detail=f"the prompt fits the grammar but not the {self.name} template's layout "
                f"({type(error).__name__}: {describe(str(error), 120)})",
            ) from None

    def canonical(
        self,
        messages: Sequence[Any],
        *,
        tools: Tools = None,
        add_generation_prompt: bool = True,
        now: datetime | date | str | None = None,
        unknown_options: UnknownOptions = "error",
        **options: Any,
    ) -> Conversation:
        """What this format keeps of a conversation: exactly what ``parse_prompt`` returns for
        ``render(messages, tools=tools, ...)``. The rules are in the family's ``canonical``
        module (``codec/formats/<family>/canonical.py``), one function per rule;
        ``explain_losses`` lists the ones that apply."""
        options = self._renderer.select_options(options, unknown_options)
        return self._canonical(messages, tools, add_generation_prompt, now, options)[0]

    def explain_losses(
        self,
        messages: Sequence[Any],
        *,
        tools: Tools = None,
        add_generation_prompt: bool = True,
        now: datetime | date | str | None = None,
        unknown_options: UnknownOptions = "error",
        **options: Any,
    ) -> list[_canonical.Loss]:
        """What rendering in this format drops or changes, message by message, and why."""
        options = self._renderer.select_options(options, unknown_options)
        return self._canonical(messages, tools, add_generation_prompt, now, options)[1]

    def _canonical(
        self,
        messages: Sequence[Any],
        tools: Tools,
        add_generation_prompt: bool,
        now: datetime | date | str | None,
        options: dict[str, Any],
    ) -> tuple[Conversation, list[_canonical.Loss]]:
        template_tools(tools)  # the checks render makes of tools and option values, before the rules read them
        _check_tool_shapes(tools)  # and the shape the rules read (a template may not read it)
        template_options(options)
        draft = _canonical.Draft(
            messages=to_messages(messages),
            tools=[dict(tool) for tool in tools or ()],
            options=dict(options),
            add_generation_prompt=add_generation_prompt,
            now=as_datetime(now) or datetime.now(),
            tools_given=tools is not None,
        )
        # The renderer, not the template, turns developer into system where the template has
        # no such role; that comes first, so the family's rules see a system message.
        given_as_system = [] if self._renderer.developer_role else [_canonical.developer_as_system]
        losses = _canonical.apply([*given_as_system, *self.spec.family.rules(self.spec)], draft)
        return draft.conversation(), losses

    def prefix_check(
        self,
        history: Sequence[Any],
        reply: str | AssistantMessage | Mapping[str, Any],
        *,
        tools: Tools = None,
        now: datetime | date | str | None = None,
        unknown_options: UnknownOptions = "error",
        **options: Any,
    ) -> PrefixCheck:
        """Whether ``render(history + [reply], add_generation_prompt=False)`` starts with
        ``render(history) + completion`` — i.e. whether a serving engine's KV cache of the
        prompt and the model's output survives into the next turn — and if not, where and why.

        ``reply`` is the model's raw completion text (best: it is what the cache holds), or a
        message, whose completion is then what the template writes for it after the prompt.
        ``unknown_options`` as in ``render``.
        """
        options = self._renderer.select_options(options, unknown_options)
        when = as_datetime(now) or datetime.now()
        prompt = self.render(history, tools=tools, now=when, **options)
        if isinstance(reply, str):
            completion = reply
            reply = self.parse(reply, tools=tools, history=history, **options)
        else:
            completion = ""
        messages = [*history, reply]
        rendered = self.render(messages, tools=tools, now=when, add_generation_prompt=False, **options)
        if not completion and rendered.startswith(prompt):
            completion = rendered[len(prompt) :]
        return check_prefix(
            prompt,
            completion,
            rendered,
            lambda k: self.render(messages[:k], tools=tools, now=when, add_generation_prompt=False, **options),
            len(messages),
        )

    def _generation_prompt_of(self, prompt: str) -> tuple[str, Tools]:
        """The generation prompt a whole rendered prompt ends with, and the tools it shows:
        what ``parse_prompt`` reads, rendered again without the generation prompt, is the part
        before it."""
        conversation = self.parse_prompt(prompt)
        if not conversation.add_generation_prompt:
            raise ParseError(
                "no_generation_prompt",
                offset=len(prompt),
                line=prompt.count("\n") + 1,
                column=len(prompt) - prompt.rfind("\n"),
                found="the end of the prompt",
                expected=("the generation prompt",),
                detail="the prompt does not end by asking for a reply",
            )
        settled = self.render_conversation(conversation, add_generation_prompt=False)
        if not prompt.startswith(settled):
            raise RenderError(f"the prompt is not what the {self.name} template renders for the conversation it shows")
        return prompt[len(settled) :], list(conversation.tools) or None

    def _generation_prompt_after(self, history: Sequence[Any], tools: Tools, options: Mapping[str, Any]) -> str:
        """What the template appends to ``history`` as its generation prompt."""
        return self._prompt_split(history, tools, datetime.now(), False, options)[1]

    def _prompt_split(
        self,
        messages: Sequence[Any],
        tools: Tools,
        now: datetime,
        allow_special_tokens: bool,
        options: Mapping[str, Any],
    ) -> tuple[str, str]:
        """The prompt for ``messages`` and its generation prompt: rendered with and without it,
        at one clock reading (``now``), so the date cannot differ between the two."""
        arguments: dict[str, Any] = {"tools": tools, "now": now, "allow_special_tokens": allow_special_tokens}
        prompt = self.render(messages, **arguments, **options)
        settled = self.render(messages, add_generation_prompt=False, **arguments, **options)
        if prompt.startswith(settled):
            return prompt, prompt[len(settled) :]
        # A template may write the last message differently when it ends the conversation
        # (gpt-oss ends a last answer with <|return|>, an earlier one with <|end|>): the
        # generation prompt is then the one it writes after any conversation, if the prompt ends so.
        generation_prompt = self._renderer.generation_prompt(options)
        if generation_prompt and prompt.endswith(generation_prompt):
            return prompt, generation_prompt
        raise RenderError(f"the {self.name} template's generation prompt is not a suffix of the prompt")


def as_datetime(now: datetime | date | str | None) -> datetime | None:
    """``now`` as a datetime: a date means its midnight, a string is ISO 8601 (the form
    ``Conversation.options["now"]`` holds when a prompt shows its date); anything else is a
    ``RenderError`` saying what ``now`` takes."""
    return render_time(now)


def explain_losses(name: str | Codec, messages: Sequence[Any], **arguments: Any) -> list[_canonical.Loss]:
    """What rendering ``messages`` in a format drops or changes, message by message, and why:
    ``codec.explain_losses("gemma4", messages, tools=tools)``; see ``Codec.explain_losses``."""
    chosen = name if isinstance(name, Codec) else load(name)
    return chosen.explain_losses(messages, **arguments)


def load(name: str | os.PathLike[str] | None = None, *, template: str | Path | None = None) -> Codec:
    """The ``Codec`` for a format name (``codec.formats()``), a model id, or a chat template.

    ``name`` may be a path (a ``str`` naming an existing file or directory, or a
    ``pathlib.Path``): a Hugging Face model directory, its ``tokenizer_config.json``, or a
    ``.jinja`` file. ``template`` (text, or a path) pairs your own chat template with the
    named format's grammar; with no ``name`` the format is detected from it. A template read
    from a path or detected is recognised as ``codec.detect`` does; every template of yours
    runs in Jinja's sandbox. ``.name`` is then the recognised format.
    """
    if isinstance(name, os.PathLike) or (isinstance(name, str) and names_a_path(name)):
        if template is not None:
            raise RenderError(f"load() takes a path ({os.fspath(name)!r}) or template=, not both")
        return _recognised(read_template(name))
    given = given_template(template)
    if name is None and given is not None:
        return _recognised(given)
    # find() refuses anything but a str (None included) with the list of formats
    spec = registry.find(cast(str, name))
    return Codec(spec) if given is None else Codec(spec, given.text, origin=given.origin)


def _recognised(template: TemplateFile) -> Codec:
    """A ``Codec`` of the format ``template`` is recognised as (``UnknownFormatError`` if none)."""
    found = recognise(template.text, template.origin)
    origin = f"{template.origin}, recognised by {found.how}"
    return Codec(registry.find(found.format), template.text, origin=origin)


def _nested_too_deep(error: BaseException) -> bool:
    """Whether reading a prompt failed on a value nested past ``MAX_VALUE_DEPTH``: raised by a
    model's validator (pydantic keeps it in the error's context) inside a rule of the tree (Lark
    wraps it), or Python's own recursion limit reached first."""
    if isinstance(error, VisitError):
        error = error.orig_exc
    if isinstance(error, ValidationError):
        return any(isinstance(detail.get("ctx", {}).get("error"), NestedTooDeep) for detail in error.errors())
    return isinstance(error, NestedTooDeep | RecursionError)


_PLAIN_TOOLS = (type(None), list, tuple)  # what ``tools`` nearly always is: no ABC check needed


def _check_parse_arguments(tools: Any, id_factory: Any, limits: Any) -> None:
    """What ``stream``/``parse`` are given beside the text, checked once per parser (a mistake
    here would otherwise surface as a ``TypeError`` deep in the engine)."""
    if type(tools) not in _PLAIN_TOOLS and (isinstance(tools, str | bytes) or not isinstance(tools, Sequence)):
        raise RenderError(f"tools must be a list of tool definitions, got {type(tools).__name__}")
    if id_factory is not None and not callable(id_factory):
        raise RenderError(f"id_factory must be callable (index -> id), got {type(id_factory).__name__}")
    if not isinstance(limits, Limits):
        raise RenderError(f"limits must be a codec.Limits, got {type(limits).__name__}")


def _check_tool_shapes(tools: Any) -> None:
    """Tools read by Python (``canonical``, ``constraint``), not by a template: each an object
    whose function (or itself) has a string ``name`` and, if any, object ``parameters``, with
    nothing JSON cannot write."""
    for index, tool in enumerate(tools or ()):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise RenderError(f"tools[{index}]: a tool is an object with a function that has a string name")
        if not isinstance(function.get("parameters", {}), Mapping):
            raise RenderError(f"tools[{index}]: the function's parameters must be a JSON schema object")
        why = unwritable(tool)
        if why is not None:
            raise RenderError(f"tools[{index}] {why}")
