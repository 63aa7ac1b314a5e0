"""``toolslip serve``: put a model behind the OpenAI, Anthropic, Gemini, Bedrock and Ollama protocols here."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from . import EXIT_OK
from .argtypes import check_model, fraction, port

if TYPE_CHECKING:
    from ..core.model import Model

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve a model over the OpenAI, Anthropic, Gemini, Bedrock Converse and Ollama protocols",
        description=(
            "Serve a model over the OpenAI (/v1/chat/completions, /v1/responses), Anthropic (/v1/messages), "
            "Gemini (generateContent), Bedrock (Converse) and Ollama (/api/chat) protocols, "
            "streaming or not, so the official SDKs and tools built on them can use it."
        ),
    )
    parser.add_argument("--model", help="model string (default: TOOLSLIP_MODEL, an API key's model, local, scripted)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=port, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument(
        "--faults",
        type=fraction,
        default=0.0,
        metavar="SHARE",
        help="answer this share of model requests (0 to 1) as overloaded: 529 on /v1/messages, 503 elsewhere "
        "(to test fallbacks and retries against real failures)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="do not log each request (method, path, status, model, tokens, ms)"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..providers import default_model

    check_model(args.model)
    model, reason = default_model(args.model)
    print(f"model: {model.name} ({reason})", flush=True)
    if not args.quiet:
        _log_requests()
    asyncio.run(_serve_forever(model, args.host, args.port, args.faults))
    return EXIT_OK


def _log_requests() -> None:
    """The server's one line per request, on stderr with the time (stdout keeps the banner)."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    log = logging.getLogger("toolslip.server")
    log.addHandler(handler)
    log.setLevel(logging.INFO)


async def _serve_forever(model: Model, host: str, port: int, faults: float = 0.0) -> None:
    from ..server import serve

    try:
        async with serve(model, host, port, faults=faults) as base:
            print(
                f"toolslip serve: {model.name} at {base}\n"
                f"  OpenAI clients:    base_url={base}/v1   (POST /v1/chat/completions, POST /v1/responses)\n"
                f"  Anthropic clients: base_url={base}      (POST /v1/messages)\n"
                f"  google-genai:      base_url={base}      (POST /v1beta/models/MODEL:generateContent)\n"
                f"  boto3 Bedrock:     endpoint_url={base}  (POST /model/MODEL_ID/converse)\n"
                f"  ollama:            host={base}          (POST /api/chat)\n"
                "  press Ctrl-C to stop",
                flush=True,
            )
            if host not in ("127.0.0.1", "localhost", "::1"):
                print(
                    f"toolslip serve: warning: {host} may be reachable from other machines; there is no auth",
                    file=sys.stderr,
                )
            await asyncio.Event().wait()
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
