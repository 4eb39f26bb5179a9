"""The formats ``codec`` knows: each is data — a template, a grammar, its family and a few facts.

Adding a format means adding a template to ``templates/``, a grammar to ``grammars/``, a family
folder ``codec/formats/<family>/`` (or reusing one) and an entry here; never a subclass. The
entry links the format to its family by import (checked by mypy) and holds what tests, the CLI
and the demo need to know about it: stop tokens, options worth testing, completion examples.

Longer than ~300 lines: the table of formats (``FORMATS``) grows by one entry per format; the
code around it is short.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codec.engine.grammar import compiled
from codec.engine.stream import PATTERN_BUFFER_LIMIT
from codec.errors import CodecError, UnknownFormatError
from codec.formats import (
    ANY_TEXT,
    DemoCase,
    Examples,
    Family,
    deepseek_v3_1,
    deepseek_v3_2,
    gemma4,
    glm,
    glm45,
    gpt_oss,
    granite,
    intern_s1,
    kimi_k2,
    kimi_k2_5,
    llama3,
    llama4,
    minimax_m2,
    mistral,
    mistral_v0_3,
    qwen3,
    qwen3_5,
    qwen3_coder,
    solar_open,
)

_BOOLEANS = (False, True)


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """One chat format.

    ``model_ids`` are the Hugging Face ids ``load()`` accepts for it; ``model_family`` is a
    lower-case fragment that any other id of the family contains (``gemma-4``). Special tokens
    are named by their grammar terminals (``stop_terminals``, ``bos_terminal``,
    ``eos_terminal``); the properties give their text, read from the compiled grammar.
    ``control_tags`` marks a template that reads control tags from message text and writes
    effort personas (glm-effort). ``string_content_only``: the template cannot render a list of
    content parts. ``test_options`` are the template variables worth testing, each with values
    to try (``ANY_TEXT``: any text); ``golden_options`` the ones the render goldens use.
    ``writes_reasoning``: the template writes an assistant message's reasoning (Mistral's
    Instruct-2512 templates, the same syntax as the Reasoning-2512 one, drop it).
    ``turn_terminals`` are the markers that begin or end a turn: inside a call, like a stop
    marker or another call's opener, one ends the call (unfinished unless only its closing
    marker was missing), never reads as text of a value. ``one_call_per_message``: the template
    refuses an assistant message with more than one call (Llama 3's). ``calls_per_message``: the most calls
    the template writes of one assistant message (``None``: all of them; gpt-oss's writes the
    first), so a reply with more calls is written, and read back, as several messages.
    ``call_head``: the text a call begins with, where the template writes it before the call's
    opening marker (gpt-oss's recipient ``to=functions.``, before the channel); ``None``: a call
    begins at its opener.
    ``header_break`` is what the template writes after a system or user header and around a
    tool result's text (GLM-4.5: a new line); ``no_think_suffix`` what it writes after every
    user message when ``enable_thinking`` is false (GLM-4.5: ``/nothink``); ``bare_think_close``
    marks a template that writes a turn without reasoning as ``</think>`` alone (GLM-4.7), so an
    empty think block there stands for reasoning of only white space.
    ``layout``: which of its family's prompt layouts the template writes, where one family reads
    more than one (``qwen3_5``: ``"nemotron"``, Nemotron 3's Qwen3-Coder-style system block and
    tools listing, text as it is and history thinking it truncates; ``granite``:
    ``"no-default-system"``, Granite 4.1's, which writes no system turn when there is no system
    text); ``None``: the family's own.
    ``prints_names``: the template writes a system or user message's ``name`` (Kimi K2.5's, in
    the turn's header in place of its role); ``False``: a name reaches the template, unprinted.
    ``call_id``: where the template writes the caller's call ids as they are and a call's name
    shows only in its id, the id a call must have for its name to show, made from the name and
    the call's index in its message (Kimi K2.5's ``functions.NAME:IDX``, the ids the model
    writes); ``None``: any id.
    ``reply_thought_close``: the terminal that closes the empty thought a generation prompt
    pre-fills, where the template writes a reply's empty thought as that marker alone
    (DeepSeek-V3.2: the prompt ends ``<think></think>``, a reply it writes reads
    ``</think>answer``): the model's completion after that prompt is the reply's text after the
    marker. ``None``: a reply the template writes starts with its generation prompt.
    ``written_kinds``: the template writes each argument value's kind beside it
    (DeepSeek-V3.2's ``string="true|false"``), so a value reads back as written whatever the
    tool's schema says (the number 123 for a string parameter stays 123); ``False``: a value
    written as text is typed by the schema.
    ``writes_developer``: the template writes a ``developer`` message's text, given as sent or as
    a system message (DeepSeek-V3.2's names the role, counts it as a user turn, and writes
    nothing of it).
    ``call_id_length``: the length the template requires of a call id and
    a result's id (Mistral v0.3's raises on any other); ``None``: any id.
    ``empty_tools_block``: the template writes a block for an empty tool list (``tools=[]``,
    Mistral v0.3's ``tools is not none``) that no conversation gives back (a conversation's tools
    cannot tell an empty list from none, and no option says it): test conversations give such a
    template tools or none. ``system_in_user``: the template writes the system message inside a
    user message (Mistral v0.3's, before the last one's text): it comes back as part of that
    message's text, not as a system message. ``unread_call_id``: a regex of a call's id as the
    template writes it where a stream cannot read it (Mistral v0.3's ``, "id": "…"`` after the
    arguments: the call is announced, and its arguments stream, before the id comes); such a
    call keeps the id codec makes (``Family.new_id``), and the written one is left out.
    ``string_lag``: the most characters of a string argument a stream holds back before it
    sends them, where the format's values are pattern tokens (Llama 4's Python calls): a
    string's text is one token, decided at its closing quote or once the pattern buffer
    (``PATTERN_BUFFER_LIMIT``) is full, so a long string streams in pieces of that size; the
    call's name, a pattern token too, is out once a few characters follow it. ``0``: a
    string's text goes out as it arrives.
    """

    name: str
    template: str
    grammar: str
    family: Family
    model_ids: tuple[str, ...]
    model_family: str
    stop_terminals: tuple[str, ...]
    examples: Examples
    demo: DemoCase
    bos_terminal: str | None = None
    eos_terminal: str | None = None
    effort_levels: tuple[str, ...] = ()  # reasoning_effort values with a header of their own
    control_tags: bool = False
    string_content_only: bool = False
    test_options: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    golden_options: Mapping[str, Any] = field(default_factory=dict)
    turn_terminals: tuple[str, ...] = ()
    content_after: tuple[str, ...] = ()
    writes_reasoning: bool = True  # False: the template drops an assistant message's reasoning
    one_call_per_message: bool = False  # the template refuses an assistant message with two calls
    calls_per_message: int | None = None
    call_head: str | None = None
    header_break: str = ""
    no_think_suffix: str = ""
    bare_think_close: bool = False
    layout: str | None = None
    prints_names: bool = False
    call_id: Callable[[str, int], str] | None = None
    reply_thought_close: str | None = None
    writes_developer: bool = True
    written_kinds: bool = False
    call_id_length: int | None = None
    empty_tools_block: bool = False
    system_in_user: bool = False
    unread_call_id: str | None = None
    string_lag: int = 0

    @property
    def call_enders(self) -> frozenset[str]:
        """The terminals that end an open call wherever they stand in it: the stop markers, the
        turn markers, ``bos``/``eos`` and a call's opener."""
        named = (*self.stop_terminals, *self.turn_terminals, self.bos_terminal, self.eos_terminal, "CALL_OPEN")
        return frozenset(name for name in named if name is not None)

    @property
    def content_openers(self) -> frozenset[str]:
        """The terminals after which white space is content, not layout: an explicit content
        opener (``CONTENT_OPEN``) and ``content_after``."""
        return frozenset({"CONTENT_OPEN", *self.content_after})

    @property
    def stop_tokens(self) -> tuple[str, ...]:
        """The strings generation stops at (servers usually strip them from the output): each
        stop terminal's marker, then every other spelling of one that is a special token of its
        own (Llama 3's ``<|eom_id|>``, read as ``<|eot_id|>``: it ends a turn too)."""
        own = tuple(self._token(name) for name in self.stop_terminals)
        grammar = compiled(self.grammar)
        spelled = (token for token in grammar.special_tokens if grammar.scanned[token] in self.stop_terminals)
        return own + tuple(token for token in spelled if token not in own)

    @property
    def bos_token(self) -> str | None:
        """What the template is given as ``bos_token`` (as ``apply_chat_template`` passes it)."""
        return None if self.bos_terminal is None else self._token(self.bos_terminal)

    @property
    def eos_token(self) -> str | None:
        """What the template is given as ``eos_token``."""
        return None if self.eos_terminal is None else self._token(self.eos_terminal)

    def _token(self, terminal: str) -> str:
        return compiled(self.grammar).display(terminal)


_GLM_EFFORT_NAMES = (
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", 3, "mortal", "hermes", "low", "medium",
    "high", "xhigh", "uhigh", "amax", "swarm", "council", "Deep-Research", " Low ", "max", "bogus",
)  # fmt: skip

# A tool given as Granite 4.0's `available_tools` option (the template lists it as the tools).
_GRANITE_TOOL = {
    "type": "function",
    "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
}

FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec(
            name="glm",
            template="glm.jinja",
            grammar=glm.GRAMMAR,
            family=glm.FAMILY,
            model_ids=("zai-org/GLM-5.3-Flash", "zai-org/GLM-5.3"),
            model_family="glm-5",
            stop_terminals=("END_OF_TEXT", "USER", "OBSERVATION"),
            examples=glm.EXAMPLES,
            demo=glm.demo.GLM,
            eos_terminal="END_OF_TEXT",
            turn_terminals=("GMASK", "SOP", "SYSTEM", "ASSISTANT"),
            effort_levels=("low", "high", "max"),
            test_options={
                "reasoning_effort": ("low", "high", "max", "medium"),
                "clear_thinking": _BOOLEANS,
            },
            golden_options={"reasoning_effort": "low", "clear_thinking": True},
        ),
        FormatSpec(
            name="glm-effort",
            template="glm_effort.jinja",
            grammar=glm.GRAMMAR,
            family=glm.FAMILY,
            model_ids=(),
            model_family="glm-effort",
            stop_terminals=("END_OF_TEXT", "USER", "OBSERVATION"),
            examples=glm.EXAMPLES,
            demo=glm.demo.GLM_EFFORT,
            eos_terminal="END_OF_TEXT",
            turn_terminals=("GMASK", "SOP", "SYSTEM", "ASSISTANT"),
            effort_levels=("1", "2", "3", "4", "5", "6", "7", "8", "9", "swarm", "deep-swarm"),
            control_tags=True,
            test_options={
                "reasoning_effort": _GLM_EFFORT_NAMES,
                "enable_thinking": _BOOLEANS,
                "clear_thinking": _BOOLEANS,
                "regular": _BOOLEANS,
                "mode": ("regular", "vanilla", "standard", "default", "clean", "fancy"),
                "thinking_level": ("2", "high", "9"),
            },
            golden_options={"reasoning_effort": "hermes", "clear_thinking": True},
        ),
        FormatSpec(
            name="solar-open",
            template="solar_open.jinja",
            grammar=solar_open.GRAMMAR,
            family=solar_open.FAMILY,
            model_ids=("upstage/Solar-Open-100B",),
            model_family="solar-open",
            stop_terminals=("END_OF_TEXT", "FLUSH", "CALLS_END"),
            examples=solar_open.EXAMPLES,
            demo=solar_open.demo.SOLAR_OPEN,
            eos_terminal="END_OF_TEXT",
            turn_terminals=("BEGIN",),
            string_content_only=True,  # the template joins content to strings with `+`
            test_options={
                "reasoning_effort": ("low", "minimal", "medium", "high"),
                "think_render_option": ("all", "lastthink", "none"),
                "default_system_prompt": _BOOLEANS,
                "response_format": (ANY_TEXT, {"type": "json_object"}),
            },
            golden_options={"reasoning_effort": "low", "think_render_option": "all"},
        ),
        FormatSpec(
            name="gemma4",
            template="gemma4.jinja",
            grammar=gemma4.GRAMMAR,
            family=gemma4.FAMILY,
            model_ids=(
                "google/gemma-4-31B-it",
                "google/gemma-4-26B-A4B-it",
                "google/gemma-4-E4B-it",
                "google/gemma-4-E2B-it",
            ),
            model_family="gemma-4",
            stop_terminals=("EOS", "TURN_CLOSE", "RESPONSE_OPEN"),
            examples=gemma4.EXAMPLES,
            demo=gemma4.demo.GEMMA4,
            bos_terminal="BOS",
            eos_terminal="EOS",
            turn_terminals=("TURN_OPEN",),
            test_options={"enable_thinking": _BOOLEANS, "preserve_thinking": _BOOLEANS},
            golden_options={"enable_thinking": True, "preserve_thinking": True},
        ),
        FormatSpec(
            name="qwen3",
            template="qwen3.jinja",
            grammar=qwen3.GRAMMAR,
            family=qwen3.FAMILY,
            model_ids=(
                "Qwen/Qwen3-8B",
                "Qwen/Qwen3-32B",
                "Qwen/Qwen3-30B-A3B",
                "Qwen/Qwen3-235B-A22B",
                "Qwen/Qwen3-14B",
                "Qwen/Qwen3-4B",
                "Qwen/Qwen3-1.7B",
                "Qwen/Qwen3-0.6B",
            ),
            model_family="qwen3",
            stop_terminals=("IM_END", "END_OF_TEXT"),
            examples=qwen3.EXAMPLES,
            demo=qwen3.demo.QWEN3,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_START",),
            content_after=("THINK_CLOSE",),  # `\n</think>\n\n` + content: white space there is content
            string_content_only=True,  # the template writes a list of parts as '': all its text lost
            test_options={"enable_thinking": _BOOLEANS},
            golden_options={"enable_thinking": True},
        ),
        FormatSpec(
            name="qwen3-coder",
            template="qwen3_coder.jinja",
            grammar=qwen3_coder.GRAMMAR,
            family=qwen3_coder.FAMILY,
            model_ids=("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-480B-A35B-Instruct"),
            model_family="qwen3-coder",
            stop_terminals=("IM_END", "END_OF_TEXT"),
            examples=qwen3_coder.EXAMPLES,
            demo=qwen3_coder.demo.QWEN3_CODER,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_START",),
            content_after=("ROLE",),  # `'<|im_start|>' + role + '\n' + content`: white space there is content
            string_content_only=True,  # the template joins content to strings with `+`
        ),
        FormatSpec(
            name="deepseek-v3-1",
            template="deepseek_v3_1.jinja",
            grammar=deepseek_v3_1.GRAMMAR,
            family=deepseek_v3_1.FAMILY,
            model_ids=(
                "deepseek-ai/DeepSeek-V3.1",
                "deepseek-ai/DeepSeek-V3.1-Base",
                "deepseek-ai/DeepSeek-V3.1-Terminus",
            ),
            model_family="deepseek-v3.1",
            stop_terminals=("EOS",),
            examples=deepseek_v3_1.EXAMPLES,
            demo=deepseek_v3_1.demo.DEEPSEEK_V3_1,
            bos_terminal="BOS",
            eos_terminal="EOS",  # the template writes it itself; transformers passes it all the same
            turn_terminals=("USER", "ASSISTANT", "OUTPUT_OPEN"),
            content_after=("THINK_END",),  # `<think></think>` + content: white space there is content
            string_content_only=True,  # the template joins content to strings with `+`
            test_options={"thinking": _BOOLEANS, "enable_thinking": _BOOLEANS},
            golden_options={"thinking": True},
        ),
        FormatSpec(
            name="kimi-k2",
            template="kimi_k2.jinja",
            grammar=kimi_k2.GRAMMAR,
            family=kimi_k2.FAMILY,
            model_ids=("moonshotai/Kimi-K2-Instruct",),
            model_family="kimi-k2",
            stop_terminals=("IM_END",),
            examples=kimi_k2.EXAMPLES,
            demo=kimi_k2.demo.KIMI_K2,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_SYSTEM", "IM_USER", "IM_ASSISTANT"),
            content_after=("IM_MIDDLE",),  # a turn's text follows its header: white space there is content
            # A list of parts on a tool result or an assistant turn with calls is written as
            # Python's repr of the list (`{{ message['content'] }}`).
            string_content_only=True,
        ),
        FormatSpec(
            name="kimi-k2-5",
            template="kimi_k2_5.jinja",
            grammar=kimi_k2_5.GRAMMAR,
            family=kimi_k2_5.FAMILY,
            model_ids=("moonshotai/Kimi-K2.5",),
            model_family="kimi-k2.5",
            stop_terminals=("IM_END",),
            examples=kimi_k2_5.EXAMPLES,
            demo=kimi_k2_5.demo.KIMI_K2_5,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_SYSTEM", "IM_USER", "IM_ASSISTANT"),
            content_after=("IM_MIDDLE", "THINK_CLOSE"),  # `<|im_middle|>` / `</think>` + content
            test_options={"thinking": _BOOLEANS, "tools_ts_str": (ANY_TEXT,)},
            golden_options={"thinking": True},
            prints_names=True,  # `<|im_user|>{{role_name}}<|im_middle|>`, role_name = name or role
            call_id=kimi_k2_5.CALL_ID,  # the caller's id is written as it is: a name shows only in functions.NAME:IDX
        ),
        FormatSpec(
            name="kimi-k2-6",
            template="kimi_k2_6.jinja",
            grammar=kimi_k2_5.GRAMMAR,
            family=kimi_k2_5.FAMILY,
            model_ids=("moonshotai/Kimi-K2.6",),
            model_family="kimi-k2.6",
            stop_terminals=("IM_END",),
            examples=kimi_k2_5.EXAMPLES,
            demo=kimi_k2_5.demo.KIMI_K2_6,
            turn_terminals=("IM_SYSTEM", "IM_USER", "IM_ASSISTANT"),
            content_after=("IM_MIDDLE", "THINK_CLOSE"),
            test_options={"thinking": _BOOLEANS, "preserve_thinking": _BOOLEANS, "tools_ts_str": (ANY_TEXT,)},
            golden_options={"thinking": True, "preserve_thinking": True},
            prints_names=True,
            call_id=kimi_k2_5.CALL_ID,
        ),
        FormatSpec(
            name="glm-4-5",
            template="glm45.jinja",
            grammar=glm45.GRAMMAR,
            family=glm45.FAMILY,
            model_ids=("zai-org/GLM-4.5", "zai-org/GLM-4.5-Air", "zai-org/GLM-4.6"),
            model_family="glm-4.5",
            stop_terminals=("END_OF_TEXT", "USER", "OBSERVATION"),
            examples=glm45.EXAMPLES,
            demo=glm45.demo.GLM45,
            eos_terminal="END_OF_TEXT",
            turn_terminals=("GMASK", "SOP", "SYSTEM", "ASSISTANT"),
            # A tool result's list of parts is written as Python's repr of each part
            # (`{{ tr.output if tr.output is defined else tr }}`).
            string_content_only=True,
            header_break="\n",  # `<|user|>\n{{ visible_text(m.content) }}`
            no_think_suffix="/nothink",
            test_options={"enable_thinking": _BOOLEANS},
            golden_options={"enable_thinking": False},
        ),
        FormatSpec(
            name="glm-4-7",
            template="glm47.jinja",
            grammar=glm45.GRAMMAR,
            family=glm45.FAMILY_47,
            model_ids=("zai-org/GLM-4.7", "zai-org/GLM-4.7-Flash"),
            model_family="glm-4.7",
            stop_terminals=("END_OF_TEXT", "USER", "OBSERVATION"),
            examples=glm45.EXAMPLES_47,
            demo=glm45.demo.GLM47,
            eos_terminal="END_OF_TEXT",
            turn_terminals=("GMASK", "SOP", "SYSTEM", "ASSISTANT"),
            string_content_only=True,  # as glm-4-5's: a tool result's parts are written as repr
            bare_think_close=True,  # `{{ '</think>' }}` for a turn whose reasoning is not shown
            test_options={"enable_thinking": _BOOLEANS, "clear_thinking": _BOOLEANS},
            golden_options={"clear_thinking": False},
        ),
        FormatSpec(
            name="minimax-m2",
            template="minimax_m2.jinja",
            grammar=minimax_m2.GRAMMAR,
            family=minimax_m2.FAMILY,
            model_ids=("MiniMaxAI/MiniMax-M2",),
            model_family="minimax-m2",
            stop_terminals=("END",),
            examples=minimax_m2.EXAMPLES,
            demo=minimax_m2.demo.MINIMAX_M2,
            # The template never reads bos_token or eos_token: it writes ]~!b[ and [e~[ itself.
            # No turn markers: the role tokens ]~!b[ and ]~b] are patterns (grammars/minimax_m2.lark),
            # and every turn ends with [e~[, the stop marker.
            content_after=("AI_ROLE", "THINK_CLOSE"),  # content follows them as written: white space there is content
            # A tool result's list of parts is written one `<response>` per part, a part that is
            # not text as Python's repr of it (`tr.output if tr.output is defined else (tr.text if
            # tr.type == 'text' and tr.text is defined else tr)`).
            string_content_only=True,
            test_options={"model_identity": (ANY_TEXT,)},
        ),
        FormatSpec(
            name="minimax-m2-1",
            template="minimax_m2_1.jinja",
            grammar=minimax_m2.GRAMMAR,
            family=minimax_m2.FAMILY,
            model_ids=("MiniMaxAI/MiniMax-M2.1",),
            model_family="minimax-m2.1",
            stop_terminals=("END",),
            examples=minimax_m2.EXAMPLES,
            demo=minimax_m2.demo.MINIMAX_M2_1,
            # The template never reads bos_token or eos_token: it writes ]~!b[ and [e~[ itself.
            # No turn markers: the role tokens ]~!b[ and ]~b] are patterns (grammars/minimax_m2.lark),
            # and every turn ends with [e~[, the stop marker.
            content_after=("AI_ROLE", "THINK_CLOSE"),  # content follows them as written: white space there is content
            # A tool result's list of parts is written one `<response>` per part, a part that is
            # not text as Python's repr of it (`tr.output if tr.output is defined else (tr.text if
            # tr.type == 'text' and tr.text is defined else tr)`).
            string_content_only=True,
            test_options={"model_identity": (ANY_TEXT,)},
        ),
        FormatSpec(
            name="minimax-m2-5",
            template="minimax_m2_5.jinja",
            grammar=minimax_m2.GRAMMAR,
            family=minimax_m2.FAMILY,
            model_ids=("MiniMaxAI/MiniMax-M2.5",),
            model_family="minimax-m2.5",
            stop_terminals=("END",),
            examples=minimax_m2.EXAMPLES,
            demo=minimax_m2.demo.MINIMAX_M2_5,
            # The template never reads bos_token or eos_token: it writes ]~!b[ and [e~[ itself.
            # No turn markers: the role tokens ]~!b[ and ]~b] are patterns (grammars/minimax_m2.lark),
            # and every turn ends with [e~[, the stop marker.
            content_after=("AI_ROLE", "THINK_CLOSE"),  # content follows them as written: white space there is content
            # A tool result's list of parts is written one `<response>` per part, a part that is
            # not text as Python's repr of it (`tr.output if tr.output is defined else (tr.text if
            # tr.type == 'text' and tr.text is defined else tr)`).
            string_content_only=True,
            test_options={"model_identity": (ANY_TEXT,)},
        ),
        FormatSpec(
            name="minimax-m2-7",
            template="minimax_m2_7.jinja",
            grammar=minimax_m2.GRAMMAR,
            family=minimax_m2.FAMILY,
            model_ids=("MiniMaxAI/MiniMax-M2.7",),
            model_family="minimax-m2.7",
            stop_terminals=("END",),
            examples=minimax_m2.EXAMPLES,
            demo=minimax_m2.demo.MINIMAX_M2_7,
            # The template never reads bos_token or eos_token: it writes ]~!b[ and [e~[ itself.
            # No turn markers: the role tokens ]~!b[ and ]~b] are patterns (grammars/minimax_m2.lark),
            # and every turn ends with [e~[, the stop marker.
            content_after=("AI_ROLE", "THINK_CLOSE"),  # content follows them as written: white space there is content
            # A tool result's list of parts is written one `<response>` per part, a part that is
            # not text as Python's repr of it (`tr.output if tr.output is defined else (tr.text if
            # tr.type == 'text' and tr.text is defined else tr)`).
            string_content_only=True,
            test_options={"model_identity": (ANY_TEXT,)},
        ),
        FormatSpec(
            name="mistral",
            template="mistral.jinja",
            grammar=mistral.GRAMMAR,
            family=mistral.FAMILY,
            model_ids=(
                "mistralai/Ministral-3-3B-Reasoning-2512",
                "mistralai/Ministral-3-8B-Reasoning-2512",
                "mistralai/Ministral-3-14B-Reasoning-2512",
            ),
            model_family="reasoning-2512",
            stop_terminals=("EOS",),
            examples=mistral.EXAMPLES,
            demo=mistral.demo.MISTRAL,
            bos_terminal="BOS",
            eos_terminal="EOS",
            turn_terminals=("BOS", "INST", "SYSTEM_OPEN", "RESULTS_OPEN"),
            # White space is content at the completion's start (``""``: nothing read yet — the
            # template writes no generation prompt, the answer follows `[/INST]` as it is) and
            # after `[/THINK]` (`'[THINK]' + block['thinking']` + `'[/THINK]'`, then the text).
            content_after=("", "THINK_CLOSE"),
            # The template renders a list of parts on user, system and assistant messages, but
            # writes a tool result's list as Python's repr (`message['content']|string`) and
            # puts an image before the text of a [text, image] user message: not handled yet.
            string_content_only=True,
        ),
        FormatSpec(
            name="mistral-large-3",
            template="mistral_large_3.jinja",
            grammar=mistral.GRAMMAR,
            family=mistral.FAMILY,
            model_ids=("mistralai/Mistral-Large-3-675B-Instruct-2512",),
            model_family="mistral-large-3",
            stop_terminals=("EOS",),
            examples=mistral.EXAMPLES,
            demo=mistral.demo.MISTRAL_LARGE_3,
            bos_terminal="BOS",
            eos_terminal="EOS",
            turn_terminals=("BOS", "INST", "SYSTEM_OPEN", "RESULTS_OPEN"),
            content_after=("", "THINK_CLOSE"),  # as `mistral`: the template differs only in its system prompt
            string_content_only=True,  # as `mistral`
        ),
        FormatSpec(
            name="ministral-3-instruct",
            template="ministral_3_instruct.jinja",
            grammar=mistral.GRAMMAR,
            family=mistral.FAMILY,
            model_ids=("mistralai/Ministral-3-3B-Instruct-2512",),
            model_family="ministral-3-3b-instruct",
            stop_terminals=("EOS",),
            examples=mistral.EXAMPLES,
            demo=mistral.demo.MINISTRAL_3_INSTRUCT,
            bos_terminal="BOS",
            eos_terminal="EOS",
            turn_terminals=("BOS", "INST", "SYSTEM_OPEN", "RESULTS_OPEN"),
            content_after=("", "THINK_CLOSE"),  # as `mistral`
            string_content_only=True,  # as `mistral`
            writes_reasoning=False,  # no thinking parts; `reasoning_content` is never read
        ),
        FormatSpec(
            name="devstral-small-2",
            template="devstral_small_2.jinja",
            grammar=mistral.GRAMMAR,
            family=mistral.FAMILY,
            model_ids=("mistralai/Devstral-Small-2-24B-Instruct-2512",),
            model_family="devstral-small-2",
            stop_terminals=("EOS",),
            examples=mistral.EXAMPLES,
            demo=mistral.demo.DEVSTRAL_SMALL_2,
            bos_terminal="BOS",
            eos_terminal="EOS",
            turn_terminals=("BOS", "INST", "SYSTEM_OPEN", "RESULTS_OPEN"),
            content_after=("", "THINK_CLOSE"),  # as `mistral`
            string_content_only=True,  # as `mistral`
            writes_reasoning=False,  # no thinking parts; `reasoning_content` is never read
        ),
        FormatSpec(
            name="llama-3",
            template="llama3.jinja",
            grammar=llama3.GRAMMAR,
            family=llama3.FAMILY,
            model_ids=(
                "meta-llama/Llama-3.1-8B-Instruct",
                "meta-llama/Llama-3.1-70B-Instruct",
                "meta-llama/Llama-3.1-405B-Instruct",
                "meta-llama/Meta-Llama-3.1-8B-Instruct",
                "meta-llama/Meta-Llama-3.1-70B-Instruct",
                "meta-llama/Llama-3.3-70B-Instruct",
            ),
            model_family="llama-3",
            stop_terminals=("CALL_CLOSE",),  # <|eot_id|>, which ends a call too; its spelling <|eom_id|> stops too
            examples=llama3.EXAMPLES,
            demo=llama3.demo.LLAMA_3,
            bos_terminal="BOS",  # `{{- bos_token }}` opens the prompt
            turn_terminals=("HEADER_OPEN",),
            content_after=("HEADER_CLOSE",),  # `<|end_header_id|>\n\n` + content: white space there is content
            # `message['content'] | trim` writes a list of parts as Python's repr of the list.
            string_content_only=True,
            one_call_per_message=True,  # raise_exception("This model only supports single tool-calls at once!")
            test_options={
                "date_string": ("26 Jul 2024", "1 Jan 2026"),
                "tools_in_user_message": _BOOLEANS,
                "builtin_tools": (["brave_search", "wolfram_alpha"], ["code_interpreter", "brave_search"]),
                "custom_tools": (llama3.CUSTOM_TOOLS,),
            },
            golden_options={"date_string": "14 Mar 2026", "tools_in_user_message": False},
        ),
        FormatSpec(
            name="llama-3-2",  # format names hold no dot (golden files are named <format>.<part>)
            template="llama3_2.jinja",
            grammar=llama3.GRAMMAR,
            family=llama3.FAMILY,
            model_ids=("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-3B-Instruct"),
            model_family="llama-3.2",
            stop_terminals=("CALL_CLOSE",),  # <|eot_id|> (and <|eom_id|>, which this template never writes)
            examples=llama3.EXAMPLES,
            demo=llama3.demo.LLAMA_3_2,
            bos_terminal="BOS",
            turn_terminals=("HEADER_OPEN",),
            content_after=("HEADER_CLOSE",),
            string_content_only=True,
            one_call_per_message=True,
            # Its date is strftime_now's unless date_string is given; it has no builtin_tools.
            test_options={
                "date_string": ("26 Jul 2024", "1 Jan 2026"),
                "tools_in_user_message": _BOOLEANS,
                "custom_tools": (llama3.CUSTOM_TOOLS,),
            },
            golden_options={"tools_in_user_message": False},
        ),
        FormatSpec(
            name="gpt-oss",
            template="gpt_oss.jinja",
            grammar=gpt_oss.GRAMMAR,
            family=gpt_oss.FAMILY,
            model_ids=("openai/gpt-oss-120b", "openai/gpt-oss-20b"),
            model_family="gpt-oss",
            # <|return|> ends an answer, <|call|> a call (harmony's stop tokens for the assistant).
            stop_terminals=("RETURN", "CALL_CLOSE"),
            examples=gpt_oss.EXAMPLES,
            demo=gpt_oss.demo.GPT_OSS,
            # The template never reads bos_token or eos_token.
            turn_terminals=("START", "END_OF_TEXT"),
            content_after=("MESSAGE",),  # a message's body follows <|message|>: white space there is its text
            string_content_only=True,  # the template joins content to strings with `+`
            calls_per_message=1,  # `{%- set tool_call = message.tool_calls[0] %}`
            call_head=" to=functions.",  # `"<|start|>assistant to=" + "functions." + tool_call.name + "<|channel|>…"`
            test_options={
                "reasoning_effort": ("low", "medium", "high"),
                "model_identity": (ANY_TEXT,),
                "builtin_tools": (["browser"], ["python"], ["python", "browser"], []),
            },
            golden_options={"reasoning_effort": "high"},
        ),
        FormatSpec(
            name="qwen3.5",
            template="qwen3_5.jinja",
            grammar=qwen3_5.GRAMMAR,
            family=qwen3_5.FAMILY,
            model_ids=(
                "Qwen/Qwen3.5-0.8B",
                "Qwen/Qwen3.5-2B",
                "Qwen/Qwen3.5-0.8B-Base",
                "Qwen/Qwen3.5-2B-Base",
            ),
            model_family="qwen3.5",
            stop_terminals=("IM_END", "END_OF_TEXT"),
            examples=qwen3_5.EXAMPLES,
            demo=qwen3_5.demo.QWEN3_5,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_START",),
            # `'<|im_start|>' + role + '\n' + content` and `'\n</think>\n\n' + content`: white space there is content
            content_after=("ROLE", "THINK_CLOSE"),
            test_options={"enable_thinking": _BOOLEANS, "add_vision_id": _BOOLEANS},
            golden_options={"enable_thinking": True},
        ),
        FormatSpec(
            name="granite-4",
            template="granite_4.jinja",
            grammar=granite.GRAMMAR,
            family=granite.FAMILY,
            model_ids=(
                "ibm-granite/granite-4.0-h-small",
                "ibm-granite/granite-4.0-h-tiny",
                "ibm-granite/granite-4.0-h-micro",
                "ibm-granite/granite-4.0-micro",
                "ibm-granite/granite-4.0-h-1b",
                "ibm-granite/granite-4.0-1b",
                "ibm-granite/granite-4.0-h-350m",
                "ibm-granite/granite-4.0-350m",
            ),
            model_family="granite-4.0",
            stop_terminals=("END_OF_TEXT",),
            examples=granite.EXAMPLES,
            demo=granite.demo.GRANITE_4,
            # The template never reads bos_token or eos_token: it writes <|end_of_text|> itself.
            turn_terminals=("START_ROLE",),
            content_after=("END_ROLE",),  # a turn's text follows its header: white space there is content
            test_options={"available_tools": ([], [_GRANITE_TOOL])},
        ),
        FormatSpec(
            name="nemotron-3-nano",
            template="nemotron_3_nano.jinja",
            # Qwen3.5's tokens and calls, its own spellings of them (the header of the grammar).
            grammar=qwen3_5.NEMOTRON_GRAMMAR,
            family=qwen3_5.FAMILY,
            model_ids=(
                "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
                "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8",
            ),
            model_family="nemotron-3-nano",
            stop_terminals=("IM_END", "END_OF_TEXT"),
            examples=qwen3_5.NEMOTRON_EXAMPLES,
            demo=qwen3_5.demo.NEMOTRON_3_NANO,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_START",),
            # `'<|im_start|>' + role + '\n'` + content and `<think></think>` + content: white space there is content
            content_after=("ROLE", "THINK_CLOSE"),
            string_content_only=True,  # `message.content | string`, `"<|im_start|>system\n" + system_message`
            layout="nemotron",
            test_options={"enable_thinking": _BOOLEANS, "truncate_history_thinking": _BOOLEANS},
            golden_options={"enable_thinking": True, "truncate_history_thinking": False},
        ),
        FormatSpec(
            name="granite-4-1",
            template="granite_4_1.jinja",
            grammar=granite.GRAMMAR,
            family=granite.FAMILY,
            model_ids=("ibm-granite/granite-4.1-3b", "ibm-granite/granite-4.1-8b", "ibm-granite/granite-4.1-30b"),
            model_family="granite-4.1",
            stop_terminals=("END_OF_TEXT",),
            examples=granite.EXAMPLES,
            demo=granite.demo.GRANITE_4_1,
            # The template never reads bos_token or eos_token: it writes <|end_of_text|> itself.
            turn_terminals=("START_ROLE",),
            content_after=("END_ROLE",),  # as `granite-4`
            layout=granite.NO_DEFAULT_SYSTEM,  # Granite 4.0's template less its default system text
            test_options={"available_tools": ([], [_GRANITE_TOOL])},
        ),
        FormatSpec(
            name="deepseek-v3-2",
            template="deepseek_v3_2.jinja",
            grammar=deepseek_v3_2.GRAMMAR,
            family=deepseek_v3_2.FAMILY,
            # Not DeepSeek-V3.2-Exp: its template writes DeepSeek-V3.1's calls.
            model_ids=("deepseek-ai/DeepSeek-V3.2",),
            model_family="deepseek-v3.2",
            stop_terminals=("EOS",),
            examples=deepseek_v3_2.EXAMPLES,
            demo=deepseek_v3_2.demo.DEEPSEEK_V3_2,
            bos_terminal="BOS",
            eos_terminal="EOS",  # the template writes it itself; transformers passes it all the same
            turn_terminals=("USER", "ASSISTANT", "RESULTS_OPEN"),
            content_after=("THINK_CLOSE",),  # `</think>` + content: white space there is content
            string_content_only=True,  # the template joins content to strings with `+`
            test_options={"thinking": _BOOLEANS, "enable_thinking": _BOOLEANS},
            golden_options={"thinking": True},
            # Thinking off, the prompt pre-fills `<think></think>` but a reply is written
            # `</think>answer` after its header (`{{- thinking_end_token -}}`).
            reply_thought_close="THINK_CLOSE",
            # `{%- if message['role'] == 'user' or message['role'] == 'developer' -%}` sets
            # last_user_idx; no branch writes a developer message.
            writes_developer=False,
            # `string="true"` before a string value, `string="false"` before `val | tojson`.
            written_kinds=True,
        ),
        FormatSpec(
            name="mistral-v0-3",  # format names hold no dot (golden files are named <format>.<part>)
            template="mistral_v0_3.jinja",
            grammar=mistral_v0_3.GRAMMAR,
            family=mistral_v0_3.FAMILY,
            model_ids=(
                "mistralai/Mistral-7B-Instruct-v0.3",
                "mistralai/Mistral-Small-Instruct-2409",
                "mistralai/Mixtral-8x22B-Instruct-v0.1",
            ),
            model_family="mistral-7b-instruct-v0.3",
            stop_terminals=("EOS",),
            examples=mistral_v0_3.EXAMPLES,
            demo=mistral_v0_3.demo.MISTRAL_V0_3,
            bos_terminal="BOS",
            eos_terminal="EOS",
            # A list's `[TOOL_CALLS]` (the call's opener is the object's `{`) or a new turn ends a call.
            turn_terminals=("BOS", "INST", "RESULTS_OPEN", "TOOLS_OPEN", "CALLS_OPEN"),
            # `"[INST] " + message["content"]` and `message["content"]|trim`: text, never a list of parts.
            string_content_only=True,
            writes_reasoning=False,  # `reasoning_content` is never read
            call_id_length=9,  # raise_exception("Tool call IDs should be alphanumeric strings with length 9!")
            empty_tools_block=True,  # `[AVAILABLE_TOOLS] [[/AVAILABLE_TOOLS]`: the `]` is written after a tool
            system_in_user=True,  # `"[INST] " + system_message + "\n\n" + message["content"]`, the last user message
            # `', "id": "' + tool_call.id + '"}'`: after the arguments, a JSON string
            unread_call_id=r',\s*"id"\s*:\s*"(?:[^"\\]|\\.)*"',
        ),
        FormatSpec(
            name="intern-s1",
            template="intern_s1.jinja",
            grammar=intern_s1.GRAMMAR,
            family=intern_s1.FAMILY,
            model_ids=("internlm/Intern-S1", "internlm/Intern-S1-mini"),
            model_family="intern-s1",
            stop_terminals=("IM_END", "END_OF_TEXT"),
            examples=intern_s1.EXAMPLES,
            demo=intern_s1.demo.INTERN_S1,
            # The template never reads bos_token or eos_token: it writes <|im_end|> itself.
            turn_terminals=("IM_START",),
            content_after=("THINK_CLOSE",),  # `\n</think>\n` + content: white space there is content
            test_options={"enable_thinking": _BOOLEANS},
            golden_options={"enable_thinking": True},
        ),
        FormatSpec(
            name="llama-4",
            template="llama4.jinja",
            grammar=llama4.GRAMMAR,
            family=llama4.FAMILY,
            model_ids=(
                "meta-llama/Llama-4-Scout-17B-16E-Instruct",
                "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
                "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
            ),
            model_family="llama-4",
            # <|eot|> ends a turn; <|eom|> ends one whose calls wait for their results.
            stop_terminals=("EOT", "EOM"),
            examples=llama4.EXAMPLES,
            demo=llama4.demo.LLAMA_4,
            bos_terminal="BOS",  # `{{- bos_token }}` opens the prompt
            turn_terminals=("HEADER_OPEN",),
            content_after=("HEADER_CLOSE", "PYTHON_START"),  # text follows them as written
            # A list of parts: the system message keeps only its first part's text
            # (`messages[0]['content'][0]['text']`), the first user message's `| trim` writes
            # Python's repr of the list; only strings are tested.
            string_content_only=True,
            writes_reasoning=False,  # no line of the template reads reasoning
            test_options={
                "date_string": ("26 Jul 2024",),  # read, never written
                "tools_in_user_message": _BOOLEANS,
                "custom_tools": (llama4.CUSTOM_TOOLS,),
            },
            golden_options={"tools_in_user_message": False},
            # `STRING_TEXT: /(?:[^"\\]|\\[\s\S])+/`, a pattern: a string is out at its quote or 1 KB.
            string_lag=PATTERN_BUFFER_LIMIT,
        ),
    )
}


def formats() -> list[str]:
    """The format names ``load()`` knows, in registry order."""
    return list(FORMATS)


_BUNDLED = frozenset(FORMATS)


def register(spec: FormatSpec) -> None:
    """Add a format at run time (a variant of a bundled family, say); its name must be new."""
    if spec.name in FORMATS:
        raise CodecError(f"a format named {spec.name!r} is registered already")
    FORMATS[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a format added with ``register``; bundled formats stay."""
    if name in _BUNDLED:
        raise CodecError(f"{name!r} is a bundled format and cannot be removed")
    FORMATS.pop(name, None)


def find(name: str) -> FormatSpec:
    """The format for a format name or a model id, in any case (an id the registry does not list:
    the format whose ``model_family`` it contains, the longest); ``UnknownFormatError`` with
    close matches (found in any case too)."""
    if not isinstance(name, str):
        raise UnknownFormatError(name, [], formats())
    if name in FORMATS:
        return FORMATS[name]
    lowered = name.lower()
    for spec in FORMATS.values():
        if lowered == spec.name.lower() or lowered in (model_id.lower() for model_id in spec.model_ids):
            return spec
    # A model id ("org/name", a path) or the fragment itself; the longest fragment wins: "qwen3"
    # is inside every "qwen3-coder" id. A misspelt format name ("qwen3_coder") is not an id.
    families = [
        spec
        for spec in FORMATS.values()
        if spec.model_ids and spec.model_family in lowered and ("/" in lowered or lowered == spec.model_family)
    ]
    if families:
        return max(families, key=lambda spec: len(spec.model_family))
    known = formats() + [model_id for spec in FORMATS.values() for model_id in spec.model_ids]
    by_lower = {entry.lower(): entry for entry in reversed(known)}  # the first spelling wins
    close = difflib.get_close_matches(lowered, list(by_lower), n=3, cutoff=0.5)
    raise UnknownFormatError(name, [by_lower[match] for match in close], formats())
