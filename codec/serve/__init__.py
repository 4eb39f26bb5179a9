"""``codec serve``: an OpenAI-compatible chat endpoint in front of an engine's raw completions.

Needs the ``serve`` extra (starlette, uvicorn, httpx): ``pip install 'codec[serve]'``.
``create_app`` builds the ASGI app; ``run`` serves it with uvicorn (docs/serving.md).
"""

from __future__ import annotations

from codec.serve.app import create_app, run
from codec.serve.config import ServeConfig
from codec.serve.limits import ServeLimits

__all__ = ["ServeConfig", "ServeLimits", "create_app", "run"]
