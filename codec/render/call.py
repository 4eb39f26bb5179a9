"""The arguments of ``codec.load`` and ``Codec.render`` that are not conversation: the
template a caller brings and the ``now`` its prompt shows, checked so that a wrong type is a
``RenderError`` saying what was expected, not a ``TypeError`` from deep inside (or, for a
``bytes`` template, a prompt reading ``b'...'``)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from codec.errors import RenderError


def template_source(template: str | Path | None) -> str | None:
    """The text of a caller's template: given as text, or read from a path (UTF-8)."""
    if template is None or isinstance(template, str):
        return template
    if isinstance(template, Path):
        try:
            return template.read_text(encoding="utf-8")
        except (OSError, UnicodeError) as error:
            raise RenderError(f"cannot read the chat template {str(template)!r}: {error}") from None
    hint = "; decode it first: template.decode('utf-8')" if isinstance(template, bytes) else ""
    raise RenderError(
        "template must be the chat template's text (a str) or a path to it (a pathlib.Path), "
        f"got {type(template).__name__}{hint}"
    )


def render_time(now: datetime | date | str | None) -> datetime | None:
    """``now`` as a datetime: a date means its midnight, a string is ISO 8601."""
    if now is None or isinstance(now, datetime):
        return now
    if isinstance(now, str):
        try:
            return datetime.fromisoformat(now)
        except ValueError:
            raise RenderError(
                f"now={now!r:.60} is not an ISO 8601 date or time (like '2026-03-14' or '2026-03-14T09:26:53')"
            ) from None
    if isinstance(now, date):
        return datetime(now.year, now.month, now.day)
    raise RenderError(f"now must be a datetime, a date or an ISO 8601 string, got {type(now).__name__} {now!r:.60}")
