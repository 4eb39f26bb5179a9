"""codec: a bidirectional codec for LLM chat formats.

Render OpenAI-style messages into the exact prompt a model's own chat template produces, and
parse what the model writes back into reasoning, content and typed tool calls — whole or
streamed::

    import codec

    glm = codec.load("glm")
    prompt = glm.render(messages, tools=tools)
    reply = glm.parse(completion, tools=tools)
"""

from __future__ import annotations

from codec._version import __version__
from codec.errors import CodecError, ParseError, RenderError, UnknownFormatError
from codec.events import (
    ContentDelta,
    Event,
    ReasoningDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    openai_delta,
)
from codec.limits import Limits
from codec.models import (
    AssistantMessage,
    Conversation,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from codec.registry import formats

__all__ = [
    "AssistantMessage",
    "ChunkStream",
    "Codec",
    "CodecError",
    "ContentDelta",
    "Conversation",
    "Detection",
    "Diagnostic",
    "Event",
    "Limits",
    "Loss",
    "ParseError",
    "PrefixCheck",
    "ReasoningDelta",
    "RenderError",
    "StreamParser",
    "SystemMessage",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolMessage",
    "Turn",
    "UnknownFormatError",
    "UserMessage",
    "__version__",
    "detect",
    "explain_losses",
    "formats",
    "load",
    "openai_delta",
]

# Imported last: these modules build on the names above.
from codec._canonical import Loss
from codec._prefix import PrefixCheck
from codec.api import Codec, explain_losses, load
from codec.chunks import ChunkStream
from codec.detect import Detection, detect
from codec.engine.stream import StreamParser
from codec.models import Diagnostic
from codec.turn import Turn
