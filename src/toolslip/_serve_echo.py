"""What ``toolslip serve`` writes into an answer besides the model's words: ids, echoes and usage detail.

The wire formats write what the neutral response holds. A real service adds more, and clients read it:
ids in the service's own shape (``chatcmpl-…``, ``msg_01…``, ``resp_…``, tool ids ``call_…`` or
``toolu_01…``), the model name the client asked for, the request's settings echoed on a Responses object
(``instructions``, ``tools``, ``temperature``, ``metadata``...), and the usage sub-objects the SDK types
declare. The shapes follow recorded answers of the real services (see the table in
``docs/providers.md``); values the served model cannot know (cache hits, a system fingerprint) are
the services' "nothing here" values.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Mapping
from typing import Any

from .messages import ModelResponse, Part, Text, ToolCall

__all__ = ["Echo", "ECHOES"]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_SAFE = re.compile(r"[A-Za-z0-9_-]{1,40}")
_CALL_PREFIXES = ("call_", "toolu_")


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def request_id() -> str:
    """``req_`` and 24 characters, as both services send in their request-id headers."""
    return "req_" + _random(_BASE58, 24)


@dataclasses.dataclass(frozen=True)
class Echo:
    """One protocol's ids and the fields its service adds to an answer.

    ``finish`` completes the answer object in place; ``finish_event`` does the same to the objects a
    stream carries (Anthropic's ``message_start``, the Responses API's ``response.*`` snapshots).
    """

    response_id: tuple[str, str, int]
    """Prefix, alphabet and length of a response id."""
    call_id: tuple[str, str, int]

    def prepare(self, response: ModelResponse) -> ModelResponse:
        """``response`` with this protocol's response id and tool ids (a foreign id gets the right prefix)."""
        prefix, alphabet, length = self.response_id
        fresh = response.id if response.id.startswith(prefix) else prefix + _random(alphabet, length)
        parts: list[Part] = [
            dataclasses.replace(p, id=self._call(p.id)) if type(p) is ToolCall else p for p in response.message.parts
        ]
        message = dataclasses.replace(response.message, parts=tuple(parts))
        return dataclasses.replace(response, id=fresh, message=message)

    def _call(self, old: str) -> str:
        """Keep a call id the client can send back; only its prefix changes, so a proxied model's ids survive."""
        prefix, alphabet, length = self.call_id
        if old.startswith(prefix):
            return old
        rest = next((old[len(p) :] for p in _CALL_PREFIXES if old.startswith(p)), old)
        return prefix + rest if _SAFE.fullmatch(rest) else prefix + _random(alphabet, length)

    def finish(self, wire: dict[str, Any], body: Mapping[str, Any]) -> None:
        """Add what the service adds to a whole answer (nothing by default)."""

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any]) -> None:
        """Add what the service adds to a streamed event (nothing by default)."""


class _ChatEcho(Echo):
    def prepare(self, response: ModelResponse) -> ModelResponse:
        """Also one text: a Chat answer's ``content`` is a string, so several text parts (Claude's cited
        answer, served with ``--model anthropic:...``) are joined as the other protocols' clients join them."""
        response = super().prepare(response)
        parts = response.message.parts
        texts = [p for p in parts if type(p) is Text]
        if len(texts) < 2:
            return response
        joined = (Text(text="".join(t.text for t in texts)), *(p for p in parts if type(p) is not Text))
        return dataclasses.replace(response, message=dataclasses.replace(response.message, parts=joined))

    def finish(self, wire: dict[str, Any], body: Mapping[str, Any]) -> None:
        wire.setdefault("service_tier", "default")
        wire.setdefault("system_fingerprint", None)
        for choice in wire.get("choices", ()):
            choice.setdefault("logprobs", None)
            message = choice.get("message", {})
            message.setdefault("refusal", None)
            message.setdefault("annotations", [])
        if "usage" in wire:
            _chat_usage(wire["usage"])

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any]) -> None:
        data.setdefault("service_tier", "default")
        data.setdefault("system_fingerprint", None)
        if data.get("usage"):
            _chat_usage(data["usage"])


def _chat_usage(usage: dict[str, Any]) -> None:
    details = usage.setdefault("prompt_tokens_details", {})
    details.setdefault("cached_tokens", 0)
    details.setdefault("audio_tokens", 0)
    done = usage.setdefault("completion_tokens_details", {})
    for key in ("reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens"):
        done.setdefault(key, 0)


class _MessagesEcho(Echo):
    def finish(self, wire: dict[str, Any], body: Mapping[str, Any]) -> None:
        usage = wire.setdefault("usage", {})
        usage.setdefault("cache_creation_input_tokens", 0)
        usage.setdefault("cache_read_input_tokens", 0)
        usage.setdefault("cache_creation", {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0})
        usage.setdefault("service_tier", "standard")

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any]) -> None:
        if data.get("type") == "message_start":
            self.finish(data["message"], body)


# The request fields a Responses object echoes, with the value the service shows when one is not given
# (the recorded answers in docs/providers.md). `store` is the exception: the service defaults to true and
# keeps the response; this server keeps nothing, so it says false unless the client asked otherwise.
_RESPONSE_ECHO: dict[str, Any] = {
    "background": False,
    "instructions": None,
    "max_output_tokens": None,
    "max_tool_calls": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": "default",
    "store": False,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 0,
    "top_p": 1.0,
    "truncation": "disabled",
    "user": None,
}


class _ResponsesEcho(Echo):
    def finish(self, wire: dict[str, Any], body: Mapping[str, Any]) -> None:
        for field, default in _RESPONSE_ECHO.items():
            given = body.get(field)
            wire[field] = given if given is not None else default
        wire.setdefault("error", None)

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any]) -> None:
        if isinstance(data.get("response"), dict):
            self.finish(data["response"], body)


ECHOES: dict[str, Echo] = {
    "openai-chat": _ChatEcho(("chatcmpl-", _BASE62, 29), ("call_", _BASE62, 24)),
    "anthropic": _MessagesEcho(("msg_01", _BASE58, 22), ("toolu_01", _BASE58, 22)),
    "openai-responses": _ResponsesEcho(("resp_", "0123456789abcdef", 50), ("call_", _BASE62, 24)),
}
"""By wire-format name."""
