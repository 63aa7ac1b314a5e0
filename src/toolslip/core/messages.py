"""The neutral transcript: the one message type every wire format converts to and from.

Neither vendor's format is the internal model. A message is a role plus a tuple of parts drawn from a
small tagged union:

    Part
    ├── Text            plain text
    ├── Image           an image (base64 data or a URL), e.g. inside a tool result
    ├── File            a document or other file (base64 data, a URL or a provider's file id)
    ├── Reasoning       the model's reasoning, with the provider's signature or encrypted form
    ├── ToolCall        the model's slip: call tool `name` with `arguments`
    ├── ToolResult      what running a call produced, paired to it by `call_id`
    └── ProviderPart    a block only one provider understands, kept verbatim (server-tool blocks,
                        hosted-tool items, citations-bearing search results) so a round trip loses nothing

Roles are ``system``, ``user``, ``assistant`` and ``tool``. A ``tool`` message carries the results of the
previous assistant message's calls (and may carry trailing text, which Anthropic allows next to results).
Formats decide how that is spelled on the wire: OpenAI sends one ``role: tool`` message per result;
Anthropic, which has no tool role, sends one ``user`` message of ``tool_result`` blocks.

This module imports nothing else from the package but :mod:`toolslip.core._records` (how its records are
built cheaply), so it can be read and reused on its own. It is longer than most (about 460 lines) because
the whole union is kept in one place: every part kind, the message, the request and the response, and their
JSON form, read together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal, TypeAlias

from ._records import set_through_slots

__all__ = [
    "File",
    "Image",
    "Message",
    "ModelResponse",
    "Outcome",
    "OutputSchema",
    "Part",
    "ProviderPart",
    "Reasoning",
    "Request",
    "ResultPart",
    "Role",
    "ServerTool",
    "Settings",
    "StopReason",
    "Text",
    "ToolCall",
    "ToolChoice",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "UseTool",
    "message_from_dict",
    "message_to_dict",
    "part_from_dict",
    "part_to_dict",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]

StopReason: TypeAlias = Literal[
    "end_turn",  # the model finished its answer
    "tool_use",  # the model stopped to have tools run
    "max_tokens",  # the output limit cut the answer
    "stop_sequence",  # a caller-given stop sequence matched
    "refusal",  # the model (or a safety system) refused
    "pause_turn",  # Anthropic: a long server-tool turn paused; send it back to continue
    "content_filter",  # OpenAI: output withheld by the content filter
    "other",  # anything a provider adds later; see ModelResponse.raw_stop_reason
]

_EMPTY: Mapping[str, Any] = {}

Outcome: TypeAlias = Literal["ran", "failed", "refused", "held", "duplicate", "not_executed"]
"""What happened to a call: it ran; it ran (or was tried) and failed; a gate or the user refused it; it is
held for a later decision; an earlier identical call answered it; the run ended before it could run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    """Plain text written by the user, the model, or a tool."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Image:
    """An image, carried either inline as base64 ``data`` or by ``url``."""

    kind: ClassVar[str] = "image"
    media_type: str
    data: str | None = None
    """Base64-encoded bytes, without a ``data:`` prefix."""
    url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class File:
    """A document or other file (a PDF, a text file...), inline as base64 ``data``, by ``url``, or by ``file_id``.

    A ``file_id`` names a file uploaded to one provider, so it means something only to the format named
    by ``source``.
    """

    kind: ClassVar[str] = "file"
    media_type: str = ""
    data: str | None = None
    """Base64-encoded bytes, without a ``data:`` prefix."""
    url: str | None = None
    file_id: str | None = None
    name: str | None = None
    """The file name or document title, when the sender gave one."""
    source: str = ""
    """The format whose provider holds ``file_id`` (empty for inline data and URLs)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """What the model thought before it answered: readable ``text`` (or a summary), plus opaque proof.

    ``signature`` (Anthropic's thinking signature, OpenRouter's reasoning signature) and ``encrypted``
    (Anthropic's redacted thinking, the Responses API's ``encrypted_content``) can be checked or read only
    by the provider that wrote them, the one behind format ``source``: they are sent back verbatim to that
    format and nowhere else.
    """

    kind: ClassVar[str] = "reasoning"
    text: str = ""
    summary: bool = False
    """``text`` summarises the reasoning (the Responses API's ``summary``, OpenRouter's ``reasoning.summary``)
    rather than being the reasoning itself (``reasoning_text``, ``reasoning_content``, a thinking block)."""
    signature: str | None = None
    encrypted: str | None = None
    source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """The slip: the model asks for tool ``name`` to be run with ``arguments``.

    ``arguments`` is ``None`` when the model sent text that is not a JSON object; the raw text is then in
    ``raw_arguments`` and the loop answers the model with an error result instead of running anything.
    """

    kind: ClassVar[str] = "tool_call"
    id: str
    name: str
    arguments: Mapping[str, Any] | None
    raw_arguments: str | None = None
    """The arguments exactly as the model wrote them, when it wrote a string (OpenAI does)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What running one call produced, paired to the call by ``call_id``."""

    kind: ClassVar[str] = "tool_result"
    call_id: str
    content: str | tuple[ResultPart, ...]
    is_error: bool = False
    name: str | None = None
    """The called tool's name; needed by formats that pair results by name (OpenAI legacy functions)."""
    untrusted: bool = False
    """Third parties could have written this content (web pages, mail, issues): treat it as data only."""
    untrusted_spans: tuple[str, ...] = ()
    """When only some of an untrusted result was written by third parties (fields the tool declared
    outsider-writable), those pieces; empty means all of it. Only meaningful with ``untrusted``."""
    outcome: Outcome | None = field(default=None, compare=False)
    """Harness metadata, not sent on the wire: ``None`` when unknown (read from a wire format)."""

    @property
    def text(self) -> str:
        """The content as one string (images are left out)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, Text))


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderPart:
    """A block only one wire format understands, kept byte-for-byte for the round trip.

    ``format`` names the wire format it came from (``"anthropic"``, ``"openai-responses"``...);
    ``data`` is the block exactly as received.
    """

    kind: ClassVar[str] = "provider"
    format: str
    data: Mapping[str, Any]


Part: TypeAlias = Text | Image | File | Reasoning | ToolCall | ToolResult | ProviderPart
ResultPart: TypeAlias = Text | Image | File | ProviderPart
"""What a tool result may hold: text, images, files, and blocks only one format knows (search results...)."""


# weakref_slot: the wire formats' encoding memos key on messages without keeping them alive.
@dataclass(frozen=True, slots=True, kw_only=True, weakref_slot=True)
class Message:
    """One turn of the conversation."""

    role: Role
    parts: tuple[Part, ...]
    name: str | None = None
    """An optional participant name (OpenAI ``name``)."""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """Wire fields this model has no slot for, keyed as on the wire, re-emitted to the same format."""

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role="system", parts=(Text(text=text),))

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role="user", parts=(Text(text=text),))

    @classmethod
    def assistant(cls, text: str = "", calls: Iterable[ToolCall] = ()) -> Message:
        parts: tuple[Part, ...] = (Text(text=text),) if text else ()
        return cls(role="assistant", parts=parts + tuple(calls))

    @classmethod
    def tool(cls, results: Iterable[ToolResult]) -> Message:
        return cls(role="tool", parts=tuple(results))

    @property
    def text(self) -> str:
        """All text parts joined, in order."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Tokens spent by one model call or, summed, by a run."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    """The part of ``output_tokens`` spent on reasoning (OpenAI reports it; Anthropic does not)."""
    server_tool_use: Mapping[str, int] = field(default_factory=dict)
    """Server-side tool invocations, e.g. ``{"web_search_requests": 2}``."""

    def __add__(self, other: Usage) -> Usage:
        servers = self.server_tool_use  # summed into a new dict only when there is something to add
        if other.server_tool_use:
            servers = dict(servers)
            for key, count in other.server_tool_use.items():
                servers[key] = servers.get(key, 0) + count
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            server_tool_use=servers,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    """One answer of a model: the assistant message plus why it stopped and what it cost."""

    message: Message
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    id: str = ""
    raw_stop_reason: str | None = None
    """The provider's own word for the stop (``"tool_calls"``, ``"length"``...), kept for round trips."""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool declaration as the model sees it: name, description, JSON Schema of the arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    strict: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerTool:
    """A tool the provider runs on its own infrastructure (web search, code execution, hosted MCP...).

    Only declared, never executed here: its use and results come back inside the model's answer as
    provider parts. Each wire format renders it to its own spelling (``toolslip.formats.server_tools``).
    """

    kind: str
    """The neutral name: ``web_search``, ``web_fetch``, ``code_execution``, ``tool_search``, ``mcp``..."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Neutral options (``max_uses``, ``allowed_domains``...), checked by ``toolslip.server_tool``."""
    version: str | None = None
    """A provider tool version such as ``"20260209"``; ``None`` picks the format's default."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Wire fields sent verbatim in every format's declaration (for fields this library does not know)."""


@dataclass(frozen=True, slots=True)
class UseTool:
    """``tool_choice`` naming one tool the model must call."""

    name: str


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | UseTool


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Sampling and tool-use knobs that every provider understands in some spelling."""

    max_tokens: int | None = None
    temperature: float | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    """``False`` asks for at most one call per turn (Anthropic: ``disable_parallel_tool_use``)."""
    stop: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Other body fields, sent verbatim to the provider."""

    def __post_init__(self) -> None:
        # A misspelt choice would otherwise reach the provider and come back as an HTTP 400 mid-run.
        choice = self.tool_choice
        if choice is not None and not isinstance(choice, UseTool) and choice not in ("auto", "none", "required"):
            raise ValueError(f"tool_choice must be 'auto', 'none', 'required' or UseTool(name), not {choice!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSchema:
    """The shape the model's answer must take (structured output), in the neutral form every format reads.

    Each wire format writes it in its own field (OpenAI ``response_format`` / ``text.format``, Anthropic
    ``output_config.format``...): see :mod:`toolslip.formats.structured`.
    """

    name: str
    """A name for the schema (OpenAI requires one: letters, digits, ``_`` and ``-``)."""
    schema: Mapping[str, Any]
    """The JSON Schema of the answer."""
    strict: bool | None = None
    """Ask the provider to hold the answer to the schema exactly (OpenAI ``strict``); ``None``: its default."""
    description: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """What one format's spelling held beyond these fields, under the format's name (Gemini's older
    ``responseSchema``, the exact JSON text of Converse's schema), so the field is written back as it came."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """Everything one model call needs, independent of the wire format."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    settings: Settings = field(default_factory=Settings)
    extra_tools: tuple[Mapping[str, Any], ...] = ()
    """Tool declarations kept verbatim (server tools, hosted tools), in the target format's spelling."""
    server_tools: tuple[ServerTool, ...] = ()
    """Provider-run tools in neutral form; each format renders them next to the client tools."""
    output: OutputSchema | None = None
    """The schema the answer must follow (native structured output); ``None``: free text."""

    def with_messages(self, messages: Sequence[Message]) -> Request:
        return replace(self, messages=tuple(messages))


# --- JSON form of the transcript (journal, --json output, eval results) ---------------------------


def part_to_dict(part: Part) -> dict[str, Any]:
    """A plain-JSON dict for ``part``, tagged with ``"kind"``."""
    if isinstance(part, Text):
        return {"kind": "text", "text": part.text}
    if isinstance(part, Image):
        return {"kind": "image", "media_type": part.media_type, "data": part.data, "url": part.url}
    if isinstance(part, File | Reasoning):
        values = {f.name: getattr(part, f.name) for f in fields(part)}
        return {"kind": part.kind, **{k: v for k, v in values.items() if v not in (None, "", False)}}
    if isinstance(part, ToolCall):
        return {
            "kind": "tool_call",
            "id": part.id,
            "name": part.name,
            "arguments": None if part.arguments is None else dict(part.arguments),
            "raw_arguments": part.raw_arguments,
        }
    if isinstance(part, ToolResult):
        content: Any = part.content if isinstance(part.content, str) else [part_to_dict(p) for p in part.content]
        out: dict[str, Any] = {
            "kind": "tool_result",
            "call_id": part.call_id,
            "content": content,
            "is_error": part.is_error,
            "name": part.name,
            "untrusted": part.untrusted,
        }
        if part.untrusted_spans:
            out["untrusted_spans"] = list(part.untrusted_spans)
        if part.outcome is not None:
            out["outcome"] = part.outcome
        return out
    return {"kind": "provider", "format": part.format, "data": dict(part.data)}


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """Inverse of :func:`part_to_dict`; raises ``ValueError`` naming an unknown kind."""
    kind = data.get("kind")
    if kind == "text":
        return Text(text=data["text"])
    if kind == "image":
        return Image(media_type=data["media_type"], data=data.get("data"), url=data.get("url"))
    if kind == "file":
        return File(**{f.name: data[f.name] for f in fields(File) if f.name in data})
    if kind == "reasoning":
        return Reasoning(**{f.name: data[f.name] for f in fields(Reasoning) if f.name in data})
    if kind == "tool_call":
        return ToolCall(
            id=data["id"],
            name=data["name"],
            arguments=data.get("arguments"),
            raw_arguments=data.get("raw_arguments"),
        )
    if kind == "tool_result":
        raw = data["content"]
        content: str | tuple[ResultPart, ...]
        if isinstance(raw, str):
            content = raw
        else:
            content = tuple(_content_part(part_from_dict(p)) for p in raw)
        return ToolResult(
            call_id=data["call_id"],
            content=content,
            is_error=bool(data.get("is_error", False)),
            name=data.get("name"),
            untrusted=bool(data.get("untrusted", False)),
            untrusted_spans=tuple(data.get("untrusted_spans", ())),
            outcome=data.get("outcome"),  # absent in journals and transcripts written before it existed
        )
    if kind == "provider":
        return ProviderPart(format=data["format"], data=data["data"])
    raise ValueError(
        f"unknown part kind {kind!r}; expected text, image, file, reasoning, tool_call, tool_result or provider"
    )


def _content_part(part: Part) -> ResultPart:
    if isinstance(part, Text | Image | File | ProviderPart):
        return part
    raise ValueError(f"a tool result may hold only text, image, file and provider parts, not {part.kind}")


def message_to_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "parts": [part_to_dict(p) for p in message.parts]}
    if message.name is not None:
        out["name"] = message.name
    if message.extra:
        out["extra"] = dict(message.extra)
    return out


def message_from_dict(data: Mapping[str, Any]) -> Message:
    role = data.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"unknown role {role!r}; expected system, user, assistant or tool")
    return Message(
        role=role,
        parts=tuple(part_from_dict(p) for p in data.get("parts", ())),
        name=data.get("name"),
        extra=data.get("extra") or _EMPTY,
    )


# Built several times a step, so each gets the cheaper __init__ of :mod:`toolslip.core._records`.
_RECORDS: tuple[type, ...] = (Text, Image, File, Reasoning, ToolCall, ToolResult, ProviderPart, Message, Usage)
_RECORDS += (ModelResponse, ToolSpec, ServerTool, UseTool, Settings, OutputSchema, Request)
for _cls in _RECORDS:
    set_through_slots(_cls)
