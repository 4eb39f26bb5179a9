"""``codec serve``: the OpenAI-compatible chat endpoint (codec/serve/) from the command line."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

import codec
from codec.cli.inputs import UsageError

if TYPE_CHECKING:
    from codec.serve import ServeConfig, ServeLimits

DEFAULT_PORT = 8000
API_KEY_VARIABLE = "CODEC_API_KEY"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the engine's OpenAI base URL, serving /v1/completions (http://127.0.0.1:8080/v1)",
    )
    parser.add_argument(
        "-f",
        "--format",
        required=True,
        metavar="NAME|PATH",
        help="a format name, a model id, or a path to a model directory or chat template",
    )
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port to listen on ({DEFAULT_PORT})")
    parser.add_argument("--model", help="the model name clients see in /v1/models (default: the format's)")
    parser.add_argument("--upstream-model", help="the model name sent to the engine (default: the client's)")
    parser.add_argument(
        "--reasoning-field",
        choices=("reasoning_content", "reasoning"),
        default="reasoning_content",
        help="the field replies carry reasoning in (reasoning_content)",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the engine (600)")
    parser.add_argument(
        "--constrain",
        metavar="FIELD",
        help="send the reply's llguidance grammar in this engine request field "
        "(vLLM: structured_outputs.grammar; llama.cpp: grammar); lets tool_choice force a call",
    )
    parser.add_argument(
        "--unknown-options",
        choices=("error", "ignore"),
        default="error",
        help="template options this template does not read: refuse the request (error) or drop them",
    )
    _configure_bounds(parser)


def _configure_bounds(parser: argparse.ArgumentParser) -> None:
    """The caps (``codec.serve.ServeLimits``; its defaults when a flag is not given — it is not
    imported here: without the serve extra, the rest of the command line must still load)."""
    parser.add_argument(
        "--max-body-bytes", type=int, metavar="N", help="refuse longer request bodies (413; 4194304, 4 MiB)"
    )
    parser.add_argument("--max-messages", type=int, metavar="N", help="refuse requests with more messages (400; 2048)")
    parser.add_argument(
        "--render-timeout",
        type=float,
        metavar="SECONDS",
        help="refuse requests that take longer to read and render (400; 5)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help=f"require Authorization: Bearer KEY on every request (401 without); default: ${API_KEY_VARIABLE}, "
        "which keeps the key out of the process list",
    )


def run(args: argparse.Namespace) -> int:
    try:
        from codec.serve import run as serve
    except ImportError as error:
        raise UsageError(f"codec serve needs the serve extra: pip install 'codec[serve]' ({error})") from None
    chosen = codec.load(args.format)
    model = args.model or (Path(args.format).name if Path(args.format).exists() else chosen.name)
    serve(_config(args, chosen, model), host=args.host, port=args.port)
    return 0


def _config(args: argparse.Namespace, chosen: codec.Codec, model: str) -> ServeConfig:
    """The ``ServeConfig`` the flags describe; ``CodecError`` (an exit status of 1 from
    ``codec.cli.main``) for a cap or a key that cannot be."""
    from codec.serve import ServeConfig

    return ServeConfig(
        codec=chosen,
        upstream=args.upstream,
        model=model,
        upstream_model=args.upstream_model,
        reasoning_field=args.reasoning_field,
        timeout=args.timeout,
        unknown_options=args.unknown_options,
        constrain=args.constrain,
        limits=_limits(args),
        api_key=args.api_key if args.api_key is not None else os.environ.get(API_KEY_VARIABLE),
    )


def _limits(args: argparse.Namespace) -> ServeLimits:
    from codec.serve import ServeLimits

    flags = {"max_body_bytes": args.max_body_bytes, "max_messages": args.max_messages}
    given = {name: value for name, value in flags.items() if value is not None}
    if args.render_timeout is not None:
        given["render_seconds"] = args.render_timeout
    return ServeLimits(**given)
