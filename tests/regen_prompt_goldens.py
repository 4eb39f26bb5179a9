"""Rewrites the expected files of the golden prompts from the current code. Run it only after a
deliberate change, then read the diff (``git diff tests/golden/prompt``) before committing."""

from __future__ import annotations

import json

import codec
from prompt_goldens import ROOT, as_json, cases, load_input, render_input


def main() -> None:
    for fmt, case in cases():
        data = load_input(fmt, case)
        prompt = render_input(fmt, data)
        (ROOT / fmt / f"{case}.prompt.txt").write_text(prompt, encoding="utf-8", newline="")
        parsed = codec.load(fmt).parse_prompt(prompt)
        expected = json.dumps(as_json(parsed), ensure_ascii=False, indent=2) + "\n"
        (ROOT / fmt / f"{case}.canonical.json").write_text(expected, encoding="utf-8")
        print(f"{fmt}/{case}: {len(prompt)} characters")


if __name__ == "__main__":
    main()
