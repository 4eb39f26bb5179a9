"""The bundled templates are byte-exact copies: each one's sha256 is pinned in
templates/SOURCES.toml, and matches the shared reference copy when that folder is present."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
SHIP = ROOT.parent / "shared" / "reference" / "templates" / "ship"
SOURCES: dict[str, Any] = tomllib.loads((TEMPLATES / "SOURCES.toml").read_text(encoding="utf-8"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_template_matches_its_pinned_sha256(name: str) -> None:
    entry = SOURCES[name]
    path = TEMPLATES / entry["file"]
    assert path.stat().st_size == entry["bytes"]
    assert _sha256(path) == entry["sha256"]


def test_every_template_is_pinned() -> None:
    pinned = {entry["file"] for entry in SOURCES.values()}
    assert {path.name for path in TEMPLATES.glob("*.jinja")} == pinned


@pytest.mark.skipif(not SHIP.is_dir(), reason="shared/reference/templates/ship/ is not here")
@pytest.mark.parametrize("name", sorted(SOURCES))
def test_template_matches_the_reference_copy(name: str) -> None:
    """The templates shared/ hands over (the first release's) are shipped byte for byte; a
    template added since is pinned by SOURCES.toml alone."""
    entry = SOURCES[name]
    if not (SHIP / entry["file"]).exists():
        pytest.skip(f"shared/ holds no reference copy of {entry['file']}")
    assert _sha256(TEMPLATES / entry["file"]) == _sha256(SHIP / entry["file"])
