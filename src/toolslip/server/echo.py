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
import hashlib
import random
import re
from collections.abc import Mapping
from typing import Any

from ..core.messages import ModelResponse, Part, Text, ToolCall

__all__ = ["ECHOES", "Echo", "request_ids"]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_HEX = "0123456789abcdef"


_RANDOM = random.Random()  # seeded from os.urandom; ids must be unique, not secret


def _random(alphabet: str, length: int) -> str:
    return "".join(_RANDOM.choices(alphabet, k=length))


def _keep_or_mint(old: str, shape: tuple[str, str, int]) -> str:
    prefix, alphabet, length = shape
    rest = old[len(prefix) :]
    if old.startswith(prefix) and len(rest) == length and all(c in alphabet for c in rest):
        return old
    return prefix + _random(alphabet, length)


def request_ids() -> tuple[str, str]:
    """A request id in OpenAI's shape (``req_`` and 32 hex digits) and in Anthropic's (``req_01…``)."""
    return "req_" + _random(_HEX, 32), "req_01" + _random(_BASE58, 22)


@dataclasses.dataclass(frozen=True)
class Echo:
    """One protocol's ids and the fields its service adds to an answer.

    ``finish`` completes the answer object in place; ``finish_event`` does the same to the objects a
    stream carries (Anthropic's ``message_start``, the Responses API's ``response.*`` snapshots). ``salt``
    is the response's id: ids derived from it are the same in every event of one answer.
    """

    response_id: tuple[str, str, int]
    """Prefix, alphabet and length of a response id (``chatcmpl-`` and 29 base-62 characters...)."""
    call_id: tuple[str, str, int]
    """The same for a tool call's id."""

    def prepare(self, response: ModelResponse) -> ModelResponse:
        """``response`` with ids in this protocol's shape.

        An id that already has the shape (a proxied model of the same protocol) is kept; any other (the
        scripted demo's ``call_1``, llama.cpp's ``chatcmpl-<uuid>``, another protocol's ``toolu_…``) is
        replaced by a fresh one. The server keeps nothing, so the client's copy of the conversation is the
        only place ids live, and it holds the fresh ones.
        """
        parts: list[Part] = [
            dataclasses.replace(p, id=_keep_or_mint(p.id, self.call_id)) if type(p) is ToolCall else p
            for p in response.message.parts
        ]
        message = dataclasses.replace(response.message, parts=tuple(parts))
        return dataclasses.replace(response, id=_keep_or_mint(response.id, self.response_id), message=message)

    def finish(self, wire: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        """Add what the service adds to a whole answer (nothing by default)."""

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
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

    def finish(self, wire: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        wire.setdefault("service_tier", "default")
        wire.setdefault("system_fingerprint", None)
        for choice in wire.get("choices", ()):
            choice.setdefault("logprobs", None)
            message = choice.get("message", {})
            message.setdefault("refusal", None)
            message.setdefault("annotations", [])
        if "usage" in wire:
            _chat_usage(wire["usage"])

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        data.setdefault("service_tier", "default")
        data.setdefault("system_fingerprint", None)
        for choice in data.get("choices", ()):
            if "role" in choice.get("delta", {}):  # the first chunk of a choice
                choice["delta"].setdefault("refusal", None)
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
    def finish(self, wire: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        usage = wire.setdefault("usage", {})
        usage.setdefault("cache_creation_input_tokens", 0)
        usage.setdefault("cache_read_input_tokens", 0)
        usage.setdefault("cache_creation", {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0})
        usage.setdefault("service_tier", "standard")

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        if data.get("type") == "message_start":
            self.finish(data["message"], body, salt)


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
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0,
    "prompt_cache_key": None,
    "prompt_cache_retention": None,
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
    def finish(self, wire: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        for field, default in _RESPONSE_ECHO.items():
            given = body.get(field)
            wire[field] = given if given is not None else default
        wire.setdefault("error", None)
        wire["completed_at"] = wire.get("created_at") if wire.get("status") == "completed" else None
        for item in wire.get("output", ()):
            _item_ids(item, salt)
            _text_parts(item)

    def finish_event(self, data: dict[str, Any], body: Mapping[str, Any], salt: str) -> None:
        if isinstance(data.get("response"), dict):
            self.finish(data["response"], body, salt)
        _item_ids(data, salt)
        if isinstance(data.get("item"), dict):
            _item_ids(data["item"], salt)
            _text_parts(data["item"])
        if isinstance(data.get("part"), dict):
            _text_parts({"content": [data["part"]]})


def _text_parts(item: dict[str, Any]) -> None:
    """An ``output_text`` part has ``annotations`` and ``logprobs`` lists, empty when there are none."""
    for part in item.get("content") or ():
        if isinstance(part, dict) and part.get("type") == "output_text":
            part.setdefault("annotations", [])
            part.setdefault("logprobs", [])


def _item_ids(data: dict[str, Any], salt: str) -> None:
    """Output item ids as the service writes them, ``msg_`` or ``fc_`` and 50 hex digits.

    The format numbers them (``msg_0``, ``fc_CALLID``); a hash of the number and the response id keeps
    each the same in every event of one answer and unique across answers.
    """
    for key in ("id", "item_id"):
        old = data.get(key)
        if isinstance(old, str) and old.startswith(("msg_", "fc_")) and not _ITEM_ID.fullmatch(old):
            prefix = old.split("_", 1)[0]
            data[key] = f"{prefix}_{hashlib.sha256(f'{salt}:{old}'.encode()).hexdigest()[:50]}"


_ITEM_ID = re.compile(r"(msg|fc)_[0-9a-f]{50}")


ECHOES: dict[str, Echo] = {
    "openai-chat": _ChatEcho(("chatcmpl-", _BASE62, 29), ("call_", _BASE62, 24)),
    "anthropic": _MessagesEcho(("msg_01", _BASE58, 22), ("toolu_01", _BASE58, 22)),
    "openai-responses": _ResponsesEcho(("resp_", _HEX, 50), ("call_", _BASE62, 24)),
}
"""By wire-format name."""
