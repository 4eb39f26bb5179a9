"""``codec serve``: an OpenAI-compatible chat endpoint in front of an engine's raw completions.

Needs the ``serve`` extra (starlette, uvicorn, httpx): ``pip install 'codec[serve]'``.
``create_app`` builds the ASGI app; ``run`` serves it with uvicorn (docs/serving.md).
"""

from __future__ import annotations

from codec.serve.app import ServeConfig, create_app, run

__all__ = ["ServeConfig", "create_app", "run"]
