"""What a chat template is given, and the checks that keep it from forging structure.

Templates read messages in the OpenAI shape with ``None`` keys left out, arguments as mappings
and reasoning under every name templates use — what ``apply_chat_template`` hands them. Like
transformers, everything the template sees is rebuilt from plain JSON types first, so no caller
object (an image, an array) reaches the template's sandbox; unlike it, a value that is not JSON
where the template prints values (arguments, tools, options) is refused, not printed as a
``"<TypeName>"`` placeholder (``codec.render.values``).

The checks: a special token inside text the caller gave — user, system and tool messages, tools,
option values, the calls in an assistant message — would be read back as structure, so it is
refused (``allow_special_tokens`` overrides). An assistant message's content and reasoning are
not checked: they are what the model wrote, markers included when lenient parsing could not
structure them, and render back as they came (``model_text``). A format whose strings are quoted
by a special token (Gemma's ``<|"|>``) cannot hold that token inside a quoted string at all:
that is refused always. Marker strings come from the format's grammar, never from this file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from codec.engine.grammar import compiled
from codec.errors import RenderError, describe
from codec.models import AnyMessage, AssistantMessage, Content, TextPart, ToolMessage, to_messages
from codec.render.values import json_value, strings, strings_with_paths
from codec.render.values import plain as plain  # imported from here by older code

# The grammar terminal (see grammars/*.lark) that quotes strings: Gemma's ``<|"|>``.
_QUOTE = "QUOTE"


@dataclasses.dataclass(frozen=True, slots=True)
class TextRules:
    """What a format forbids inside caller text, read from its grammar: its special tokens, and
    ``quote``, set when the grammar has a ``QUOTE`` terminal (Gemma writes strings between two
    of them)."""

    special: re.Pattern[str] | None
    quote: str | None

    @classmethod
    def for_grammar(cls, grammar_file: str) -> TextRules:
        """The rules of the format whose grammar is ``grammars/<grammar_file>``."""
        grammar = compiled(grammar_file)
        by_name = {name: text for text, name in grammar.markers.items()}
        tokens = grammar.special_tokens  # longest first, so a longer token wins over its prefix
        special = re.compile("|".join(map(re.escape, tokens))) if tokens else None
        return cls(special, by_name.get(_QUOTE))


class _Text(NamedTuple):
    field: str
    text: str
    quoted: bool  # the format writes it as a quoted string (Gemma arguments and tool results)
    start: int  # where ``text`` starts inside the message field, for error offsets


def template_messages(
    messages: Sequence[Any], *, developer_role: bool = True
) -> tuple[list[AnyMessage], list[dict[str, Any]]]:
    """The validated messages, and the dicts the template reads.

    ``thinking`` joins ``reasoning_content`` and ``reasoning`` because apply_chat_template adds
    it (gpt-oss templates read it), in the same key position. Without ``developer_role`` (the
    template never names that role) a ``developer`` message is given as ``system``: such a
    template would print the unknown role as it is, or skip the message.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise RenderError(f"messages must be a list of messages, got {type(messages).__name__}")
    models = to_messages(messages)
    dicts = [_template_dict(model, index) for index, model in enumerate(models)]
    for given, message in zip(messages, dicts, strict=True):
        _function_order(given, message)
    if not developer_role:
        for message in dicts:
            if message["role"] == "developer":
                message["role"] = "system"
    return models, dicts


def _function_order(given: Any, message: dict[str, Any]) -> None:
    """Each call's ``function`` members in the caller's order (the SDK dumps ``arguments`` first), as
    transformers gives them: a template may write it whole (``tool_call.function|tojson``)."""
    calls = given.get("tool_calls") if isinstance(given, Mapping) else None
    for call, made in zip(calls if isinstance(calls, Sequence) else (), message.get("tool_calls", ()), strict=False):
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping) and set(function) >= set(made["function"]):
            made["function"] = {key: made["function"][key] for key in function if key in made["function"]}


def _template_dict(model: AnyMessage, index: int) -> dict[str, Any]:
    # Validation left every field a plain str except what it holds as `Any`: the arguments,
    # the payloads of media parts and tool responses. Only those need rebuilding.
    message = model.to_template()
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [part if part["type"] == "text" else plain(part) for part in content]
    if isinstance(model, ToolMessage) and model.tool_responses is not None:
        message["tool_responses"] = json_value(message["tool_responses"], f"messages[{index}].tool_responses", index)
    if not isinstance(model, AssistantMessage):
        return message
    for number, call in enumerate(message.get("tool_calls", ())):
        where = f"messages[{index}].tool_calls[{number}].function.arguments"
        call["function"]["arguments"] = json_value(call["function"]["arguments"], where, index)
    if model.reasoning is not None:
        message = {"thinking": model.reasoning, **message}
    return message


def template_tools(tools: Any) -> list[dict[str, Any]] | None:
    """The tools as plain dicts in their given key order; ``RenderError`` unless each is a
    mapping of JSON values."""
    if tools is None:
        return None
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise RenderError(f"tools must be a list of JSON-schema objects, got {describe(tools)}")
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise RenderError(f"tools[{index}] must be a JSON-schema object, got {describe(tool)}")
    return [json_value(tool, f"tools[{index}]") for index, tool in enumerate(tools)]


def template_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options as the template reads them: JSON values, ``RenderError`` naming any other."""
    return {name: json_value(value, f"option {name}") for name, value in options.items()}


def check_messages(
    messages: Sequence[AnyMessage],
    template_input: Sequence[dict[str, Any]],
    rules: TextRules,
    *,
    allow_special_tokens: bool,
) -> None:
    """``RenderError`` at the first text the format cannot carry (message index, offset).

    ``template_input`` is what ``template_messages`` made of ``messages``: one search over all
    of it finds whether there is anything to report, and only then are the messages walked
    field by field to say where. An assistant message's content and reasoning are not checked
    for special tokens (``model_text``), nor is anything in a reply ``parse`` returned,
    unchanged (``from_the_model``).
    """
    if not _suspect(template_input, rules, allow_special_tokens) and not _parts_suspect(
        messages, rules, allow_special_tokens
    ):
        return
    for index, message in enumerate(messages):
        allow = allow_special_tokens or from_the_model(message)
        for text in _message_texts(message, rules):
            _check_text(text, rules, allow, index)


def model_text(message: AnyMessage) -> bool:
    """Whether ``message``'s content and reasoning are the model's own text, rendered back
    unchecked: they are, in an assistant message.

    A lenient parse keeps what it cannot structure in ``content``, markers included
    (``<tool_call>`` with nothing after it), and a client sends that reply back in its next
    request as a plain dict. Rendering it must reproduce what the model wrote, not refuse it.
    This forges nothing: the model already had that text in its context when it wrote it, and
    a client that writes an assistant message itself controls the whole prompt anyway. What an
    end user or a tool supplies — user, system and tool text — is where an injected marker
    would come from, and stays checked; so do the calls, whose names and arguments the template
    writes between markers of its own.
    """
    return isinstance(message, AssistantMessage)


def from_the_model(message: AnyMessage) -> bool:
    """Whether ``message`` is a reply ``parse`` returned, unchanged since
    (``AssistantMessage.is_model_output``): its calls are not checked either.

    A reply cut off inside a call, or with a marker read as text inside an argument, renders
    back as it came. Only the parser can mark a message so — a dict or a message built by the
    caller is never marked — and any change to the message drops the mark.
    """
    return isinstance(message, AssistantMessage) and getattr(message, "is_model_output", False) is True


def check_tools(tools: Sequence[Mapping[str, Any]], rules: TextRules, *, allow_special_tokens: bool) -> None:
    """The same checks over every key and string of the tool declarations (all are quoted in
    Gemma's declaration syntax)."""
    if not _suspect(tools, rules, allow_special_tokens):
        return
    for field, text in strings_with_paths(tools, "tools"):
        _check_text(_Text(field, text, True, 0), rules, allow_special_tokens, None)


def check_options(options: Mapping[str, Any], rules: TextRules, *, allow_special_tokens: bool) -> None:
    """A special token in any string of an option value (keys included) is refused too: Solar
    prints ``response_format`` as JSON into its system prompt."""
    if allow_special_tokens or rules.special is None:
        return
    if not rules.special.search("\0".join(strings(options))):
        return
    for name, value in options.items():
        for field, text in strings_with_paths(value, f"option {name}"):
            _check_text(_Text(field, text, False, 0), rules, False, None)


def _parts_suspect(messages: Sequence[AnyMessage], rules: TextRules, allow_special: bool) -> bool:
    """Whether text parts of one message, written one after another, form a special token
    (``"<tool"`` then ``"|>"``): templates join parts with nothing between them, or trimmed."""
    if allow_special or rules.special is None:
        return False
    return any(
        rules.special.search(joined)
        for message in messages
        if message.content is not None and not isinstance(message.content, str)
        for joined in _joined_parts(message.content)
    )


def _joined_parts(content: Sequence[Any], mask: re.Pattern[str] | None = None) -> tuple[str, str]:
    """The text parts written one after another, as they are and trimmed; with ``mask``, its
    matches inside each part replaced by as many NULs (no token holds NUL)."""
    texts = [part.text for part in content if isinstance(part, TextPart)]
    if mask is not None:
        texts = [mask.sub(_nuls, text) for text in texts]
    return "".join(texts), "".join(text.strip() for text in texts)


def _nuls(found: re.Match[str]) -> str:
    return "\0" * len(found.group())


def _suspect(value: Any, rules: TextRules, allow_special: bool) -> bool:
    """Whether any string in ``value`` (keys included) holds a special token or the quote."""
    joined = "\0".join(strings(value))  # no token holds NUL, so no match can span two strings
    if rules.quote is not None and rules.quote in joined:
        return True
    return not allow_special and rules.special is not None and bool(rules.special.search(joined))


def _check_text(text: _Text, rules: TextRules, allow_special: bool, index: int | None) -> None:
    if text.quoted and rules.quote is not None and (at := text.text.find(rules.quote)) >= 0:
        raise RenderError(
            f"{text.field} contains {rules.quote!r}, which this format uses to quote strings "
            "and has no escape for; it cannot be rendered faithfully, even with "
            "allow_special_tokens",
            message_index=index,
            offset=text.start + at,
        )
    if allow_special or rules.special is None:
        return
    found = rules.special.search(text.text)
    if found is not None:
        raise RenderError(
            f"special token {found.group()!r} in {text.field} would be read as structure; "
            "remove it, or pass allow_special_tokens=True to render it as is",
            message_index=index,
            offset=text.start + found.start(),
        )


def _message_texts(message: AnyMessage, rules: TextRules) -> Iterator[_Text]:
    if isinstance(message, AssistantMessage):
        yield from _assistant_texts(message, rules)
        return
    quoted = isinstance(message, ToolMessage)  # Gemma quotes a tool result: {value:<|"|>…<|"|>}
    yield from _content_texts(message.content, quoted)
    if message.name is not None:
        yield _Text("name", message.name, False, 0)
    if isinstance(message, ToolMessage):
        if message.tool_call_id is not None:
            yield _Text("tool_call_id", message.tool_call_id, False, 0)
        for field, text in strings_with_paths(message.tool_responses or (), "tool_responses"):
            yield _Text(field, text, False, 0)


def _assistant_texts(message: AssistantMessage, rules: TextRules) -> Iterator[_Text]:
    """What is checked in an assistant message: not its content and reasoning (``model_text``),
    except a token that only joining its text parts forms — the model never wrote that one; the
    template would make it — and its calls."""
    content = message.content
    if content is not None and not isinstance(content, str) and rules.special is not None:
        for joined in _joined_parts(content, mask=rules.special):  # a token inside a part is the model's
            yield _Text("content (its text parts joined)", joined, False, 0)
    for number, call in enumerate(message.tool_calls):
        where = f"tool_calls[{number}]"
        if call.id is not None:
            yield _Text(f"{where}.id", call.id, False, 0)
        yield _Text(f"{where}.function.name", call.name, False, 0)
        for field, text in strings_with_paths(call.arguments, f"{where}.function.arguments"):
            yield _Text(field, text, True, 0)


def _content_texts(content: Content | None, quoted: bool) -> Iterator[_Text]:
    if isinstance(content, str):
        yield _Text("content", content, quoted, 0)
    elif content is not None:
        for number, part in enumerate(content):
            if isinstance(part, TextPart):  # media parts render as placeholders only
                yield _Text(f"content[{number}].text", part.text, quoted, 0)
        for joined in _joined_parts(content):  # a token formed across parts is refused too
            yield _Text("content (its text parts joined)", joined, quoted, 0)
