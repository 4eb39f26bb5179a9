"""``codec formats``: what each registered format is — its models, family, template variables
(the ``**options`` render and parse accept) and the stop tokens a server should pass on."""

from __future__ import annotations

import json
from typing import Any, TextIO

import codec
from codec.registry import FORMATS


def describe(name: str) -> dict[str, Any]:
    """One format's facts as plain JSON data."""
    spec = FORMATS[name]
    return {
        "name": spec.name,
        "family": spec.family.name,
        "models": list(spec.model_ids),
        "template": spec.template,
        "grammar": spec.grammar,
        "options": sorted(codec.load(name).options),
        "stop_tokens": list(spec.stop_tokens),
    }


def run(out: TextIO, as_json: bool) -> None:
    """Print every format, as a readable list or as one JSON array."""
    described = [describe(name) for name in codec.formats()]
    if as_json:
        out.write(json.dumps(described, ensure_ascii=False, indent=2) + "\n")
        return
    for entry in described:
        out.write(f"{entry['name']}  (family {entry['family']}; {entry['template']}, {entry['grammar']})\n")
        out.write(f"  models:      {', '.join(entry['models']) or '(no model id; load it by name)'}\n")
        out.write(f"  options:     {', '.join(entry['options']) or '(none)'}\n")
        out.write(f"  stop tokens: {' '.join(entry['stop_tokens'])}\n")
