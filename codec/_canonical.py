"""``canonical``: what a format keeps of a conversation — exactly what ``parse_prompt`` gives
back after ``render`` — written as explicit rules, one small function per rule.

Each family lists its rules in order (``rules`` in ``codec/formats/<family>/canonical.py``).
A rule changes a ``Draft`` in place; its docstring says what the format loses and cites the
template line that causes it, and ``explain_losses`` shows those docstrings for the rules that
changed something, message by message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from codec.errors import describe
from codec.models import AnyMessage, AssistantMessage, Conversation, SystemMessage, ToolCall, ToolMessage


@dataclass
class Draft:
    """A conversation on its way to its canonical form (mutable, unlike ``Conversation``)."""

    messages: list[AnyMessage]
    tools: list[dict[str, Any]]
    options: dict[str, Any]
    add_generation_prompt: bool
    now: datetime
    notes: dict[str, Any] = field(default_factory=dict)  # facts one rule leaves for a later one
    # ``tools`` was a list, maybe empty, not ``None``: a template that tests ``tools is not
    # none`` (Llama 3's) writes its tools block for an empty list too.
    tools_given: bool = True

    def conversation(self) -> Conversation:
        """The frozen result."""
        return Conversation(
            messages=tuple(self.messages),
            tools=tuple(self.tools),
            options=dict(self.options),
            add_generation_prompt=self.add_generation_prompt,
        )


Rule = Callable[[Draft], None]


@dataclass(frozen=True, slots=True)
class Loss:
    """One change a format makes: which ``rule``, its ``explanation`` (the rule's docstring),
    and where — ``message_index`` into the messages as they were before the rule, or ``None``
    for tools, options or the message list as a whole."""

    rule: str
    explanation: str
    message_index: int | None
    before: str
    after: str

    def __str__(self) -> str:
        where = f"message {self.message_index}" if self.message_index is not None else "conversation"
        return f"{where}: {self.explanation} [{self.rule}]\n    before: {self.before}\n    after:  {self.after}"


def map_arguments(draft: Draft, change: Callable[[ToolCall], dict[str, Any]]) -> None:
    """Give every tool call the arguments ``change(call)`` returns (rules about how a format
    writes arguments)."""
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = tuple(call.model_copy(update={"arguments": change(call)}) for call in message.tool_calls)
            draft.messages[index] = message.model_copy(update={"tool_calls": calls})


def number_calls(draft: Draft) -> None:
    """For a template that writes no call ids: the calls are numbered ``call_0``, ``call_1``, ...
    in order, and a tool result takes the id of the call at its position in the run of results
    right after the assistant message (``None`` when there is no such call). The family's rule
    that calls this quotes the template line that writes no id."""
    count, position = 0, 0
    calls: tuple[ToolCall, ...] = ()
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage):
            calls = tuple(c.model_copy(update={"id": f"call_{count + n}"}) for n, c in enumerate(message.tool_calls))
            count, position = count + len(calls), 0
            draft.messages[index] = message.model_copy(update={"tool_calls": calls})
        elif isinstance(message, ToolMessage):
            own = calls[position].id if position < len(calls) else None
            draft.messages[index] = message.model_copy(update={"tool_call_id": own})
            position += 1
        else:
            calls = ()


def developer_as_system(draft: Draft) -> None:
    """A ``developer`` message is given to the template as a ``system`` message, because the
    template has no ``developer`` role: it comes back as a system message.

    (``codec.render.template_input.template_messages``; applied only for such templates)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, SystemMessage) and message.role == "developer":
            draft.messages[index] = message.model_copy(update={"role": "system"})


def names_not_printed(draft: Draft) -> None:
    """The ``name`` of a system, developer or user message reaches the template, which never
    prints it: it is lost.

    (no line of the template reads ``name`` on these messages)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, AssistantMessage | ToolMessage) or message.name is None:
            continue
        draft.messages[index] = message.model_copy(update={"name": None})


def tool_responses_not_printed(draft: Draft) -> None:
    """A tool message's ``tool_responses`` reach the template, which never prints them on a
    tool message: only its ``content`` (given, or made from them) comes back.

    (no line of the template reads ``tool_responses`` on a tool message)
    """
    for index, message in enumerate(draft.messages):
        if isinstance(message, ToolMessage) and message.tool_responses is not None:
            draft.messages[index] = message.model_copy(update={"tool_responses": None})


def apply(rules: Sequence[Rule], draft: Draft) -> list[Loss]:
    """Apply ``rules`` in order; every change they made."""
    losses: list[Loss] = []
    for rule in rules:
        before = (list(draft.messages), list(draft.tools), dict(draft.options), draft.add_generation_prompt)
        rule(draft)
        losses += _changes(rule, before, draft)
    return losses


def _changes(rule: Rule, before: tuple[Any, ...], draft: Draft) -> list[Loss]:
    explanation = " ".join((rule.__doc__ or rule.__name__).strip().split("\n\n")[0].split())
    name = rule.__name__.lstrip("_")
    messages, tools, options, generation = before
    found: list[Loss] = []
    if len(messages) == len(draft.messages):
        for index, (old, new) in enumerate(zip(messages, draft.messages, strict=False)):
            if old != new:
                found.append(Loss(name, explanation, index, describe(_shown(old), 120), describe(_shown(new), 120)))
    else:
        found.append(Loss(name, explanation, None, f"{len(messages)} messages", f"{len(draft.messages)} messages"))
    fields: tuple[tuple[str, Any, Any], ...] = (
        ("tools", tools, draft.tools),
        ("options", options, draft.options),
        ("add_generation_prompt", generation, draft.add_generation_prompt),
    )
    for label, was, now in fields:
        if was != now:
            before_text, after_text = f"{label}={describe(was, 100)}", f"{label}={describe(now, 100)}"
            found.append(Loss(name, explanation, None, before_text, after_text))
    return found


def _shown(message: AnyMessage) -> dict[str, Any]:
    return message.to_openai()
