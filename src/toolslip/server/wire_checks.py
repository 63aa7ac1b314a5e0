"""What Gemini, Bedrock and Ollama refuse, refused by ``toolslip serve`` in the services' own words.

As for the OpenAI and Anthropic routes (:mod:`toolslip.server.checks`), a program tested against ``serve``
must fail where it would fail against the service. The messages are the services' (recorded answers in
``tests/data/real_traffic/google_aws_ollama/errors.json``, the services' documented constraints); each
refusal names its field, which Google puts in a ``BadRequest`` detail and AWS in the message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .checks import Rejection

__all__ = ["check_converse", "check_gemini", "check_ollama", "not_local"]

_GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
_BEDROCK_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _first(found: Iterator[Rejection]) -> Rejection | None:
    return next(found, None)


def check_gemini(body: dict[str, Any]) -> Rejection | None:
    """``generateContent``: contents present, roles ``user``/``model``, parts not empty, function names."""
    return _first(_gemini(body))


def _gemini(body: dict[str, Any]) -> Iterator[Rejection]:
    contents = body.get("contents")
    if not contents:
        yield Rejection("* GenerateContentRequest.contents: contents is not specified", "contents")
    for i, content in enumerate(contents if isinstance(contents, list) else ()):
        if not isinstance(content, dict):
            continue
        if content.get("role", "user") not in ("user", "model", "function"):
            yield Rejection("Please use a valid role: user, model.", f"contents[{i}].role")
        if not content.get("parts"):
            yield Rejection(
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.",
                f"contents[{i}].parts",
            )
    for t, tool in enumerate(body.get("tools") or ()):
        declarations = (
            tool.get("functionDeclarations", tool.get("function_declarations")) if isinstance(tool, dict) else None
        )
        for d, declaration in enumerate(declarations or ()):
            name = declaration.get("name") if isinstance(declaration, dict) else None
            if not isinstance(name, str) or not _GEMINI_NAME.fullmatch(name):
                yield Rejection(
                    f"* GenerateContentRequest.tools[{t}].function_declarations[{d}].name: Invalid function name. "
                    "Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores "
                    "(_), dots (.), colons (:), or dashes (-), with a maximum length of 64.",
                    f"tools[{t}].function_declarations[{d}].name",
                )


def check_converse(body: dict[str, Any]) -> Rejection | None:
    """Converse: messages present, starting with the user, roles, content not empty, tool names."""
    return _first(_converse(body))


def _converse(body: dict[str, Any]) -> Iterator[Rejection]:
    messages = body.get("messages")
    if not messages:
        yield Rejection(
            "A conversation must start with a user message. Try again with a conversation that starts with a "
            "user message.",
            "messages",
        )
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role not in ("user", "assistant"):
            yield Rejection(
                f"1 validation error detected: Value '{role}' at 'messages.{i + 1}.member.role' failed to satisfy "
                "constraint: Member must satisfy enum value set: [user, assistant]",
                f"messages[{i}].role",
            )
        elif i == 0 and role != "user":
            yield Rejection(
                "A conversation must start with a user message. Try again with a conversation that starts with "
                "a user message.",
                "messages[0].role",
            )
        if not message.get("content"):
            yield Rejection(
                f"The content field in the Message object at messages.{i} is empty. Add a ContentBlock object to "
                "the content field and try again.",
                f"messages[{i}].content",
            )
    tools = (body.get("toolConfig") or {}).get("tools") if isinstance(body.get("toolConfig"), dict) else None
    for t, tool in enumerate(tools or ()):
        spec = tool.get("toolSpec") if isinstance(tool, dict) else None
        name = spec.get("name") if isinstance(spec, dict) else None
        if isinstance(spec, dict) and (not isinstance(name, str) or not _BEDROCK_NAME.fullmatch(name)):
            yield Rejection(
                f"1 validation error detected: Value '{name}' at 'toolConfig.tools.{t + 1}.member.toolSpec.name' "
                "failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
                f"toolConfig.tools[{t}].toolSpec.name",
            )


def check_ollama(body: dict[str, Any]) -> Rejection | None:
    """``/api/chat``: a model named (``model is required``, Ollama's words); the rest the format reads."""
    return None if body.get("model") else Rejection("model is required", "model")


def not_local(hosted: list[str]) -> str:
    """The refusal of server tools (Anthropic's web search, Google's ``googleSearch``...), on every route."""
    return (
        f"server tools are not available locally: {', '.join(hosted)} would run on the provider's "
        "infrastructure, and toolslip serve runs client tools only. Remove them from the request, "
        "or send it to the provider."
    )
