"""The golden layout: ``tests/golden/<kind>/<case>/<format>.<part>`` (see tests/golden/README.md).

Which formats a case covers is read from its folder, and every file's format must be in the
registry, so a golden for a new format is found without editing a list and a golden for a
format that is gone (or misspelt) fails loudly instead of being skipped.
"""

from __future__ import annotations

from pathlib import Path

from codec.registry import FORMATS

ROOT = Path(__file__).resolve().parent.parent / "golden"
KINDS = ("parse", "prompt", "render")


def format_of(path: Path) -> str:
    """The format a golden file belongs to: the longest registered name its file name starts
    with, then a dot (a format name may hold a dot: ``qwen3.5.txt``)."""
    return split_name(path)[0]


def part_of(path: Path) -> str:
    """The part a golden file holds: its file name after the format's name and a dot."""
    return split_name(path)[1]


def split_name(path: Path) -> tuple[str, str]:
    """``(format, part)`` of a golden file's name."""
    for name in sorted(FORMATS, key=len, reverse=True):
        if path.name.startswith(f"{name}."):
            return name, path.name[len(name) + 1 :]
    name = path.name.split(".", 1)[0]
    raise LookupError(f"{path}: {name!r} is not a registered format ({', '.join(FORMATS)})")


def case_folders(kind: str) -> list[Path]:
    """The case folders of ``kind``, sorted by name (files beside them are shared by all cases)."""
    return sorted(folder for folder in (ROOT / kind).iterdir() if folder.is_dir())


def formats_in(folder: Path) -> list[str]:
    """The formats with a file in a case folder, in registry order."""
    present = {format_of(path) for path in folder.iterdir() if path.is_file()}
    return [name for name in FORMATS if name in present]


def entries(kind: str) -> list[tuple[str, str]]:
    """``(case, format)`` for every golden of ``kind``."""
    return [(folder.name, fmt) for folder in case_folders(kind) for fmt in formats_in(folder)]


def path(kind: str, case: str, fmt: str, part: str) -> Path:
    """The file holding one part (``txt``, ``input.json``, ...) of one format's golden."""
    return ROOT / kind / case / f"{fmt}.{part}"
