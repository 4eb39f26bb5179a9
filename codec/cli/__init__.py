"""The ``codec`` command line (``python -m codec``), on top of the public API."""

from __future__ import annotations

from codec.cli.main import main

__all__ = ["main"]
