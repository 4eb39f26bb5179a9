"""``ServeConfig``: what one ``codec serve`` serves, in front of which engine, with which caps."""

from __future__ import annotations

from dataclasses import dataclass, field

from codec.api import Codec
from codec.chunks import ReasoningField
from codec.errors import CodecError
from codec.render.renderer import UnknownOptions
from codec.serve.limits import ServeLimits


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """What one ``codec serve`` serves: a format (``codec.load(...)``) in front of an engine.

    ``upstream`` is the engine's OpenAI base URL (``http://127.0.0.1:8000/v1``). ``model`` is
    the name clients see (``/v1/models``); ``upstream_model`` the one sent to the engine
    (default: the client's). ``reasoning_field`` names the reasoning in replies
    (``reasoning_content``, or ``reasoning`` as vLLM now writes it). ``timeout`` bounds each
    wait for the engine, in seconds. ``unknown_options="ignore"`` drops template options this
    template does not read (``codec.chat_request.read_request``) instead of refusing them.
    ``constrain`` names the engine's request field (dotted: ``structured_outputs.grammar``) that
    gets the turn's llguidance grammar (``Turn.constraint``); with it, ``tool_choice`` may force
    a call and ``parallel_tool_calls: false`` is honoured. ``limits`` caps what one request may
    ask (``ServeLimits``). ``api_key``: when set, every request must send
    ``Authorization: Bearer <api_key>`` (else 401).
    """

    codec: Codec
    upstream: str
    model: str
    upstream_model: str | None = None
    reasoning_field: ReasoningField = "reasoning_content"
    timeout: float = 600.0
    unknown_options: UnknownOptions = "error"
    constrain: str | None = None
    limits: ServeLimits = field(default_factory=ServeLimits)
    api_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # An empty key would let in a request whose header is "Bearer " — and one set from an
        # empty environment variable would look like protection that is not there.
        if self.api_key is not None and (not self.api_key or self.api_key.strip() != self.api_key):
            raise CodecError("ServeConfig.api_key is empty or has white space around it; give a key or None")
