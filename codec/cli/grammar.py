"""``codec grammar``: the llguidance grammar (Lark dialect) that constrains a format's
completion to text its parser reads, with calls of the given tools (docs/constraint.md).

    codec grammar -f glm --tools tools.json [--tool-choice auto|none|required|NAME]
                  [--no-parallel-tool-calls] [-o KEY=VALUE]...

The grammar goes to standard output; what it does not enforce (the notes) goes to standard
error, one a line.
"""

from __future__ import annotations

import argparse
import sys

from codec.cli.inputs import add_option_argument, add_template_arguments, load_codec, load_tools
from codec.constrain import ToolChoice, build


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``codec grammar``."""
    add_template_arguments(parser, "the format whose completion the grammar constrains")
    parser.add_argument("--tools", metavar="TOOLS.json", help="a JSON list of tools (JSON schemas)")
    parser.add_argument(
        "--tool-choice",
        default="auto",
        metavar="auto|none|required|NAME",
        help="auto (default), none, required, or the name of the one tool to call",
    )
    parser.add_argument(
        "--no-parallel-tool-calls",
        dest="parallel_tool_calls",
        action="store_false",
        help="allow at most one call",
    )
    add_option_argument(
        parser, "a template option (it decides the generation prompt); VALUE is JSON when it parses, else a string"
    )


def run(args: argparse.Namespace) -> int:
    """Print the grammar; the notes on standard error."""
    c = load_codec(args.format, args.template)
    tools = load_tools(args.tools) if args.tools else None
    choice: ToolChoice = args.tool_choice
    built = build(c, tools=tools, tool_choice=choice, parallel_tool_calls=args.parallel_tool_calls, **dict(args.option))
    sys.stdout.write(built.grammar)
    for note in built.notes:
        where = f"{note.tool or ''}{note.path}"
        sys.stderr.write(f"codec: note: {note.code} at {where or '/'}: {note.detail}\n")
    return 0
