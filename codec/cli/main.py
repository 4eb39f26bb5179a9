"""The ``codec`` command: render prompts, parse or stream completions, list formats, run the demo.

Each subcommand is one entry of ``COMMANDS``: a function that adds its arguments and a function
that runs it, returning the exit status. Adding one (``roundtrip``) is an entry and two
functions. Errors the user can fix — a ``CodecError``, a missing file, bad JSON, a malformed
``--option`` — print ``codec: error: ...`` and exit 2, like argparse's own usage errors.
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from codec.cli import grammar, serve
from codec.cli.inputs import (
    UsageError,
    add_option_argument,
    add_template_arguments,
    display_name,
    load_codec,
    load_messages,
    load_request,
    load_tools,
    open_binary,
    read_text,
)
from codec.cli.output import emit, json_text, report, result_json
from codec.engine.stream import StreamParser
from codec.errors import CodecError

READ_SIZE = 64
"""Bytes ``codec stream`` asks for at a time: output follows input as it arrives."""


@dataclass(frozen=True)
class Command:
    """A subcommand: its one-line help, how it adds arguments, and what it runs."""

    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``codec`` and ``python -m codec``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (CodecError, UsageError) as error:
        return _fail(str(error))
    except BrokenPipeError:  # `codec ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        return _fail(f"{error.strerror or error}{where}")
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug, not the user's input: still one line, never a traceback
        return _fail(f"internal error ({type(error).__name__}: {error}); please report it", status=70)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand of ``COMMANDS``."""
    parser = argparse.ArgumentParser(
        prog="codec", description="Render chat prompts and parse completions, byte-exactly."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        child = sub.add_parser(name, help=command.help, description=command.help)
        command.configure(child)
        child.set_defaults(run=command.run)
    return parser


def _fail(message: str, status: int = 2) -> int:
    sys.stderr.write(f"codec: error: {message}\n")
    return status


def _format_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format``, ``--template``, ``--tools`` and ``--option``, shared by render, parse and stream."""
    add_template_arguments(parser, "the format whose grammar reads the template's prompts")
    parser.add_argument("--tools", metavar="TOOLS.json", help="a JSON list of tools (JSON schemas)")
    add_option_argument(parser, 'a template option; VALUE is JSON when it parses (true, 3, "x"), else a string')


def _input_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("input", nargs="?", default="-", help=f"{what} (default: - for stdin)")


def _configure_render(parser: argparse.ArgumentParser) -> None:
    _format_arguments(parser)
    parser.add_argument(
        "--no-generation-prompt", action="store_true", help="end after the last message (no assistant header)"
    )
    parser.add_argument("--now", type=_date, help="the date the template prints (2026-01-31)")
    parser.add_argument(
        "--allow-special-tokens", action="store_true", help="let message text contain the format's special tokens"
    )
    _input_argument(parser, 'a JSON list of messages, or {"messages": [...], "tools": [...]}')


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return number


def _date(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an ISO date like 2026-01-31, got {text!r}") from None


def _render(args: argparse.Namespace) -> int:
    c = load_codec(args.format, args.template)
    request = load_request(args.input, args.tools, c)
    prompt = c.render(
        request.messages,
        tools=request.tools,
        add_generation_prompt=not args.no_generation_prompt,
        now=args.now,
        allow_special_tokens=args.allow_special_tokens,
        **{**request.options, **dict(args.option)},  # --option wins over the body's
    )
    sys.stdout.write(_printable(prompt))
    return 0


def _printable(prompt: str) -> str:
    """``prompt``, unless it holds a lone surrogate (from a ``\\ud800`` escape in the JSON of the
    input, ``--tools`` or an ``--option``), which UTF-8 cannot carry: no prompt can be printed."""
    try:
        prompt.encode("utf-8")
    except UnicodeEncodeError as error:
        found = ord(prompt[error.start])
        raise UsageError(
            f"the prompt would hold a lone surrogate, U+{found:04X} at character {error.start}: a \\u{found:04x} "
            "escape with no pair in the JSON given (input, --tools or --option), which is not text; "
            "remove it or complete the pair"
        ) from None
    return prompt


def _configure_parse(parser: argparse.ArgumentParser) -> None:
    _format_arguments(parser)
    _parse_arguments(parser)
    parser.add_argument(
        "--diagnostics",
        choices=("text", "json"),
        default="text",
        help="text (default): repairs on stderr, the message on stdout; json: one object on stdout "
        "with the message, finish_reason, truncated_call and diagnostics",
    )
    _input_argument(parser, "the completion text")


def _parse_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by parse and stream."""
    parser.add_argument("--strict", action="store_true", help="stop at the first deviation from the format (exit 2)")
    parser.add_argument(
        "--sequential-ids", action="store_true", help="ids call_0, call_1, ... for formats whose calls carry none"
    )
    parser.add_argument(
        "--history",
        metavar="HISTORY.json",
        help="the conversation the completion continues (a JSON list of messages): it can decide where "
        "the prompt left the model (Gemma 4 after a tool result)",
    )


def _parse(args: argparse.Namespace) -> int:
    parser = _stream_parser(args)
    parser.feed(read_text(args.input))
    parser.close()
    reply = parser.message
    if args.diagnostics == "json":
        result = result_json(reply)
    else:
        report(parser.diagnostics)
        result = reply.to_openai()
    sys.stdout.write(json_text(result, indent=2) + "\n")
    return 0


def _configure_stream(parser: argparse.ArgumentParser) -> None:
    _format_arguments(parser)
    _parse_arguments(parser)
    _input_argument(parser, "the completion, read as it arrives")


def _stream(args: argparse.Namespace) -> int:
    parser = _stream_parser(args)
    decoder = codecs.getincrementaldecoder("utf-8")()
    seen = 0  # diagnostics already reported
    with open_binary(args.input) as source:
        while data := os.read(source.fileno(), READ_SIZE):
            emit(parser.feed(_decode(decoder, data, args.input)))
            seen = report(parser.diagnostics, seen)
    emit(parser.feed(_decode(decoder, b"", args.input, final=True)) + parser.close())
    report(parser.diagnostics, seen)
    return 0


def _decode(decoder: codecs.IncrementalDecoder, data: bytes, path: str, final: bool = False) -> str:
    try:
        return decoder.decode(data, final=final)
    except UnicodeDecodeError:
        raise UsageError(f"{display_name(path)}: not UTF-8 text") from None


def _stream_parser(args: argparse.Namespace) -> StreamParser:
    return load_codec(args.format, args.template).stream(
        tools=load_tools(args.tools) if args.tools else None,
        strict=args.strict,
        id_factory=(lambda index: f"call_{index}") if args.sequential_ids else None,
        history=load_messages(args.history) if args.history else None,
        **dict(args.option),
    )


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("formats", nargs="*", metavar="FORMAT", help="only these formats")


def _demo(args: argparse.Namespace) -> int:
    from codec.cli import demo  # the demo's data is only needed here

    demo.run(sys.stdout, args.formats or None)
    return 0


def _configure_formats(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON array instead of a list")


def _formats(args: argparse.Namespace) -> int:
    from codec.cli import listing

    listing.run(sys.stdout, args.json)
    return 0


def _configure_roundtrip(parser: argparse.ArgumentParser) -> None:
    add_template_arguments(parser, "the format whose grammar parses the prompts")
    parser.add_argument("--examples", type=_positive, default=100, help="conversations to generate (100)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0): the same run each time")


def _roundtrip(args: argparse.Namespace) -> int:
    from codec.cli import roundtrip

    c = load_codec(args.format, args.template)
    report = roundtrip.run(c, examples=args.examples, seed=args.seed)
    sys.stdout.write(f"{report}\n")
    return 0 if report.ok else 1


COMMANDS: dict[str, Command] = {
    "render": Command("print the prompt for a conversation", _configure_render, _render),
    "parse": Command("parse a completion into an OpenAI assistant message (JSON)", _configure_parse, _parse),
    "stream": Command("parse a completion as it arrives: one JSON event per line", _configure_stream, _stream),
    "demo": Command("render, stream-parse and continue a conversation in every format", _configure_demo, _demo),
    "formats": Command("list the formats: models, template options, stop tokens", _configure_formats, _formats),
    "roundtrip": Command(
        "fuzz a template against its grammar: render, parse back, compare", _configure_roundtrip, _roundtrip
    ),
    "grammar": Command(
        "print the llguidance grammar that constrains a format's completion", grammar.configure, grammar.run
    ),
    "serve": Command(
        "an OpenAI-compatible chat server in front of an engine's /v1/completions (extra: serve)",
        serve.configure,
        serve.run,
    ),
}
